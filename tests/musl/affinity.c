/* sched_setaffinity(2) and sched_getaffinity(2): a thread pinned to a CPU
 * runs there (getcpu says so, by the system call and by the vDSO), the
 * mask is inherited by fork and by new threads, and bad masks, sizes,
 * pointers, ids and owners get Linux's errors. Printed so that the output
 * does not depend on how many CPUs the machine has. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *outcome(long r)
{
    static char text[32];
    if (r >= 0) {
        snprintf(text, sizeof text, "%ld", r);
        return text;
    }
    return errno == EINVAL ? "EINVAL" : errno == ESRCH ? "ESRCH" : errno == EFAULT ? "EFAULT"
         : errno == EPERM ? "EPERM" : strerror(errno);
}

static long set_mask(pid_t pid, size_t len, const void *mask)
{
    return syscall(SYS_sched_setaffinity, pid, len, mask);
}

static long get_mask(pid_t pid, size_t len, void *mask)
{
    return syscall(SYS_sched_getaffinity, pid, len, mask);
}

static unsigned long mask_now(void)
{
    unsigned long mask = 0;
    get_mask(0, sizeof mask, &mask);
    return mask;
}

/* Runs a while and says whether every look found the thread on `cpu`. */
static int stays_on(int cpu)
{
    for (int i = 0; i < 200; i++) {
        unsigned got = 99;
        syscall(SYS_getcpu, &got, 0, 0);
        if ((int)got != cpu || sched_getcpu() != cpu)
            return 0;
        if (i % 20 == 0)
            sched_yield();
    }
    return 1;
}

static void *thread_mask(void *out)
{
    *(unsigned long *)out = mask_now();
    return 0;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 8)
        cpus = 8;
    unsigned long all = mask_now();
    printf("sched_getaffinity(8 bytes): %s\n", outcome(get_mask(0, 8, &all)));
    printf("the mask is every online CPU: %s\n",
           __builtin_popcountl(all) == sysconf(_SC_NPROCESSORS_ONLN) ? "yes" : "no");
    unsigned long small;
    printf("sched_getaffinity(4 bytes): %s\n", outcome(get_mask(0, 4, &small)));
    printf("sched_getaffinity(bad pointer): %s\n", outcome(get_mask(0, 8, (void *)8)));

    int everywhere = 1;
    for (int cpu = 0; cpu < cpus; cpu++) {
        unsigned long one = 1UL << cpu;
        if (set_mask(0, sizeof one, &one) || mask_now() != one || !stays_on(cpu))
            everywhere = 0;
    }
    printf("pinned to each CPU in turn, ran there: %s\n", everywhere ? "yes" : "no");

    unsigned long zero = 0, beyond = 1UL << 63, first = 1;
    printf("empty mask: %s\n", outcome(set_mask(0, 8, &zero)));
    printf("only a CPU that is not there: %s\n", outcome(set_mask(0, 8, &beyond)));
    printf("0 bytes of mask: %s\n", outcome(set_mask(0, 0, &first)));
    printf("4 bytes of mask: %s\n", outcome(set_mask(0, 4, &first)));
    printf("bad pointer: %s\n", outcome(set_mask(0, 8, (void *)8)));
    printf("no such thread: %s\n", outcome(set_mask(999999, 8, &first)));
    printf("the mask is CPU 0 alone now: %s\n", mask_now() == 1 ? "yes" : "no");

    unsigned long in_thread = 0;
    pthread_t t;
    pthread_create(&t, 0, thread_mask, &in_thread);
    pthread_join(t, 0);
    printf("a new thread inherits it: %s\n", in_thread == 1 ? "yes" : "no");

    pid_t child = fork();
    if (child == 0) {
        printf("a forked child inherits it: %s\n", mask_now() == 1 ? "yes" : "no");
        /* Another user's thread: EPERM for anyone but its owner or root. */
        if (setuid(65534))
            _exit(2);
        printf("nobody sets init's mask: %s\n", outcome(set_mask(1, 8, &all)));
        printf("nobody sets its own: %s\n", outcome(set_mask(0, 8, &all)));
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);

    printf("back to every CPU: %s\n", outcome(set_mask(0, 8, &all)));
    printf("the mask is every online CPU again: %s\n", mask_now() == all ? "yes" : "no");
    return 0;
}

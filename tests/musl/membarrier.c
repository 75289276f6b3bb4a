/* membarrier(2), the private expedited command the dynamic loaders use:
 * refused until registered, then a barrier on every CPU running a thread
 * of the process; the registration belongs to the address space, so a
 * fork's child keeps it and an exec forgets it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* <linux/membarrier.h>'s values (musl-gcc sees no kernel headers). */
#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED 8
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED 16

static long mb(int cmd, unsigned flags)
{
    return syscall(SYS_membarrier, cmd, flags, 0);
}

static const char *result(long r)
{
    static char text[32];
    if (r >= 0)
        return "0";
    snprintf(text, sizeof text, "%s", errno == EPERM ? "EPERM" : errno == EINVAL ? "EINVAL" : strerror(errno));
    return text;
}

static volatile int stop;
static volatile long counter;

static void *spin(void *arg)
{
    (void)arg;
    while (!stop)
        counter++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        printf("after exec, private before registering: %s\n",
               result(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0)));
        return 0;
    }
    long offered = mb(MEMBARRIER_CMD_QUERY, 0);
    printf("query offers the private expedited commands: %s\n",
           offered >= 0 && (offered & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                   (offered & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
               ? "yes"
               : "no");
    printf("private before registering: %s\n", result(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0)));
    printf("query with a flag: %s\n", result(mb(MEMBARRIER_CMD_QUERY, 1)));
    printf("an unknown command: %s\n", result(mb(1 << 20, 0)));
    printf("register: %s\n", result(mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0)));
    printf("private: %s\n", result(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0)));
    /* With other threads running, many times over. */
    pthread_t threads[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&threads[i], 0, spin, 0);
    int ok = 1;
    for (int i = 0; i < 1000; i++)
        ok &= mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0;
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], 0);
    printf("1000 private barriers beside three running threads: %s\n", ok ? "ok" : "FAILED");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("in a fork's child, private: %s\n", result(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0)));
        fflush(stdout);
        execl("/proc/self/exe", "membarrier", "exec", (char *)0);
        _exit(1);
    }
    waitpid(pid, 0, 0);
    return 0;
}

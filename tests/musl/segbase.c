/* The user's FS and GS bases (arch_prctl): each thread has its own, they
 * survive system calls, clock interrupts and switches to other processes,
 * fork and new threads start with the creator's, exec starts at 0, and an
 * address outside user space is refused.
 *
 * The kernel keeps its own per-CPU pointer in GS and swaps it with the
 * user's (swapgs) on every entry and exit, so a path that forgot the swap,
 * or a switch that did not restore the next thread's base, shows up here as
 * a wrong word read through %gs. The FS base is musl's thread pointer, so
 * it is only read back, never moved. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

static long arch_prctl(int code, unsigned long addr) { return syscall(SYS_arch_prctl, code, addr); }

static unsigned long gs_base(void) {
    unsigned long base = 0xdead;
    if (arch_prctl(ARCH_GET_GS, (unsigned long)&base) != 0)
        return 0xbad;
    return base;
}

/* The first word at the GS base, read as user code does. */
static unsigned long gs_word(void) {
    unsigned long v;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(v));
    return v;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Reads %gs:0 while the kernel is entered every way it can be: system
 * calls, the clock's interrupts while spinning, yields to whoever else
 * runs. Answers how many reads saw something other than `want`. */
static long churn(unsigned long want, int ms) {
    long wrong = 0;
    long long end = now_ms() + ms;
    while (now_ms() < end) {
        for (int i = 0; i < 200; i++) {
            getppid();
            wrong += gs_word() != want;
        }
        for (volatile int i = 0; i < 20000; i++)
            wrong += gs_word() != want;
        sched_yield();
        wrong += gs_word() != want;
    }
    return wrong;
}

static unsigned long parent_word = 0x1111;
static unsigned long child_word = 0x2222;
static unsigned long thread_word = 0x3333;

static void *in_thread(void *arg) {
    (void)arg;
    printf("thread: starts with the creator's GS base %d\n", gs_base() == (unsigned long)&parent_word);
    arch_prctl(ARCH_SET_GS, (unsigned long)&thread_word);
    printf("thread: its own reads %lx, %ld wrong reads\n", gs_word(), churn(thread_word, 150));
    return NULL;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "exec")) {
        printf("after exec: GS base %lx\n", gs_base());
        return 0;
    }
    setvbuf(stdout, NULL, _IONBF, 0);

    unsigned long fs = 0;
    int readable = arch_prctl(ARCH_GET_FS, (unsigned long)&fs) == 0;
    printf("FS base readable %d, is musl's thread pointer %d\n", readable,
           fs == (unsigned long)pthread_self());
    printf("at start: GS base %lx\n", gs_base());

    printf("set GS: %ld\n", arch_prctl(ARCH_SET_GS, (unsigned long)&parent_word));
    printf("GS base is the word's address %d, reads %lx\n", gs_base() == (unsigned long)&parent_word,
           gs_word());
    printf("after calls, ticks and yields: %ld wrong reads\n", churn(parent_word, 200));

    /* A child with a base of its own runs beside the parent: every switch
     * between them must bring the right base back. */
    int pid = fork();
    if (pid == 0) {
        int inherited = gs_base() == (unsigned long)&parent_word && gs_word() == parent_word;
        arch_prctl(ARCH_SET_GS, (unsigned long)&child_word);
        long wrong = churn(child_word, 300);
        printf("child: inherited the base %d, its own base gave %ld wrong reads\n", inherited, wrong);
        _exit(wrong != 0);
    }
    long wrong = churn(parent_word, 300);
    int status;
    waitpid(pid, &status, 0);
    printf("parent beside the child: %ld wrong reads; child exit %d\n", wrong, WEXITSTATUS(status));

    pthread_t t;
    pthread_create(&t, NULL, in_thread, NULL);
    pthread_join(t, NULL);
    printf("main thread after its thread: reads %lx\n", gs_word());

    errno = 0;
    long r = arch_prctl(ARCH_SET_GS, 0xffff800000000000UL);
    printf("GS in the kernel half: %ld %s; base kept %d\n", r, strerror(errno),
           gs_base() == (unsigned long)&parent_word);
    errno = 0;
    r = arch_prctl(0x1234, 0);
    printf("unknown code: %ld %s\n", r, strerror(errno));

    pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "exec", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    printf("exec'd child exit %d\n", WEXITSTATUS(status));
    return 0;
}

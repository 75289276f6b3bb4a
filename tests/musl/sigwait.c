/* sigtimedwait, sigwaitinfo and sigqueue: a blocked signal is taken
 * without its handler, with its siginfo (kill's sender, sigqueue's value,
 * tgkill's code); one already pending is taken at once; the wait ends at
 * its timeout (EAGAIN) or when another signal's handler runs (EINTR);
 * real-time signals queue and come out in order with their values; the
 * waited set is blocked again afterwards; bad input. Same output as on
 * Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *code_name(int code) {
    switch (code) {
    case SI_USER: return "SI_USER";
    case SI_QUEUE: return "SI_QUEUE";
    case SI_TKILL: return "SI_TKILL";
    case SI_KERNEL: return "SI_KERNEL";
    default: return "other";
    }
}

/* The call's result, then errno (read after the call). */
#define TRY(what, call)                                          \
    do {                                                         \
        errno = 0;                                               \
        long result_ = (call);                                   \
        printf("%s: %ld, %s\n", what, result_, strerror(errno)); \
    } while (0)

static volatile sig_atomic_t handled;
static void on_usr2(int s) { handled = s; }

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGRTMIN);
    sigaddset(&set, SIGRTMIN + 1);
    sigprocmask(SIG_BLOCK, &set, 0);
    siginfo_t info;
    struct timespec second = {1, 0}, none = {0, 0};

    /* Already pending: taken at once, with who sent it. */
    kill(getpid(), SIGUSR1);
    int sig = sigtimedwait(&set, &info, &none);
    printf("pending SIGUSR1: %s, %s, %s\n", sig == SIGUSR1 ? "taken" : "NOT TAKEN", code_name(info.si_code),
           info.si_pid == getpid() ? "from this process" : "from ANOTHER");

    /* Sent by a child while this one waits. */
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        usleep(100000);
        union sigval v = {.sival_int = 42};
        sigqueue(parent, SIGRTMIN, v);
        _exit(0);
    }
    sig = sigwaitinfo(&set, &info);
    printf("sigqueue from a child: %s, %s, value %d, %s\n", sig == SIGRTMIN ? "SIGRTMIN" : "OTHER",
           code_name(info.si_code), info.si_value.sival_int,
           info.si_pid == child ? "from the child" : "from ANOTHER");
    waitpid(child, 0, 0);

    /* Real-time signals queue: each comes with its value, in order. */
    for (int i = 1; i <= 3; i++) {
        union sigval v = {.sival_int = i * 10};
        sigqueue(getpid(), SIGRTMIN + 1, v);
    }
    union sigval low = {.sival_int = 7};
    sigqueue(getpid(), SIGRTMIN, low);
    for (int i = 0; i < 4; i++) {
        sig = sigtimedwait(&set, &info, &none);
        printf("queued %d: SIGRTMIN+%d value %d\n", i, sig - SIGRTMIN, info.si_value.sival_int);
    }

    /* tgkill's code. */
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
    sig = sigtimedwait(&set, &info, &none);
    printf("tgkill: %s\n", code_name(info.si_code));

    /* Nothing comes: EAGAIN at the timeout. */
    struct timespec short_wait = {0, 100000000};
    sig = sigtimedwait(&set, &info, &short_wait);
    printf("nothing sent: %d, %s\n", sig, strerror(errno));

    /* A signal outside the set, with a handler: EINTR, the handler ran. */
    signal(SIGUSR2, on_usr2);
    child = fork();
    if (child == 0) {
        usleep(100000);
        kill(parent, SIGUSR2);
        _exit(0);
    }
    errno = 0;
    sig = sigtimedwait(&set, &info, &second);
    printf("another signal: %d, %s, handler %s\n", sig, strerror(errno), handled == SIGUSR2 ? "ran" : "DID NOT RUN");
    waitpid(child, 0, 0);

    /* The set is blocked again: a kill stays pending. */
    kill(getpid(), SIGUSR1);
    sigset_t pending;
    sigpending(&pending);
    printf("still blocked after: %s\n", sigismember(&pending, SIGUSR1) ? "yes" : "NO");
    sigtimedwait(&set, &info, &none);

    /* A NULL info is fine. */
    kill(getpid(), SIGUSR1);
    printf("no siginfo asked: %s\n", sigtimedwait(&set, 0, &none) == SIGUSR1 ? "taken" : "NOT TAKEN");

    /* Bad input. */
    struct timespec bad = {0, 1000000000};
    TRY("bad timeout", sigtimedwait(&set, &info, &bad));
    TRY("bad set", syscall(SYS_rt_sigtimedwait, (void *)8, &info, &none, 8));
    TRY("bad size", syscall(SYS_rt_sigtimedwait, &set, &info, &none, 4));
    siginfo_t forged = {0};
    forged.si_code = SI_USER;
    TRY("forged SI_USER to another", syscall(SYS_rt_sigqueueinfo, 1, SIGUSR1, &forged));
    TRY("sigqueue to no one", sigqueue(999999, SIGUSR1, low));
    TRY("sigqueue signal 99", sigqueue(getpid(), 99, low));
    return 0;
}

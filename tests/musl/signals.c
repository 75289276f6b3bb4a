/* Signals through musl: handlers with and without SA_SIGINFO, masks and
 * pending signals, raise (tkill), SIGCHLD, alarm and pause, and a SIGSEGV
 * handler that leaves with siglongjmp. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static volatile int info_ok;
static sigjmp_buf recover;

static void on_signal(int signal) { got = signal; }

static void on_info(int signal, siginfo_t *info, void *context) {
    (void)context;
    got = signal;
    info_ok = info->si_signo == signal && info->si_pid == getpid() && info->si_code == SI_USER;
}

static void on_segv(int signal) {
    (void)signal;
    siglongjmp(recover, 1);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* children must not inherit unwritten lines */
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);
    printf("raise: handler saw signal %d (%s)\n", got, strsignal(got));

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, NULL);
    kill(getpid(), SIGUSR2);
    printf("SA_SIGINFO: signo, pid and code right: %s\n", info_ok ? "yes" : "no");

    sigset_t block, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, NULL);
    got = 0;
    raise(SIGUSR1);
    sigpending(&pending);
    printf("blocked: handler ran %s, pending %s\n", got ? "yes" : "no", sigismember(&pending, SIGUSR1) ? "yes" : "no");
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    printf("unblocked: handler saw %d\n", got);

    signal(SIGCHLD, on_signal);
    got = 0;
    pid_t pid = fork();
    if (pid == 0)
        _exit(5);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    printf("SIGCHLD: %s, child status %d\n", got == SIGCHLD ? "arrived" : "missing", WEXITSTATUS(status));

    signal(SIGALRM, on_signal);
    got = 0;
    alarm(1);
    pause();
    printf("alarm and pause: woke by %s\n", got == SIGALRM ? "SIGALRM" : "something else");

    signal(SIGSEGV, on_segv);
    if (sigsetjmp(recover, 1) == 0) {
        volatile int *bad = (int *)16;
        *bad = 1;
        printf("the write to address 16 did not fault\n");
    } else {
        printf("SIGSEGV: handler ran and siglongjmp came back\n");
    }
    sigprocmask(SIG_SETMASK, NULL, &pending);
    printf("after siglongjmp SIGSEGV is %s\n", sigismember(&pending, SIGSEGV) ? "still blocked" : "unblocked");

    signal(SIGTERM, SIG_IGN);
    raise(SIGTERM);
    printf("ignored SIGTERM: still here\n");
    return 0;
}

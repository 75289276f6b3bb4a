/* Children nobody waits for: with SIGCHLD set to SIG_IGN (or SA_NOCLDWAIT)
 * an exited child is not left a zombie (POSIX), and wait() blocks until
 * every child has exited, then fails with ECHILD. With SIGCHLD at its
 * default the zombie stays until it is reaped. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static const char *err(int r) {
    if (r >= 0)
        return "a child";
    return errno == ECHILD ? "ECHILD" : strerror(errno);
}

/* Whether `pid` is still there (a zombie counts) after up to 2 s. */
static int gone(pid_t pid) {
    for (int i = 0; i < 200; i++) {
        if (kill(pid, 0) < 0 && errno == ESRCH)
            return 1;
        nap(10);
    }
    return 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGCHLD, SIG_IGN);
    pid_t quick = fork();
    if (quick == 0)
        _exit(3);
    printf("SIG_IGN: the exited child is reaped without a wait: %s\n", gone(quick) ? "yes" : "no");

    pid_t slow = fork();
    if (slow == 0) {
        nap(200);
        _exit(4);
    }
    int status;
    int r = wait(&status);
    printf("SIG_IGN: wait for a living child blocks until it is gone, then: %s\n", err(r));

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = SA_NOCLDWAIT;
    sigaction(SIGCHLD, &sa, NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(5);
    printf("SA_NOCLDWAIT: reaped without a wait: %s\n", gone(child) ? "yes" : "no");

    signal(SIGCHLD, SIG_DFL);
    child = fork();
    if (child == 0)
        _exit(6);
    nap(100);
    printf("SIG_DFL: the child stays a zombie: %s\n", kill(child, 0) == 0 ? "yes" : "no");
    r = waitpid(child, &status, 0);
    printf("SIG_DFL: waitpid reaps it: %s, exit %d\n", r == child ? "yes" : "no", WEXITSTATUS(status));
    return 0;
}

/* Real-time signals are queued: each one sent while it is blocked is
 * delivered once it is unblocked, in order, lowest number first, where a
 * standard signal sent three times while blocked is delivered once. Each
 * delivery's siginfo names the sender. Ignoring a queued real-time signal
 * drops every instance. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int order[64], runs;
static int from_me = 1;

static void handler(int s, siginfo_t *info, void *ctx) {
    (void)ctx;
    if (runs < 64)
        order[runs++] = s;
    if (info->si_pid != getpid() || info->si_code != SI_USER)
        from_me = 0;
}

static void block(int s, int how) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, s);
    sigprocmask(how, &set, NULL);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigfillset(&sa.sa_mask);
    int a = SIGRTMIN + 1, b = SIGRTMIN + 4;
    sigaction(a, &sa, NULL);
    sigaction(b, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);

    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < 3; i++) {
        kill(getpid(), b);
        kill(getpid(), a);
        kill(getpid(), SIGUSR1);
    }
    sigset_t pending;
    sigpending(&pending);
    printf("pending while blocked: SIGRTMIN+1 %d, SIGRTMIN+4 %d, SIGUSR1 %d\n",
           sigismember(&pending, a), sigismember(&pending, b), sigismember(&pending, SIGUSR1));
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("delivered %d:", runs);
    for (int i = 0; i < runs; i++)
        printf(" %s", order[i] == SIGUSR1 ? "USR1" : order[i] == a ? "RTMIN+1" : order[i] == b ? "RTMIN+4" : "?");
    printf("\nevery siginfo names this process and SI_USER: %s\n", from_me ? "yes" : "no");

    /* Ignoring a queued real-time signal drops all of it. */
    runs = 0;
    block(a, SIG_BLOCK);
    for (int i = 0; i < 5; i++)
        kill(getpid(), a);
    signal(a, SIG_IGN);
    sigaction(a, &sa, NULL);
    block(a, SIG_UNBLOCK);
    printf("after SIG_IGN while 5 were queued: %d delivered\n", runs);

    /* Many queued: all of them come. */
    runs = 0;
    block(b, SIG_BLOCK);
    for (int i = 0; i < 50; i++)
        kill(getpid(), b);
    block(b, SIG_UNBLOCK);
    printf("50 queued, %d delivered\n", runs < 64 ? runs : 64);
    return 0;
}

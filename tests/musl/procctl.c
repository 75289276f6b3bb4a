/* prctl's parent-death signal and timer slack, and getrusage of one
 * thread: a child that set PR_SET_PDEATHSIG gets the signal when its
 * parent ends (and a grandchild that did not set one gets nothing), the
 * setting is not passed on by fork and is refused for a bad signal; the
 * timer slack starts at 50 us, is per thread and 0 sets it back;
 * RUSAGE_THREAD counts the calling thread's time alone. Same output as
 * on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *err(int r) { return r == 0 ? "ok" : strerror(errno); }

static volatile sig_atomic_t got;
static void on_usr1(int s) { got = s; }

/* The middle process forks a child that asks for SIGUSR1 when its parent
 * ends, then ends itself; the child says what it got on a pipe. */
static void parent_death(void) {
    int fds[2];
    pipe(fds);
    pid_t middle = fork();
    if (middle == 0) {
        pid_t child = fork();
        if (child == 0) {
            signal(SIGUSR1, on_usr1);
            prctl(PR_SET_PDEATHSIG, SIGUSR1);
            int sig = -1;
            prctl(PR_GET_PDEATHSIG, &sig);
            pid_t grandchild = fork();
            if (grandchild == 0) {
                int inherited = -1;
                prctl(PR_GET_PDEATHSIG, &inherited);
                _exit(inherited);
            }
            int status;
            waitpid(grandchild, &status, 0);
            char line[128];
            write(fds[1], "", 0);
            for (int i = 0; i < 2000 && !got; i++)
                usleep(10000);
            int n = snprintf(line, sizeof line,
                             "child: asked for %d, its child inherited %d, got %s\n", sig,
                             WEXITSTATUS(status), got == SIGUSR1 ? "SIGUSR1" : "nothing");
            write(fds[1], line, n);
            _exit(0);
        }
        /* Give the child time to set its signal, then end. */
        usleep(200000);
        _exit(0);
    }
    close(fds[1]);
    waitpid(middle, 0, 0);
    char buf[256];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        fwrite(buf, 1, n, stdout);
    close(fds[0]);
}

static void *slack_thread(void *arg) {
    (void)arg;
    printf("new thread's slack: %d\n", prctl(PR_GET_TIMERSLACK));
    prctl(PR_SET_TIMERSLACK, 1000);
    printf("new thread set 1000: %d\n", prctl(PR_GET_TIMERSLACK));
    return 0;
}

static void *spin_thread(void *arg) {
    (void)arg;
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 300000000L);
    return 0;
}

static double seconds(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    parent_death();

    int sig = -1;
    const char *r = err(prctl(PR_GET_PDEATHSIG, &sig));
    printf("PR_GET_PDEATHSIG: %s, %d\n", r, sig);
    printf("PR_SET_PDEATHSIG 65: %s\n", err(prctl(PR_SET_PDEATHSIG, 65)));
    printf("PR_SET_PDEATHSIG -1: %s\n", err(prctl(PR_SET_PDEATHSIG, -1L)));
    printf("PR_GET_PDEATHSIG to a bad pointer: %s\n", err(prctl(PR_GET_PDEATHSIG, (int *)8)));
    printf("PR_SET_PDEATHSIG 0: %s\n", err(prctl(PR_SET_PDEATHSIG, 0)));

    printf("slack: %d\n", prctl(PR_GET_TIMERSLACK));
    prctl(PR_SET_TIMERSLACK, 123456);
    printf("set 123456: %d\n", prctl(PR_GET_TIMERSLACK));
    pthread_t t;
    pthread_create(&t, 0, slack_thread, 0);
    pthread_join(t, 0);
    printf("main thread's still: %d\n", prctl(PR_GET_TIMERSLACK));
    prctl(PR_SET_TIMERSLACK, 0);
    printf("set 0: %d\n", prctl(PR_GET_TIMERSLACK));

    /* Another thread spins for 0.3 s of its own time while this one sleeps: the process's
     * time has it, this thread's does not. */
    pthread_create(&t, 0, spin_thread, 0);
    pthread_join(t, 0);
    struct rusage self, thread;
    printf("RUSAGE_THREAD: %s\n", err(getrusage(RUSAGE_THREAD, &thread)));
    getrusage(RUSAGE_SELF, &self);
    double mine = seconds(thread.ru_utime) + seconds(thread.ru_stime);
    double all = seconds(self.ru_utime) + seconds(self.ru_stime);
    printf("process time %s 0.2 s, this thread's %s 0.1 s\n", all >= 0.2 ? "over" : "UNDER",
           mine < 0.1 ? "under" : "OVER");
    printf("this thread switched voluntarily: %s\n", thread.ru_nvcsw > 0 ? "yes" : "no");
    printf("RUSAGE 2: %s\n", err(getrusage(2, &thread)));
    return 0;
}

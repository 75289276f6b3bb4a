/* Interval timers: ITIMER_REAL periodic, ITIMER_VIRTUAL and ITIMER_PROF on
 * a busy loop, getitimer, and disarming. Counts vary with the clock, so the
 * output states ranges, not numbers. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int real, virt, prof;

static void on_timer(int signal) {
    if (signal == SIGALRM)
        real++;
    else if (signal == SIGVTALRM)
        virt++;
    else
        prof++;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void) {
    signal(SIGALRM, on_timer);
    signal(SIGVTALRM, on_timer);
    signal(SIGPROF, on_timer);

    struct itimerval every_20ms = {{0, 20000}, {0, 20000}};
    double start = now();
    setitimer(ITIMER_REAL, &every_20ms, NULL);
    while (real < 5)
        pause();
    double took = now() - start;
    struct itimerval off = {{0, 0}, {0, 0}}, left;
    setitimer(ITIMER_REAL, &off, NULL);
    if (took >= 0.095 && took < 1.0)
        printf("ITIMER_REAL: 5 signals, after about 100 ms\n");
    else /* Which way it was wrong, and by how much, for whoever reads a failure. */
        printf("ITIMER_REAL: 5 signals, at the wrong time: %s, %.0f ms\n", took < 0.095 ? "too soon" : "too late",
               took * 1000);

    struct itimerval every_10ms = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_VIRTUAL, &every_10ms, NULL);
    setitimer(ITIMER_PROF, &every_10ms, NULL);
    getitimer(ITIMER_PROF, &left);
    printf("getitimer: interval %ld us, value %s\n", (long)left.it_interval.tv_usec, left.it_value.tv_sec == 0 && left.it_value.tv_usec > 0 && left.it_value.tv_usec <= 20000 ? "at most a tick over it" : "wrong");
    volatile unsigned long spin = 0;
    while (virt < 10 || prof < 10)
        spin++;
    setitimer(ITIMER_VIRTUAL, &off, NULL);
    setitimer(ITIMER_PROF, &off, NULL);
    printf("ITIMER_VIRTUAL and ITIMER_PROF: both fired at least 10 times on a busy loop\n");
    getitimer(ITIMER_PROF, &left);
    printf("disarmed: %s\n", left.it_value.tv_sec == 0 && left.it_value.tv_usec == 0 ? "yes" : "no");
    return 0;
}

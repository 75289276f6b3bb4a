/* Waiting on many descriptors: select with a timeout on a pipe (times out
 * with empty sets, the time left written back; wakes when a writer
 * writes; sees end of file as readable and a full pipe as not writable),
 * pselect6 and ppoll with a signal mask (a signal blocked by the mask
 * waits; unblocked, it ends the wait with EINTR after its handler ran),
 * poll's POLLNVAL, select's EBADF and EINVAL, and bad pointers. The same
 * output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { (void)sig; handled++; }

static long ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int p[2];
    pipe(p);
    fd_set rd, wr;
    struct timespec t0;

    /* A timeout on an empty pipe. */
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    struct timeval tv = {0, 100000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n = select(p[0] + 1, &rd, NULL, NULL, &tv);
    long waited = ms_since(&t0);
    printf("select on an empty pipe: %d, set empty %d, waited at least 100 ms %d, time left %ld.%06ld\n",
           n, !FD_ISSET(p[0], &rd), waited >= 99, (long)tv.tv_sec, (long)tv.tv_usec);

    /* Readable once a child writes; writable from the start. */
    pid_t pid = fork();
    if (pid == 0) {
        usleep(50000);
        write(p[1], "x", 1);
        _exit(0);
    }
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    tv = (struct timeval){5, 0};
    n = select(p[0] + 1, &rd, NULL, NULL, &tv);
    printf("select woken by a writer: %d, readable %d, time left under 5 s %d\n", n,
           FD_ISSET(p[0], &rd), tv.tv_sec < 5);
    waitpid(pid, NULL, 0);
    char c;
    read(p[0], &c, 1);
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_SET(p[0], &rd);
    FD_SET(p[1], &wr);
    tv = (struct timeval){0, 0};
    n = select(p[1] + 1, &rd, &wr, NULL, &tv);
    printf("select polling: %d, readable %d, writable %d\n", n, FD_ISSET(p[0], &rd),
           FD_ISSET(p[1], &wr));

    /* A full pipe is not writable. */
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    char block[4096];
    memset(block, 'y', sizeof block);
    while (write(p[1], block, sizeof block) > 0)
        ;
    FD_ZERO(&wr);
    FD_SET(p[1], &wr);
    tv = (struct timeval){0, 0};
    n = select(p[1] + 1, NULL, &wr, NULL, &tv);
    printf("select on a full pipe for writing: %d\n", n);
    close(p[1]);
    while (read(p[0], block, sizeof block) > 0)
        ;
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    n = select(p[0] + 1, &rd, NULL, NULL, NULL);
    printf("select at end of file: %d, readable %d\n", n, FD_ISSET(p[0], &rd));
    close(p[0]);

    /* Bad input. */
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    n = select(p[0] + 1, &rd, NULL, NULL, NULL);
    printf("select on a closed descriptor: %d (%s)\n", n, strerror(errno));
    n = select(-1, NULL, NULL, NULL, NULL);
    printf("select with nfds -1: %d (%s)\n", n, strerror(errno));
    /* Raw: musl would carry the microseconds over itself. */
    tv = (struct timeval){0, 1500000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    n = syscall(SYS_select, 0, 0, 0, 0, &tv);
    waited = ms_since(&t0);
    printf("select with 1.5 s of microseconds: %d, waited at least 1.5 s %d, time left %ld.%06ld\n",
           n, waited >= 1499, (long)tv.tv_sec, (long)tv.tv_usec);
    tv = (struct timeval){-1, 0};
    n = syscall(SYS_select, 0, 0, 0, 0, &tv);
    printf("select with a negative timeout: %d (%s)\n", n, strerror(errno));
    tv = (struct timeval){0, 200000};
    n = syscall(SYS_select, 0, 0, 0, 0, &tv);
    printf("select's time left written back: %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
    n = syscall(SYS_select, 1, 16, 0, 0, 0);
    printf("select with a bad set pointer: %d (%s)\n", n, strerror(errno));
    struct pollfd bad = {.fd = 99, .events = POLLIN};
    n = poll(&bad, 1, 0);
    printf("poll on a closed descriptor: %d, POLLNVAL %d\n", n, bad.revents == POLLNVAL);

    /* A signal mask for the wait. */
    struct sigaction sa = {.sa_handler = on_usr1};
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1, none, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &usr1, &old);
    pipe(p);
    pid_t me = getpid();
    pid = fork();
    if (pid == 0) {
        usleep(50000);
        kill(me, SIGUSR1);
        _exit(0);
    }
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    struct timespec ts = {0, 300000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    n = ppoll(&pfd, 1, &ts, &usr1);
    printf("ppoll with SIGUSR1 blocked: %d after the whole timeout %d, handled %d\n", n,
           ms_since(&t0) >= 299, handled);
    waitpid(pid, NULL, 0);
    /* SIGUSR1 is pending now; a wait that unblocks it ends at once. */
    ts = (struct timespec){5, 0};
    n = ppoll(&pfd, 1, &ts, &none);
    int e = errno;
    printf("ppoll unblocking a pending signal: %d (%s), handled %d\n", n, strerror(e), handled);
    sigset_t now;
    sigprocmask(SIG_SETMASK, NULL, &now);
    printf("mask restored after ppoll: %d\n", sigismember(&now, SIGUSR1));
    kill(me, SIGUSR1);
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    ts = (struct timespec){5, 0};
    n = pselect(p[0] + 1, &rd, NULL, NULL, &ts, &none);
    e = errno;
    printf("pselect unblocking a pending signal: %d (%s), handled %d\n", n, strerror(e), handled);
    sigprocmask(SIG_SETMASK, NULL, &now);
    printf("mask restored after pselect: %d\n", sigismember(&now, SIGUSR1));
    write(p[1], "z", 1);
    ts = (struct timespec){5, 0};
    n = pselect(p[0] + 1, &rd, NULL, NULL, &ts, &none);
    printf("pselect on a ready pipe: %d, readable %d\n", n, FD_ISSET(p[0], &rd));
    ts = (struct timespec){0, 1000000000};
    n = ppoll(&pfd, 1, &ts, NULL);
    printf("ppoll with a second of nanoseconds: %d (%s)\n", n, strerror(errno));
    n = syscall(SYS_ppoll, &pfd, 1, NULL, &none, 4);
    printf("ppoll with a 4-byte mask: %d (%s)\n", n, strerror(errno));
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}

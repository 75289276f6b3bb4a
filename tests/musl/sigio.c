/* Signal-driven I/O: O_ASYNC on a pipe's end makes its owner (F_SETOWN:
 * a process, minus a group; F_SETOWN_EX: also one thread) get SIGIO when
 * it becomes ready, or with F_SETSIG another signal carrying si_code
 * POLL_IN/POLL_OUT, si_band and si_fd. A reader hears of each write (not
 * of its own reads), a writer of each read (not of its own writes), and
 * each side of the other's close. The owner calls' answers and bad input.
 * Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sigset_t waited;

static const char *code_name(int code) {
    switch (code) {
    case POLL_IN: return "POLL_IN";
    case POLL_OUT: return "POLL_OUT";
    case POLL_ERR: return "POLL_ERR";
    case POLL_HUP: return "POLL_HUP";
    case SI_KERNEL: return "SI_KERNEL";
    default: return "other";
    }
}

/* What arrives within a second: the signal and its details, or nothing. */
static void expect(const char *what, int fd) {
    struct timespec second = {1, 0};
    siginfo_t info;
    int sig = sigtimedwait(&waited, &info, &second);
    if (sig < 0) {
        printf("%s: nothing\n", what);
        return;
    }
    const char *name = sig == SIGIO ? "SIGIO" : sig == SIGRTMIN ? "SIGRTMIN" : sig == SIGUSR1 ? "SIGUSR1" : "other";
    if (sig == SIGIO) {
        printf("%s: %s (%s)\n", what, name, code_name(info.si_code));
    } else {
        printf("%s: %s (%s, band %#lx, %s)\n", what, name, code_name(info.si_code), info.si_band,
               info.si_fd == fd ? "its fd" : "ANOTHER FD");
    }
}

/* None arrives at once. */
static void quiet(const char *what) {
    struct timespec none = {0, 50000000};
    int sig = sigtimedwait(&waited, 0, &none);
    printf("%s: %s\n", what, sig < 0 ? "nothing" : "A SIGNAL");
}

int main(void) {
    sigemptyset(&waited);
    sigaddset(&waited, SIGIO);
    sigaddset(&waited, SIGRTMIN);
    sigaddset(&waited, SIGUSR1);
    sigprocmask(SIG_BLOCK, &waited, 0);
    int fds[2];
    char c;
    pipe(fds);

    struct f_owner_ex ex = {9, 9};
    fcntl(fds[0], F_GETOWN_EX, &ex);
    printf("a new file: F_GETOWN %d, F_GETOWN_EX type %d pid %d, F_GETSIG %d\n", fcntl(fds[0], F_GETOWN),
           ex.type, ex.pid, fcntl(fds[0], F_GETSIG));

    /* A reader with plain SIGIO. */
    fcntl(fds[0], F_SETOWN, getpid());
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_ASYNC);
    printf("O_ASYNC shows: %s\n", fcntl(fds[0], F_GETFL) & O_ASYNC ? "yes" : "no");
    quiet("setting it");
    if (fork() == 0) {
        write(fds[1], "a", 1);
        _exit(0);
    }
    wait(0);
    expect("a child writes", fds[0]);
    read(fds[0], &c, 1);
    quiet("the reader reads");

    /* The same with F_SETSIG: the details come too. */
    fcntl(fds[0], F_SETSIG, SIGRTMIN);
    write(fds[1], "b", 1);
    expect("a write, with F_SETSIG", fds[0]);
    write(fds[1], "c", 1);
    expect("another write", fds[0]);
    read(fds[0], &c, 1);
    read(fds[0], &c, 1);

    /* The writer's end: hears of reads, not of its own writes. */
    fcntl(fds[1], F_SETOWN, getpid());
    fcntl(fds[1], F_SETSIG, SIGUSR1);
    fcntl(fds[1], F_SETFL, O_ASYNC);
    write(fds[1], "d", 1);
    expect("the writer writes (the reader hears)", fds[0]);
    quiet("and the writer");
    read(fds[0], &c, 1);
    expect("the reader reads (the writer hears)", fds[1]);

    /* Turned off: nothing more. */
    fcntl(fds[0], F_SETFL, 0);
    write(fds[1], "e", 1);
    quiet("O_ASYNC cleared, a write");
    read(fds[0], &c, 1);
    expect("the writer still hears the read", fds[1]);
    fcntl(fds[0], F_SETFL, O_ASYNC);

    /* Owned by this thread alone, then by this process's group. */
    ex.type = F_OWNER_TID;
    ex.pid = syscall(SYS_gettid);
    printf("F_SETOWN_EX thread: %s\n", fcntl(fds[0], F_SETOWN_EX, &ex) ? strerror(errno) : "ok");
    write(fds[1], "f", 1);
    expect("a write, to the thread", fds[0]);
    read(fds[0], &c, 1);
    expect("(the writer)", fds[1]);
    setpgid(0, 0);
    fcntl(fds[0], F_SETOWN, -getpgrp());
    printf("F_GETOWN after a group: %s\n", fcntl(fds[0], F_GETOWN) == -getpgrp() ? "minus the group" : "WRONG");
    fcntl(fds[0], F_GETOWN_EX, &ex);
    printf("F_GETOWN_EX: type %d, %s\n", ex.type, ex.pid == getpgrp() ? "the group" : "WRONG");
    write(fds[1], "g", 1);
    expect("a write, to the group", fds[0]);
    read(fds[0], &c, 1);
    expect("(the writer)", fds[1]);

    /* The other side closes. */
    close(fds[1]);
    expect("the writer closes", fds[0]);
    int again[2];
    pipe(again);
    fcntl(again[1], F_SETOWN, getpid());
    fcntl(again[1], F_SETSIG, SIGUSR1);
    fcntl(again[1], F_SETFL, O_ASYNC);
    signal(SIGPIPE, SIG_IGN);
    close(again[0]);
    expect("the reader closes", again[1]);

    /* Bad input. */
    errno = 0;
    printf("F_SETOWN of no such process: %s\n", fcntl(fds[0], F_SETOWN, 999999) ? strerror(errno) : "ok");
    printf("F_SETOWN of no such group: %s\n", fcntl(fds[0], F_SETOWN, -999999) ? strerror(errno) : "ok");
    printf("F_SETOWN INT_MIN: %s\n", fcntl(fds[0], F_SETOWN, -2147483647 - 1) ? strerror(errno) : "ok");
    ex.type = 7;
    ex.pid = getpid();
    printf("F_SETOWN_EX type 7: %s\n", fcntl(fds[0], F_SETOWN_EX, &ex) ? strerror(errno) : "ok");
    ex.type = F_OWNER_PID;
    ex.pid = 0;
    printf("F_SETOWN_EX pid 0: %s\n", fcntl(fds[0], F_SETOWN_EX, &ex) ? strerror(errno) : "ok");
    printf("F_SETOWN_EX bad pointer: %s\n", fcntl(fds[0], F_SETOWN_EX, (void *)8) ? strerror(errno) : "ok");
    printf("F_GETOWN_EX bad pointer: %s\n", fcntl(fds[0], F_GETOWN_EX, (void *)8) ? strerror(errno) : "ok");
    printf("F_SETSIG 65: %s\n", fcntl(fds[0], F_SETSIG, 65) ? strerror(errno) : "ok");
    const char *set = fcntl(fds[0], F_SETSIG, 64) ? strerror(errno) : "ok";
    printf("F_SETSIG 64, then F_GETSIG: %s, %d\n", set, fcntl(fds[0], F_GETSIG));
    printf("F_GETOWN on a closed descriptor: %s\n", fcntl(fds[1], F_GETOWN) < 0 ? strerror(errno) : "ok");
    return 0;
}

/* pidfds: pidfd_open, pidfd_send_signal (to a pidfd and to a /proc/PID
 * directory), poll and epoll on a pidfd (readable when the process ends),
 * waitid(P_PIDFD) blocking and not, a zombie's pidfd, and ESRCH once the
 * process is reaped. Run here and on Linux: the same lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#define PIDFD_NONBLOCK O_NONBLOCK

static const char *err(long r)
{
    static char text[32];
    if (r >= 0) {
        snprintf(text, sizeof text, "%ld", r);
        return text;
    }
    switch (errno) {
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case ESRCH: return "ESRCH";
    case EPERM: return "EPERM";
    case EAGAIN: return "EAGAIN";
    default: return strerror(errno);
    }
}

static long pidfd_open(pid_t pid, unsigned flags)
{
    return syscall(SYS_pidfd_open, pid, flags);
}

static long send(int fd, int sig, siginfo_t *info, unsigned flags)
{
    return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static int readable(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static volatile sig_atomic_t got_signal, got_code;

static void on_usr1(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    got_signal = sig;
    got_code = info->si_code;
}

static pid_t child_that_waits(void)
{
    pid_t child = fork();
    if (child == 0) {
        for (;;)
            pause();
    }
    return child;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    printf("pidfd_open(-1): %s\n", err(pidfd_open(-1, 0)));
    printf("pidfd_open(0): %s\n", err(pidfd_open(0, 0)));
    printf("pidfd_open(self, flag 1): %s\n", err(pidfd_open(getpid(), 1)));
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    waitpid(gone, 0, 0);
    printf("pidfd_open(a reaped child): %s\n", err(pidfd_open(gone, 0)));

    int self = pidfd_open(getpid(), 0);
    printf("pidfd_open(self): %s\n", self >= 0 ? "a descriptor" : err(self));
    printf("  FD_CLOEXEC %d, O_RDWR %s\n", fcntl(self, F_GETFD) & FD_CLOEXEC,
           (fcntl(self, F_GETFL) & O_ACCMODE) == O_RDWR ? "yes" : "no");
    char link[64] = "", path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", self);
    readlink(path, link, sizeof link - 1);
    printf("  /proc/self/fd: %s\n", link);
    char buf[8];
    printf("  read: %s\n", err(read(self, buf, sizeof buf)));
    printf("  readable while running: %d\n", readable(self, 0));

    struct sigaction sa = {0};
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    long r = send(self, SIGUSR1, 0, 0);
    printf("send SIGUSR1 to self: %s, handled %d, si_code %d\n", err(r), got_signal == SIGUSR1,
           got_code);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = SIGUSR1;
    info.si_code = SI_QUEUE;
    got_signal = 0;
    r = send(self, SIGUSR1, &info, 0);
    printf("send SIGUSR1 with SI_QUEUE to self: %s, handled %d, si_code %d\n", err(r),
           got_signal == SIGUSR1, got_code);
    info.si_signo = SIGUSR2;
    printf("send, siginfo of another signal: %s\n", err(send(self, SIGUSR1, &info, 0)));
    printf("send, flags 0x100: %s\n", err(send(self, 0, 0, 0x100)));
    printf("send, signal 99: %s\n", err(send(self, 99, 0, 0)));
    printf("send, a bad descriptor: %s\n", err(send(99, 0, 0, 0)));
    int file = open("/proc/self/status", O_RDONLY);
    printf("send, a file: %s\n", err(send(file, 0, 0, 0)));
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d", getpid());
    int procdir = open(dir, O_RDONLY | O_DIRECTORY);
    got_signal = 0;
    r = send(procdir, SIGUSR1, 0, 0);
    printf("send SIGUSR1 through /proc/PID: %s, handled %d\n", err(r), got_signal == SIGUSR1);
    printf("waitid(P_PIDFD) on a file: %s\n", err(waitid(P_PIDFD, file, &info, WEXITED)));

    /* A child: signalled through its pidfd, seen ending, reaped by it. */
    pid_t child = child_that_waits();
    int fd = pidfd_open(child, 0);
    printf("the child's pidfd readable before: %d\n", readable(fd, 0));
    info.si_code = SI_USER;
    info.si_signo = SIGTERM;
    printf("send SIGTERM with SI_USER to the child: %s\n", err(send(fd, SIGTERM, &info, 0)));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 5};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    printf("send SIGTERM to the child: %s\n", err(send(fd, SIGTERM, 0, 0)));
    printf("readable after, by poll: %d\n", readable(fd, 5000));
    struct epoll_event out;
    printf("readable after, by epoll: %d\n", epoll_wait(ep, &out, 1, 5000));
    printf("send 0 to the zombie: %s\n", err(send(fd, 0, 0, 0)));
    memset(&info, 0, sizeof info);
    r = waitid(P_PIDFD, fd, &info, WEXITED);
    printf("waitid(P_PIDFD): %s", err(r));
    printf(", pid is the child's %d, code CLD_KILLED %d, status %d\n", info.si_pid == child,
           info.si_code == CLD_KILLED, info.si_status);
    printf("send 0 after the reaping: %s\n", err(send(fd, 0, 0, 0)));
    printf("waitid(P_PIDFD) again: %s\n", err(waitid(P_PIDFD, fd, &info, WEXITED)));
    close(fd);

    /* PIDFD_NONBLOCK: waitid does not wait. */
    child = child_that_waits();
    fd = pidfd_open(child, PIDFD_NONBLOCK);
    printf("O_NONBLOCK on a PIDFD_NONBLOCK pidfd: %s\n",
           fcntl(fd, F_GETFL) & O_NONBLOCK ? "yes" : "no");
    printf("waitid(P_PIDFD) of a running child, non-blocking: %s\n",
           err(waitid(P_PIDFD, fd, &info, WEXITED)));
    kill(child, SIGKILL);
    readable(fd, 5000);
    /* Readable says it ended; the wait may still find it a moment later. */
    memset(&info, 0, sizeof info);
    while ((r = waitid(P_PIDFD, fd, &info, WEXITED)) == 0 && info.si_pid == 0)
        sched_yield();
    while (r < 0 && errno == EAGAIN)
        r = waitid(P_PIDFD, fd, &info, WEXITED);
    printf("waitid(P_PIDFD) once it ended: %s, status %d\n", err(r), info.si_status);
    close(fd);

    /* The pidfd of a child that ended before it was asked for. */
    child = fork();
    if (child == 0)
        _exit(7);
    while (waitid(P_PID, child, &info, WEXITED | WNOWAIT | WNOHANG) == 0 && info.si_pid == 0)
        sched_yield();
    fd = pidfd_open(child, 0);
    printf("a zombie's pidfd: %s, readable %d\n", fd >= 0 ? "a descriptor" : err(fd),
           readable(fd, 0));
    r = waitid(P_PIDFD, fd, &info, WEXITED);
    printf("waitid(P_PIDFD): %s, status %d\n", err(r), info.si_status);
    return 0;
}

/* Edges the outside conformance suite found, each answered as Linux
 * answers it: O_PATH descriptors that name a file and do no I/O, O_NOATIME
 * for the owner only, SA_RESETHAND keeping the other flags, gettimeofday's
 * timezone pointer, the Internet families refused in Linux's order, bad
 * iovecs refused before anything is written, F_GETLK's first conflict,
 * a futex wake on an address with nothing there, and clock_nanosleep's
 * clocks. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#define FUTEX_WAKE 1
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

static void on_usr1(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)info;
    (void)ctx;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = open("edge-file", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "0123456789", 10);

    /* O_PATH. */
    int p = open("edge-file", O_PATH);
    char buf[16];
    printf("O_PATH open: %s\n", err(p));
    printf("read: %s\n", err(read(p, buf, 1)));
    printf("write: %s\n", err(write(p, "x", 1)));
    printf("lseek: %s\n", err(lseek(p, 0, SEEK_SET)));
    struct stat st;
    printf("fstat: %s, size %ld\n", err(fstat(p, &st)), (long)st.st_size);
    printf("fcntl F_GETFL has O_PATH: %s\n", fcntl(p, F_GETFL) & O_PATH ? "yes" : "no");
    printf("fcntl F_SETFL: %s\n", err(fcntl(p, F_SETFL, O_NONBLOCK)));
    int d = dup(p);
    printf("dup: %s\n", err(d));
    printf("accept: %s\n", err(accept(p, NULL, NULL)));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    printf("epoll_ctl: %s\n", err(epoll_ctl(ep, EPOLL_CTL_ADD, p, &ev)));
    printf("mmap: %s\n", mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, p, 0) == MAP_FAILED ? strerror(errno) : "ok");
    printf("fchmod: %s\n", err(fchmod(p, 0600)));
    printf("close: %s\n", err(close(p)));
    close(d);
    mkdir("edge-dir", 0755);
    int dp = open("edge-dir", O_PATH | O_DIRECTORY);
    printf("O_PATH directory for openat: %s\n", err(openat(dp, "../edge-file", O_RDONLY)));
    printf("getdents on it: %s\n", err(syscall(SYS_getdents64, dp, buf, sizeof buf)));
    symlink("edge-file", "edge-link");
    int lp = open("edge-link", O_PATH | O_NOFOLLOW);
    fstat(lp, &st);
    printf("O_PATH|O_NOFOLLOW on a link: %s, %s\n", err(lp), S_ISLNK(st.st_mode) ? "the link" : "the file");
    printf("O_NOFOLLOW without O_PATH: %s\n", err(open("edge-link", O_RDONLY | O_NOFOLLOW)));
    chmod("edge-file", 0);
    pid_t pid = fork();
    if (pid == 0) {
        setuid(1000);
        printf("user O_PATH of a mode 0 file: %s\n", err(open("edge-file", O_PATH)));
        printf("user O_RDONLY of it: %s\n", err(open("edge-file", O_RDONLY)));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    chmod("edge-file", 0666);

    /* O_NOATIME: the owner's. */
    printf("root O_NOATIME: %s\n", err(open("edge-file", O_RDONLY | O_NOATIME)));
    pid = fork();
    if (pid == 0) {
        setuid(1000);
        printf("user O_NOATIME of root's file: %s\n", err(open("edge-file", O_RDONLY | O_NOATIME)));
        _exit(0);
    }
    waitpid(pid, NULL, 0);

    /* SA_RESETHAND: the handler goes, the flags stay. */
    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    printf("after SA_RESETHAND: handler %s, SA_SIGINFO %s\n",
           now.sa_handler == SIG_DFL ? "SIG_DFL" : "still set", now.sa_flags & SA_SIGINFO ? "kept" : "gone");

    /* gettimeofday's timezone. */
    struct timeval tv;
    printf("gettimeofday bad tz: %s\n", err(syscall(SYS_gettimeofday, &tv, (void *)8)));
    struct timezone tz = {99, 99};
    const char *r = err(syscall(SYS_gettimeofday, &tv, &tz));
    printf("gettimeofday tz: %s, %d %d\n", r, tz.tz_minuteswest, tz.tz_dsttime);

    /* The Internet families (this kernel has none; their order is Linux's). */
    printf("AF_INET SOCK_STREAM UDP: %s\n", err(socket(AF_INET, SOCK_STREAM, 17)));
    printf("AF_INET SOCK_DGRAM 99: %s\n", err(socket(AF_INET, SOCK_DGRAM, 99)));
    printf("AF_INET SOCK_SEQPACKET: %s\n", err(socket(AF_INET, SOCK_SEQPACKET, 0)));
    printf("AF_INET6 SOCK_STREAM 17: %s\n", err(socket(AF_INET6, SOCK_STREAM, 17)));
    printf("AF_INET type 12: %s\n", err(socket(AF_INET, 12, 0)));

    /* Bad iovecs: refused whole, nothing written. */
    ftruncate(fd, 0);
    lseek(fd, 0, SEEK_SET);
    struct iovec iov[2] = {{"abc", 3}, {"def", (size_t)-1}};
    printf("writev with a negative length: %s\n", err(writev(fd, iov, 2)));
    iov[1].iov_len = 3;
    iov[1].iov_base = (void *)0xffffffff80000000UL;
    printf("writev with a kernel buffer second: %s\n", err(writev(fd, iov, 2)));
    fstat(fd, &st);
    printf("the file has %ld bytes\n", (long)st.st_size);
    printf("writev of 1025 buffers: %s\n", err(writev(fd, iov, 1025)));
    struct iovec rio[1] = {{buf, (size_t)-5}};
    printf("readv with a negative length: %s\n", err(readv(fd, rio, 1)));
    iov[1].iov_base = "def";
    printf("writev good: %zd\n", writev(fd, iov, 2));

    /* F_GETLK: the conflict that starts first. */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 5};
    fcntl(fd, F_SETLK, &fl);
    fl = (struct flock){.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 5};
    fcntl(fd, F_SETLK, &fl);
    pid = fork();
    if (pid == 0) {
        struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        fcntl(fd, F_GETLK, &q);
        printf("F_GETLK: %s lock at %ld+%ld\n", q.l_type == F_RDLCK ? "read" : "write",
               (long)q.l_start, (long)q.l_len);
        _exit(0);
    }
    waitpid(pid, NULL, 0);

    /* A futex wake names its word as a wait does. */
    printf("FUTEX_WAKE on nothing: %s\n", err(syscall(SYS_futex, (void *)0x1000, FUTEX_WAKE, 1, NULL, NULL, 0)));
    int word = 0;
    printf("FUTEX_WAKE misaligned: %s\n",
           err(syscall(SYS_futex, (char *)&word + 1, FUTEX_WAKE, 1, NULL, NULL, 0)));
    printf("FUTEX_WAKE nobody: %ld\n", syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0));

    /* clock_nanosleep's clocks. */
    struct timespec ts = {0, 1000000};
    printf("CLOCK_MONOTONIC_RAW: %s\n", strerror(clock_nanosleep(CLOCK_MONOTONIC_RAW, 0, &ts, NULL)));
    printf("CLOCK_REALTIME_COARSE: %s\n", strerror(clock_nanosleep(CLOCK_REALTIME_COARSE, 0, &ts, NULL)));
    printf("CLOCK_BOOTTIME: %s\n", strerror(clock_nanosleep(CLOCK_BOOTTIME, 0, &ts, NULL)));
    printf("CLOCK_TAI: %s\n", strerror(clock_nanosleep(CLOCK_TAI, 0, &ts, NULL)));
    /* The process's own CPU time: a time already past (its sole thread
     * asleep would wait for ever for time still to come). */
    struct timespec past = {0, 0};
    printf("CLOCK_PROCESS_CPUTIME_ID, a time past: %s\n",
           strerror(syscall(SYS_clock_nanosleep, CLOCK_PROCESS_CPUTIME_ID, TIMER_ABSTIME, &past, NULL) < 0
                        ? errno
                        : 0));
    printf("CLOCK_THREAD_CPUTIME_ID: %s\n",
           strerror(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL) < 0 ? errno : 0));
    printf("clock 99: %s\n", strerror(syscall(SYS_clock_nanosleep, 99, 0, &ts, NULL) < 0 ? errno : 0));

    unlink("edge-link");
    rmdir("edge-dir");
    unlink("edge-file");
    return 0;
}

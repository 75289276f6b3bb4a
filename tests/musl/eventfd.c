/* eventfd: a counter behind a descriptor. A read takes the whole count
 * (with EFD_SEMAPHORE, 1) and waits while it is 0; a write adds and waits
 * while the sum would pass 2^64 - 2; poll, epoll and fcntl see it as any
 * file; a read woken by another process's write, and a write woken by a
 * read, each get what they waited for. Run here and on Linux: the same
 * lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *err(void)
{
    return errno == EAGAIN ? "EAGAIN" : errno == EINVAL ? "EINVAL" : strerror(errno);
}

static void show_read(const char *what, int fd)
{
    uint64_t v = 0;
    ssize_t n = read(fd, &v, sizeof v);
    if (n < 0)
        printf("%s: %s\n", what, err());
    else
        printf("%s: %zd bytes, %llu\n", what, n, (unsigned long long)v);
}

static void show_write(const char *what, int fd, uint64_t v)
{
    ssize_t n = write(fd, &v, sizeof v);
    if (n < 0)
        printf("%s: %s\n", what, err());
    else
        printf("%s: %zd bytes\n", what, n);
}

static void show_poll(const char *what, int fd)
{
    struct pollfd p = {fd, POLLIN | POLLOUT, 0};
    int n = poll(&p, 1, 0);
    printf("%s: %d,%s%s\n", what, n, p.revents & POLLIN ? " POLLIN" : "",
           p.revents & POLLOUT ? " POLLOUT" : "");
}

static void pause_ms(int ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, 0);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);

    int fd = eventfd(3, EFD_NONBLOCK);
    show_poll("poll at 3", fd);
    show_read("read", fd);
    show_read("read again", fd);
    show_poll("poll at 0", fd);
    show_write("write 5", fd, 5);
    show_write("write 7", fd, 7);
    show_read("read after 5 and 7", fd);
    show_write("write 2^64-1", fd, UINT64_MAX);
    show_write("write 2^64-2", fd, UINT64_MAX - 1);
    show_poll("poll at 2^64-2", fd);
    show_write("write 1 more", fd, 1);
    show_write("write 0", fd, 0);
    show_read("read the most", fd);
    char small[4];
    printf("read of 4 bytes: %s\n", read(fd, small, 4) < 0 ? err() : "read");
    printf("write of 4 bytes: %s\n", write(fd, small, 4) < 0 ? err() : "written");
    uint64_t big[2] = {0, 0};
    show_write("write 6", fd, 6);
    printf("read into 16 bytes: %zd\n", read(fd, big, sizeof big));
    printf("O_RDWR|O_NONBLOCK in F_GETFL: %s\n",
           fcntl(fd, F_GETFL) == (O_RDWR | O_NONBLOCK) ? "yes" : "no");
    printf("FD_CLOEXEC: %d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    struct stat st;
    fstat(fd, &st);
    printf("fstat: type bits %o, permissions %o\n", st.st_mode & S_IFMT, st.st_mode & 0777);
    char link[64] = "", path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    readlink(path, link, sizeof link - 1);
    printf("/proc/self/fd: %s\n", link);
    close(fd);

    fd = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
    show_read("semaphore read", fd);
    show_read("semaphore read", fd);
    show_read("semaphore read", fd);
    printf("FD_CLOEXEC: %d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);

    int bad = eventfd(0, 0x100);
    printf("eventfd(0, 0x100): %d %s\n", bad, err());
    fd = syscall(SYS_eventfd, 4);
    printf("eventfd(4) without flags: F_GETFL O_RDWR %s\n",
           fcntl(fd, F_GETFL) == O_RDWR ? "yes" : "no");
    show_read("read", fd);

    /* A read that waits: the child writes after a while. */
    pid_t child = fork();
    if (child == 0) {
        pause_ms(100);
        uint64_t v = 9;
        write(fd, &v, sizeof v);
        _exit(0);
    }
    show_read("a read that waited for the child's write", fd);
    waitpid(child, 0, 0);

    /* A write that waits: full to the top, the child reads after a while. */
    uint64_t most = UINT64_MAX - 1;
    write(fd, &most, sizeof most);
    child = fork();
    if (child == 0) {
        pause_ms(100);
        uint64_t v;
        read(fd, &v, sizeof v);
        _exit(v == UINT64_MAX - 1 ? 0 : 1);
    }
    show_write("a write that waited for the child's read", fd, 1);
    int status;
    waitpid(child, &status, 0);
    printf("the child read 2^64-2: %s\n", WIFEXITED(status) && !WEXITSTATUS(status) ? "yes" : "no");
    show_read("then the 1", fd);

    /* epoll, edge-triggered: one report per write. */
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = 7};
    printf("epoll_ctl ADD: %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    struct epoll_event out[2];
    printf("epoll_wait before a write: %d\n", epoll_wait(ep, out, 2, 0));
    uint64_t one = 1;
    write(fd, &one, sizeof one);
    int n = epoll_wait(ep, out, 2, 0);
    printf("epoll_wait after a write: %d (data %u)\n", n, n > 0 ? out[0].data.u32 : 0);
    printf("epoll_wait again: %d\n", epoll_wait(ep, out, 2, 0));
    write(fd, &one, sizeof one);
    printf("epoll_wait after another write: %d\n", epoll_wait(ep, out, 2, 0));
    show_read("read", fd);
    return 0;
}

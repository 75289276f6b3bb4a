/* Named pipes and device nodes. mkfifo and mknod(S_IFIFO) make a FIFO;
 * opening one side waits for the other (O_NONBLOCK: a reader goes on, a
 * writer with no reader is ENXIO; O_RDWR never waits); bytes flow as in a
 * pipe, poll and epoll see them, EOF once the writers close, and what is
 * left when the last end closes is gone. mknod makes regular files,
 * sockets' names and (for root) device nodes: a known number is that
 * device, an unknown one ENXIO to open; bad types and users are refused.
 * Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

static const char *type_of(const char *path) {
    struct stat st;
    if (lstat(path, &st) < 0)
        return strerror(errno);
    switch (st.st_mode & S_IFMT) {
    case S_IFIFO: return "fifo";
    case S_IFREG: return "regular file";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "character device";
    case S_IFBLK: return "block device";
    default: return "other";
    }
}

static void on_alarm(int sig) { (void)sig; }

/* mknod, then what the name is. */
static void make(const char *what, const char *path, mode_t mode, dev_t dev) {
    const char *r = err(mknod(path, mode, dev));
    printf("%s: %s, %s\n", what, r, type_of(path));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    umask(022);
    printf("mkfifo: %s\n", err(mkfifo("ff", 0666)));
    struct stat st;
    stat("ff", &st);
    printf("type %s, mode %o, size %ld\n", type_of("ff"), st.st_mode & 07777, (long)st.st_size);
    printf("mkfifo again: %s\n", err(mkfifo("ff", 0666)));

    /* A writer with O_NONBLOCK and no reader. */
    printf("write-only, non-blocking, no reader: %s\n", err(open("ff", O_WRONLY | O_NONBLOCK)));
    /* A reader with O_NONBLOCK goes on at once; then a writer finds it. */
    int r = open("ff", O_RDONLY | O_NONBLOCK);
    printf("read-only, non-blocking: %s\n", err(r));
    char buf[64];
    printf("read with no writer yet: %zd\n", read(r, buf, sizeof buf));
    int w = open("ff", O_WRONLY | O_NONBLOCK);
    printf("then write-only, non-blocking: %s\n", err(w));
    printf("write: %zd\n", write(w, "hello", 5));
    struct pollfd pfd = {.fd = r, .events = POLLIN};
    int ready = poll(&pfd, 1, 0);
    printf("poll: %d, revents %s\n", ready, pfd.revents & POLLIN ? "POLLIN" : "none");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    printf("epoll_ctl add: %s\n", err(epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev)));
    printf("epoll_wait: %d\n", epoll_wait(ep, &ev, 1, 0));
    fstat(r, &st);
    printf("fstat: %s\n", S_ISFIFO(st.st_mode) ? "fifo" : "other");
    printf("lseek: %s\n", err(lseek(r, 0, SEEK_SET)));
    int size = fcntl(r, F_GETPIPE_SZ);
    printf("F_GETPIPE_SZ: %d\n", size);
    memset(buf, 0, sizeof buf);
    printf("read: %zd \"%s\"\n", read(r, buf, sizeof buf), buf);
    close(w);
    printf("read after the writer closed: %zd\n", read(r, buf, sizeof buf));
    close(ep);

    /* What is left when the last end closes is gone. */
    w = open("ff", O_WRONLY | O_NONBLOCK);
    write(w, "stale", 5);
    close(w);
    close(r);
    r = open("ff", O_RDWR);
    printf("O_RDWR opens at once: %s\n", err(r));
    fcntl(r, F_SETFL, O_NONBLOCK);
    printf("left over from before: %s\n", err(read(r, buf, sizeof buf)));
    close(r);

    /* A blocking open waits for the other side. */
    pid_t pid = fork();
    if (pid == 0) {
        int cw = open("ff", O_WRONLY);
        write(cw, "from the child", 14);
        _exit(0);
    }
    r = open("ff", O_RDONLY);
    memset(buf, 0, sizeof buf);
    int n = 0, got;
    while ((got = read(r, buf + n, sizeof buf - 1 - n)) > 0)
        n += got;
    printf("blocking reader got: \"%s\"\n", buf);
    close(r);
    waitpid(pid, NULL, 0);

    /* A signal ends a blocking open: EINTR without SA_RESTART. */
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    printf("open with nobody on the other side, then a signal: %s\n", err(open("ff", O_WRONLY)));
    printf("and no reader was left behind: %s\n", err(open("ff", O_WRONLY | O_NONBLOCK)));
    unlink("ff");

    make("mknod S_IFIFO", "nf", S_IFIFO | 0600, 0);
    make("mknod S_IFREG", "nr", S_IFREG | 0600, 0);
    make("mknod type 0", "n0", 0600, 0);
    make("mknod S_IFSOCK", "ns", S_IFSOCK | 0600, 0);
    printf("open it: %s\n", err(open("ns", O_RDONLY)));
    make("mknod S_IFCHR 1,3", "nnull", S_IFCHR | 0666, makedev(1, 3));
    stat("nnull", &st);
    printf("rdev %u,%u\n", major(st.st_rdev), minor(st.st_rdev));
    int fd = open("nnull", O_RDWR);
    printf("it is /dev/null: write %zd, read %zd\n", write(fd, "x", 1), read(fd, buf, 1));
    close(fd);
    make("mknod S_IFCHR 240,7", "nodrv", S_IFCHR | 0666, makedev(240, 7));
    stat("nodrv", &st);
    printf("rdev %u,%u\n", major(st.st_rdev), minor(st.st_rdev));
    printf("open it: %s\n", err(open("nodrv", O_RDONLY)));
    make("mknod S_IFBLK", "nblk", S_IFBLK | 0600, makedev(240, 1));
    printf("mknod S_IFDIR: %s\n", err(mknod("nd", S_IFDIR | 0755, 0)));
    printf("mknod bad type: %s\n", err(mknod("nx", 0170000 | 0600, 0)));
    printf("mknod existing: %s\n", err(mknod("nf", S_IFIFO | 0600, 0)));
    const char *at = err(mknodat(open(".", O_RDONLY | O_DIRECTORY), "nat", S_IFIFO | 0600, 0));
    printf("mknodat a dir fd: %s, %s\n", at, type_of("nat"));
    pid = fork();
    if (pid == 0) {
        setuid(1000);
        printf("user mknod S_IFCHR in /tmp: %s\n", err(mknod("/tmp/uc", S_IFCHR | 0600, makedev(1, 3))));
        printf("user mkfifo in /tmp: %s\n", err(mkfifo("/tmp/uf", 0600)));
        unlink("/tmp/uf");
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    const char *names[] = {"nf", "nr", "n0", "ns", "nnull", "nodrv", "nblk", "nat"};
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
        unlink(names[i]);
    return 0;
}

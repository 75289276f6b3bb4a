/* fcntl record locks between processes: F_GETLK says who holds what,
 * F_SETLK refuses a conflict with EAGAIN, F_SETLKW waits and is woken by
 * the unlock, a circle of two waiters is EDEADLK for one of them, a signal
 * ends a wait with EINTR, closing any descriptor of the file drops the
 * process's POSIX locks, exit drops them all; OFD locks belong to the open
 * file description (two opens in one process conflict; released at the
 * last close); and the bad input of each. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(int r) { return r == 0 ? "ok" : strerror(errno); }

static int lock(int fd, int cmd, short type, off_t start, off_t len) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &fl);
}

/* What F_GETLK (or F_OFD_GETLK) says about a write lock on the range. */
static void who(const char *what, int fd, int cmd, off_t start, off_t len, pid_t expect) {
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    int r = fcntl(fd, cmd, &fl);
    if (r != 0) {
        printf("%s: %s\n", what, strerror(errno));
        return;
    }
    if (fl.l_type == F_UNLCK) {
        printf("%s: free\n", what);
        return;
    }
    printf("%s: %s lock at %ld+%ld, holder %s\n", what, fl.l_type == F_WRLCK ? "write" : "read",
           (long)fl.l_start, (long)fl.l_len,
           fl.l_pid == expect ? "as expected" : fl.l_pid == -1 ? "an open file" : "someone else");
}

static void wait_child(pid_t pid) {
    int status;
    waitpid(pid, &status, 0);
}

static void say(int fd, int value) { write(fd, &value, sizeof value); }

static int hear(int fd) {
    int value = -1;
    read(fd, &value, sizeof value);
    return value;
}

static void on_alarm(int sig) { (void)sig; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
    char block[100];
    memset(block, 'x', sizeof block);
    write(fd, block, sizeof block);
    pid_t me = getpid();

    /* Conflicts seen from another process. */
    printf("write lock 0+50: %s\n", err(lock(fd, F_SETLK, F_WRLCK, 0, 50)));
    pid_t pid = fork();
    if (pid == 0) {
        int mine = open("f", O_RDWR);
        who("child asks about 0+10", mine, F_GETLK, 0, 10, me);
        printf("child write lock 0+10: %s\n", err(lock(mine, F_SETLK, F_WRLCK, 0, 10)));
        printf("child read lock 40+20: %s\n", err(lock(mine, F_SETLK, F_RDLCK, 40, 20)));
        printf("child write lock 50+10: %s\n", err(lock(mine, F_SETLK, F_WRLCK, 50, 10)));
        _exit(0);
    }
    wait_child(pid);
    who("after the child exited, 50+10", fd, F_GETLK, 50, 10, 0);
    printf("read lock 0+100 (replaces the write lock): %s\n",
           err(lock(fd, F_SETLK, F_RDLCK, 0, 100)));
    pid = fork();
    if (pid == 0) {
        int mine = open("f", O_RDWR);
        printf("child read lock 0+10 beside a read lock: %s\n",
               err(lock(mine, F_SETLK, F_RDLCK, 0, 10)));
        printf("child write lock 90+20: %s\n", err(lock(mine, F_SETLK, F_WRLCK, 90, 20)));
        printf("child write lock 100 to the end: %s\n", err(lock(mine, F_SETLK, F_WRLCK, 100, 0)));
        _exit(0);
    }
    wait_child(pid);
    lock(fd, F_SETLK, F_UNLCK, 0, 0);

    /* F_SETLKW waits for the unlock. */
    int to_parent[2], to_child[2];
    pipe(to_parent);
    pipe(to_child);
    lock(fd, F_SETLK, F_WRLCK, 0, 10);
    pid = fork();
    if (pid == 0) {
        int mine = open("f", O_RDWR);
        say(to_parent[1], 1);
        int r = lock(mine, F_SETLKW, F_WRLCK, 0, 10);
        say(to_parent[1], r == 0 ? 2 : -errno);
        _exit(0);
    }
    hear(to_parent[0]);
    usleep(100000);
    lock(fd, F_SETLK, F_UNLCK, 0, 10);
    printf("F_SETLKW got the lock after the unlock: %d\n", hear(to_parent[0]) == 2);
    wait_child(pid);

    /* Two processes each waiting for the other's lock: one gets EDEADLK,
     * whichever came second; the other then gets its lock. */
    lock(fd, F_SETLK, F_WRLCK, 0, 10);
    pid = fork();
    if (pid == 0) {
        int mine = open("f", O_RDWR);
        lock(mine, F_SETLK, F_WRLCK, 20, 10);
        say(to_parent[1], 1);
        int r = lock(mine, F_SETLKW, F_WRLCK, 0, 10);
        say(to_parent[1], r == 0 ? 0 : errno);
        _exit(0);
    }
    hear(to_parent[0]);
    usleep(100000);
    int r = lock(fd, F_SETLKW, F_WRLCK, 20, 10);
    int parent_got = r == 0 ? 0 : errno;
    lock(fd, F_SETLK, F_UNLCK, 0, 0);
    int child_got = hear(to_parent[0]);
    wait_child(pid);
    printf("a circle of two: one EDEADLK and one lock: %d\n",
           (parent_got == EDEADLK && child_got == 0) || (child_got == EDEADLK && parent_got == 0));
    lock(fd, F_SETLK, F_UNLCK, 0, 0);

    /* A signal ends the wait. */
    lock(fd, F_SETLK, F_WRLCK, 0, 10);
    pid = fork();
    if (pid == 0) {
        struct sigaction sa = {.sa_handler = on_alarm};
        sigaction(SIGALRM, &sa, NULL);
        int mine = open("f", O_RDWR);
        alarm(1);
        int r = lock(mine, F_SETLKW, F_WRLCK, 0, 10);
        printf("child's F_SETLKW under a signal: %s\n", err(r));
        _exit(0);
    }
    wait_child(pid);
    lock(fd, F_SETLK, F_UNLCK, 0, 0);

    /* Closing any descriptor of the file drops the process's locks. */
    lock(fd, F_SETLK, F_WRLCK, 0, 10);
    int other = open("f", O_RDONLY);
    close(other);
    pid = fork();
    if (pid == 0) {
        int mine = open("f", O_RDWR);
        who("after closing another descriptor of the file", mine, F_GETLK, 0, 10, me);
        _exit(0);
    }
    wait_child(pid);

    /* Exit without unlocking drops the locks. */
    pid = fork();
    if (pid == 0) {
        int mine = open("f", O_RDWR);
        lock(mine, F_SETLK, F_WRLCK, 0, 100);
        _exit(0);
    }
    wait_child(pid);
    printf("after a holder exited: %s\n", err(lock(fd, F_SETLK, F_WRLCK, 0, 100)));
    lock(fd, F_SETLK, F_UNLCK, 0, 0);

    /* OFD locks belong to the open file description. */
    int a = open("f", O_RDWR), b = open("f", O_RDWR);
    struct flock ofd = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
    printf("OFD write lock through a: %s\n", err(fcntl(a, F_OFD_SETLK, &ofd)));
    printf("OFD write lock through b: %s\n", err(fcntl(b, F_OFD_SETLK, &ofd)));
    printf("POSIX write lock beside it: %s\n", err(lock(fd, F_SETLK, F_WRLCK, 0, 10)));
    who("F_OFD_GETLK through b", b, F_OFD_GETLK, 0, 10, 0);
    int a2 = dup(a);
    close(a);
    printf("after closing a (a dup remains): %s\n", err(fcntl(b, F_OFD_SETLK, &ofd)));
    close(a2);
    printf("after the last descriptor: %s\n", err(fcntl(b, F_OFD_SETLK, &ofd)));
    ofd.l_pid = 1;
    printf("OFD lock with a pid: %s\n", err(fcntl(b, F_OFD_SETLK, &ofd)));
    close(b);

    /* Bad input. */
    printf("a closed descriptor: %s\n", err(lock(99, F_SETLK, F_WRLCK, 0, 10)));
    int ro = open("f", O_RDONLY), wo = open("f", O_WRONLY);
    printf("write lock on a read-only descriptor: %s\n", err(lock(ro, F_SETLK, F_WRLCK, 0, 10)));
    printf("read lock on a write-only descriptor: %s\n", err(lock(wo, F_SETLK, F_RDLCK, 0, 10)));
    printf("a bad type: %s\n", err(lock(fd, F_SETLK, 99, 0, 10)));
    struct flock bad = {.l_type = F_WRLCK, .l_whence = 7};
    printf("a bad whence: %s\n", err(fcntl(fd, F_SETLK, &bad)));
    printf("before byte 0: %s\n", err(lock(fd, F_SETLK, F_WRLCK, -5, 10)));
    printf("a negative length past byte 0: %s\n", err(lock(fd, F_SETLK, F_WRLCK, 5, -10)));
    printf("F_GETLK of F_UNLCK: %s\n", err(lock(fd, F_GETLK, F_UNLCK, 0, 10)));
    printf("a bad pointer: %s\n", err(fcntl(fd, F_SETLK, (struct flock *)16)));
    struct flock end = {.l_type = F_WRLCK, .l_whence = SEEK_END, .l_start = -10, .l_len = 10};
    printf("SEEK_END - 10: %s\n", err(fcntl(fd, F_SETLK, &end)));
    who("seen as", ro, F_OFD_GETLK, 95, 1, me);
    close(ro);
    close(wo);
    unlink("f");
    return 0;
}

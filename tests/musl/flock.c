/* flock: whole-file locks owned by the open file description. Two opens
 * of one file conflict, a dup shares (and converts) its description's
 * lock, a conversion that fails has lost the old lock (Linux's
 * flock_lock_inode drops it first), flock and fcntl locks do not see each
 * other, a fork child's LOCK_UN releases the parent's lock (one
 * description), the last close releases it, a waiter gets the lock once
 * it is free, and a signal ends the wait with EINTR. Errors in Linux's
 * order: a bad operation EINVAL before a bad descriptor's EBADF, an
 * O_PATH descriptor EBADF, LOCK_MAND accepted and ignored. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LOCK_MAND
#define LOCK_MAND 32
#endif

static const char *try(int fd, int op) {
    if (flock(fd, op) == 0)
        return "ok";
    switch (errno) {
    case EWOULDBLOCK: return "EWOULDBLOCK";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case EINTR: return "EINTR";
    default: return strerror(errno);
    }
}

static void on_alarm(int sig) { (void)sig; }

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    char path[64];
    snprintf(path, sizeof path, "/tmp/flock-%d", getpid());
    int a = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int b = open(path, O_RDONLY);
    int c = open(path, O_RDONLY);

    printf("a LOCK_EX: %s\n", try(a, LOCK_EX));
    printf("b LOCK_EX|LOCK_NB: %s\n", try(b, LOCK_EX | LOCK_NB));
    printf("b LOCK_SH|LOCK_NB: %s\n", try(b, LOCK_SH | LOCK_NB));
    int a2 = dup(a);
    printf("dup of a LOCK_SH (converts a's): %s\n", try(a2, LOCK_SH));
    printf("b LOCK_SH|LOCK_NB: %s\n", try(b, LOCK_SH | LOCK_NB));
    printf("c LOCK_EX|LOCK_NB: %s\n", try(c, LOCK_EX | LOCK_NB));
    printf("a LOCK_SH again: %s\n", try(a, LOCK_SH));

    /* a's conversion to exclusive fails on b's shared lock, and a is left
     * with none: once b lets go, c may take an exclusive lock. */
    printf("a LOCK_EX|LOCK_NB: %s\n", try(a, LOCK_EX | LOCK_NB));
    printf("b LOCK_UN: %s\n", try(b, LOCK_UN));
    printf("c LOCK_EX|LOCK_NB (a lost its lock): %s\n", try(c, LOCK_EX | LOCK_NB));

    /* Record locks do not see flock locks. */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    printf("fcntl F_SETLK write lock beside c's flock: %s\n",
           fcntl(a, F_SETLK, &fl) == 0 ? "ok" : strerror(errno));
    fl.l_type = F_UNLCK;
    fcntl(a, F_SETLK, &fl);

    /* One description in two processes: the child's LOCK_UN is c's. */
    pid_t pid = fork();
    if (pid == 0) {
        printf("child: c LOCK_UN: %s\n", try(c, LOCK_UN));
        _exit(0);
    }
    waitpid(pid, 0, 0);
    printf("b LOCK_EX|LOCK_NB after the child's unlock: %s\n", try(b, LOCK_EX | LOCK_NB));
    printf("close b, then a LOCK_EX|LOCK_NB: ");
    close(b);
    printf("%s\n", try(a, LOCK_EX | LOCK_NB));

    /* A waiter: the child holds the lock a moment, then exits. */
    int ready[2];
    pipe(ready);
    flock(a, LOCK_UN);
    pid = fork();
    if (pid == 0) {
        int mine = open(path, O_RDONLY);
        flock(mine, LOCK_EX);
        write(ready[1], "x", 1);
        usleep(200000);
        _exit(0); /* the lock goes with the last descriptor */
    }
    char x;
    read(ready[0], &x, 1);
    printf("c LOCK_EX|LOCK_NB while the child holds it: %s\n", try(c, LOCK_EX | LOCK_NB));
    printf("c LOCK_EX, waiting: %s\n", try(c, LOCK_EX));
    waitpid(pid, 0, 0);

    /* A signal ends a wait. */
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, 0);
    struct itimerval t = {.it_value = {0, 100000}};
    setitimer(ITIMER_REAL, &t, 0);
    printf("a LOCK_SH, interrupted: %s\n", try(a, LOCK_SH));

    printf("LOCK_SH|LOCK_EX: %s\n", try(a, LOCK_SH | LOCK_EX));
    printf("operation 0: %s\n", try(a, 0));
    printf("bad descriptor: %s\n", try(99, LOCK_EX));
    printf("bad descriptor and operation: %s\n", try(99, 0));
    int p = open(path, O_PATH);
    printf("O_PATH descriptor: %s\n", try(p, LOCK_SH));
    printf("LOCK_MAND: %s\n", try(a, LOCK_MAND | 64));
    unlink(path);
    return 0;
}

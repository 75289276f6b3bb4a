/* RLIMIT_FSIZE: a write that would pass the limit writes what fits; one
 * that can write nothing fails with EFBIG and raises SIGXFSZ, which kills
 * unless caught or ignored; ftruncate past the limit is EFBIG too. The
 * limit is per process and inherited across fork. (Nothing is printed
 * while the limit holds: stdout may be a file it would cut short.) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t caught;
static void on_xfsz(int s) { (void)s; caught++; }

static void limit(rlim_t bytes) {
    struct rlimit lim = {bytes, RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
        perror("setrlimit");
}

static const char *err(long r, int e) {
    if (r >= 0)
        return "ok";
    return e == EFBIG ? "EFBIG" : strerror(e);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGXFSZ, on_xfsz);
    int fd = open("fsize-file", O_CREAT | O_TRUNC | O_RDWR, 0600);
    char buf[150];
    memset(buf, 'x', sizeof buf);
    long w[4];
    int e[4], sig[4];
    limit(100);
    w[0] = write(fd, buf, 60), e[0] = errno, sig[0] = caught;
    w[1] = write(fd, buf, 60), e[1] = errno, sig[1] = caught;
    w[2] = write(fd, buf, 1), e[2] = errno, sig[2] = caught;
    w[3] = pwrite(fd, buf, 10, 95), e[3] = errno, sig[3] = caught;
    long t200 = ftruncate(fd, 200);
    int e200 = errno, sig200 = caught;
    long t50 = ftruncate(fd, 50);
    int e50 = errno;
    limit(RLIM_INFINITY);
    printf("write 60 under a limit of 100: %ld\n", w[0]);
    printf("write 60 more: %ld (what fits), SIGXFSZ %d times\n", w[1], sig[1]);
    printf("write 1 at the limit: %s, SIGXFSZ %d times\n", err(w[2], e[2]), sig[2]);
    printf("pwrite 10 at 95: %ld, SIGXFSZ %d times\n", w[3], sig[3]);
    printf("ftruncate to 200: %s, SIGXFSZ %d times\n", err(t200, e200), sig200);
    printf("ftruncate to 50: %s\n", err(t50, e50));
    struct stat st;
    fstat(fd, &st);
    printf("size: %lld\n", (long long)st.st_size);
    close(fd);

    pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_DFL);
        limit(100); /* and a fork keeps it */
        int f = open("fsize-file", O_WRONLY | O_APPEND);
        char big[200] = {0};
        write(f, big, sizeof big); /* 50 fit */
        write(f, big, 1);          /* SIGXFSZ, by default the end */
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("a child with SIGXFSZ at its default: %s %d\n",
           WIFSIGNALED(status) ? "killed by signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    fd = open("fsize-file", O_RDONLY);
    fstat(fd, &st);
    printf("size after the child: %lld\n", (long long)st.st_size);
    close(fd);
    unlink("fsize-file");
    return 0;
}

/* madvise and the mlock family. MADV_DONTNEED empties private pages: an
 * anonymous page reads zeroes again, a private file mapping reads the
 * file again (its copy gone), a shared one keeps what was stored. mlock,
 * mlock2, munlock, mlockall and munlockall answer as Linux does for
 * good input and bad. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    long page = sysconf(_SC_PAGESIZE);

    char *anon = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(anon, 'a', 4 * page);
    printf("DONTNEED on anonymous memory: %s\n", err(madvise(anon + page, 2 * page, MADV_DONTNEED)));
    printf("pages 0..3 now: %c %d %d %c\n", anon[0], anon[page], anon[2 * page + 7], anon[3 * page]);
    anon[page] = 'b';
    printf("written again: %c\n", anon[page]);

    int fd = open("advice-file", O_RDWR | O_CREAT | O_TRUNC, 0644);
    char block[4096];
    memset(block, 'f', sizeof block);
    write(fd, block, sizeof block);
    char *priv = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    char *shared = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    priv[0] = 'p';
    printf("private copy before: %c\n", priv[0]);
    madvise(priv, page, MADV_DONTNEED);
    printf("private copy after DONTNEED: %c (the file's)\n", priv[0]);
    shared[1] = 's';
    madvise(shared, page, MADV_DONTNEED);
    printf("shared after DONTNEED: %c\n", shared[1]);
    printf("and the private mapping sees it: %c\n", priv[1]);

    printf("MADV_FREE: %s\n", err(madvise(anon, page, MADV_FREE)));
    printf("MADV_WILLNEED: %s\n", err(madvise(anon, 4 * page, MADV_WILLNEED)));
    printf("MADV_SEQUENTIAL: %s\n", err(madvise(anon, 4 * page, MADV_SEQUENTIAL)));
    printf("len 0: %s\n", err(madvise(anon, 0, MADV_DONTNEED)));
    printf("unaligned: %s\n", err(madvise(anon + 1, page, MADV_NORMAL)));
    printf("unknown advice: %s\n", err(madvise(anon, page, 12345)));
    munmap(anon + 2 * page, page);
    printf("over a hole: %s\n", err(madvise(anon, 4 * page, MADV_NORMAL)));
    printf("past user space: %s\n", err(madvise((void *)0x7ffffffff000, 2 * page, MADV_NORMAL)));

    printf("mlock: %s\n", err(mlock(anon, page)));
    printf("mlock unaligned start: %s\n", err(mlock(anon + 10, 100)));
    printf("mlock over a hole: %s\n", err(mlock(anon, 4 * page)));
    printf("munlock: %s\n", err(munlock(anon, page)));
    printf("munlock over a hole: %s\n", err(munlock(anon, 4 * page)));
    printf("mlock2 MLOCK_ONFAULT: %s\n", err(syscall(SYS_mlock2, anon, page, 1)));
    printf("mlock2 bad flag: %s\n", err(syscall(SYS_mlock2, anon, page, 2)));
    printf("mlockall(MCL_CURRENT): %s\n", err(mlockall(MCL_CURRENT)));
    printf("mlockall(0): %s\n", err(mlockall(0)));
    printf("mlockall(MCL_ONFAULT): %s\n", err(mlockall(MCL_ONFAULT)));
    printf("mlockall(8): %s\n", err(mlockall(8)));
    printf("munlockall: %s\n", err(munlockall()));

    /* Without CAP_IPC_LOCK the limit holds. */
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_MEMLOCK, &none);
        setuid(1000);
        printf("user, no MEMLOCK: mlock %s, mlockall %s\n", err(mlock(anon, page)),
               err(mlockall(MCL_CURRENT)));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    pid = fork();
    if (pid == 0) {
        struct rlimit one = {page, page};
        setrlimit(RLIMIT_MEMLOCK, &one);
        setuid(1000);
        printf("user, one page: mlock one %s, two %s\n", err(mlock(anon, page)),
               err(mlock(anon + 3 * page, 2 * page)));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    unlink("advice-file");
    return 0;
}

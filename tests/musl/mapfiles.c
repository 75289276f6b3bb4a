/* Mapping files: mmap of a regular file, private (the file's bytes, copied
 * at the first store) and shared (stores reach the file, read and write see
 * the mapping's bytes and the other way round, a forked child's stores are
 * the parent's), at an offset, outliving close and unlink; shared anonymous
 * memory and /dev/zero; msync; a sem_open semaphore shared by two
 * processes; SIGBUS past the end of the file; /proc/self/maps naming the
 * file; and the errors: EACCES, EBADF, EINVAL, ENODEV, ENOMEM. Runs in an
 * empty directory of its own, here and on the host's Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096L

static const char *err(int r) { return r == 0 ? "ok" : strerror(errno); }

/* What mmap gave: "ok" or its error. */
static const char *mapped(void *p) { return p == MAP_FAILED ? strerror(errno) : "ok"; }

/* A file of three pages and 100 bytes; page i starts with "page i". */
static void make_file(const char *path) {
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    char buf[PAGE];
    for (int i = 0; i < 4; i++) {
        memset(buf, 'a' + i, sizeof buf);
        int n = snprintf(buf, sizeof buf, "page %d", i);
        buf[n] = ' ';
        write(fd, buf, i < 3 ? PAGE : 100);
    }
    close(fd);
}

static void file_bytes(const char *what, int fd, off_t at, int n) {
    char buf[32] = {0};
    pread(fd, buf, n, at);
    printf("%s: file has \"%.*s\"\n", what, n, buf);
}

static sigjmp_buf escape;
static volatile int bus_code;

static void on_bus(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    bus_code = info->si_code;
    siglongjmp(escape, 1);
}

/* Whether /proc/self/maps has a line for `addr` and what it says. */
static void maps_line(const char *what, void *addr, ino_t ino) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long start, end, offset, inode;
    char perms[8], dev[16];
    int found = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &start, &end, perms, &offset, dev, &inode) == 6 &&
            start == (unsigned long)addr) {
            char *name = strrchr(line, '/');
            printf("%s: %s offset %lx, inode %s, name %s", what, perms, offset,
                   inode == ino ? "the file's" : "another", name ? name : "none\n");
            found = 1;
        }
    }
    if (!found)
        printf("%s: no line\n", what);
    if (f)
        fclose(f);
}

int main(void) {
    make_file("data");
    int fd = open("data", O_RDWR);
    struct stat st;
    fstat(fd, &st);

    /* Private, read-only: the file's bytes. */
    char *p = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    printf("private map: %s\n", mapped(p));
    printf("private: page 1 reads \"%.6s\", the end reads '%c', past it %d\n", p + PAGE,
           p[3 * PAGE + 99], p[3 * PAGE + 100]);
    munmap(p, 4 * PAGE);

    /* Private, writable: stores are the mapping's own. */
    p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    memcpy(p, "PRIVATE", 7);
    printf("private store: mapping has \"%.7s\"\n", p);
    file_bytes("private store", fd, 0, 7);
    munmap(p, 2 * PAGE);

    /* Shared: stores reach the file; writes reach the mapping. */
    char *s = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("shared map: %s\n", mapped(s));
    memcpy(s + PAGE, "SHARED", 6);
    file_bytes("shared store", fd, PAGE, 6);
    pwrite(fd, "WRITTEN", 7, 2 * PAGE);
    printf("shared: after pwrite the mapping has \"%.7s\"\n", s + 2 * PAGE);
    printf("msync MS_SYNC: %s\n", err(msync(s, 4 * PAGE, MS_SYNC)));
    printf("msync MS_ASYNC|MS_INVALIDATE: %s\n", err(msync(s, PAGE, MS_ASYNC | MS_INVALIDATE)));

    /* A forked child's stores to a shared mapping are the parent's. */
    if (fork() == 0) {
        memcpy(s + 3 * PAGE, "CHILD", 5);
        _exit(0);
    }
    wait(NULL);
    printf("fork: parent sees \"%.5s\"\n", s + 3 * PAGE);
    file_bytes("fork", fd, 3 * PAGE, 5);

    /* At an offset: the mapping starts at the file's page 2. */
    char *o = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 2 * PAGE);
    printf("offset map: reads \"%.7s\"\n", o);
    maps_line("maps, shared at an offset", o, st.st_ino);
    maps_line("maps, shared", s, st.st_ino);
    munmap(o, PAGE);

    /* Past the end of the file: the last page's tail reads zeros, the page
     * after it is SIGBUS. */
    struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};
    sigaction(SIGBUS, &sa, NULL);
    char *big = mmap(NULL, 6 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    volatile char c = 0;
    if (sigsetjmp(escape, 1) == 0) {
        c = big[5 * PAGE];
        printf("past the end: read %d\n", c);
    } else {
        printf("past the end: SIGBUS, code %s\n", bus_code == BUS_ADRERR ? "BUS_ADRERR" : "other");
    }
    munmap(big, 6 * PAGE);

    /* The mapping outlives close and unlink. */
    close(fd);
    unlink("data");
    printf("after close and unlink: \"%.6s\" \"%.6s\"\n", s, s + PAGE);
    s[0] = 'P';
    printf("after close and unlink: store ok, \"%.6s\"\n", s);
    munmap(s, 4 * PAGE);

    /* Shared anonymous memory and /dev/zero, shared with a child or not. */
    int *shared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int *private = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int zfd = open("/dev/zero", O_RDWR);
    int *zshared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, zfd, 0);
    int *zprivate = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, zfd, 0);
    printf("/dev/zero maps: %s %s, reads %d %d\n", mapped(zshared), mapped(zprivate), zshared[7],
           zprivate[7]);
    if (fork() == 0) {
        *shared = 42;
        *private = 42;
        *zshared = 43;
        *zprivate = 43;
        _exit(0);
    }
    wait(NULL);
    printf("fork: shared anonymous %d, private anonymous %d, shared /dev/zero %d, private /dev/zero %d\n",
           *shared, *private, *zshared, *zprivate);

    /* A process-shared semaphore in /dev/shm: the child posts, the parent
     * waits (a futex in a shared page, keyed by the page, not the address). */
    sem_t *sem = sem_open("/mapfiles-test", O_CREAT | O_EXCL, 0600, 0);
    printf("sem_open: %s\n", sem == SEM_FAILED ? strerror(errno) : "ok");
    if (sem != SEM_FAILED) {
        pid_t child = fork();
        if (child == 0) {
            usleep(100 * 1000);
            sem_post(sem);
            _exit(0);
        }
        printf("sem_wait: %s\n", err(sem_wait(sem)));
        waitpid(child, NULL, 0);
        sem_close(sem);
        printf("sem_unlink: %s\n", err(sem_unlink("/mapfiles-test")));
    }

    /* Errors. */
    make_file("data");
    int ro = open("data", O_RDONLY), wo = open("data", O_WRONLY);
    printf("write-only file: %s\n", mapped(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, wo, 0)));
    printf("shared writable, read-only file: %s\n",
           mapped(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0)));
    char *rp = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
    printf("private writable, read-only file: %s\n", mapped(rp));
    rp[0] = 'x';
    file_bytes("private writable, read-only file", ro, 0, 6);
    char *rs = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
    printf("mprotect writable, shared read-only file: %s\n", err(mprotect(rs, PAGE, PROT_READ | PROT_WRITE)));
    printf("mprotect writable, private read-only file: %s\n", err(mprotect(rp, PAGE, PROT_READ | PROT_WRITE)));
    printf("bad descriptor: %s\n", mapped(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, 99, 0)));
    printf("unaligned offset: %s\n", mapped(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ro, 100)));
    printf("length 0: %s\n", mapped(mmap(NULL, 0, PROT_READ, MAP_PRIVATE, ro, 0)));
    int pipefd[2];
    pipe(pipefd);
    printf("pipe: %s\n", mapped(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, pipefd[0], 0)));
    int dir = open(".", O_RDONLY);
    printf("directory: %s\n", mapped(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, dir, 0)));
    int null = open("/dev/null", O_RDWR);
    printf("/dev/null: %s\n", mapped(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, null, 0)));
    printf("msync MS_SYNC|MS_ASYNC: %s\n", err(msync(rs, PAGE, MS_SYNC | MS_ASYNC)));
    printf("msync unaligned: %s\n", err(msync(rs + 1, PAGE, MS_SYNC)));
    printf("msync bad flag: %s\n", err(msync(rs, PAGE, 8)));
    munmap(rs, PAGE);
    printf("msync unmapped: %s\n", err(msync(rs, PAGE, MS_SYNC)));
    return 0;
}

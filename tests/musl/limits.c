/* Resource limits that mean something: getrlimit/setrlimit/prlimit's rules
 * (soft moves freely below hard, soft above hard is EINVAL, a descriptor
 * limit past the kernel's ceiling is EPERM), RLIMIT_NOFILE at open, dup,
 * pipe, fcntl and poll, RLIMIT_AS and RLIMIT_DATA at mmap, brk, malloc and
 * mremap, RLIMIT_STACK at exec (a deep recursion dies of SIGSEGV under a
 * small limit and not under a large one), limits inherited across fork and
 * exec, another process's limits through prlimit, and bad input.
 *
 * Everything printed is relative to what the process found, so the host's
 * own limits do not show. RLIMIT_NPROC is left to usertests (root, who
 * runs this, is exempt from it on both kernels). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(int r) { return r == 0 ? "ok" : strerror(errno); }

/* Uses about 4 KiB of stack per level; the sum keeps every frame live. */
static int deep(int levels) {
    volatile char frame[4000];
    frame[0] = (char)levels;
    frame[sizeof frame - 1] = 1;
    if (levels == 0)
        return frame[0];
    int below = deep(levels - 1);
    return below + frame[sizeof frame - 1];
}

static void set(int resource, rlim_t cur, rlim_t max) {
    struct rlimit l = {cur, max};
    if (setrlimit(resource, &l) != 0)
        printf("setrlimit(%d, %lu, %lu): %s\n", resource, (unsigned long)cur,
               (unsigned long)max, strerror(errno));
}

static void descriptors(void) {
    struct rlimit was;
    getrlimit(RLIMIT_NOFILE, &was);
    set(RLIMIT_NOFILE, 42, was.rlim_max);
    struct rlimit now;
    getrlimit(RLIMIT_NOFILE, &now);
    printf("NOFILE soft now %lu, hard unchanged %d\n", (unsigned long)now.rlim_cur,
           now.rlim_max == was.rlim_max);
    int fd;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0)
        ;
    int why = errno;
    int open41 = fcntl(41, F_GETFD) >= 0, open42 = fcntl(42, F_GETFD) >= 0;
    printf("open until it fails: %s; fd 41 open %d, fd 42 open %d\n", strerror(why), open41,
           open42);
    int r = dup(0);
    printf("dup: %d (%s)\n", r, strerror(errno));
    int p[2];
    r = pipe(p);
    printf("pipe: %d (%s)\n", r, strerror(errno));
    r = fcntl(0, F_DUPFD, 10);
    printf("F_DUPFD from 10: %d (%s)\n", r, strerror(errno));
    r = fcntl(0, F_DUPFD, 42);
    printf("F_DUPFD from 42: %d (%s)\n", r, strerror(errno));
    r = dup2(0, 42);
    printf("dup2 to 42: %d (%s)\n", r, strerror(errno));
    close(40);
    r = dup2(0, 40);
    printf("dup2 to 40 after closing it: %d\n", r);
    struct pollfd many[43];
    for (int i = 0; i < 43; i++)
        many[i] = (struct pollfd){.fd = 0, .events = POLLIN};
    r = poll(many, 43, 0);
    printf("poll of 43 entries: %d (%s)\n", r, strerror(errno));
    /* Lowering the limit closes nothing. */
    set(RLIMIT_NOFILE, 10, was.rlim_max);
    int still = fcntl(30, F_GETFD) >= 0;
    r = open("/dev/null", O_RDONLY);
    printf("after lowering to 10: fd 30 still open %d, open: %d (%s)\n", still, r,
           strerror(errno));
    for (int i = 3; i <= 41; i++)
        close(i);
    set(RLIMIT_NOFILE, was.rlim_cur, was.rlim_max);
    fd = open("/dev/null", O_RDONLY);
    printf("after raising back: open gives %d\n", fd);
    close(fd);
}

static void rules(void) {
    struct rlimit was, l;
    getrlimit(RLIMIT_NOFILE, &was);
    l = (struct rlimit){was.rlim_max + 1, was.rlim_max};
    int r = setrlimit(RLIMIT_NOFILE, &l);
    printf("soft above hard: %s\n", err(r));
    l = (struct rlimit){1024, (rlim_t)1 << 31};
    r = setrlimit(RLIMIT_NOFILE, &l);
    printf("NOFILE hard past the ceiling: %s\n", err(r));
    r = getrlimit(99, &l);
    printf("getrlimit(99): %s\n", err(r));
    r = setrlimit(RLIMIT_CORE, (struct rlimit *)16);
    printf("setrlimit(bad pointer): %s\n", err(r));
    r = getrlimit(RLIMIT_CORE, (struct rlimit *)16);
    printf("getrlimit(bad pointer): %s\n", err(r));
    /* Limits the kernel does not enforce are kept and reported. */
    l = (struct rlimit){0, 0};
    setrlimit(RLIMIT_CORE, &l);
    l = (struct rlimit){100, 200};
    setrlimit(RLIMIT_CPU, &l);
    struct rlimit core, cpu;
    getrlimit(RLIMIT_CORE, &core);
    getrlimit(RLIMIT_CPU, &cpu);
    printf("CORE %lu/%lu, CPU %lu/%lu\n", (unsigned long)core.rlim_cur,
           (unsigned long)core.rlim_max, (unsigned long)cpu.rlim_cur, (unsigned long)cpu.rlim_max);
    struct rlimit old;
    l = (struct rlimit){50, 150};
    r = prlimit(0, RLIMIT_CPU, &l, &old);
    printf("prlimit set and get: %s, old %lu/%lu\n", err(r), (unsigned long)old.rlim_cur,
           (unsigned long)old.rlim_max);
    r = prlimit(1 << 30, RLIMIT_CPU, NULL, &old);
    printf("prlimit of no process: %s\n", err(r));
}

static void memory(void) {
    const size_t mib = 1 << 20;
    struct rlimit was;
    getrlimit(RLIMIT_AS, &was);
    set(RLIMIT_AS, 1024 * mib, was.rlim_max);
    void *a = mmap(0, 2048 * mib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("AS 1 GiB: mmap 2 GiB: %s\n", a == MAP_FAILED ? strerror(errno) : "mapped");
    a = mmap(0, 64 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("AS 1 GiB: mmap 64 MiB: %s\n", a == MAP_FAILED ? strerror(errno) : "mapped");
    void *b = mremap(a, 64 * mib, 2048 * mib, MREMAP_MAYMOVE);
    printf("AS 1 GiB: mremap to 2 GiB: %s\n", b == MAP_FAILED ? strerror(errno) : "moved");
    munmap(a, 64 * mib);
    void *big = malloc(2048 * mib);
    printf("AS 1 GiB: malloc 2 GiB: %s\n", big ? "got it" : "NULL");
    void *brk_was = sbrk(0);
    void *grown = sbrk(2048 * mib);
    printf("AS 1 GiB: sbrk 2 GiB: %s, break unchanged %d\n",
           grown == (void *)-1 ? strerror(errno) : "grown", sbrk(0) == brk_was);
    set(RLIMIT_AS, was.rlim_cur, was.rlim_max);
    a = mmap(0, 2048 * mib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("AS back: mmap 2 GiB: %s\n", a == MAP_FAILED ? strerror(errno) : "mapped");
    munmap(a, 2048 * mib);

    getrlimit(RLIMIT_DATA, &was);
    set(RLIMIT_DATA, 64 * mib, was.rlim_max);
    a = mmap(0, 128 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("DATA 64 MiB: writable 128 MiB: %s\n", a == MAP_FAILED ? strerror(errno) : "mapped");
    a = mmap(0, 128 * mib, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("DATA 64 MiB: read-only 128 MiB: %s\n", a == MAP_FAILED ? strerror(errno) : "mapped");
    munmap(a, 128 * mib);
    a = mmap(0, 16 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("DATA 64 MiB: writable 16 MiB: %s\n", a == MAP_FAILED ? strerror(errno) : "mapped");
    /* MAP_FIXED over it counts only what it adds. */
    b = mmap(a, 16 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("DATA 64 MiB: MAP_FIXED over it: %s\n", b == a ? "same place" : strerror(errno));
    munmap(a, 16 * mib);
    big = malloc(100 * mib);
    printf("DATA 64 MiB: malloc 100 MiB: %s\n", big ? "got it" : "NULL");
    grown = sbrk(100 * mib);
    printf("DATA 64 MiB: sbrk 100 MiB: %s\n", grown == (void *)-1 ? strerror(errno) : "grown");
    set(RLIMIT_DATA, was.rlim_cur, was.rlim_max);
}

/* Runs this program as "deep LEVELS" under a stack limit of `limit` bytes;
 * says how the child ended. */
static void deep_under(const char *self, rlim_t limit, int levels) {
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit l;
        getrlimit(RLIMIT_STACK, &l);
        l.rlim_cur = limit;
        setrlimit(RLIMIT_STACK, &l);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", levels);
        execl(self, self, "deep", arg, (char *)0);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        printf("stack %lu KiB, %d KiB deep: killed by signal %d\n", (unsigned long)limit >> 10,
               levels * 4, WTERMSIG(status));
    else
        printf("stack %lu KiB, %d KiB deep: exit %d\n", (unsigned long)limit >> 10, levels * 4,
               WEXITSTATUS(status));
}

/* Prints the "Max stack size" and "Max open files" lines of
 * /proc/self/limits, which this process set itself. */
static void show_proc_limits(void) {
    FILE *f = fopen("/proc/self/limits", "r");
    if (!f) {
        printf("/proc/self/limits: %s\n", strerror(errno));
        return;
    }
    char line[256];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Limit ", 6) || !strncmp(line, "Max stack size", 14) ||
            !strncmp(line, "Max open files", 14))
            printf("limits| %s", line);
    fclose(f);
}

static void inherited(const char *self) {
    set(RLIMIT_NOFILE, 50, 60);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit l;
        getrlimit(RLIMIT_NOFILE, &l);
        printf("forked child: NOFILE %lu/%lu\n", (unsigned long)l.rlim_cur,
               (unsigned long)l.rlim_max);
        set(RLIMIT_STACK, 4 << 20, 4 << 20);
        execl(self, self, "show", (char *)0);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);

    /* The parent reads and lowers its child's limit through prlimit. */
    int go[2];
    pipe(go);
    pid = fork();
    if (pid == 0) {
        char c;
        read(go[0], &c, 1);
        struct rlimit l;
        getrlimit(RLIMIT_NOFILE, &l);
        printf("child after its parent's prlimit: NOFILE %lu/%lu\n", (unsigned long)l.rlim_cur,
               (unsigned long)l.rlim_max);
        _exit(0);
    }
    struct rlimit old, lower = {20, 40};
    int r = prlimit(pid, RLIMIT_NOFILE, &lower, &old);
    printf("prlimit of the child: %s, old %lu/%lu\n", err(r), (unsigned long)old.rlim_cur,
           (unsigned long)old.rlim_max);
    write(go[1], "x", 1);
    waitpid(pid, &status, 0);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "deep")) {
        int levels = atoi(argv[2]);
        return deep(levels) == levels ? 0 : 1;
    }
    if (argc == 2 && !strcmp(argv[1], "show")) {
        struct rlimit l;
        getrlimit(RLIMIT_NOFILE, &l);
        printf("after exec: NOFILE %lu/%lu\n", (unsigned long)l.rlim_cur,
               (unsigned long)l.rlim_max);
        show_proc_limits();
        return 0;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    descriptors();
    rules();
    memory();
    deep_under(argv[0], 1 << 20, 1024);
    deep_under(argv[0], 16 << 20, 1024);
    inherited(argv[0]);
    return 0;
}

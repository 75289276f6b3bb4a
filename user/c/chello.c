/* /bin/chello: a C program on libc-lite, checking the C library from the
 * outside: printf formats, the heap, strings, files, fork/wait, errno.
 * Prints "chello: ok" and exits 0 only if every check holds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/gmon.h>
#include <sys/mman.h>
#include <sys/prof.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "chello: FAIL %s\n", what);
        failures++;
    }
}

static long monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Spins for `ms` milliseconds; noinline so its address range is its own. */
__attribute__((noinline)) static void spin(long ms) {
    long end = monotonic_ms() + ms;
    while (monotonic_ms() < end)
        ;
}

static volatile int signals_seen;
static volatile unsigned long handler_pc;

static void on_signal(int signal) {
    signals_seen += signal;
}

static void on_sigaction(int signal, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    handler_pc = uc->uc_mcontext.gregs[REG_RIP];
    signals_seen += signal + (info->si_pid == getpid() ? 100 : 0);
}

static unsigned long total(const unsigned short *bins, int n) {
    unsigned long t = 0;
    for (int i = 0; i < n; i++) t += bins[i];
    return t;
}

int main(int argc, char **argv) {
    char buf[128];
    snprintf(buf, sizeof buf, "%d|%5d|%-5d|%05d|%x|%#X|%o|%c|%s|%.2s|%lu|%%", -42, 7, 7, 42, 255, 255, 8, 'z', "str", "abc", 1234567890123UL);
    check(strcmp(buf, "-42|    7|7    |00042|ff|0XFF|10|z|str|ab|1234567890123|%") == 0, "snprintf formats");
    check(snprintf(buf, 4, "%s", "truncated") == 9 && strcmp(buf, "tru") == 0, "snprintf truncates and counts");
    check(argc == 1 && strcmp(argv[0], "/bin/chello") == 0, "argv");

    char *p = malloc(100);
    check(p != NULL, "malloc");
    strcpy(p, "hello");
    strcat(p, ", world");
    check(strlen(p) == 12 && strchr(p, ',') == p + 5 && strstr(p, "world") == p + 7, "string functions");
    p = realloc(p, 4000);
    check(p && strcmp(p, "hello, world") == 0, "realloc keeps the contents");
    int *zeros = calloc(1000, sizeof(int));
    int sum = 0;
    for (int i = 0; i < 1000; i++) sum += zeros[i];
    check(zeros && sum == 0, "calloc zeroes");
    free(zeros);
    free(p);
    check(strtol("-0x1f", NULL, 0) == -31 && atoi(" 123abc") == 123, "strtol and atoi");

    int fd = open("/chello.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    check(fd >= 0 && write(fd, "data", 4) == 4 && close(fd) == 0, "write a file");
    fd = open("/chello.txt", O_RDONLY);
    check(fd >= 0 && read(fd, buf, sizeof buf) == 4 && memcmp(buf, "data", 4) == 0, "read it back");
    close(fd);
    check(unlink("/chello.txt") == 0, "unlink");
    check(open("/no/such/file", O_RDONLY) == -1 && errno == ENOENT, "errno is ENOENT");
    check(strcmp(strerror(ENOENT), "No such file or directory") == 0, "strerror");

    struct stat st;
    fd = open("/chello.a", O_CREAT | O_WRONLY, 0644);
    write(fd, "12345", 5);
    close(fd);
    check(rename("/chello.a", "/chello.b") == 0 && stat("/chello.b", &st) == 0 && st.st_size == 5 && S_ISREG(st.st_mode), "rename and stat");
    unlink("/chello.b");
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(m != MAP_FAILED && m[4000] == 0 && munmap(m, 8192) == 0, "mmap and munmap");
    struct utsname u;
    check(uname(&u) == 0 && strcmp(u.sysname, "Linux") == 0 && strstr(u.release, "-profkern") != NULL,
          "uname");
    check(syscall(39) == getpid(), "syscall(SYS_getpid)");

    /* profil(2) from C: every pc of the program in one 64 KiB histogram. */
    static unsigned short bins[32768];
    check(profil(bins, sizeof bins, 0x400000, 32768) == 0, "profil on");
    spin(50);
    check(profil(NULL, 0, 0, 0) == 0, "profil off");
    check(total(bins, 32768) >= 20, "profil counted ticks");
    check(profil((unsigned short *)8, 64, 0, 65536) == -1 && errno == EFAULT, "profil with a bad buffer is EFAULT");

    /* sprofil: the same through the multi-region form, scale computed. */
    static unsigned short region_bins[4096];
    struct prof region = { (void *)0x400000, (void *)0x800000, region_bins, sizeof region_bins, PROF_SCALE_AUTO };
    check(sprofil(&region, 1, NULL, 0) == 0, "sprofil on");
    spin(50);
    check(profil(NULL, 0, 0, 0) == 0 && total(region_bins, 4096) >= 20, "sprofil counted ticks");

    pid_t pid = fork();
    if (pid == 0)
        exit(7);
    int status = 0;
    check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 7, "fork, exit, waitpid");

    /* Signals from C: signal(), sigaction with SA_SIGINFO, masks, timers. */
    check(signal(SIGUSR1, on_signal) == SIG_DFL && raise(SIGUSR1) == 0 && signals_seen == SIGUSR1, "signal and raise");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigaction;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    signals_seen = 0;
    check(sigaction(SIGUSR2, &sa, NULL) == 0 && kill(getpid(), SIGUSR2) == 0 && signals_seen == SIGUSR2 + 100 && handler_pc > 0x400000, "sigaction with SA_SIGINFO");
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    signals_seen = 0;
    check(sigprocmask(SIG_BLOCK, &block, &old) == 0 && raise(SIGUSR1) == 0 && signals_seen == 0, "a blocked signal waits");
    check(sigprocmask(SIG_SETMASK, &old, NULL) == 0 && signals_seen == SIGUSR1, "and arrives when unblocked");
    struct itimerval timer = { { 0, 0 }, { 0, 20000 } };
    signals_seen = 0;
    check(signal(SIGALRM, on_signal) == SIG_DFL && setitimer(ITIMER_REAL, &timer, NULL) == 0 && pause() == -1 && errno == EINTR && signals_seen == SIGALRM, "setitimer and pause");
    check(sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL, "SIGKILL cannot be caught");

    if (failures == 0)
        printf("chello: ok\n");
    return failures == 0 ? 0 : 1;
}

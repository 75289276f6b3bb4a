/* bench: what system calls, processes, context switches and profiling
 * cost, measured from inside the guest. One static musl binary, so the very
 * same file runs on this kernel (as /bin/bench) and as /init of Debian's
 * Linux kernel in the same QEMU (cargo xtask bench does both).
 *
 * Every result is one line: "bench: NAME VALUE UNIT". Arguments:
 *   --quick       fewer iterations (a smoke run)
 *   --profile     only the profiling benchmarks (run once per tick rate)
 *   --hz N        the SIGPROF emulation's rate (default AT_CLKTCK; this
 *                 kernel's native profil samples at its boot tick rate)
 *   --exit        exit at once (the exec benchmark runs itself with it)
 * As process 1 (Linux's /init) it mounts devtmpfs for a console first and
 * powers the machine off at the end. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int quick;
static const char *self;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void result(const char *name, double value, const char *unit) {
    printf("bench: %s %.1f %s\n", name, value, unit);
    fflush(stdout);
}

static int scaled(int n) { return quick ? (n / 20 > 0 ? n / 20 : 1) : n; }

static void null_syscall(void) {
    int n = scaled(200000);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        syscall(SYS_getppid);
    result("null_syscall_getppid", (double)(now_ns() - t0) / n, "ns");
}

static void pipe_byte(void) {
    int fds[2];
    char c = 'x';
    pipe(fds);
    int n = scaled(50000);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        write(fds[1], &c, 1);
        read(fds[0], &c, 1);
    }
    result("pipe_write_then_read_1_byte", (double)(now_ns() - t0) / n, "ns");
    close(fds[0]);
    close(fds[1]);
}

static void file_read(void) {
    static char buf[4096];
    int fd = open("bench.tmp", O_CREAT | O_RDWR | O_TRUNC, 0644);
    write(fd, buf, sizeof buf);
    int n = scaled(50000);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        pread(fd, buf, sizeof buf, 0);
    result("ramfs_read_4KiB", (double)(now_ns() - t0) / n, "ns");
    close(fd);
    unlink("bench.tmp");
}

static void fork_exit_wait(const char *name, size_t touched) {
    char *memory = NULL;
    if (touched) {
        memory = malloc(touched);
        for (size_t i = 0; i < touched; i += 4096)
            memory[i] = 1;
    }
    int n = scaled(touched ? 40 : 400);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        waitpid(pid, NULL, 0);
    }
    result(name, (double)(now_ns() - t0) / n / 1000.0, "us");
    free(memory);
}

static void fork_exec_wait(void) {
    int n = scaled(200);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            char *args[] = {(char *)self, "--exit", NULL};
            execv(self, args);
            _exit(127);
        }
        waitpid(pid, NULL, 0);
    }
    result("fork_exec_wait", (double)(now_ns() - t0) / n / 1000.0, "us");
}

static void ping_pong(void) {
    int there[2], back[2];
    char c = 'x';
    pipe(there);
    pipe(back);
    int n = scaled(20000);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < n; i++) {
            read(there[0], &c, 1);
            write(back[1], &c, 1);
        }
        _exit(0);
    }
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        write(there[1], &c, 1);
        read(back[0], &c, 1);
    }
    long long t = now_ns() - t0;
    waitpid(pid, NULL, 0);
    result("pipe_ping_pong_round_trip", (double)t / n, "ns");
    close(there[0]), close(there[1]), close(back[0]), close(back[1]);
}

static void page_touch(void) {
    size_t len = quick ? (8 << 20) : (64 << 20);
    long long t0 = now_ns();
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (size_t i = 0; i < len; i += 4096)
        p[i] = 1;
    long long t = now_ns() - t0;
    munmap(p, len);
    result("anon_memory_mmap_and_first_touch_per_page", (double)t / (len / 4096), "ns");
}

static void *thread_returns(void *arg) { return arg; }

/* pthread_create + pthread_join of a thread that returns at once: clone,
 * a new kernel stack and TLS, the exit's clear-child-tid wake, the join's
 * futex wait. */
static void thread_create_join(void) {
    int n = scaled(5000);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        pthread_t t;
        pthread_create(&t, NULL, thread_returns, NULL);
        pthread_join(t, NULL);
    }
    result("thread_create_join", (double)(now_ns() - t0) / n, "ns");
}

/* FUTEX_WAKE with nobody waiting: what an uncontended unlock pays when it
 * must tell the kernel (the fast path of every futex-based lock skips
 * even this). */
#ifndef FUTEX_WAKE
#define FUTEX_WAKE 1 /* linux/futex.h, which musl-gcc does not see */
#define FUTEX_PRIVATE_FLAG 128
#endif
static void futex_wake_nobody(void) {
    static int word;
    int n = scaled(200000);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        syscall(SYS_futex, &word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    result("futex_wake_uncontended", (double)(now_ns() - t0) / n, "ns");
}

/* ---- profiling ---- */

/* Three loops with known shares of the work, each on its own page, so that
 * a sample's function follows from its page. */
#define WORK_ALIGN __attribute__((noinline, aligned(4096)))
static volatile uint64_t sink;
WORK_ALIGN static void work_a(long n) { uint64_t x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005ULL + i; sink = x; }
WORK_ALIGN static void work_b(long n) { uint64_t x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005ULL + i; sink = x; }
WORK_ALIGN static void work_c(long n) { uint64_t x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005ULL + i; sink = x; }
WORK_ALIGN static void work_end(void) {}

/* The calibrated workload: 50% in a, 30% in b, 20% in c. */
static void workload(long units) {
    for (long i = 0; i < units; i++) {
        work_a(5000);
        work_b(3000);
        work_c(2000);
    }
}

static unsigned short *bins;
static size_t nbins;
static uintptr_t low;
static volatile long samples;

static void on_sigprof(int sig, siginfo_t *info, void *context) {
    (void)sig, (void)info;
    uintptr_t pc = ((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
    samples++;
    size_t i = (pc - low) / 16;
    if (pc >= low && i < nbins && bins[i] < 65535)
        bins[i]++;
}

/* 0: off, 1: native profil (this kernel's call 1000), 2: SIGPROF.
 * `into` collects the histogram (native profil adds to what is there). */
static int start_profiling(int mode, long hz, unsigned short *into) {
    bins = into;
    if (mode == 1)
        return syscall(1000, into, nbins * 2, low, 8192) == 0; /* 16 bytes per bin */
    if (mode == 2) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigprof;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigaction(SIGPROF, &sa, NULL);
        long us = 1000000 / hz;
        struct itimerval it = {{0, us}, {0, us}};
        return setitimer(ITIMER_PROF, &it, NULL) == 0;
    }
    return 1;
}

static void stop_profiling(int mode) {
    if (mode == 1)
        syscall(1000, NULL, 0, 0, 0);
    if (mode == 2) {
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &off, NULL);
    }
}

static long bin_total(const unsigned short *h, uintptr_t from, uintptr_t to) {
    long sum = 0;
    for (uintptr_t pc = from; pc < to; pc += 16)
        sum += h[(pc - low) / 16];
    return sum;
}

static int by_value(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

#define ROUNDS 5

/* The calibrated workload with profiling off, native and emulated, in rounds
 * that alternate the modes (drift in the host then hits all three alike);
 * the median time of each mode, the samples of all its rounds, and how far
 * the histogram's shares of a, b and c are from 50/30/20. */
static void profiling(long hz) {
    low = (uintptr_t)work_a;
    nbins = ((uintptr_t)work_end - low) / 16 + 1;
    unsigned short *hist[3];
    for (int m = 0; m < 3; m++)
        hist[m] = calloc(nbins, sizeof **hist);
    long long t0 = now_ns();
    workload(20);
    long long per_unit = (now_ns() - t0) / 20;
    long units = (quick ? 200000000LL : 600000000LL) / (per_unit > 0 ? per_unit : 1);
    if (units < 1)
        units = 1;
    int rounds = quick ? 1 : ROUNDS;
    long long times[3][ROUNDS];
    long got[3] = {0, 0, 0};
    int available[3] = {1, 1, 1};
    for (int r = 0; r < rounds; r++) {
        for (int mode = 0; mode < 3; mode++) {
            if (!available[mode] || !start_profiling(mode, hz, hist[mode])) {
                available[mode] = 0;
                continue;
            }
            samples = 0;
            long long t = now_ns();
            workload(units);
            times[mode][r] = now_ns() - t;
            stop_profiling(mode);
            got[mode] += samples;
        }
    }
    static const char *names[] = {"off", "native", "sigprof"};
    double base = 0;
    for (int mode = 0; mode < 3; mode++) {
        char name[64];
        if (!available[mode]) {
            snprintf(name, sizeof name, "profile_%s_unavailable", names[mode]);
            result(name, 0, "-");
            continue;
        }
        qsort(times[mode], rounds, sizeof times[mode][0], by_value);
        double median = times[mode][rounds / 2];
        if (mode == 0)
            base = median;
        snprintf(name, sizeof name, "profile_%s_wall_time", names[mode]);
        result(name, median / 1e6, "ms");
        if (mode == 0)
            continue;
        const unsigned short *h = hist[mode];
        long a = bin_total(h, (uintptr_t)work_a, (uintptr_t)work_b);
        long b = bin_total(h, (uintptr_t)work_b, (uintptr_t)work_c);
        long c = bin_total(h, (uintptr_t)work_c, (uintptr_t)work_end);
        long all = a + b + c;
        if (mode == 1)
            got[mode] = all;
        snprintf(name, sizeof name, "profile_%s_slowdown", names[mode]);
        result(name, (median - base) * 100.0 / base, "%");
        snprintf(name, sizeof name, "profile_%s_samples", names[mode]);
        result(name, got[mode], "samples");
        double error = 100;
        if (all > 0) {
            double share[3] = {a * 100.0 / all, b * 100.0 / all, c * 100.0 / all};
            double want[3] = {50, 30, 20};
            error = 0;
            for (int i = 0; i < 3; i++) {
                double d = share[i] > want[i] ? share[i] - want[i] : want[i] - share[i];
                if (d > error)
                    error = d;
            }
        }
        snprintf(name, sizeof name, "profile_%s_attribution_error", names[mode]);
        result(name, error, "points");
    }
    if (available[1]) {
        /* This kernel's own count of what its sampling path costs. */
        /* struct profcost: samples, median, p99 of the interrupt side, then
         * of the update on the way back to user mode. */
        unsigned long long cost[6] = {0};
        if (syscall(1005, cost) == 0) {
            result("profile_native_kernel_tick_median", cost[1], "cycles");
            result("profile_native_kernel_tick_p99", cost[2], "cycles");
            result("profile_native_kernel_update_median", cost[4], "cycles");
            result("profile_native_kernel_update_p99", cost[5], "cycles");
        }
    }
    result("profile_tick_rate", hz, "Hz");
}

int main(int argc, char **argv) {
    self = argv[0];
    int profile_only = 0;
    long hz = (long)getauxval(AT_CLKTCK);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hz") && i + 1 < argc)
            hz = atol(argv[++i]);
        if (!strcmp(argv[i], "--exit"))
            return 0;
        quick |= !strcmp(argv[i], "--quick");
        profile_only |= !strcmp(argv[i], "--profile");
    }
    if (getpid() == 1) {
        /* Linux's /init: a console, then the arguments from the command line. */
        mkdir("/dev", 0755);
        mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        int fd = open("/dev/console", O_RDWR);
        dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
        self = "/init";
    }
    if (!profile_only) {
        null_syscall();
        pipe_byte();
        file_read();
        fork_exit_wait("fork_exit_wait", 0);
        fork_exec_wait();
        fork_exit_wait("fork_exit_wait_64MiB_touched", quick ? (8 << 20) : (64 << 20));
        ping_pong();
        page_touch();
        thread_create_join();
        futex_wake_nobody();
    }
    profiling(hz > 0 ? hz : 100);
    printf("bench: done\n");
    fflush(stdout);
    if (getpid() == 1)
        reboot(RB_POWER_OFF);
    return 0;
}

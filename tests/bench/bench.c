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
 *   --only WORD   only the micro-benchmarks whose names contain WORD, e.g.
 *                 cargo xtask run --release --add target/bench/bench --
 *                 /bin/bench --only pipe (then the profiling part as usual)
 *   --threads N   run the profiling workload in N threads at once (cargo
 *                 xtask bench passes the machine's CPU count, so that with
 *                 --cpus 2 two CPUs are busy and sampled)
 *   --exit        exit at once (the exec benchmark runs itself with it)
 *   --disk        also the disk benchmarks, on /dev/vda (an empty ext3
 *                 image cargo xtask bench gives both kernels alike),
 *                 mounted on /mnt: sequential write with a final fsync
 *                 and sequential read from a cold cache (MiB/s), making
 *                 and removing 1 KiB files, and a 4 KiB write + fsync
 *   --kprof       on the profiled kernel (cargo xtask run --kprof): a few
 *                 rows with the kernel profiling itself all along, and
 *                 what a kernel function call costs with mcount on and off
 * As process 1 (Linux's /init) it mounts devtmpfs for a console first,
 * loads the modules listed in /modules/order (virtio and ext4 are modules
 * in Debian's kernel) and powers the machine off at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
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
/* Processors the machine has (sched_getaffinity on both kernels). */
static int cpus = 1;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void result(const char *name, double value, const char *unit) {
    printf("bench: %s %.1f %s\n", name, value, unit);
    fflush(stdout);
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- micro-benchmarks ----
 *
 * Each one measures a round of `n` operations and returns the nanoseconds
 * the round took (its set-up outside the clock). `micro_benchmarks` runs
 * them in interleaved rounds (all of them once, then all again, ...), so
 * that a slow stretch of the host hits every benchmark alike instead of
 * all of one, and prints per benchmark the median time per operation and
 * the quartiles of the rounds:
 *     bench: NAME MEDIAN UNIT Q1 Q3
 * The spread is what tells a real difference from the host's noise. */

static double null_syscall(int n) {
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        syscall(SYS_getppid);
    return now_ns() - t0;
}

/* The null call again, with 500 other processes asleep, each with an alarm
 * and a sleep of ten minutes: a clock tick that looked at every process's
 * timers and every sleeper's deadline (it once did) makes the call slower
 * as the processes pile up; a tick that keeps the earliest deadline does
 * not. The sleepers are made before the clock starts and killed after. */
#define SLEEPERS 500
static double null_syscall_beside_sleepers(int n) {
    static pid_t sleepers[SLEEPERS];
    int ready[2];
    if (pipe(ready) < 0)
        return null_syscall(n);
    int made = 0;
    while (made < SLEEPERS) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "bench: fork of sleeper %d failed\n", made + 1);
            break;
        }
        if (pid == 0) {
            alarm(600);
            write(ready[1], "", 1);
            struct timespec ten_minutes = {600, 0};
            nanosleep(&ten_minutes, NULL);
            _exit(0);
        }
        sleepers[made++] = pid;
    }
    /* Every one has its alarm; a moment more and each is in nanosleep. */
    char byte;
    for (int i = 0; i < made; i++)
        read(ready[0], &byte, 1);
    usleep(50000);
    double t = null_syscall(n);
    for (int i = 0; i < made; i++)
        kill(sleepers[i], SIGKILL);
    for (int i = 0; i < made; i++)
        waitpid(sleepers[i], NULL, 0);
    close(ready[0]);
    close(ready[1]);
    return t;
}

/* The null call taken apart: each of these adds one piece to the one
 * before it (docs/performance.md). A number no kernel assigns is the way
 * in and out alone, dispatch included. */
#define UNASSIGNED_SYSCALL 500
static double unassigned_syscall(int n) {
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        syscall(UNASSIGNED_SYSCALL);
    return now_ns() - t0;
}

/* + a file descriptor looked up (and nothing moved). */
static double read_0_bytes(int n) {
    int fds[2];
    char c;
    pipe(fds);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        read(fds[0], &c, 0);
    long long t = now_ns() - t0;
    close(fds[0]), close(fds[1]);
    return t;
}

/* + one byte copied in from user memory. */
static double write_1_byte_dev_null(int n) {
    int fd = open("/dev/null", O_WRONLY);
    char c = 'x';
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        write(fd, &c, 1);
    long long t = now_ns() - t0;
    close(fd);
    return t;
}

/* A structure copied out (the system call, not the vDSO Linux offers). */
static double clock_gettime_syscall(int n) {
    struct timespec ts;
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return now_ns() - t0;
}

/* The same through libc, which calls the vDSO on both kernels: no
 * system call at all. */
static double clock_gettime_vdso(int n) {
    struct timespec ts;
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return now_ns() - t0;
}

static double pipe_byte(int n) {
    int fds[2];
    char c = 'x';
    pipe(fds);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        write(fds[1], &c, 1);
        read(fds[0], &c, 1);
    }
    long long t = now_ns() - t0;
    close(fds[0]);
    close(fds[1]);
    return t;
}

/* 64 KiB through a pipe to another process (Linux's default pipe holds
 * that much; a smaller pipe pays more switches), acknowledged at the end. */
static double pipe_64KiB(int n) {
    enum { CHUNK = 64 << 10 };
    static char buf[CHUNK];
    int there[2], back[2];
    pipe(there);
    pipe(back);
    pid_t pid = fork();
    if (pid == 0) {
        close(there[1]);
        while (read(there[0], buf, sizeof buf) > 0)
            ;
        write(back[1], "k", 1);
        _exit(0);
    }
    close(there[0]);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        for (size_t done = 0; done < CHUNK;) {
            ssize_t k = write(there[1], buf + done, CHUNK - done);
            if (k <= 0)
                break;
            done += k;
        }
    close(there[1]);
    char c;
    read(back[0], &c, 1);
    long long t = now_ns() - t0;
    waitpid(pid, NULL, 0);
    close(back[0]), close(back[1]);
    return t;
}

static double file_read(int n) {
    static char buf[4096];
    int fd = open("bench.tmp", O_CREAT | O_RDWR | O_TRUNC, 0644);
    write(fd, buf, sizeof buf);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        pread(fd, buf, sizeof buf, 0);
    long long t = now_ns() - t0;
    close(fd);
    unlink("bench.tmp");
    return t;
}

static double open_close(int n) {
    close(open("bench.tmp", O_CREAT | O_WRONLY, 0644));
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        close(open("bench.tmp", O_RDONLY));
    long long t = now_ns() - t0;
    unlink("bench.tmp");
    return t;
}

static double stat_file(int n) {
    struct stat st;
    close(open("bench.tmp", O_CREAT | O_WRONLY, 0644));
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        stat("bench.tmp", &st);
    long long t = now_ns() - t0;
    unlink("bench.tmp");
    return t;
}

static double fork_exit_wait_touching(int n, size_t touched) {
    char *memory = NULL;
    if (touched) {
        memory = malloc(touched);
        for (size_t i = 0; i < touched; i += 4096)
            memory[i] = 1;
    }
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        waitpid(pid, NULL, 0);
    }
    long long t = now_ns() - t0;
    free(memory);
    return t;
}

static double fork_exit_wait(int n) { return fork_exit_wait_touching(n, 0); }

static double fork_exit_wait_64MiB(int n) {
    return fork_exit_wait_touching(n, quick ? (8 << 20) : (64 << 20));
}

static double fork_exec_wait(int n) {
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
    return now_ns() - t0;
}

static double ping_pong(int n) {
    int there[2], back[2];
    char c = 'x';
    pipe(there);
    pipe(back);
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
    close(there[0]), close(there[1]), close(back[0]), close(back[1]);
    return t;
}

/* Two processes taking turns with sched_yield (one CPU: each yield of the
 * measured side switches to the other and back). */
static double yield_switch(int n) {
    pid_t pid = fork();
    if (pid == 0)
        for (;;)
            sched_yield();
    sched_yield(); /* let it start */
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        sched_yield();
    long long t = now_ns() - t0;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return t;
}

/* mmap + first touch of anonymous memory, per page (`n` pages). */
static double page_touch(int n) {
    size_t len = (size_t)n * 4096;
    long long t0 = now_ns();
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (size_t i = 0; i < len; i += 4096)
        p[i] = 1;
    long long t = now_ns() - t0;
    munmap(p, len);
    return t;
}

static double mmap_munmap_1MiB(int n) {
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        munmap(mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
               1 << 20);
    return now_ns() - t0;
}

static volatile sig_atomic_t caught;
static void on_usr1(int sig) { caught += sig == SIGUSR1; }

/* kill to self: the signal is delivered on the way out of kill, so one
 * operation is a handler entered and rt_sigreturn. */
static double signal_self(int n) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pid_t me = getpid();
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        kill(me, SIGUSR1);
    long long t = now_ns() - t0;
    signal(SIGUSR1, SIG_DFL);
    return t;
}

static void *thread_returns(void *arg) { return arg; }

/* pthread_create + pthread_join of a thread that returns at once: clone,
 * a new kernel stack and TLS, the exit's clear-child-tid wake, the join's
 * futex wait. */
static double thread_create_join(int n) {
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        pthread_t t;
        pthread_create(&t, NULL, thread_returns, NULL);
        pthread_join(t, NULL);
    }
    return now_ns() - t0;
}

/* FUTEX_WAKE with nobody waiting: what an uncontended unlock pays when it
 * must tell the kernel (the fast path of every futex-based lock skips
 * even this). */
#ifndef FUTEX_WAKE
#define FUTEX_WAKE 1 /* linux/futex.h, which musl-gcc does not see */
#define FUTEX_PRIVATE_FLAG 128
#endif
static double futex_wake_nobody(int n) {
    static int word;
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        syscall(SYS_futex, &word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    return now_ns() - t0;
}

#ifndef FUTEX_WAIT
#define FUTEX_WAIT 0
#endif

/* Two threads pass a turn back and forth through one futex word, each
 * waking the other and sleeping until woken: with two CPUs the threads sit
 * on different CPUs, so each half is a wake-up of a thread on another CPU
 * (the wake IPI, the halted CPU's return to its scheduler); with one, a
 * switch between threads. */
static int turn_word;
static int turn_rounds;

/* The measured side: hand the turn over (1), sleep until it is back (0). */
static void pass_turn(void) {
    __atomic_store_n(&turn_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &turn_word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    while (__atomic_load_n(&turn_word, __ATOMIC_SEQ_CST) == 1)
        syscall(SYS_futex, &turn_word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

static void *turn_partner(void *arg) {
    (void)arg;
    for (int i = 0; i < turn_rounds; i++) {
        while (__atomic_load_n(&turn_word, __ATOMIC_SEQ_CST) != 1)
            syscall(SYS_futex, &turn_word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
        __atomic_store_n(&turn_word, 0, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &turn_word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    }
    return NULL;
}

static double futex_ping_pong(int n) {
    pthread_t partner;
    turn_word = 0;
    turn_rounds = n;
    pthread_create(&partner, NULL, turn_partner, NULL);
    long long t0 = now_ns();
    for (int i = 0; i < n; i++)
        pass_turn();
    long long t = now_ns() - t0;
    pthread_join(partner, NULL);
    return t;
}

/* mprotect of one touched page, read-only then back: the entry changes
 * and the TLB must forget it. Alone, only this CPU's TLB holds it. */
static char *prot_page;

static double mprotect_toggle(int n) {
    if (!prot_page) {
        prot_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        prot_page[0] = 1;
    }
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        mprotect(prot_page, 4096, PROT_READ);
        mprotect(prot_page, 4096, PROT_READ | PROT_WRITE);
    }
    return (now_ns() - t0) / 2;
}

/* The same beside a thread of the process spinning on another CPU, which
 * may cache the entry: every change is a TLB shootdown by IPI, on Linux as
 * here. Only with two CPUs or more (on one, the spinner would share it). */
static volatile int spinning;

static void *spin_beside(void *arg) {
    (void)arg;
    while (spinning)
        prot_page[64] = 0; /* a read would do; a store keeps it honest */
    return NULL;
}

static double mprotect_beside_a_thread(int n) {
    mprotect_toggle(1);
    spinning = 1;
    pthread_t t;
    pthread_create(&t, NULL, spin_beside, NULL);
    double v = mprotect_toggle(n);
    spinning = 0;
    pthread_join(t, NULL);
    return v;
}

#define MICRO_ROUNDS 11

static const struct micro {
    const char *name;
    double (*round)(int n);
    int per_round; /* operations in one round of a full run */
    int us;        /* reported in microseconds, not nanoseconds */
    int min_cpus;  /* skipped on a machine with fewer processors */
} micros[] = {
    {"null_syscall_getppid", null_syscall, 20000, 0},
    {"null_syscall_with_500_processes_asleep", null_syscall_beside_sleepers, 20000, 0},
    {"unassigned_syscall_enosys", unassigned_syscall, 20000, 0},
    {"read_0_bytes_from_a_pipe", read_0_bytes, 20000, 0},
    {"write_1_byte_to_dev_null", write_1_byte_dev_null, 20000, 0},
    {"clock_gettime_syscall", clock_gettime_syscall, 20000, 0},
    {"clock_gettime_vdso", clock_gettime_vdso, 20000, 0},
    {"pipe_write_then_read_1_byte", pipe_byte, 5000, 0},
    {"pipe_64KiB_to_another_process", pipe_64KiB, 40, 1},
    {"ramfs_read_4KiB", file_read, 5000, 0},
    {"open_close", open_close, 5000, 0},
    {"stat", stat_file, 5000, 0},
    {"fork_exit_wait", fork_exit_wait, 40, 1},
    {"fork_exec_wait", fork_exec_wait, 20, 1},
    {"fork_exit_wait_64MiB_touched", fork_exit_wait_64MiB, 4, 1},
    {"pipe_ping_pong_round_trip", ping_pong, 2000, 0},
    {"sched_yield_switch_round_trip", yield_switch, 2000, 0},
    {"anon_memory_mmap_and_first_touch_per_page", page_touch, 1024, 0},
    {"mmap_munmap_1MiB", mmap_munmap_1MiB, 2000, 0},
    {"signal_to_self_round_trip", signal_self, 2000, 0},
    {"thread_create_join", thread_create_join, 500, 0},
    {"futex_wake_uncontended", futex_wake_nobody, 20000, 0},
    {"futex_ping_pong_two_threads_round_trip", futex_ping_pong, 2000, 0},
    {"mprotect_one_page", mprotect_toggle, 5000, 0},
    {"mprotect_one_page_beside_a_thread_on_another_cpu", mprotect_beside_a_thread, 2000, 0, 2},
};
#define MICROS (sizeof micros / sizeof micros[0])

/* `--only WORD`: only the micro-benchmarks whose names contain WORD. */
static const char *only;

/* `--kprof`: on the profiled kernel (`cargo xtask run --kprof`), with
 * the kernel profiling itself (kgmon, call 1008) from start to end: only
 * these rows, against the same rows of the plain kernel. */
static int kprof;
static const char *const kprof_rows[] = {
    "null_syscall_getppid", "open_close", "stat", "pipe_ping_pong_round_trip",
    "fork_exec_wait", "kernel_function_call", "kernel_profile_sample_of_one_tick",
};

static int wanted(const char *name) {
    if (only && !strstr(name, only))
        return 0;
    if (!kprof)
        return 1;
    for (size_t i = 0; i < sizeof kprof_rows / sizeof kprof_rows[0]; i++)
        if (!strcmp(name, kprof_rows[i]))
            return 1;
    return 0;
}

/* This kernel times operations of its own that no program can time alone
 * (its call 1007, kbench: median and quartiles in picoseconds, then the
 * median in cycles): a lock, a shootdown, and what its own profile
 * (kgmon) costs: a function call, which in the profiled kernel includes
 * mcount, and the clock's sample of the kernel. The last two are given in
 * cycles too. Linux has no such call (ENOSYS), so these rows have no
 * Linux column. */
static void kernel_figures(void) {
    static const struct {
        const char *name;
        int what;
        int cycles;
    } figures[] = {
        {"kernel_lock_take_and_release_uncontended", 0, 0},
        {"kernel_tlb_shootdown_of_every_cpu", 1, 0},
        {"kernel_function_call", 2, 1},
        {"kernel_profile_sample_of_one_tick", 3, 1},
    };
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        unsigned long long ps[4];
        if (!wanted(figures[i].name))
            continue;
        /* The sample is timed as the profile takes it, with kgmon on (it
         * is on all along with --kprof). */
        int sample = figures[i].what == 3 && !kprof;
        if (sample)
            syscall(1008, 1, 0, 0);
        long timed = syscall(1007, figures[i].what, quick ? 50 : 1000, ps);
        if (sample)
            syscall(1008, 2, 0, 0);
        if (timed != 0)
            continue;
        printf("bench: %s %.1f ns %.1f %.1f\n", figures[i].name, ps[0] / 1000.0, ps[1] / 1000.0,
               ps[2] / 1000.0);
        if (figures[i].cycles)
            printf("bench: %s_cycles %llu cycles\n", figures[i].name, ps[3]);
    }
}

static int chosen(size_t b) {
    return wanted(micros[b].name) && cpus >= micros[b].min_cpus;
}

/* kgmon(2) (call 1008): start (1) or stop (2) the kernel's own profile. */
static void kgmon(int op, const char *what) {
    if (syscall(1008, op, 0, 0) != 0 && errno != EALREADY) {
        fprintf(stderr, "bench: kgmon %s: %s\n", what, strerror(errno));
        exit(1);
    }
}

/* ---- the disk ---- */

static const char *disk_dir = "/mnt";

/* Mounts /dev/vda on /mnt: "ext3" here, "ext4" on Linux (its ext4 driver
 * mounts ext3 images; Debian builds no ext3 of its own). */
static int disk_mount(void) {
    mkdir(disk_dir, 0755);
    if (mount("/dev/vda", disk_dir, "ext3", 0, NULL) == 0)
        return 0;
    return mount("/dev/vda", disk_dir, "ext4", 0, NULL);
}

/* Quartiles of `n` values, printed as a result line. */
static void quartile_result(const char *name, double *v, int n, const char *unit) {
    qsort(v, n, sizeof *v, by_double);
    printf("bench: %s %.1f %s %.1f %.1f\n", name, v[n / 2], unit, v[n / 4], v[(3 * n) / 4]);
    fflush(stdout);
}

static void disk_benchmarks(void) {
    enum { ROUNDS = 4, MAX_OPS = 200 };
    const long long file_bytes = quick ? 4LL << 20 : 64LL << 20; /* x4: 256 MiB */
    static char block[1 << 20];
    memset(block, 0x5a, sizeof block);
    if (disk_mount() != 0) {
        printf("bench: disk_unavailable 0 none\n");
        return;
    }
    double rate[ROUNDS];
    char path[64];
    /* Sequential write, 1 MiB at a time, then fsync: what reached the disk. */
    for (int r = 0; r < ROUNDS; r++) {
        snprintf(path, sizeof path, "%s/seq-%d", disk_dir, r);
        long long t0 = now_ns();
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        for (long long done = 0; fd >= 0 && done < file_bytes; done += sizeof block)
            if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
                break;
        fsync(fd);
        close(fd);
        rate[r] = (file_bytes >> 20) / ((now_ns() - t0) / 1e9);
    }
    quartile_result("disk_sequential_write_with_fsync", rate, ROUNDS, "MiB/s");
    /* Sequential read from a cold cache: unmounting drops every cached
     * block, on both kernels alike. */
    umount(disk_dir);
    if (disk_mount() != 0)
        return;
    for (int r = 0; r < ROUNDS; r++) {
        snprintf(path, sizeof path, "%s/seq-%d", disk_dir, r);
        long long t0 = now_ns(), got = 0;
        int fd = open(path, O_RDONLY);
        for (ssize_t n; fd >= 0 && (n = read(fd, block, sizeof block)) > 0;)
            got += n;
        close(fd);
        rate[r] = (got >> 20) / ((now_ns() - t0) / 1e9);
        unlink(path);
    }
    quartile_result("disk_sequential_read_cold", rate, ROUNDS, "MiB/s");
    /* Making and removing 1 KiB files: 10 rounds of 100 (a file's time). */
    double per_file[10];
    int file_rounds = quick ? 2 : 10, files = quick ? 20 : 100;
    for (int r = 0; r < file_rounds; r++) {
        long long t0 = now_ns();
        for (int i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/f-%d", disk_dir, i);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            write(fd, block, 1024);
            close(fd);
        }
        for (int i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/f-%d", disk_dir, i);
            unlink(path);
        }
        per_file[r] = (now_ns() - t0) / 1000.0 / files;
    }
    quartile_result("disk_create_and_delete_1KiB_file", per_file, file_rounds, "us");
    /* A 4 KiB write and the fsync that makes it durable, each timed. */
    double latency[MAX_OPS];
    int ops = quick ? 20 : MAX_OPS;
    snprintf(path, sizeof path, "%s/synced", disk_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < ops; i++) {
        long long t0 = now_ns();
        pwrite(fd, block, 4096, (off_t)i * 4096);
        fsync(fd);
        latency[i] = (now_ns() - t0) / 1000.0;
    }
    close(fd);
    unlink(path);
    quartile_result("disk_4KiB_write_and_fsync", latency, ops, "us");
    umount(disk_dir);
}

/* Linux's /init: the modules the disk needs, in /modules/order. */
static void load_modules(void) {
    FILE *order = fopen("/modules/order", "r");
    char name[256], path[512];
    if (!order)
        return;
    while (fscanf(order, "%255s", name) == 1) {
        snprintf(path, sizeof path, "/modules/%s", name);
        int fd = open(path, O_RDONLY);
        if (fd >= 0)
            syscall(SYS_finit_module, fd, "", 0);
        close(fd);
    }
    fclose(order);
    /* The disk's node comes once its driver has probed it. */
    for (int i = 0; i < 100 && access("/dev/vda", F_OK) < 0; i++)
        usleep(100000);
}

static void micro_benchmarks(void) {
    int rounds = quick ? 3 : MICRO_ROUNDS;
    static double per_op[MICROS][MICRO_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (size_t b = 0; b < MICROS; b++) {
            if (!chosen(b))
                continue;
            int n = quick ? (micros[b].per_round / 20 > 0 ? micros[b].per_round / 20 : 1)
                          : micros[b].per_round;
            per_op[b][r] = micros[b].round(n) / n / (micros[b].us ? 1000.0 : 1.0);
        }
    kernel_figures();
    for (size_t b = 0; b < MICROS; b++) {
        if (!chosen(b))
            continue;
        double *v = per_op[b];
        qsort(v, rounds, sizeof *v, by_double);
        printf("bench: %s %.1f %s %.1f %.1f\n", micros[b].name, v[rounds / 2],
               micros[b].us ? "us" : "ns", v[rounds / 4], v[(3 * rounds) / 4]);
    }
    fflush(stdout);
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

/* `--threads N`: the workload runs in N threads at once, each doing all
 * of it, so that on N CPUs each is busy and each is sampled. */
#define MAX_WORK_THREADS 16
static int work_threads = 1;

static void *workload_thread(void *units) {
    workload((long)units);
    return NULL;
}

static void run_workload(long units) {
    pthread_t t[MAX_WORK_THREADS];
    for (int i = 1; i < work_threads; i++)
        pthread_create(&t[i], NULL, workload_thread, (void *)units);
    workload(units);
    for (int i = 1; i < work_threads; i++)
        pthread_join(t[i], NULL);
}

static unsigned short *bins;
static size_t nbins;
static uintptr_t low;
static volatile long samples;

static void on_sigprof(int sig, siginfo_t *info, void *context) {
    (void)sig, (void)info;
    uintptr_t pc = ((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
    __atomic_fetch_add(&samples, 1, __ATOMIC_RELAXED);
    size_t i = (pc - low) / 16;
    if (pc >= low && i < nbins && bins[i] < 65535)
        __atomic_fetch_add(&bins[i], 1, __ATOMIC_RELAXED);
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

#define ROUNDS 9
/* Slices a round's work per mode is cut into, the modes taking turns. */
#define SLICES 24

/* The calibrated workload with profiling off, native and emulated, in rounds
 * in which the three modes take turns slice by slice (the order rotating),
 * so that a slow stretch of the host, which under emulation lasts tens of
 * milliseconds, lands on all three alike instead of on whichever ran then;
 * the median time of each mode, the median slowdown of a mode over the
 * rounds (each round's time against that round's "off" time) with its
 * quartiles, the samples of all its rounds, and how far the histogram's
 * shares of a, b and c are from 50/30/20. Profiling is started and stopped
 * outside the timed part of each slice. */
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
    int slices = quick ? 1 : SLICES;
    long slice_units = units / slices > 0 ? units / slices : 1;
    int rounds = quick ? 1 : ROUNDS;
    long long times[3][ROUNDS] = {{0}};
    long got[3] = {0, 0, 0};
    int available[3] = {1, 1, 1};
    for (int r = 0; r < rounds; r++) {
        for (int s = 0; s < slices; s++) {
            for (int turn = 0; turn < 3; turn++) {
                int mode = (turn + s + r) % 3;
                if (!available[mode] || !start_profiling(mode, hz, hist[mode])) {
                    available[mode] = 0;
                    continue;
                }
                samples = 0;
                long long t = now_ns();
                run_workload(slice_units);
                times[mode][r] += now_ns() - t;
                stop_profiling(mode);
                got[mode] += samples;
            }
        }
    }
    /* Each mode's slowdown in each round against the "off" run of the same
     * round (paired, so drift between rounds cancels), before the times
     * are sorted apart. */
    double slowdown[3][ROUNDS];
    for (int mode = 1; mode < 3; mode++)
        for (int r = 0; r < rounds && available[0] && available[mode]; r++)
            slowdown[mode][r] = (times[mode][r] - times[0][r]) * 100.0 / times[0][r];
    static const char *names[] = {"off", "native", "sigprof"};
    for (int mode = 0; mode < 3; mode++) {
        char name[64];
        if (!available[mode]) {
            snprintf(name, sizeof name, "profile_%s_unavailable", names[mode]);
            result(name, 0, "-");
            continue;
        }
        qsort(times[mode], rounds, sizeof times[mode][0], by_value);
        double median = times[mode][rounds / 2];
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
        double *paired = slowdown[mode];
        qsort(paired, rounds, sizeof *paired, by_double);
        printf("bench: profile_%s_slowdown %.2f %% %.2f %.2f\n", names[mode], paired[rounds / 2],
               paired[rounds / 4], paired[(3 * rounds) / 4]);
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
    result("profile_threads", work_threads, "threads");
}

int main(int argc, char **argv) {
    self = argv[0];
    int profile_only = 0, disk = 0;
    long hz = (long)getauxval(AT_CLKTCK);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hz") && i + 1 < argc)
            hz = atol(argv[++i]);
        if (!strcmp(argv[i], "--exit"))
            return 0;
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            work_threads = atoi(argv[++i]);
            work_threads = work_threads < 1 ? 1 : work_threads > MAX_WORK_THREADS ? MAX_WORK_THREADS : work_threads;
        }
        quick |= !strcmp(argv[i], "--quick");
        profile_only |= !strcmp(argv[i], "--profile");
        disk |= !strcmp(argv[i], "--disk");
        kprof |= !strcmp(argv[i], "--kprof");
    }
    if (getpid() == 1) {
        /* Linux's /init: a console, then the arguments from the command line. */
        mkdir("/dev", 0755);
        mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        int fd = open("/dev/console", O_RDWR);
        dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
        self = "/init";
        if (disk)
            load_modules();
    }
    cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (kprof) {
        kgmon(1, "start");
        micro_benchmarks();
        kgmon(2, "stop");
        /* mcount when the profile is off: it looks at a flag and returns. */
        unsigned long long ps[4];
        if (syscall(1007, 2, quick ? 50 : 1000, ps) == 0)
            printf("bench: kernel_function_call_kgmon_off_cycles %llu cycles\n", ps[3]);
        printf("bench: done\n");
        fflush(stdout);
        return 0;
    }
    if (!profile_only)
        micro_benchmarks();
    if (disk && !profile_only)
        disk_benchmarks();
    profiling(hz > 0 ? hz : 100);
    printf("bench: done\n");
    fflush(stdout);
    if (getpid() == 1)
        reboot(RB_POWER_OFF);
    return 0;
}

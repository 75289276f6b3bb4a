/* The vDSO: found through AT_SYSINFO_EHDR and shown as [vdso] in
 * /proc/self/maps; its symbol table has Linux's names at version
 * LINUX_2.6; and what it answers agrees with the system calls on every
 * CPU. A vDSO reading taken between two system-call readings lies between
 * them, for each clock, gettimeofday and time, and its getcpu names the
 * CPU the system call names. One reader runs per CPU, and on profkern
 * with several CPUs they must have been seen on more than one.
 *
 * On profkern a thread also moves the wall clock (clock_settime) the whole
 * time, back and forth by 1000 s, and each reading whose three calls no
 * setting came between must still be ordered: the vDSO sees a new time as
 * soon as the system call does, and the readers go on past their rounds
 * until it has made MIN_SETTINGS. (On the host, which runs this program to
 * say what Linux prints, the clock is the machine's own and is left alone:
 * only calls that fail are made there.) */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 4000
/* Settings of the wall clock the readers go on until they have seen
 * (profkern): on one CPU the setter gets a turn only when a reader's time
 * slice ends, and 4000 rounds can pass in a few slices. */
#define MIN_SETTINGS 20

static uintptr_t vdso;

/* The vDSO's symbol `name` at version `version`, read from its dynamic
 * section as a loader reads it: DT_HASH gives the symbol count, DT_VERSYM
 * and DT_VERDEF each symbol's version. */
static void *vdso_sym(const char *name, const char *version)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)vdso;
    Elf64_Phdr *ph = (Elf64_Phdr *)(vdso + eh->e_phoff);
    uintptr_t load = 0;
    Elf64_Dyn *dyn = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !load)
            load = vdso + ph[i].p_offset - ph[i].p_vaddr;
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = (Elf64_Dyn *)(vdso + ph[i].p_offset);
    }
    if (!dyn)
        return 0;
    Elf64_Sym *syms = 0;
    const char *strings = 0;
    Elf32_Word *hash = 0;
    Elf64_Half *versym = 0;
    Elf64_Verdef *verdef = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t at = load + dyn->d_un.d_ptr;
        switch (dyn->d_tag) {
        case DT_SYMTAB: syms = (Elf64_Sym *)at; break;
        case DT_STRTAB: strings = (const char *)at; break;
        case DT_HASH: hash = (Elf32_Word *)at; break;
        case DT_VERSYM: versym = (Elf64_Half *)at; break;
        case DT_VERDEF: verdef = (Elf64_Verdef *)at; break;
        }
    }
    if (!syms || !strings || !hash || !versym || !verdef)
        return 0;
    for (Elf32_Word i = 0; i < hash[1]; i++) {
        if (strcmp(strings + syms[i].st_name, name) || syms[i].st_shndx == SHN_UNDEF)
            continue;
        for (Elf64_Verdef *d = verdef;; d = (Elf64_Verdef *)((char *)d + d->vd_next)) {
            Elf64_Verdaux *aux = (Elf64_Verdaux *)((char *)d + d->vd_aux);
            if (d->vd_ndx == (versym[i] & 0x7fff) && !strcmp(strings + aux->vda_name, version))
                return (void *)(load + syms[i].st_value);
            if (!d->vd_next)
                break;
        }
    }
    return 0;
}

static int (*vdso_clock_gettime)(clockid_t, struct timespec *);
static int (*vdso_gettimeofday)(struct timeval *, void *);
static time_t (*vdso_time)(time_t *);
static int (*vdso_getcpu)(unsigned *, unsigned *, void *);

static long long nanos(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

static struct timespec sys_clock(clockid_t id)
{
    struct timespec t;
    syscall(SYS_clock_gettime, id, &t);
    return t;
}

/* The wall clock's settings so far, twice: odd while one is under way. */
static atomic_long settings;
static atomic_int readers_done;
static int on_profkern;

struct reader {
    const char *failed;
    long checked_realtime;
    unsigned long cpus_seen;
};

static void *read_clocks(void *arg)
{
    struct reader *r = arg;
    static const clockid_t ids[] = {CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
                                    CLOCK_REALTIME, CLOCK_REALTIME_COARSE};
    for (int round = 0;
         (round < ROUNDS || (on_profkern && atomic_load(&settings) < 2 * MIN_SETTINGS)) &&
         !r->failed;
         round++) {
        for (unsigned k = 0; k < sizeof ids / sizeof ids[0]; k++) {
            long before = atomic_load(&settings);
            struct timespec a = sys_clock(ids[k]), b, c;
            vdso_clock_gettime(ids[k], &b);
            c = sys_clock(ids[k]);
            int wall = ids[k] == CLOCK_REALTIME || ids[k] == CLOCK_REALTIME_COARSE;
            if (wall && (before & 1 || atomic_load(&settings) != before))
                continue; /* the clock was set in between */
            if (nanos(a) > nanos(b) || nanos(b) > nanos(c)) {
                static char text[160];
                snprintf(text, sizeof text, "clock %d: vDSO %lld not between %lld and %lld",
                         ids[k], nanos(b), nanos(a), nanos(c));
                r->failed = text;
            }
            if (wall)
                r->checked_realtime++;
        }
        long before = atomic_load(&settings);
        struct timeval ta, tb, tc;
        syscall(SYS_gettimeofday, &ta, 0);
        vdso_gettimeofday(&tb, 0);
        syscall(SYS_gettimeofday, &tc, 0);
        time_t sa = syscall(SYS_time, 0), sb = vdso_time(0), sc = syscall(SYS_time, 0);
        if (!(before & 1) && atomic_load(&settings) == before) {
            long long ua = ta.tv_sec * 1000000LL + ta.tv_usec;
            long long ub = tb.tv_sec * 1000000LL + tb.tv_usec;
            long long uc = tc.tv_sec * 1000000LL + tc.tv_usec;
            if (ua > ub || ub > uc)
                r->failed = "gettimeofday: vDSO not between the system calls";
            if (sa > sb || sb > sc)
                r->failed = "time: vDSO not between the system calls";
        }
        /* The thread may move between CPUs at any tick: only a vDSO answer
         * between two equal system-call answers is checked. */
        unsigned before_cpu = 99, cpu = 99, node = 99, after_cpu = 98;
        syscall(SYS_getcpu, &before_cpu, 0, 0);
        vdso_getcpu(&cpu, &node, 0);
        syscall(SYS_getcpu, &after_cpu, 0, 0);
        if (before_cpu == after_cpu && (cpu != before_cpu || node != 0))
            r->failed = "getcpu: not the CPU the system call names";
        if (cpu < 64)
            r->cpus_seen |= 1UL << cpu;
    }
    atomic_fetch_add(&readers_done, 1);
    return 0;
}

/* Moves the wall clock by +1000 s and back until every reader is done. */
static void *set_clock(void *arg)
{
    int readers = *(int *)arg;
    while (atomic_load(&readers_done) < readers) {
        for (int sign = 1; sign >= -1; sign -= 2) {
            struct timespec now;
            atomic_fetch_add(&settings, 1);
            clock_gettime(CLOCK_REALTIME, &now);
            now.tv_sec += sign * 1000;
            if (clock_settime(CLOCK_REALTIME, &now)) {
                perror("clock_settime");
                exit(1);
            }
            atomic_fetch_add(&settings, 1);
        }
        sched_yield();
    }
    return 0;
}

static const char *outcome(int r)
{
    return r == 0 ? "0" : errno == EINVAL ? "EINVAL" : errno == EPERM ? "EPERM" : strerror(errno);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    struct utsname u;
    uname(&u);
    on_profkern = strstr(u.release, "profkern") != 0;

    vdso = getauxval(AT_SYSINFO_EHDR);
    printf("AT_SYSINFO_EHDR: %s\n", vdso ? "set" : "missing");
    if (!vdso)
        return 1;
    printf("an ELF image there: %s\n", memcmp((void *)vdso, ELFMAG, SELFMAG) ? "no" : "yes");

    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int shown = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long start;
        char perms[8];
        if (sscanf(line, "%lx-%*[0-9a-f] %7s", &start, perms) == 2 && start == vdso)
            shown = strstr(line, "[vdso]") && !strcmp(perms, "r-xp");
    }
    printf("/proc/self/maps: r-xp [vdso] at that address: %s\n", shown ? "yes" : "no");

    vdso_clock_gettime = vdso_sym("__vdso_clock_gettime", "LINUX_2.6");
    vdso_gettimeofday = vdso_sym("__vdso_gettimeofday", "LINUX_2.6");
    vdso_time = vdso_sym("__vdso_time", "LINUX_2.6");
    vdso_getcpu = vdso_sym("__vdso_getcpu", "LINUX_2.6");
    printf("__vdso_clock_gettime@LINUX_2.6: %s\n", vdso_clock_gettime ? "found" : "missing");
    printf("__vdso_gettimeofday@LINUX_2.6: %s\n", vdso_gettimeofday ? "found" : "missing");
    printf("__vdso_time@LINUX_2.6: %s\n", vdso_time ? "found" : "missing");
    printf("__vdso_getcpu@LINUX_2.6: %s\n", vdso_getcpu ? "found" : "missing");
    printf("__vdso_clock_gettime@LINUX_9: %s\n",
           vdso_sym("__vdso_clock_gettime", "LINUX_9") ? "found" : "missing");
    if (!vdso_clock_gettime || !vdso_gettimeofday || !vdso_time || !vdso_getcpu)
        return 1;

    /* What may not set the clock, on both sides. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    printf("clock_settime(CLOCK_MONOTONIC): %s\n", outcome(clock_settime(CLOCK_MONOTONIC, &now)));
    struct timespec bad = {now.tv_sec, 1000000000};
    printf("clock_settime(tv_nsec 1e9): %s\n", outcome(clock_settime(CLOCK_REALTIME, &bad)));
    struct timeval bad_tv = {now.tv_sec, 1000000};
    printf("settimeofday(tv_usec 1e6): %s\n", outcome(settimeofday(&bad_tv, 0)));
    printf("settimeofday(NULL, NULL) as root: %s\n", outcome(settimeofday(0, 0)));
    /* Linux's TIME_SETTOD_SEC_MAX: no later, so no clock in nanoseconds
     * overflows; refused before the privilege is asked for. */
    struct timespec late = {8277292036, 0};
    printf("clock_settime(TIME_SETTOD_SEC_MAX): %s\n", outcome(clock_settime(CLOCK_REALTIME, &late)));
    pid_t child = fork();
    if (child == 0) {
        if (setuid(65534))
            _exit(2);
        clock_gettime(CLOCK_REALTIME, &now);
        printf("clock_settime as nobody: %s\n", outcome(clock_settime(CLOCK_REALTIME, &now)));
        struct timeval tv = {now.tv_sec, 0};
        printf("settimeofday as nobody: %s\n", outcome(settimeofday(&tv, 0)));
        printf("clock_settime(TIME_SETTOD_SEC_MAX) as nobody: %s\n",
               outcome(clock_settime(CLOCK_REALTIME, &late)));
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);

    struct timespec res;
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    printf("clock_getres(CLOCK_MONOTONIC_COARSE): %s\n",
           nanos(res) > 1 ? "a tick" : "one nanosecond");

    int cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct reader readers[64] = {0};
    pthread_t threads[64], setter;
    if (cpus > 64)
        cpus = 64;
    if (on_profkern)
        pthread_create(&setter, 0, set_clock, &cpus);
    for (int i = 0; i < cpus; i++)
        pthread_create(&threads[i], 0, read_clocks, &readers[i]);
    const char *failed = 0;
    long checked = 0;
    unsigned long seen = 0;
    for (int i = 0; i < cpus; i++) {
        pthread_join(threads[i], 0);
        if (readers[i].failed && !failed)
            failed = readers[i].failed;
        checked += readers[i].checked_realtime;
        seen |= readers[i].cpus_seen;
    }
    if (on_profkern) {
        pthread_join(setter, 0);
        /* Every reading of the wall clock skipped: the test saw nothing. */
        if (cpus > 1 && !(seen & (seen - 1))) {
            printf("every reading was taken on one CPU (mask %lx)\n", seen);
            return 1;
        }
        if (checked < ROUNDS / 2) {
            printf("too few readings checked (%ld) with %ld settings made\n", checked,
                   atomic_load(&settings) / 2);
            return 1;
        }
    }
    printf("vDSO between two system calls, every clock, on every CPU: %s\n",
           failed ? failed : "yes");
    return failed != 0;
}

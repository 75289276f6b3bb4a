/* schedpolicy: sched_setscheduler and its family, per thread as on Linux.
 * The normal policies are set and read back; SCHED_RESET_ON_FORK reads
 * back with the policy and gives a child a non-negative nice and no flag;
 * the priority ranges are Linux's; errors come in Linux's order (a bad
 * policy or priority EINVAL before a stranger's EPERM, a negative pid
 * EINVAL, an absent one ESRCH, a bad pointer EFAULT). An ordinary user
 * may move to SCHED_IDLE but, with RLIMIT_NICE 0, not back. Real time is
 * refused on profkern even to root (docs/syscalls.md); on Linux it depends
 * on the machine, so that case prints only a wrong answer from profkern.
 *
 * musl's wrappers for these calls are ENOSYS on purpose (POSIX makes the
 * policy per process, Linux per thread), so the calls go by syscall(). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

static const char *err(long r) {
    if (r >= 0)
        return "ok";
    switch (errno) {
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ESRCH: return "ESRCH";
    case EFAULT: return "EFAULT";
    default: return strerror(errno);
    }
}

static long setscheduler(int pid, int policy, int priority) {
    struct sched_param p = {.sched_priority = priority};
    return syscall(SYS_sched_setscheduler, pid, policy, &p);
}

static long getscheduler(int pid) {
    return syscall(SYS_sched_getscheduler, pid);
}

static const char *policy_name(long p) {
    static char buf[64];
    const char *base;
    switch (p & ~SCHED_RESET_ON_FORK) {
    case SCHED_OTHER: base = "SCHED_OTHER"; break;
    case SCHED_BATCH: base = "SCHED_BATCH"; break;
    case SCHED_IDLE: base = "SCHED_IDLE"; break;
    case SCHED_FIFO: base = "SCHED_FIFO"; break;
    case SCHED_RR: base = "SCHED_RR"; break;
    default: base = "?"; break;
    }
    snprintf(buf, sizeof buf, "%s%s", base, p & SCHED_RESET_ON_FORK ? "|SCHED_RESET_ON_FORK" : "");
    return p < 0 ? err(p) : buf;
}

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    struct utsname u;
    uname(&u);
    int on_profkern = strstr(u.release, "profkern") != 0;

    /* Start from a known place, whatever the runner's policy. */
    printf("set SCHED_OTHER: %s\n", err(setscheduler(0, SCHED_OTHER, 0)));
    setpriority(PRIO_PROCESS, 0, 0);
    printf("policy: %s\n", policy_name(getscheduler(0)));
    struct sched_param param = {.sched_priority = 42};
    long r = syscall(SYS_sched_getparam, 0, &param);
    printf("getparam: %s, priority %d\n", err(r), param.sched_priority);

    int policies[] = {SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_IDLE, 4, -23};
    for (unsigned i = 0; i < sizeof policies / sizeof *policies; i++) {
        long max = syscall(SYS_sched_get_priority_max, policies[i]);
        const char *max_err = err(max);
        long min = syscall(SYS_sched_get_priority_min, policies[i]);
        printf("policy %d: max %ld (%s), min %ld (%s)\n", policies[i], max, max_err, min, err(min));
    }

    /* Errors, in Linux's order. */
    printf("getscheduler(-1): %s\n", err(getscheduler(-1)));
    printf("getscheduler(absent): %s\n", err(getscheduler(4000000)));
    printf("getparam(-1): %s\n", err(syscall(SYS_sched_getparam, -1, &param)));
    printf("getparam(NULL): %s\n", err(syscall(SYS_sched_getparam, 0, 0)));
    printf("getparam(bad pointer): %s\n", err(syscall(SYS_sched_getparam, 0, (void *)8)));
    printf("setscheduler(policy 4): %s\n", err(setscheduler(0, 4, 0)));
    printf("setscheduler(policy -1): %s\n", err(setscheduler(0, -1, 0)));
    printf("setscheduler(SCHED_OTHER, 1): %s\n", err(setscheduler(0, SCHED_OTHER, 1)));
    printf("setscheduler(SCHED_OTHER, -1): %s\n", err(setscheduler(0, SCHED_OTHER, -1)));
    printf("setscheduler(SCHED_FIFO, 0): %s\n", err(setscheduler(0, SCHED_FIFO, 0)));
    printf("setscheduler(SCHED_RR, 100): %s\n", err(setscheduler(0, SCHED_RR, 100)));
    printf("setscheduler(NULL): %s\n", err(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, 0)));
    printf("setscheduler(bad pointer): %s\n",
           err(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, (void *)8)));
    printf("setscheduler(-1): %s\n", err(setscheduler(-1, SCHED_OTHER, 0)));
    printf("setscheduler(absent): %s\n", err(setscheduler(4000000, SCHED_OTHER, 0)));
    param.sched_priority = 0;
    printf("setparam(0): %s\n", err(syscall(SYS_sched_setparam, 0, &param)));
    param.sched_priority = 5;
    printf("setparam(5): %s\n", err(syscall(SYS_sched_setparam, 0, &param)));
    struct timespec slice = {-1, -1};
    r = syscall(SYS_sched_rr_get_interval, 0, &slice);
    printf("rr_get_interval: %s, %s\n", err(r),
           slice.tv_sec == 0 && slice.tv_nsec >= 0 && slice.tv_nsec < 1000000000 ? "under a second" : "out of range");
    printf("rr_get_interval(-1): %s\n", err(syscall(SYS_sched_rr_get_interval, -1, &slice)));
    printf("rr_get_interval(bad pointer): %s\n",
           err(syscall(SYS_sched_rr_get_interval, 0, (void *)8)));

    /* Real time: refused here; Linux's answer depends on the machine. */
    if (on_profkern && setscheduler(0, SCHED_FIFO, 10) != -1)
        printf("SCHED_FIFO was granted on profkern\n");
    if (on_profkern && errno != EPERM)
        printf("SCHED_FIFO: %s, not EPERM\n", err(-1));

    /* SCHED_RESET_ON_FORK: the child has the policy, without the flag,
     * and a nice of 0 where its parent has -5. */
    setpriority(PRIO_PROCESS, 0, -5);
    printf("set SCHED_BATCH|SCHED_RESET_ON_FORK: %s\n",
           err(setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, 0)));
    printf("policy: %s\n", policy_name(getscheduler(0)));
    pid_t child = fork();
    if (child == 0) {
        printf("child: policy %s, nice %d\n", policy_name(getscheduler(0)),
               getpriority(PRIO_PROCESS, 0));
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("parent: nice %d\n", getpriority(PRIO_PROCESS, 0));
    printf("drop the flag as root: %s\n", err(setscheduler(0, SCHED_BATCH, 0)));
    setpriority(PRIO_PROCESS, 0, 0);

    /* An ordinary user: into SCHED_IDLE, not out again; not the flag
     * dropped; nobody else's thread. Quick, since SCHED_IDLE barely runs
     * beside a busy CPU. */
    child = fork();
    if (child == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_NICE, &none);
        setrlimit(RLIMIT_RTPRIO, &none);
        if (setuid(65534))
            _exit(2);
        printf("nobody: SCHED_FIFO: %s\n", err(setscheduler(0, SCHED_FIFO, 1)));
        printf("nobody: init's policy: %s\n", err(setscheduler(1, SCHED_OTHER, 0)));
        printf("nobody: set flag: %s\n", err(setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, 0)));
        printf("nobody: drop flag: %s\n", err(setscheduler(0, SCHED_BATCH, 0)));
        printf("nobody: into SCHED_IDLE: %s\n",
               err(setscheduler(0, SCHED_IDLE | SCHED_RESET_ON_FORK, 0)));
        printf("nobody: policy %s\n", policy_name(getscheduler(0)));
        printf("nobody: out of SCHED_IDLE: %s\n",
               err(setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, 0)));
        _exit(0);
    }
    waitpid(child, &status, 0);
    printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

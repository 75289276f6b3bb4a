/* nice: getpriority and setpriority, per thread as on Linux. The values
 * are set absolutely first, so the runner's own nice does not show. A
 * child made an ordinary user may raise its nice but not lower it again
 * (EACCES), nor touch another user's process (EPERM); a nice past the
 * range is clamped; a bad `which` is EINVAL and nobody there ESRCH. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(int r) {
    if (r >= 0)
        return "ok";
    switch (errno) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ESRCH: return "ESRCH";
    default: return strerror(errno);
    }
}

/* Sets, then reads back: "ok, get N" or the error. */
static void set_get(const char *what, int which, int who, int value);

static int get(int which, int who) {
    errno = 0;
    int v = getpriority(which, who);
    return errno ? -100 : v;
}

static void set_get(const char *what, int which, int who, int value) {
    int r = setpriority(which, who, value);
    const char *e = err(r);
    printf("%s: %s, get %d\n", what, e, get(which, who));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    set_get("set 5", PRIO_PROCESS, 0, 5);
    printf("by pid: %d\n", get(PRIO_PROCESS, getpid()));
    set_get("set 100 (clamped)", PRIO_PROCESS, 0, 100);
    set_get("set -100 as root (clamped)", PRIO_PROCESS, 0, -100);
    printf("set 0: %s\n", err(setpriority(PRIO_PROCESS, 0, 0)));
    printf("bad which: %s\n", err(setpriority(7, 0, 0)));
    errno = 0;
    getpriority(7, 0);
    printf("getpriority bad which: %s\n", err(errno ? -1 : 0));
    printf("nobody there: %s\n", err(setpriority(PRIO_PROCESS, 999999, 0)));
    setpriority(PRIO_PROCESS, 0, 2);
    pid_t child = fork();
    if (child == 0) {
        printf("child inherits: %d\n", get(PRIO_PROCESS, 0));
        /* A group of its own, so that the runner's group is not touched. */
        setpgid(0, 0);
        set_get("child: its own process group", PRIO_PGRP, 0, 3);
        if (setuid(1000) < 0) {
            printf("setuid: %s\n", err(-1));
            _exit(1);
        }
        printf("user: raise to 10: %s\n", err(setpriority(PRIO_PROCESS, 0, 10)));
        set_get("user: lower to 4", PRIO_PROCESS, 0, 4);
        printf("user: another user's process: %s\n", err(setpriority(PRIO_PROCESS, getppid(), 10)));
        printf("user: nice(2) returns %d\n", nice(2));
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("parent unchanged: %d, child exit %d\n", get(PRIO_PROCESS, 0), WEXITSTATUS(status));
    setpriority(PRIO_PROCESS, 0, 0);
    return 0;
}

/* Sessions and process groups: setsid makes a new session and group led
 * by the caller (EPERM for a group leader), getsid reads a session,
 * setpgid keeps groups inside one session and leaves a session leader
 * where it is; and personality(2) keeps what was set, across fork and
 * exec. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) {
        /* Run again by exec: the persona set before it is kept. */
        printf("after exec, personality %#x\n", personality(0xffffffff));
        return 0;
    }
    int fds[2];
    pipe(fds);
    pid_t pid = fork();
    if (pid == 0) {
        pid_t me = getpid();
        printf("child in its parent's session: %s\n", getsid(0) == getsid(getppid()) ? "yes" : "no");
        printf("setsid: %s\n", setsid() == me ? "the child's pid" : err(-1));
        printf("getsid(0) is its pid: %s, getpgrp is its pid: %s\n", getsid(0) == me ? "yes" : "no",
               getpgrp() == me ? "yes" : "no");
        printf("setsid again (a group leader now): %s\n", err(setsid()));
        printf("session leader setpgid(0, 0): %s\n", err(setpgid(0, 0)));
        printf("into its parent's group, in another session: %s\n",
               err(setpgid(0, getpgid(getppid()))));
        pid_t grandchild = fork();
        if (grandchild == 0) {
            read(fds[0], &me, 1);
            _exit(0);
        }
        printf("grandchild into a group of its own: %s\n", err(setpgid(grandchild, grandchild)));
        printf("grandchild back into the leader's group: %s\n", err(setpgid(grandchild, me)));
        printf("grandchild into a group that does not exist: %s\n", err(setpgid(grandchild, 99999)));
        write(fds[1], "x", 1);
        waitpid(grandchild, NULL, 0);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    printf("getsid of no process: %s\n", err(getsid(99999)));
    printf("setpgid of a negative pid: %s\n", err(setpgid(-5, 0)));

    int before = personality(0xffffffff);
    printf("personality at start: %#x\n", before);
    printf("set ADDR_NO_RANDOMIZE: old %#x\n", personality(PER_LINUX | ADDR_NO_RANDOMIZE));
    printf("now: %#x\n", personality(0xffffffff));
    pid = fork();
    if (pid == 0) {
        printf("in a child: %#x\n", personality(0xffffffff));
        execl("/proc/self/exe", argv[0], "again", (char *)NULL);
        printf("exec failed: %s\n", strerror(errno));
        _exit(1);
    }
    waitpid(pid, NULL, 0);
    personality(before);
    printf("back to %#x\n", personality(0xffffffff));
    return 0;
}

/* clone(CLONE_FILES) without CLONE_VM: two processes, one descriptor
 * table. What the child opens, the parent sees at the same number; what
 * it closes is closed for the parent; its exit closes nothing; its exec
 * takes a table of its own first, so the close-on-exec descriptors it
 * drops stay open for the parent. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *open_or_not(int fd) {
    struct stat st;
    if (fstat(fd, &st) == 0)
        return "open";
    return errno == EBADF ? "closed (EBADF)" : strerror(errno);
}

/* A fork that shares the table: clone with no new stack returns twice on
 * the same stack, as fork does, each process with its own copy of it. */
static pid_t fork_sharing_files(void) {
    return (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "exec-child")) {
        int fd = atoi(argv[2]);
        printf("exec'd child: its close-on-exec descriptor is %s\n", open_or_not(fd));
        return 0;
    }
    int p[2];
    pipe(p);
    int kept = open("clonefiles-kept", O_CREAT | O_RDWR | O_TRUNC, 0600);
    pid_t child = fork_sharing_files();
    if (child == 0) {
        close(p[1]);
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("the child closed the pipe's write end: here it is %s\n", open_or_not(p[1]));
    child = fork_sharing_files();
    if (child == 0)
        _exit(open("clonefiles-new", O_CREAT | O_RDWR | O_TRUNC, 0600));
    waitpid(child, &status, 0);
    int made = WEXITSTATUS(status);
    printf("the child opened a file as fd %s: here that fd is %s\n",
           made == p[1] ? "= the write end's old number" : "(another number)", open_or_not(made));
    printf("after the child's exit, a file opened before is %s\n", open_or_not(kept));
    close(made);

    /* Plain fork: a copy, which the child's closes do not touch. */
    child = fork();
    if (child == 0) {
        close(kept);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    printf("a forked child closed its copy: here it is %s\n", open_or_not(kept));

    /* exec unshares before it closes the close-on-exec descriptors. */
    int cloexec = open("clonefiles-kept", O_RDONLY | O_CLOEXEC);
    child = fork_sharing_files();
    if (child == 0) {
        char num[16];
        snprintf(num, sizeof num, "%d", cloexec);
        execl("/proc/self/exe", "clonefiles", "exec-child", num, (char *)0);
        printf("exec failed: %s\n", strerror(errno));
        _exit(1);
    }
    waitpid(child, &status, 0);
    printf("after a sharing child's exec, the close-on-exec descriptor here is %s\n",
           open_or_not(cloexec));
    unlink("clonefiles-kept");
    unlink("clonefiles-new");
    return 0;
}

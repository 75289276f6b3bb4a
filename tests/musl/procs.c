/* Processes: fork, exit statuses, exec of this same program in another
 * mode, a child killed by a signal, getppid, and waitpid's errors. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void describe(const char *what, int status) {
    if (WIFEXITED(status))
        printf("%s: exited with %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d (%s)\n", what, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        printf("%s: status %#x\n", what, status);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* children must not inherit unwritten lines */
    if (argc == 3 && strcmp(argv[1], "--exit") == 0) {
        printf("exec'd child: asked to exit with %s\n", argv[2]);
        return atoi(argv[2]);
    }
    int status;
    for (int code = 0; code < 3; code++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(code * 10 + 1);
        waitpid(pid, &status, 0);
        describe("fork+_exit", status);
    }

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        printf("child sees its parent: %s\n", getppid() == parent ? "yes" : "no");
        char *args[] = {argv[0], "--exit", "42", NULL};
        execv(argv[0], args);
        printf("execv failed: %s\n", strerror(errno));
        _exit(127);
    }
    waitpid(pid, &status, 0);
    describe("fork+exec", status);

    pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    describe("kill SIGTERM", status);

    pid = fork();
    if (pid == 0) {
        volatile int *null = NULL;
        *null = 1;
        _exit(0);
    }
    waitpid(pid, &status, 0);
    describe("null write", status);

    printf("waitpid with no children: %s\n", waitpid(-1, &status, 0) < 0 ? strerror(errno) : "got one?");
    printf("execv of a missing file: %s\n", execv("/no/such/program", argv) < 0 ? strerror(errno) : "ran?");
    return 3;
}

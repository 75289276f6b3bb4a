/* exec passes its arguments and environment on as bytes, whatever they
 * are: strings that are no UTF-8 reach the new program unchanged, as on
 * Linux (Python's tests spawn with such bytes; this kernel once answered
 * EINVAL). The program runs itself again with them and prints them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void hex(const char *what, const char *s)
{
    printf("%s:", what);
    for (; *s; s++)
        printf(" %02x", (unsigned char)*s);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "child")) {
        hex("argv[2]", argv[2]);
        const char *x = getenv("X");
        hex("X", x ? x : "");
        return 0;
    }
    char *args[] = {argv[0], "child", "\xff\xfe plain \x80", 0};
    char *env[] = {"X=\xc3\x28\xa0", 0};
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execve("/proc/self/exe", args, env);
        perror("execve");
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status));
    return 0;
}

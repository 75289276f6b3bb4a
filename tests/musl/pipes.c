/* Pipes between processes: a 256 KiB stream with a checksum, end of file,
 * a pipeline whose reader has its stdin on the pipe, and EPIPE/SIGPIPE. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* children must not inherit unwritten lines */
    int fds[2];
    pipe(fds);
    pid_t writer = fork();
    if (writer == 0) {
        close(fds[0]);
        unsigned char block[4096];
        for (int i = 0; i < 64; i++) {
            for (int j = 0; j < 4096; j++)
                block[j] = (unsigned char)(i * 7 + j);
            write(fds[1], block, sizeof block);
        }
        _exit(0);
    }
    close(fds[1]);
    unsigned long total = 0, sum = 0;
    unsigned char buf[1000];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + buf[i];
        total += n;
    }
    close(fds[0]);
    int status;
    waitpid(writer, &status, 0);
    printf("streamed %lu bytes, checksum %lx, then EOF (%zd)\n", total, sum, n);

    pipe(fds);
    pid_t reader = fork();
    if (reader == 0) {
        dup2(fds[0], 0);
        close(fds[0]);
        close(fds[1]);
        char line[100];
        int lines = 0;
        while (fgets(line, sizeof line, stdin))
            lines++;
        printf("reader on stdin counted %d lines\n", lines);
        _exit(lines);
    }
    close(fds[0]);
    FILE *out = fdopen(fds[1], "w");
    for (int i = 0; i < 250; i++)
        fprintf(out, "line %d\n", i);
    fclose(out);
    waitpid(reader, &status, 0);
    printf("reader exited with %d\n", WEXITSTATUS(status));

    signal(SIGPIPE, SIG_IGN);
    pipe(fds);
    close(fds[0]);
    printf("write with no reader, SIGPIPE ignored: %s\n", write(fds[1], "x", 1) < 0 ? strerror(errno) : "wrote?");
    close(fds[1]);

    pid_t victim = fork();
    if (victim == 0) {
        signal(SIGPIPE, SIG_DFL);
        pipe(fds);
        close(fds[0]);
        write(fds[1], "x", 1);
        _exit(0);
    }
    waitpid(victim, &status, 0);
    printf("write with no reader, default action: killed by %s\n", WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "nothing");
    return 0;
}

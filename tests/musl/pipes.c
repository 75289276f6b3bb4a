/* Pipes between processes: a 256 KiB stream with a checksum, end of file,
 * a pipeline whose reader has its stdin on the pipe, EPIPE/SIGPIPE, how
 * much a pipe holds and which writes are atomic. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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

    /* Capacity, counted in PIPE_BUF pieces (Linux fills a pipe by pages:
     * pieces of a page size give the same count on both). */
    static char block[65536];
    pipe2(fds, O_NONBLOCK);
    long held = 0;
    ssize_t w;
    while ((w = write(fds[1], block, PIPE_BUF)) > 0)
        held += w;
    printf("a pipe holds %ld bytes, then %s\n", held, strerror(errno));
    struct pollfd p = {fds[1], POLLOUT, 0};
    printf("full: POLLOUT %d\n", poll(&p, 1, 0) == 1 && (p.revents & POLLOUT));
    read(fds[0], block, sizeof block);

    /* Room for 96 bytes: a write of up to PIPE_BUF bytes goes in whole or
     * not at all, a longer one as far as it fits. */
    write(fds[1], block, 65536 - PIPE_BUF);
    write(fds[1], block, 4000);
    w = write(fds[1], block, 200);
    printf("an atomic write of 200 with room for 96: %zd (%s)\n", w, w < 0 ? strerror(errno) : "");
    w = write(fds[1], block, 50);
    printf("a write of 50 with room for 96: %zd\n", w);
    p.revents = 0;
    printf("room for 46: POLLOUT %d\n", poll(&p, 1, 0) == 1 && (p.revents & POLLOUT));
    read(fds[0], block, PIPE_BUF);
    p.revents = 0;
    printf("room for a page more: POLLOUT %d\n", poll(&p, 1, 0) == 1 && (p.revents & POLLOUT));
    close(fds[0]);
    close(fds[1]);
    return 0;
}

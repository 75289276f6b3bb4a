/* pipe2(O_DIRECT): a pipe in packet mode. Each write is a packet and a
 * read takes one (what does not fit the reader's buffer is dropped); a
 * write longer than PIPE_BUF is cut into packets of PIPE_BUF; each packet
 * takes a page of the pipe's room, so a 64 KiB pipe holds 16 of them
 * (the 17th non-blocking write is EAGAIN); F_GETFL shows O_DIRECT on the
 * writing end (as Linux sets it); an unknown pipe2 flag is EINVAL. Same
 * output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    int fds[2];
    if (pipe2(fds, O_DIRECT) != 0) {
        printf("pipe2(O_DIRECT): %s\n", strerror(errno));
        return 1;
    }
    /* Linux marks the writing end alone. */
    printf("O_DIRECT on the ends: %s %s\n", fcntl(fds[0], F_GETFL) & O_DIRECT ? "yes" : "no",
           fcntl(fds[1], F_GETFL) & O_DIRECT ? "yes" : "no");
    write(fds[1], "one", 3);
    write(fds[1], "second", 6);
    write(fds[1], "third packet", 12);
    char buf[2 * PIPE_BUF + 100];
    ssize_t n = read(fds[0], buf, sizeof buf);
    printf("read 1: %zd '%.*s'\n", n, (int)n, buf);
    n = read(fds[0], buf, 3);
    printf("read 2 (3 of a 6-byte packet): %zd '%.*s'\n", n, (int)n, buf);
    n = read(fds[0], buf, sizeof buf);
    printf("read 3 (the rest was dropped): %zd '%.*s'\n", n, (int)n, buf);

    memset(buf, 'x', sizeof buf);
    n = write(fds[1], buf, PIPE_BUF + 100);
    printf("write of PIPE_BUF + 100: %zd\n", n);
    ssize_t first = read(fds[0], buf, sizeof buf);
    ssize_t second = read(fds[0], buf, sizeof buf);
    printf("read: %zd, then %zd\n", first, second);

    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    int packets = 0;
    while (write(fds[1], "p", 1) == 1)
        packets++;
    printf("1-byte packets a 64 KiB pipe holds: %d, then %s\n", packets, strerror(errno));
    n = read(fds[0], buf, sizeof buf);
    printf("read one: %zd; room for another: %s\n", n, write(fds[1], "q", 1) == 1 ? "yes" : "no");
    close(fds[0]);
    close(fds[1]);

    pipe2(fds, 0);
    write(fds[1], "ab", 2);
    write(fds[1], "cd", 2);
    n = read(fds[0], buf, sizeof buf);
    printf("without O_DIRECT the writes join: %zd '%.*s'\n", n, (int)n, buf);
    printf("pipe2 with an unknown flag: %s\n", pipe2(fds, 0x1) ? strerror(errno) : "ok");
    return 0;
}

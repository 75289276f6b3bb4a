/* Sockets in flight that keep themselves alive: a socket sent into its
 * own queue, or two sent into each other's, and then closed, can never be
 * received; the kernel must find such rings and free them (Linux's
 * unix_gc), closing what they carry. A pipe's write end travels with each
 * ring: the ring is gone when the pipe's reader sees the end of file. A
 * socket in flight to a queue someone can still read is not freed. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int send_fds(int over, int a, int b) {
    int fds[2] = {a, b};
    int n = b < 0 ? 1 : 2;
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    char control[CMSG_SPACE(sizeof fds)];
    memset(control, 0, sizeof control);
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    return sendmsg(over, &msg, 0) == 1 ? 0 : -1;
}

/* Closes a fresh socket pair: a socket's last close is when Linux runs
 * its collector. */
static void close_another_socket(void) {
    int s[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, s);
    close(s[0]);
    close(s[1]);
}

/* Receives one message's descriptors into fds[0..2] (-1 where none). */
static int recv_fds(int from, int fds[2]) {
    char byte;
    struct iovec iov = {&byte, 1};
    char control[CMSG_SPACE(2 * sizeof(int))];
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (recvmsg(from, &msg, 0) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    fds[0] = fds[1] = -1;
    if (!c || c->cmsg_type != SCM_RIGHTS)
        return -1;
    memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
    return 0;
}

/* Whether the pipe's reader sees the end of file within `ms`. */
static const char *ends_within(int reader, int ms) {
    struct pollfd p = {reader, POLLIN, 0};
    if (poll(&p, 1, ms) != 1)
        return "no end of file";
    char c;
    return read(reader, &c, 1) == 0 ? "end of file" : "data";
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int sv[2], p[2];

    /* One socket in its own queue. */
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    pipe(p);
    printf("send sv[1] and a pipe's write end into sv[1]'s own queue: %s\n",
           send_fds(sv[0], sv[1], p[1]) == 0 ? "ok" : strerror(errno));
    close(p[1]);
    close(sv[0]);
    close(sv[1]);
    close_another_socket();
    printf("after closing both ends (and another socket), the pipe's reader sees: %s\n",
           ends_within(p[0], 2000));
    close(p[0]);

    /* Two sockets, each in the other's queue. */
    int a[2], b[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, a);
    socketpair(AF_UNIX, SOCK_STREAM, 0, b);
    pipe(p);
    send_fds(a[0], b[1], p[1]); /* b[1] waits in a[1]'s queue */
    send_fds(b[0], a[1], -1);   /* a[1] waits in b[1]'s queue */
    close(p[1]);
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);
    close_another_socket();
    printf("a ring of two, closed (and another socket closed after it): the pipe's reader sees: %s\n",
           ends_within(p[0], 2000));
    close(p[0]);

    /* In flight to a queue that can still be read: kept. */
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    int inner[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, inner);
    pipe(p);
    send_fds(sv[0], inner[1], p[1]);
    close(p[1]);
    close(inner[1]);
    close(inner[0]);
    close(sv[0]); /* sv[1] still open: its queue can be read */
    printf("in flight to a queue still open: the pipe's reader sees: %s\n", ends_within(p[0], 300));
    int got[2];
    recv_fds(sv[1], got);
    printf("receiving the message gives two descriptors: %s\n", got[0] >= 0 && got[1] >= 0 ? "yes" : "no");
    close(got[0]);
    close(got[1]);
    close(sv[1]);
    printf("once the received descriptors are closed: %s\n", ends_within(p[0], 2000));
    return 0;
}

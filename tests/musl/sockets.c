/* Unix-domain sockets: socketpair, bind/listen/connect/accept on a path and
 * in the abstract namespace, stream, datagram and seqpacket, descriptors and
 * credentials passed along, shutdown, poll readiness and the errors. Prints
 * what it sees; the output must be the same as on Linux (pids are compared,
 * never printed). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void check(const char *what, long r)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %ld\n", what, r);
}

static socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, name, strlen(name));
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

/* Sends one byte with `fd` passed along (and credentials if `cred`). */
static long send_fd(int sock, int fd)
{
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = { 0 };
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	return sendmsg(sock, &m, 0);
}

/* Receives one byte and the descriptor passed with it (-1 if none). */
static int recv_fd(int sock, int *flags)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = { 0 };
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	if (recvmsg(sock, &m, 0) != 1)
		return -2;
	*flags = m.msg_flags;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof fd);
	return fd;
}

static void errors(void)
{
	printf("-- errors\n");
	/* (Internet sockets, over loopback, are inet.c's.) */
	check("socket(family 255)", socket(255, SOCK_STREAM, 0));
	check("socketpair(family 255)", socketpair(255, SOCK_STREAM, 0, (int[2]){ 0 }));
	check("socket(type 99)", socket(AF_UNIX, 99, 0));
	check("socket(SOCK_RDM)", socket(AF_UNIX, SOCK_RDM, 0));
	check("socket(protocol 7)", socket(AF_UNIX, SOCK_STREAM, 7));
	check("socket(bad flag)", socket(AF_UNIX, SOCK_STREAM | 0x100000, 0));
	int p[2];
	pipe(p);
	check("bind(pipe)", bind(p[0], NULL, 0));
	check("listen(-1)", listen(-1, 1));
	close(p[0]);
	close(p[1]);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a;
	check("bind(len 1)", bind(s, (struct sockaddr *)&a, 1));
	a.sun_family = AF_INET;
	check("bind(AF_INET addr)", bind(s, (struct sockaddr *)&a, sizeof a));
	check("listen(unbound)", listen(s, 1));
	check("send(unconnected)", send(s, "x", 1, MSG_NOSIGNAL));
	char buf[4];
	check("recv(unconnected)", recv(s, buf, 1, 0));
	check("getpeername(unconnected)", getpeername(s, (struct sockaddr *)&a, &(socklen_t){ sizeof a }));
	check("shutdown(how 7)", shutdown(s, 7));
	check("send(bad pointer)", send(s, (void *)16, 1, 0));
	close(s);
	int d = socket(AF_UNIX, SOCK_DGRAM, 0);
	check("listen(dgram)", listen(d, 1));
	check("send(dgram, no address)", send(d, "x", 1, 0));
	close(d);
}

static void pairs(void)
{
	printf("-- socketpair, stream\n");
	int sv[2];
	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	struct pollfd pf = { sv[0], POLLIN | POLLOUT, 0 };
	poll(&pf, 1, 0);
	printf("poll empty: in %d out %d\n", !!(pf.revents & POLLIN), !!(pf.revents & POLLOUT));
	check("write 5", write(sv[1], "hello", 5));
	check("write 6", write(sv[1], " world", 6));
	poll(&pf, 1, 0);
	printf("poll data: in %d out %d\n", !!(pf.revents & POLLIN), !!(pf.revents & POLLOUT));
	int n;
	ioctl(sv[0], FIONREAD, &n);
	printf("FIONREAD %d\n", n);
	char buf[64] = { 0 };
	check("recv MSG_PEEK 3", recv(sv[0], buf, 3, MSG_PEEK));
	check("read 64 (across two writes)", read(sv[0], buf, sizeof buf));
	printf("read \"%s\"\n", buf);
	check("recv MSG_DONTWAIT (empty)", recv(sv[0], buf, 1, MSG_DONTWAIT));
	check("recv bad buffer", (send(sv[1], "kept", 4, 0), recv(sv[0], (void *)16, 4, 0)));
	memset(buf, 0, sizeof buf);
	check("recv after EFAULT", recv(sv[0], buf, 4, 0));
	printf("kept \"%s\"\n", buf);
	check("shutdown(SHUT_WR)", shutdown(sv[1], SHUT_WR));
	check("read after peer's SHUT_WR", read(sv[0], buf, 1));
	check("write after own SHUT_WR", send(sv[1], "x", 1, MSG_NOSIGNAL));
	pf.events = POLLIN | POLLRDHUP;
	poll(&pf, 1, 0);
	printf("poll after SHUT_WR: in %d rdhup %d hup %d\n", !!(pf.revents & POLLIN),
	       !!(pf.revents & POLLRDHUP), !!(pf.revents & POLLHUP));
	close(sv[1]);
	check("write to closed peer (MSG_NOSIGNAL)", send(sv[0], "x", 1, MSG_NOSIGNAL));
	signal(SIGPIPE, SIG_IGN);
	check("write to closed peer (SIGPIPE ignored)", write(sv[0], "x", 1));
	signal(SIGPIPE, SIG_DFL);
	poll(&pf, 1, 0);
	printf("poll closed peer: hup %d\n", !!(pf.revents & POLLHUP));
	close(sv[0]);

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	write(sv[1], "never read", 10);
	close(sv[0]);
	check("read after the peer closed leaving our bytes unread", read(sv[1], buf, 1));
	check("read again", read(sv[1], buf, 1));
	close(sv[1]);

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	{
		struct ucred c;
		socklen_t len = sizeof c;
		getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &c, &len);
		printf("SO_PEERCRED of a pair: len %u, pid is mine %d, uid %u\n", len, c.pid == getpid(), c.uid);
		int type;
		len = sizeof type;
		getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len);
		printf("SO_TYPE %d\n", type);
	}
	struct stat st;
	fstat(sv[0], &st);
	printf("fstat: socket %d\n", S_ISSOCK(st.st_mode));
	check("lseek", lseek(sv[0], 0, SEEK_SET));
	close(sv[0]);
	close(sv[1]);

	printf("-- socketpair, datagrams and packets\n");
	int types[] = { SOCK_DGRAM, SOCK_SEQPACKET };
	for (int i = 0; i < 2; i++) {
		printf("%s\n", types[i] == SOCK_DGRAM ? "dgram" : "seqpacket");
		socketpair(AF_UNIX, types[i], 0, sv);
		send(sv[1], "first", 5, 0);
		send(sv[1], "second", 6, 0);
		send(sv[1], "", 0, 0);
		memset(buf, 0, sizeof buf);
		check("recv 64", recv(sv[0], buf, sizeof buf, 0));
		check("recv 3 of 6 with MSG_TRUNC", recv(sv[0], buf, 3, MSG_TRUNC));
		struct iovec iov = { buf, 3 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		send(sv[1], "third", 5, 0);
		recvmsg(sv[0], &m, 0); /* the empty one */
		check("recvmsg 3 of 5", recvmsg(sv[0], &m, 0));
		printf("msg_flags MSG_TRUNC %d\n", !!(m.msg_flags & MSG_TRUNC));
		close(sv[1]);
		if (types[i] == SOCK_SEQPACKET)
			check("recv after peer closed", recv(sv[0], buf, 1, 0));
		else
			check("recv after peer closed (MSG_DONTWAIT)", recv(sv[0], buf, 1, MSG_DONTWAIT));
		check("send to closed peer", send(sv[0], "x", 1, MSG_NOSIGNAL));
		close(sv[0]);
	}
}

static void named(void)
{
	printf("-- bind, listen, connect, accept\n");
	const char *path = "/tmp/sockets-test";
	unlink(path);
	struct sockaddr_un a, b;
	socklen_t alen = path_addr(&a, path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	check("bind", bind(l, (struct sockaddr *)&a, alen));
	check("bind again", bind(l, (struct sockaddr *)&a, alen));
	struct stat st;
	stat(path, &st);
	printf("stat: socket %d\n", S_ISSOCK(st.st_mode));
	check("open the socket's path", open(path, O_RDONLY));
	int other = socket(AF_UNIX, SOCK_STREAM, 0);
	check("bind a used path", bind(other, (struct sockaddr *)&a, alen));
	check("connect before listen", connect(other, (struct sockaddr *)&a, alen));
	check("listen", listen(l, 4));
	int fl;
	socklen_t fll = sizeof fl;
	getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &fl, &fll);
	printf("SO_ACCEPTCONN %d\n", fl);
	fcntl(l, F_SETFL, O_NONBLOCK);
	check("accept, none waiting", accept(l, NULL, NULL));
	struct pollfd pf = { l, POLLIN, 0 };
	poll(&pf, 1, 0);
	printf("poll listener, none waiting: in %d\n", !!(pf.revents & POLLIN));
	pid_t child = fork();
	if (child == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, alen) != 0)
			_exit(1);
		write(c, "from the client", 15);
		char reply[16] = { 0 };
		read(c, reply, sizeof reply - 1);
		_exit(strcmp(reply, "from the server") == 0 ? 0 : 2);
	}
	pf.revents = 0;
	poll(&pf, 1, 5000);
	printf("poll listener, one waiting: in %d\n", !!(pf.revents & POLLIN));
	socklen_t blen = sizeof b;
	int s = accept4(l, (struct sockaddr *)&b, &blen, SOCK_CLOEXEC);
	printf("accept: fd ok %d, peer address length %u\n", s >= 0, blen);
	struct ucred c;
	socklen_t clen = sizeof c;
	getsockopt(s, SOL_SOCKET, SO_PEERCRED, &c, &clen);
	printf("SO_PEERCRED of the accepted socket is the client %d\n", c.pid == child);
	blen = sizeof b;
	getsockname(s, (struct sockaddr *)&b, &blen);
	printf("accepted socket's name: len %u \"%s\"\n", blen, b.sun_path);
	char buf[32] = { 0 };
	check("read", read(s, buf, 15));
	printf("got \"%s\"\n", buf);
	write(s, "from the server", 15);
	int status;
	waitpid(child, &status, 0);
	printf("client exit %d\n", WEXITSTATUS(status));
	check("read after the client exited", read(s, buf, 1));
	close(s);
	check("connect a stream socket to it twice", connect(other, (struct sockaddr *)&a, alen));
	check("connect again", connect(other, (struct sockaddr *)&a, alen));
	blen = sizeof b;
	getpeername(other, (struct sockaddr *)&b, &blen);
	printf("getpeername: len %u \"%s\"\n", blen, b.sun_path);
	blen = 4;
	getsockname(l, (struct sockaddr *)&b, &blen);
	printf("getsockname with 4 bytes of room says %u\n", blen);
	close(other);
	int dg = socket(AF_UNIX, SOCK_DGRAM, 0);
	check("connect a dgram socket to a stream listener", connect(dg, (struct sockaddr *)&a, alen));
	close(dg);
	close(l);
	int late = socket(AF_UNIX, SOCK_STREAM, 0);
	check("connect after the listener closed", connect(late, (struct sockaddr *)&a, alen));
	check("unlink", unlink(path));
	check("connect to a missing path", connect(late, (struct sockaddr *)&a, alen));
	close(late);

	printf("-- abstract names\n");
	alen = abstract_addr(&a, "profkern-test");
	l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	check("bind abstract", bind(l, (struct sockaddr *)&a, alen));
	blen = sizeof b;
	getsockname(l, (struct sockaddr *)&b, &blen);
	printf("getsockname: len %u, name \"%.*s\"\n", blen, (int)(blen - 3), b.sun_path + 1);
	listen(l, 1);
	int c1 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	check("connect abstract", connect(c1, (struct sockaddr *)&a, alen));
	send(c1, "packet", 6, 0);
	s = accept(l, NULL, NULL);
	check("recv on accepted", recv(s, buf, sizeof buf, 0));
	close(s);
	close(c1);
	close(l);
	int again = socket(AF_UNIX, SOCK_STREAM, 0);
	check("the name is free once closed", bind(again, (struct sockaddr *)&a, alen));
	close(again);
	int au = socket(AF_UNIX, SOCK_DGRAM, 0);
	check("bind with no name (autobind)", bind(au, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path)));
	blen = sizeof b;
	getsockname(au, (struct sockaddr *)&b, &blen);
	printf("autobind name: len %u, abstract %d\n", blen, b.sun_path[0] == 0);
	close(au);

	printf("-- datagrams by name\n");
	const char *p1 = "/tmp/sockets-dg1", *p2 = "/tmp/sockets-dg2";
	unlink(p1);
	unlink(p2);
	int d1 = socket(AF_UNIX, SOCK_DGRAM, 0), d2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	alen = path_addr(&a, p1);
	socklen_t a2len = path_addr(&b, p2);
	bind(d1, (struct sockaddr *)&a, alen);
	bind(d2, (struct sockaddr *)&b, a2len);
	check("sendto d1", sendto(d2, "to d1", 5, 0, (struct sockaddr *)&a, alen));
	struct sockaddr_un from;
	socklen_t flen = sizeof from;
	memset(buf, 0, sizeof buf);
	check("recvfrom", recvfrom(d1, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen));
	printf("from len %u \"%s\": \"%s\"\n", flen, from.sun_path, buf);
	int d3 = socket(AF_UNIX, SOCK_DGRAM, 0);
	sendto(d3, "anon", 4, 0, (struct sockaddr *)&a, alen);
	flen = sizeof from;
	recvfrom(d1, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
	printf("from an unnamed sender: len %u\n", flen);
	connect(d1, (struct sockaddr *)&b, a2len);
	check("a third socket sends to d1, connected to d2", sendto(d3, "x", 1, 0, (struct sockaddr *)&a, alen));
	int queued = 0;
	fcntl(d2, F_SETFL, O_NONBLOCK);
	connect(d2, (struct sockaddr *)&a, alen);
	while (queued < 50 && send(d2, "q", 1, 0) == 1)
		queued++;
	printf("datagrams queued to a receiver connected back: %d\n", queued);
	/* A receiver connected to nobody holds net.unix.max_dgram_qlen (10),
	 * and one more. */
	const char *p4 = "/tmp/sockets-dg4";
	unlink(p4);
	int d4 = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un a4;
	socklen_t a4len = path_addr(&a4, p4);
	bind(d4, (struct sockaddr *)&a4, a4len);
	queued = 0;
	while (queued < 50 && sendto(d3, "q", 1, MSG_DONTWAIT, (struct sockaddr *)&a4, a4len) == 1)
		queued++;
	int why = errno, qlen = 10;
	FILE *f = fopen("/proc/sys/net/unix/max_dgram_qlen", "r");
	if (f) {
		fscanf(f, "%d", &qlen);
		fclose(f);
	}
	printf("datagrams queued to an unconnected receiver: max_dgram_qlen + 1 %d (%s)\n",
	       queued == qlen + 1, strerror(why));
	close(d4);
	unlink(p4);
	close(d1);
	check("send to a closed receiver", send(d2, "x", 1, 0));
	close(d2);
	close(d3);
	unlink(p1);
	unlink(p2);
}

static void passing(void)
{
	printf("-- passing descriptors\n");
	int sv[2], p[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pipe(p);
	pid_t child = fork();
	if (child == 0) {
		close(sv[0]);
		close(p[0]);
		close(p[1]);
		int flags;
		int fd = recv_fd(sv[1], &flags);
		if (fd < 0)
			_exit(1);
		write(fd, "through a passed pipe", 21);
		_exit(0);
	}
	close(sv[1]);
	check("sendmsg SCM_RIGHTS", send_fd(sv[0], p[1]));
	close(p[1]);
	char buf[32] = { 0 };
	check("read the pipe", read(p[0], buf, sizeof buf));
	printf("got \"%s\"\n", buf);
	int status;
	waitpid(child, &status, 0);
	printf("child exit %d\n", WEXITSTATUS(status));
	close(p[0]);
	close(sv[0]);

	/* A descriptor passed to a process that exits before receiving it:
	 * the pipe's write end must close with the socket, or the read below
	 * would find a writer and say EAGAIN instead of the end of file. */
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	pipe(p);
	child = fork();
	if (child == 0) {
		close(sv[0]);
		close(p[0]);
		close(p[1]);
		char go;
		read(sv[1], &go, 1); /* a plain read: the descriptors are dropped */
		_exit(0);
	}
	close(sv[1]);
	send_fd(sv[0], p[1]);
	send_fd(sv[0], p[1]);
	close(p[1]);
	waitpid(child, &status, 0);
	close(sv[0]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	check("read the pipe whose write end died in flight", read(p[0], buf, 1));
	close(p[0]);

	/* Not enough room for the descriptor: MSG_CTRUNC, and it is closed. */
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pipe(p);
	send_fd(sv[0], p[1]);
	close(p[1]);
	char byte;
	struct iovec iov = { &byte, 1 };
	char small[8];
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = small, .msg_controllen = sizeof small };
	check("recvmsg with 8 bytes of control room", recvmsg(sv[1], &m, 0));
	printf("MSG_CTRUNC %d, controllen %zu\n", !!(m.msg_flags & MSG_CTRUNC), (size_t)m.msg_controllen);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	check("read the pipe whose write end was cut off", read(p[0], buf, 1));
	close(p[0]);

	/* A stream read takes the bytes before a passed descriptor and the
	 * byte it came with, and stops there. */
	pipe(p);
	write(sv[0], "ab", 2);
	send_fd(sv[0], p[0]);
	write(sv[0], "cd", 2);
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} rights;
	iov.iov_base = buf;
	iov.iov_len = sizeof buf;
	m = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = rights.buf, .msg_controllen = sizeof rights.buf };
	check("recvmsg: the bytes up to the descriptor's", recvmsg(sv[1], &m, 0));
	int fd = -1;
	if (CMSG_FIRSTHDR(&m) && CMSG_FIRSTHDR(&m)->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
	struct stat a, b;
	fstat(fd, &a);
	fstat(p[0], &b);
	printf("received the same pipe %d, close-on-exec %d\n", fd >= 0 && a.st_ino == b.st_ino,
	       fcntl(fd, F_GETFD) & FD_CLOEXEC);
	check("read after it", read(sv[1], buf, sizeof buf));
	close(fd);
	send_fd(sv[0], p[0]);
	m.msg_controllen = sizeof rights.buf;
	recvmsg(sv[1], &m, MSG_CMSG_CLOEXEC);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
	printf("with MSG_CMSG_CLOEXEC: close-on-exec %d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
	check("sendmsg a bad descriptor", send_fd(sv[0], 99));
	close(fd);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);

	printf("-- credentials\n");
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	int on = 1;
	check("SO_PASSCRED", setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on));
	child = fork();
	if (child == 0) {
		send(sv[1], "who", 3, 0);
		_exit(0);
	}
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} u;
	iov.iov_base = buf;
	iov.iov_len = sizeof buf;
	m = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	check("recvmsg", recvmsg(sv[0], &m, 0));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	struct ucred cred;
	memcpy(&cred, CMSG_DATA(c), sizeof cred);
	printf("SCM_CREDENTIALS %d, from the child %d, uid %u\n", c->cmsg_type == SCM_CREDENTIALS,
	       cred.pid == child, cred.uid);
	waitpid(child, &status, 0);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	errors();
	pairs();
	named();
	passing();
	return 0;
}

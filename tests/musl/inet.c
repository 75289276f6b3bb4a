/* Internet sockets over loopback: TCP over IPv4 and IPv6 (an IPv6 listener
 * hearing an IPv4 client), UDP datagrams with their senders' names, the
 * names each end reports, options read back, and the errors a program
 * meets: a port in use, an address not of this machine, no one listening.
 * Prints what it sees; the output must be the same as on Linux. Ports are
 * ephemeral, so they are compared, never printed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void check(const char *what, long r)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %ld\n", what, r);
}

static struct sockaddr_in v4(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static int port_of(int fd)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof a;
	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	return ntohs(a.sin6_port); /* same offset in sockaddr_in */
}

static void show_name(const char *what, int fd, int peer, int expect_port)
{
	struct sockaddr_storage s;
	socklen_t len = sizeof s;
	int r = peer ? getpeername(fd, (struct sockaddr *)&s, &len)
		     : getsockname(fd, (struct sockaddr *)&s, &len);
	if (r < 0) {
		printf("%s: -1 %s\n", what, strerror(errno));
		return;
	}
	char text[64] = "";
	int port;
	if (s.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&s;
		inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
		port = ntohs(a->sin_port);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&s;
		inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
		port = ntohs(a->sin6_port);
	}
	printf("%s: family %d len %u %s port %s\n", what, s.ss_family, len, text,
	       expect_port < 0 ? (port ? "some" : "0")
	       : port == expect_port ? "as expected" : "WRONG");
}

static int option(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof v;
	if (getsockopt(fd, level, name, &v, &len) < 0)
		return -errno;
	return v;
}

static void tcp4(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = v4("127.0.0.1", 0);
	check("tcp bind 127.0.0.1:0", bind(l, (struct sockaddr *)&a, sizeof a));
	check("tcp listen", listen(l, 4));
	int port = port_of(l);
	show_name("listener name", l, 0, port);
	check("SO_ACCEPTCONN", option(l, SOL_SOCKET, SO_ACCEPTCONN));

	/* A second socket on the same port. */
	int other = socket(AF_INET, SOCK_STREAM, 0);
	a = v4("0.0.0.0", port);
	check("bind 0.0.0.0 on a held port", bind(other, (struct sockaddr *)&a, sizeof a));
	close(other);

	int c = socket(AF_INET, SOCK_STREAM, 0);
	show_name("unbound name", c, 0, -1);
	check("getpeername before connect", getpeername(c, (struct sockaddr *)&a, &(socklen_t){sizeof a}));
	a = v4("127.0.0.1", port);
	check("connect", connect(c, (struct sockaddr *)&a, sizeof a));
	check("connect again", connect(c, (struct sockaddr *)&a, sizeof a));
	show_name("client name", c, 0, -1);
	show_name("client peer", c, 1, port);
	struct sockaddr_in from;
	socklen_t len = sizeof from;
	int s = accept(l, (struct sockaddr *)&from, &len);
	check("accept", s >= 0 ? 0 : -1);
	printf("accepted from client's port: %s\n",
	       ntohs(from.sin_port) == port_of(c) ? "yes" : "no");
	show_name("server name", s, 0, port);
	show_name("server peer", s, 1, port_of(c));

	check("send", send(c, "hello", 5, 0));
	char buf[64] = "";
	check("recv", recv(s, buf, sizeof buf, 0));
	printf("got '%s'\n", buf);
	len = sizeof from;
	memset(&from, 0xee, sizeof from);
	check("recvfrom names no one", send(s, "back", 4, 0));
	long n = recvfrom(c, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
	printf("recvfrom: %ld, address length %u\n", n, len);

	check("TCP_NODELAY default", option(c, IPPROTO_TCP, TCP_NODELAY));
	check("set TCP_NODELAY", setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &(int){5}, sizeof(int)));
	check("TCP_NODELAY now", option(c, IPPROTO_TCP, TCP_NODELAY));
	check("SO_KEEPALIVE default", option(c, SOL_SOCKET, SO_KEEPALIVE));
	check("IP_TTL default", option(c, IPPROTO_IP, IP_TTL));
	check("SO_TYPE", option(c, SOL_SOCKET, SO_TYPE));
	check("SO_PROTOCOL", option(c, SOL_SOCKET, SO_PROTOCOL));
	check("SO_DOMAIN", option(c, SOL_SOCKET, SO_DOMAIN));

	check("shutdown write", shutdown(c, SHUT_WR));
	check("server reads the end", recv(s, buf, sizeof buf, 0));
	check("send after shutdown", send(c, "x", 1, MSG_NOSIGNAL));
	close(s);
	close(c);
	close(l);

	/* No one listening. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	a = v4("127.0.0.1", port);
	check("connect to a closed port", connect(c, (struct sockaddr *)&a, sizeof a));
	check("recv unconnected", recv(c, buf, 1, MSG_DONTWAIT));
	check("send unconnected", send(c, "x", 1, MSG_NOSIGNAL));
	close(c);

	/* Addresses that are not this machine's. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	a = v4("192.0.2.1", 0);
	check("bind a foreign address", bind(c, (struct sockaddr *)&a, sizeof a));
	a = v4("127.0.0.1", 0);
	check("bind short", bind(c, (struct sockaddr *)&a, sizeof a - 1));
	a.sin_family = AF_INET6;
	check("bind another family", bind(c, (struct sockaddr *)&a, sizeof a));
	close(c);
	int pair[2];
	check("socketpair(AF_INET)", socketpair(AF_INET, SOCK_STREAM, 0, pair));
	check("socket(AF_INET, SOCK_SEQPACKET)", socket(AF_INET, SOCK_SEQPACKET, 0));
	check("socket(AF_INET, SOCK_STREAM, UDP)", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP));
}

static void tcp6(void)
{
	int l = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
	check("tcp6 bind [::]:0", bind(l, (struct sockaddr *)&a, sizeof a));
	check("tcp6 listen", listen(l, 4));
	int port = port_of(l);

	/* An IPv4 client of a dual-stack listener. */
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a4 = v4("127.0.0.1", port);
	check("IPv4 connect to [::]", connect(c, (struct sockaddr *)&a4, sizeof a4));
	int s = accept(l, NULL, NULL);
	show_name("server sees", s, 1, port_of(c));
	show_name("server name", s, 0, port);
	close(s);
	close(c);

	c = socket(AF_INET6, SOCK_STREAM, 0);
	a.sin6_addr = in6addr_loopback;
	a.sin6_port = htons(port);
	check("IPv6 connect to [::1]", connect(c, (struct sockaddr *)&a, sizeof a));
	s = accept(l, NULL, NULL);
	show_name("server sees", s, 1, port_of(c));
	show_name("client name", c, 0, -1);
	check("send", send(s, "six", 3, 0));
	char buf[8] = "";
	check("recv", recv(c, buf, sizeof buf, 0));
	close(s);
	close(c);
	close(l);

	/* IPv6 only: an IPv4 client is refused. */
	l = socket(AF_INET6, SOCK_STREAM, 0);
	check("set IPV6_V6ONLY", setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &(int){1}, sizeof(int)));
	a.sin6_addr = in6addr_any;
	a.sin6_port = 0;
	bind(l, (struct sockaddr *)&a, sizeof a);
	listen(l, 1);
	check("IPV6_V6ONLY after bind", setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &(int){0}, sizeof(int)));
	c = socket(AF_INET, SOCK_STREAM, 0);
	a4 = v4("127.0.0.1", port_of(l));
	check("IPv4 connect to a v6-only listener", connect(c, (struct sockaddr *)&a4, sizeof a4));
	close(c);
	close(l);
}

static void reuse(void)
{
	/* SO_REUSEADDR on both lets two sockets share a port until one
	 * listens. */
	int a = socket(AF_INET, SOCK_STREAM, 0), b = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(a, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
	setsockopt(b, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
	check("SO_REUSEADDR reads back", option(a, SOL_SOCKET, SO_REUSEADDR));
	struct sockaddr_in addr = v4("127.0.0.1", 0);
	bind(a, (struct sockaddr *)&addr, sizeof addr);
	addr.sin_port = htons(port_of(a));
	check("second bind, both reusing", bind(b, (struct sockaddr *)&addr, sizeof addr));
	check("first listens", listen(a, 1));
	check("second listens", listen(b, 1));
	close(a);
	close(b);

	/* A closed listener's port is free again at once. */
	a = socket(AF_INET, SOCK_STREAM, 0);
	addr = v4("127.0.0.1", 0);
	bind(a, (struct sockaddr *)&addr, sizeof addr);
	listen(a, 1);
	addr.sin_port = htons(port_of(a));
	close(a);
	a = socket(AF_INET, SOCK_STREAM, 0);
	check("bind a closed listener's port", bind(a, (struct sockaddr *)&addr, sizeof addr));
	close(a);
}

static void udp(void)
{
	int r = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = v4("127.0.0.1", 0);
	check("udp bind", bind(r, (struct sockaddr *)&a, sizeof a));
	int port = port_of(r);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	check("send unconnected, no address", send(s, "x", 1, 0));
	a = v4("127.0.0.1", port);
	check("sendto", sendto(s, "one", 3, 0, (struct sockaddr *)&a, sizeof a));
	check("sendto again", sendto(s, "two!", 4, 0, (struct sockaddr *)&a, sizeof a));
	show_name("sender bound itself", s, 0, -1);
	struct sockaddr_in from;
	socklen_t len = sizeof from;
	char buf[64] = "";
	check("recvfrom", recvfrom(r, buf, sizeof buf, 0, (struct sockaddr *)&from, &len));
	printf("from the sender's port: %s, length %u, '%s'\n",
	       ntohs(from.sin_port) == port_of(s) ? "yes" : "no", len, buf);
	struct msghdr m = {.msg_iov = &(struct iovec){buf, 2}, .msg_iovlen = 1};
	check("recvmsg cut short", recvmsg(r, &m, 0));
	printf("flags: %s\n", m.msg_flags & MSG_TRUNC ? "MSG_TRUNC" : "none");
	check("nothing left", recv(r, buf, sizeof buf, MSG_DONTWAIT));
	check("sendto port 0", sendto(s, "z", 1, 0, (struct sockaddr *)&(struct sockaddr_in){
		.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}, sizeof a));
	static char big[70000];
	check("sendto too big", sendto(s, big, sizeof big, 0, (struct sockaddr *)&a, sizeof a));

	/* A connected UDP socket hears only its peer. */
	int t = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to_t = v4("127.0.0.1", 0);
	bind(t, (struct sockaddr *)&to_t, sizeof to_t);
	to_t.sin_port = htons(port_of(t));
	check("connect r to t", connect(r, (struct sockaddr *)&to_t, sizeof to_t));
	show_name("r's peer", r, 1, port_of(t));
	check("s sends to r", sendto(s, "s", 1, 0, (struct sockaddr *)&a, sizeof a));
	check("t sends to r", sendto(t, "t", 1, 0, (struct sockaddr *)&a, sizeof a));
	usleep(10000);
	memset(buf, 0, sizeof buf);
	check("r hears", recv(r, buf, sizeof buf, MSG_DONTWAIT));
	printf("heard '%s'\n", buf);
	check("and nothing else", recv(r, buf, sizeof buf, MSG_DONTWAIT));
	check("r sends to t", send(r, "reply", 5, 0));
	check("t gets it", recv(t, buf, sizeof buf, 0));
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	check("dissolve", connect(r, &unspec, sizeof unspec));
	check("getpeername after", getpeername(r, (struct sockaddr *)&from, &len));
	close(t);

	/* Sending to a port no one holds: sent, then refused if connected. */
	int gone = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in g = v4("127.0.0.1", 0);
	bind(gone, (struct sockaddr *)&g, sizeof g);
	g.sin_port = htons(port_of(gone));
	close(gone);
	check("sendto a free port", sendto(s, "lost", 4, 0, (struct sockaddr *)&g, sizeof g));
	check("connect to it", connect(s, (struct sockaddr *)&g, sizeof g));
	check("send", send(s, "lost", 4, 0));
	usleep(10000);
	check("then", send(s, "lost", 4, 0));
	close(s);
	close(r);
}

/* A writer that filled the connection and polls for POLLOUT is woken when
 * the reader drains it, not when its poll times out. */
static void writable_again(const char *what, int w, int r)
{
	fcntl(w, F_SETFL, O_NONBLOCK);
	static char chunk[4096];
	long filled = 0;
	while (send(w, chunk, sizeof chunk, MSG_NOSIGNAL) > 0)
		filled += sizeof chunk;
	printf("%s: full after some bytes: %s, then %s\n", what, filled > 0 ? "yes" : "no",
	       errno == EAGAIN ? "EAGAIN" : strerror(errno));
	/* The reader stays alive after draining, so that nothing but the
	 * room it made (no exit, no SIGCHLD) can end the poll. */
	pid_t reader = fork();
	if (reader == 0) {
		usleep(100000);
		char buf[65536];
		while (recv(r, buf, sizeof buf, MSG_DONTWAIT) > 0)
			;
		pause();
		_exit(0);
	}
	struct pollfd p = {.fd = w, .events = POLLOUT};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int n = poll(&p, 1, 10000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Woken by the room: about 0.1 s; by the timeout, 10 s. */
	printf("%s: poll says %d, %s, %s\n", what, n, p.revents & POLLOUT ? "POLLOUT" : "not writable",
	       t1.tv_sec - t0.tv_sec < 5 ? "woken by the room" : "only at the timeout");
	kill(reader, SIGKILL);
	waitpid(reader, NULL, 0);
}

static void flow(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = v4("127.0.0.1", 0);
	bind(l, (struct sockaddr *)&a, sizeof a);
	listen(l, 1);
	a.sin_port = htons(port_of(l));
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&a, sizeof a);
	int s = accept(l, NULL, NULL);
	writable_again("tcp", c, s);
	close(c);
	close(s);

	int pair[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
	writable_again("unix stream", pair[0], pair[1]);
	close(pair[0]);
	close(pair[1]);

	/* The peer closed: TCP may still write once (the peer answers with
	 * a reset), then EPIPE. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&a, sizeof a);
	s = accept(l, NULL, NULL);
	close(c);
	char buf[8];
	check("read the end", recv(s, buf, sizeof buf, 0));
	struct pollfd p = {.fd = s, .events = POLLIN | POLLOUT | POLLRDHUP};
	poll(&p, 1, 0);
	printf("poll in CLOSE_WAIT: %s%s%s%s\n", p.revents & POLLIN ? "IN " : "",
	       p.revents & POLLOUT ? "OUT " : "", p.revents & POLLRDHUP ? "RDHUP " : "",
	       p.revents & POLLHUP ? "HUP" : "");
	check("send nothing", send(s, "", 0, MSG_NOSIGNAL));
	check("send to a closed peer", send(s, "late", 4, MSG_NOSIGNAL));
	usleep(20000);
	check("send after the reset", send(s, "late", 4, MSG_NOSIGNAL));
	close(s);
	close(l);
}

/* IPv6 datagrams carry a hop limit and a traffic class, which a receiver
 * may ask for as control messages (RFC 3542), cut to its room as Linux
 * cuts them. */
static void show_control(const char *what, struct msghdr *m)
{
	printf("%s: controllen %zu%s", what, (size_t)m->msg_controllen,
	       m->msg_flags & MSG_CTRUNC ? " MSG_CTRUNC" : "");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int v = 0;
		size_t n = c->cmsg_len - CMSG_LEN(0);
		memcpy(&v, CMSG_DATA(c), n < sizeof v ? n : sizeof v);
		printf(" [level %d type %d len %zu value %d]", c->cmsg_level, c->cmsg_type,
		       (size_t)c->cmsg_len, v);
	}
	printf("\n");
}

static void ipv6_ancillary(void)
{
	int r = socket(AF_INET6, SOCK_DGRAM, 0), s = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
	bind(r, (struct sockaddr *)&a, sizeof a);
	a.sin6_port = htons(port_of(r));
	check("IPV6_RECVHOPLIMIT", setsockopt(r, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &(int){1}, sizeof(int)));
	check("IPV6_RECVTCLASS", setsockopt(r, IPPROTO_IPV6, IPV6_RECVTCLASS, &(int){1}, sizeof(int)));
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} out;
	struct msghdr m = {.msg_name = &a, .msg_namelen = sizeof a,
			   .msg_iov = &(struct iovec){"hop", 3}, .msg_iovlen = 1,
			   .msg_control = out.buf, .msg_controllen = sizeof out.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_HOPLIMIT;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &(int){2}, sizeof(int));
	check("sendmsg, hop limit 2", sendmsg(s, &m, 0));
	m.msg_iov = &(struct iovec){"dflt", 4};
	m.msg_control = NULL;
	m.msg_controllen = 0;
	check("sendmsg, defaults", sendmsg(s, &m, 0));
	c->cmsg_len = CMSG_LEN(3);
	m.msg_control = out.buf;
	m.msg_controllen = sizeof out.buf;
	check("sendmsg, a short hop limit", sendmsg(s, &m, 0));
	memcpy(CMSG_DATA(c), &(int){256}, sizeof(int));
	c->cmsg_len = CMSG_LEN(sizeof(int));
	check("sendmsg, hop limit 256", sendmsg(s, &m, 0));

	char data[16], room[256];
	size_t rooms[] = {sizeof room, CMSG_SPACE(sizeof(int)) + CMSG_LEN(1), CMSG_LEN(0) - 1};
	for (int i = 0; i < 2; i++) {
		struct msghdr in = {.msg_iov = &(struct iovec){data, sizeof data}, .msg_iovlen = 1,
				    .msg_control = room, .msg_controllen = rooms[i]};
		check("recvmsg", recvmsg(r, &in, 0));
		show_control(i == 0 ? "all the room" : "room for one and a bit", &in);
	}
	check("send another", sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
	struct msghdr in = {.msg_iov = &(struct iovec){data, sizeof data}, .msg_iovlen = 1,
			    .msg_control = room, .msg_controllen = rooms[2]};
	check("recvmsg", recvmsg(r, &in, 0));
	show_control("no room for a header", &in);
	close(r);
	close(s);
}

/* Batches: sendmmsg sends each message and says how much went;
 * recvmmsg with MSG_WAITFORONE waits for the first only. */
static void batches(void)
{
	int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = v4("127.0.0.1", 0);
	bind(r, (struct sockaddr *)&a, sizeof a);
	a.sin_port = htons(port_of(r));
	connect(s, (struct sockaddr *)&a, sizeof a);
	char *words[] = {"one", "three", "five!"};
	struct iovec iov[3];
	struct mmsghdr out[3];
	memset(out, 0, sizeof out);
	for (int i = 0; i < 3; i++) {
		iov[i] = (struct iovec){words[i], strlen(words[i])};
		out[i].msg_hdr.msg_iov = &iov[i];
		out[i].msg_hdr.msg_iovlen = 1;
	}
	check("sendmmsg of 3", sendmmsg(s, out, 3, 0));
	printf("lengths %u %u %u\n", out[0].msg_len, out[1].msg_len, out[2].msg_len);
	check("sendmmsg of none", sendmmsg(s, out, 0, 0));
	char bufs[5][16];
	struct iovec in_iov[5];
	struct mmsghdr in[5];
	memset(in, 0, sizeof in);
	memset(bufs, 0, sizeof bufs);
	for (int i = 0; i < 5; i++) {
		in_iov[i] = (struct iovec){bufs[i], sizeof bufs[i]};
		in[i].msg_hdr.msg_iov = &in_iov[i];
		in[i].msg_hdr.msg_iovlen = 1;
	}
	check("recvmmsg of 5, waiting for one", recvmmsg(r, in, 5, MSG_WAITFORONE, NULL));
	printf("got '%s' (%u) '%s' (%u) '%s' (%u)\n", bufs[0], in[0].msg_len, bufs[1], in[1].msg_len,
	       bufs[2], in[2].msg_len);
	check("recvmmsg of nothing", recvmmsg(r, in, 5, MSG_DONTWAIT, NULL));
	struct timespec bad = {.tv_nsec = 2000000000};
	check("recvmmsg, a bad timeout", recvmmsg(r, in, 5, 0, &bad));
	int p[2];
	pipe(p);
	check("recvmmsg on a pipe", recvmmsg(p[0], in, 5, MSG_DONTWAIT, NULL));
	close(p[0]);
	close(p[1]);
	close(r);
	close(s);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	tcp4();
	tcp6();
	reuse();
	udp();
	flow();
	ipv6_ancillary();
	batches();
	return 0;
}

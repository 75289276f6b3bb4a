/* epoll: level- and edge-triggered, one-shot, the interest list following
 * open files (a dup keeps an entry, closing the last descriptor drops it),
 * nesting, a small maxevents taking turns, timeouts, EINTR and the errors.
 * The output must be the same as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void check(const char *what, long r)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %ld\n", what, r);
}

static int add(int ep, int fd, unsigned events, unsigned long data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* Waits up to `ms` and prints what came. */
static void wait_print(const char *what, int ep, int max, int ms)
{
	struct epoll_event evs[8];
	int n = epoll_wait(ep, evs, max, ms);
	printf("%s: %d", what, n);
	if (n < 0)
		printf(" %s", strerror(errno));
	for (int i = 0; i < n; i++)
		printf(" [data %lu events %#x]", (unsigned long)evs[i].data.u64, evs[i].events);
	printf("\n");
}

static void on_alarm(int sig)
{
	(void)sig;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	char buf[16];
	printf("-- errors\n");
	check("epoll_create(0)", epoll_create(0));
	check("epoll_create1(bad flag)", epoll_create1(1));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	printf("close-on-exec %d\n", fcntl(ep, F_GETFD) & FD_CLOEXEC);
	struct stat st;
	fstat(ep, &st);
	printf("fstat: type bits %#o\n", st.st_mode & S_IFMT);
	int p[2];
	pipe(p);
	check("add a bad descriptor", add(ep, 99, EPOLLIN, 0));
	check("add to a pipe", add(p[0], p[0], EPOLLIN, 0));
	check("add the epoll to itself", add(ep, ep, EPOLLIN, 0));
	int file = open("/tmp/epoll-test-file", O_CREAT | O_RDWR, 0600);
	check("add a regular file", add(ep, file, EPOLLIN, 0));
	close(file);
	unlink("/tmp/epoll-test-file");
	check("add with a bad event pointer", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], (void *)16));
	check("op 7", epoll_ctl(ep, 7, p[0], &(struct epoll_event){ 0 }));
	check("mod before add", epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){ 0 }));
	check("del before add", epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL));
	check("exclusive with oneshot", add(ep, p[0], EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT, 0));
	check("add", add(ep, p[0], EPOLLIN, 1));
	check("add again", add(ep, p[0], EPOLLIN, 1));
	struct epoll_event evs[4];
	check("wait with maxevents 0", epoll_wait(ep, evs, 0, 0));
	check("wait on a pipe", epoll_wait(p[0], evs, 4, 0));
	check("wait into a bad buffer", epoll_wait(ep, (void *)16, 4, 0));

	printf("-- level-triggered\n");
	wait_print("empty pipe", ep, 4, 0);
	write(p[1], "ab", 2);
	wait_print("data", ep, 4, 0);
	wait_print("data still there", ep, 4, 0);
	read(p[0], buf, 2);
	wait_print("drained", ep, 4, 0);
	check("mod to EPOLLIN|EPOLLOUT", epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){ EPOLLIN | EPOLLOUT, { .u64 = 2 } }));
	wait_print("a read end is never writable", ep, 4, 0);
	check("add the write end for EPOLLOUT", add(ep, p[1], EPOLLOUT, 3));
	wait_print("room in the pipe", ep, 4, 0);
	check("del the write end", epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL));

	printf("-- edge-triggered\n");
	check("mod to EPOLLIN|EPOLLET", epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){ EPOLLIN | EPOLLET, { .u64 = 4 } }));
	write(p[1], "a", 1);
	wait_print("new data", ep, 4, 0);
	wait_print("the same data", ep, 4, 0);
	write(p[1], "b", 1);
	wait_print("more data, not drained", ep, 4, 0);
	read(p[0], buf, sizeof buf);
	wait_print("drained", ep, 4, 0);
	write(p[1], "c", 1);
	wait_print("new data after draining", ep, 4, 0);
	read(p[0], buf, sizeof buf);

	printf("-- one-shot\n");
	check("mod to EPOLLIN|EPOLLONESHOT", epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){ EPOLLIN | EPOLLONESHOT, { .u64 = 5 } }));
	write(p[1], "d", 1);
	wait_print("first", ep, 4, 0);
	wait_print("after it fired", ep, 4, 0);
	write(p[1], "e", 1);
	wait_print("more data, still disarmed", ep, 4, 0);
	epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){ EPOLLIN | EPOLLONESHOT, { .u64 = 6 } });
	wait_print("re-armed", ep, 4, 0);
	read(p[0], buf, sizeof buf);

	printf("-- hang-up, and the list follows open files\n");
	epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){ EPOLLIN, { .u64 = 7 } });
	int copy = dup(p[0]);
	close(p[0]);
	write(p[1], "f", 1);
	wait_print("through a dup of the closed descriptor", ep, 4, 0);
	close(p[1]);
	read(copy, buf, sizeof buf);
	wait_print("writer gone", ep, 4, 0);
	close(copy);
	wait_print("every descriptor closed", ep, 4, 0);

	printf("-- sockets\n");
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	add(ep, sv[0], EPOLLIN | EPOLLOUT | EPOLLRDHUP, 8);
	wait_print("connected, empty", ep, 4, 0);
	shutdown(sv[1], SHUT_WR);
	wait_print("peer shut writing", ep, 4, 0);
	close(sv[1]);
	wait_print("peer closed", ep, 4, 0);
	close(sv[0]);

	printf("-- taking turns, nesting\n");
	int ps[3][2];
	for (int i = 0; i < 3; i++) {
		pipe(ps[i]);
		write(ps[i][1], "x", 1);
		add(ep, ps[i][0], EPOLLIN, 10 + i);
	}
	wait_print("maxevents 1", ep, 1, 0);
	wait_print("maxevents 1", ep, 1, 0);
	wait_print("maxevents 1", ep, 1, 0);
	wait_print("maxevents 2", ep, 2, 0);
	int outer = epoll_create1(0);
	check("add an epoll to another", add(outer, ep, EPOLLIN, 20));
	wait_print("the outer one", outer, 4, 0);
	check("add the outer to the inner", add(ep, outer, EPOLLIN, 21));
	struct pollfd pf = { ep, POLLIN, 0 };
	check("poll on the inner", poll(&pf, 1, 0));
	printf("revents %#x\n", pf.revents);
	for (int i = 0; i < 3; i++) {
		read(ps[i][0], buf, 1);
	}
	wait_print("the outer one, all drained", outer, 4, 0);
	for (int i = 0; i < 3; i++) {
		close(ps[i][0]);
		close(ps[i][1]);
	}
	close(outer);

	printf("-- waiting\n");
	pipe(p);
	add(ep, p[0], EPOLLIN, 30);
	wait_print("timeout of 30 ms", ep, 4, 30);
	pid_t child = fork();
	if (child == 0) {
		usleep(20000);
		write(p[1], "late", 4);
		_exit(0);
	}
	wait_print("until the child writes", ep, 4, -1);
	waitpid(child, NULL, 0);
	read(p[0], buf, sizeof buf);
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { .it_value = { 0, 20000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	wait_print("a signal comes", ep, 4, -1);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	check("epoll_pwait with a mask, timeout 0", epoll_pwait(ep, evs, 4, 0, &block));
	close(p[0]);
	close(p[1]);
	close(ep);
	return 0;
}

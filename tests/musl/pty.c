/* Pseudo-terminals as a program sees them (/dev/ptmx and /dev/pts/N):
 * opening a pair, the slave locked until unlockpt, the settings a new
 * terminal has, the line discipline between the ends (a newline shown as
 * CR LF, canonical lines, erase, end of file, raw mode, echo), the window
 * size, FIONREAD, the controlling terminal a session leader takes (by
 * open, or TIOCSCTTY), ^C typed at the master signalling the slave's
 * foreground group, poll, and what each end sees when the other closes.
 * Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* What the master reads, made printable: until `until` has come (within
 * 5 s), or with `until` NULL whatever comes within 0.3 s (nothing, where
 * nothing is expected). */
static void show_master(const char *what, int master, const char *until)
{
	char buf[256], out[1024];
	struct pollfd p = {master, POLLIN, 0};
	size_t len = 0;
	while (len < sizeof buf - 1) {
		if (until && memmem(buf, len, until, strlen(until)))
			break;
		if (poll(&p, 1, until ? 5000 : 300) != 1 || !(p.revents & POLLIN))
			break;
		ssize_t n = read(master, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = buf[i];
		if (c == '\r')
			o += sprintf(out + o, "\\r");
		else if (c == '\n')
			o += sprintf(out + o, "\\n");
		else if (c < 0x20 || c == 0x7f)
			o += sprintf(out + o, "\\x%02x", c);
		else
			out[o++] = c;
	}
	out[o] = 0;
	printf("%-36s \"%s\"\n", what, out);
}

static void show_read(const char *what, int fd)
{
	char buf[64];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0) {
		printf("%-36s %s\n", what, strerror(errno));
		return;
	}
	buf[n] = 0;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = '|';
	printf("%-36s %zd \"%s\"\n", what, n, buf);
}

static int open_pair(int *slave, int noctty)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		printf("posix_openpt/grantpt/unlockpt: %s\n", strerror(errno));
		exit(1);
	}
	*slave = open(ptsname(master), O_RDWR | (noctty ? O_NOCTTY : 0));
	if (*slave < 0) {
		printf("open slave: %s\n", strerror(errno));
		exit(1);
	}
	return master;
}

static void on_int(int sig)
{
	(void)sig;
	static const char said[] = "child: SIGINT\n";
	write(1, said, sizeof said - 1);
	_exit(0);
}

int main(void)
{
	int slave, master = open_pair(&slave, 1);
	printf("ptsname starts /dev/pts/          %s\n",
	       strncmp(ptsname(master), "/dev/pts/", 9) ? "no" : "yes");
	printf("isatty master, slave              %d %d\n", isatty(master), isatty(slave));
	struct stat st;
	fstat(slave, &st);
	printf("slave: char device, major 136     %s %s\n", S_ISCHR(st.st_mode) ? "yes" : "no",
	       major(st.st_rdev) == 136 ? "yes" : "no");

	struct termios t;
	tcgetattr(slave, &t);
	printf("new terminal: iflag %#x oflag %#x cflag %#x lflag %#x\n", t.c_iflag, t.c_oflag,
	       t.c_cflag, t.c_lflag);
	printf("VINTR VERASE VKILL VEOF VMIN      %d %d %d %d %d\n", t.c_cc[VINTR], t.c_cc[VERASE],
	       t.c_cc[VKILL], t.c_cc[VEOF], t.c_cc[VMIN]);

	/* Slave to master: a newline becomes CR LF. */
	write(slave, "I wish to buy a fish license.\n", 30);
	show_master("slave wrote a line; master reads", master, "license.\r\n");

	/* Master to slave: a canonical line, CR taken as NL, echoed. */
	write(master, "ls -l\r", 6);
	show_read("slave reads the line", slave);
	show_master("master reads the echo", master, "ls -l\r\n");

	/* Half a line is not readable. */
	fcntl(slave, F_SETFL, O_NONBLOCK);
	write(master, "abc", 3);
	show_read("half a line, non-blocking read", slave);
	int waiting = -1;
	ioctl(slave, FIONREAD, &waiting);
	printf("FIONREAD on half a line           %d\n", waiting);
	write(master, "\n", 1);
	/* Linux hands typed bytes to the line discipline a moment later:
	 * FIONREAD counts the line once poll says it is there. */
	struct pollfd line = {slave, POLLIN, 0};
	poll(&line, 1, 1000);
	ioctl(slave, FIONREAD, &waiting);
	printf("FIONREAD on the line              %d\n", waiting);
	show_read("the rest of it", slave);
	fcntl(slave, F_SETFL, 0);
	show_master("its echo", master, "abc\r\n");

	/* Erase and kill. */
	write(master, "xy\x7fz\n", 5);
	show_read("after an erase", slave);
	show_master("the erase's echo", master, "z\r\n");
	write(master, "gone\x15kept\n", 10);
	show_read("after a kill", slave);
	show_master("the kill's echo", master, "kept\r\n");

	/* End of file on an empty line, and a line ended by VEOF. */
	write(master, "\x04", 1);
	show_read("VEOF on an empty line", slave);
	write(master, "no newline\x04", 11);
	show_read("VEOF after text", slave);
	show_master("VEOF's echo", master, "no newline");

	/* Raw mode: every byte at once, no echo, no CR mapping. */
	struct termios raw = t;
	cfmakeraw(&raw);
	tcsetattr(slave, TCSANOW, &raw);
	write(master, "q\r", 2);
	show_read("raw: bytes as typed", slave);
	show_master("raw: no echo", master, NULL);
	write(slave, "a\nb", 3);
	show_master("raw: output unprocessed", master, "a\nb");
	tcsetattr(slave, TCSANOW, &t);

	/* The window size, set at the master, seen at the slave. */
	struct winsize ws = {.ws_row = 33, .ws_col = 101}, got = {0};
	printf("TIOCSWINSZ on the master          %d\n", ioctl(master, TIOCSWINSZ, &ws));
	ioctl(slave, TIOCGWINSZ, &got);
	printf("the slave's size                  %dx%d\n", got.ws_row, got.ws_col);

	/* Not a controlling terminal yet: no group to ask for. */
	errno = 0;
	int r = tcgetpgrp(slave);
	printf("tcgetpgrp without a session       %d %s\n", r, strerror(errno));

	/* A locked slave cannot be opened. */
	int m2 = posix_openpt(O_RDWR | O_NOCTTY);
	errno = 0;
	int s2 = open(ptsname(m2), O_RDWR | O_NOCTTY);
	printf("open of a locked slave            %d %s\n", s2, strerror(errno));
	char name2[64];
	strcpy(name2, ptsname(m2));
	close(m2);
	printf("its name after the master closed  %s\n", stat(name2, &st) ? strerror(errno) : "there");

	/* A child that leads a session takes the slave as its terminal by
	 * opening it; ^C typed at the master reaches its group. */
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		setsid();
		close(slave);
		int fd = open(ptsname(master), O_RDWR);
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		signal(SIGINT, on_int);
		printf("child: leads its group, foreground %s\n",
		       tcgetpgrp(0) == getpid() ? "yes" : "no");
		printf("child: TIOCGSID is its session  %s\n",
		       tcgetsid(0) == getsid(0) ? "yes" : "no");
		int tty = open("/dev/tty", O_RDWR);
		printf("child: /dev/tty opens            %s\n", tty >= 0 ? "yes" : strerror(errno));
		fflush(stdout);
		pause();
		_exit(1);
	}
	show_master("the child's lines", master, "opens            yes\r\n");
	write(master, "\x03", 1);
	show_master("after ^C", master, "SIGINT\r\n");
	int status;
	waitpid(child, &status, 0);
	printf("child exit                        %d\n", WEXITSTATUS(status));

	/* TIOCSCTTY: only a session leader without a terminal. */
	errno = 0;
	r = ioctl(slave, TIOCSCTTY, 0);
	printf("TIOCSCTTY, not a leader           %d %s\n", r, strerror(errno));
	fflush(stdout);
	child = fork();
	if (child == 0) {
		setsid();
		int ok = ioctl(slave, TIOCSCTTY, 0);
		printf("child: TIOCSCTTY                 %d\n", ok);
		printf("child: foreground is its group   %s\n",
		       tcgetpgrp(slave) == getpid() ? "yes" : "no");
		fflush(stdout);
		_exit(0);
	}
	waitpid(child, &status, 0);

	/* poll: readable when the other end wrote. */
	struct pollfd p = {master, POLLIN, 0};
	printf("poll master, nothing written      %d\n", poll(&p, 1, 0));
	write(slave, "x", 1);
	r = poll(&p, 1, 0);
	printf("poll master, slave wrote          %d %s\n", r, p.revents & POLLIN ? "POLLIN" : "-");
	show_master("(drained)", master, "x");

	/* The slave closes: the master reads EIO. */
	close(slave);
	show_read("master read, slave closed", master);
	close(master);

	/* The master closes: the slave reads end of file, writes fail. */
	master = open_pair(&slave, 1);
	close(master);
	show_read("slave read, master closed", slave);
	errno = 0;
	ssize_t w = write(slave, "x", 1);
	printf("slave write, master closed        %zd %s\n", w, strerror(errno));
	close(slave);
	return 0;
}

/* File leases (fcntl F_SETLEASE, F_GETLEASE): who may take which lease,
 * and what another open does to one. An open for reading leaves a read
 * lease alone and breaks a write lease down to a read lease; an open for
 * writing or a truncate breaks any lease; the opener waits until the
 * holder gives it up or downgrades it (or fails at once with O_NONBLOCK),
 * and the holder learns of it by its signal (F_SETSIG's, with POLL_MSG
 * and the descriptor). Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_PATH "/tmp/lease-test"

static const char *name(int type)
{
	return type == F_RDLCK ? "F_RDLCK" : type == F_WRLCK ? "F_WRLCK" : type == F_UNLCK ? "F_UNLCK" : "?";
}

static const char *err(int r)
{
	return r < 0 ? strerror(errno) : "ok";
}

/* A child that opens the file with `flags` (or truncates it, for -1) and
 * says how that went. */
static pid_t opener(int flags)
{
	pid_t pid = fork();
	if (pid == 0) {
		int r = flags == -1 ? truncate(FILE_PATH, 0) : open(FILE_PATH, flags);
		printf("  child's %s: %s\n", flags == -1 ? "truncate" : "open", err(r));
		_exit(0);
	}
	return pid;
}

/* Waits for the lease-break signal and says what it carried. */
static void break_signal(const sigset_t *set, int fd)
{
	siginfo_t info;
	int sig = sigwaitinfo(set, &info);
	printf("  signal: %s, si_code %d, si_fd is the lease's descriptor: %d\n", strsignal(sig),
	       info.si_code, info.si_fd == fd);
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, 0);
	int make = open(FILE_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(make, "lease", 5);
	close(make);

	printf("-- who may take which\n");
	int rd = open(FILE_PATH, O_RDONLY);
	printf("no lease: %s\n", name(fcntl(rd, F_GETLEASE)));
	printf("F_RDLCK on a read-only descriptor: %s\n", err(fcntl(rd, F_SETLEASE, F_RDLCK)));
	printf("now: %s\n", name(fcntl(rd, F_GETLEASE)));
	int rd2 = open(FILE_PATH, O_RDONLY);
	printf("another read-only open keeps it: %s\n", name(fcntl(rd, F_GETLEASE)));
	printf("F_WRLCK while another is open: %s\n", err(fcntl(rd, F_SETLEASE, F_WRLCK)));
	printf("F_WRLCK by the other while this holds one: %s\n", err(fcntl(rd2, F_SETLEASE, F_WRLCK)));
	close(rd2);
	printf("F_WRLCK once it is the only open: %s\n", err(fcntl(rd, F_SETLEASE, F_WRLCK)));
	printf("now: %s\n", name(fcntl(rd, F_GETLEASE)));
	printf("F_UNLCK: %s\n", err(fcntl(rd, F_SETLEASE, F_UNLCK)));
	printf("now: %s\n", name(fcntl(rd, F_GETLEASE)));
	int rw = open(FILE_PATH, O_RDWR);
	printf("F_RDLCK on a read-write descriptor: %s\n", err(fcntl(rw, F_SETLEASE, F_RDLCK)));
	printf("F_RDLCK while it is open for writing: %s\n", err(fcntl(rd, F_SETLEASE, F_RDLCK)));
	printf("F_WRLCK on the read-write one, the other open: %s\n", err(fcntl(rw, F_SETLEASE, F_WRLCK)));
	close(rw);
	printf("lease type 7: %s\n", err(fcntl(rd, F_SETLEASE, 7)));
	int p[2];
	pipe(p);
	printf("on a pipe: %s\n", err(fcntl(p[0], F_SETLEASE, F_RDLCK)));
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	printf("on a directory: %s\n", err(fcntl(dir, F_SETLEASE, F_RDLCK)));
	pid_t pid = fork();
	if (pid == 0) {
		setuid(1000);
		int fd = open(FILE_PATH, O_RDONLY);
		printf("by a user who does not own the file: %s\n", err(fcntl(fd, F_SETLEASE, F_RDLCK)));
		printf("its F_GETLEASE: %s\n", name(fcntl(fd, F_GETLEASE)));
		_exit(0);
	}
	waitpid(pid, 0, 0);

	printf("-- breaking a write lease\n");
	fcntl(rd, F_SETSIG, SIGUSR1);
	fcntl(rd, F_SETLEASE, F_WRLCK);
	pid = opener(O_RDONLY | O_NONBLOCK);
	waitpid(pid, 0, 0);
	break_signal(&set, rd);
	printf("  pending, F_GETLEASE says: %s\n", name(fcntl(rd, F_GETLEASE)));
	pid = opener(O_RDONLY);
	usleep(200000);
	const char *r = err(fcntl(rd, F_SETLEASE, F_RDLCK));
	waitpid(pid, 0, 0);
	printf("  the holder downgraded: %s\n", r);
	printf("  after: %s\n", name(fcntl(rd, F_GETLEASE)));

	printf("-- a read lease and readers, writers\n");
	pid = opener(O_RDONLY);
	waitpid(pid, 0, 0);
	printf("  after a reader: %s\n", name(fcntl(rd, F_GETLEASE)));
	pid = opener(O_WRONLY);
	break_signal(&set, rd);
	printf("  pending, F_GETLEASE says: %s\n", name(fcntl(rd, F_GETLEASE)));
	int rd3 = open(FILE_PATH, O_RDONLY | O_NONBLOCK);
	printf("  a reader's open meanwhile: %s\n", rd3 < 0 ? strerror(errno) : "ok");
	close(rd3);
	r = err(fcntl(rd, F_SETLEASE, F_UNLCK));
	waitpid(pid, 0, 0);
	printf("  the holder gave it up: %s\n", r);
	printf("  after: %s\n", name(fcntl(rd, F_GETLEASE)));

	printf("-- a truncate, and plain SIGIO\n");
	fcntl(rd, F_SETSIG, 0);
	fcntl(rd, F_SETLEASE, F_RDLCK);
	pid = opener(-1);
	break_signal(&set, rd);
	close(rd);
	waitpid(pid, 0, 0);
	printf("closing the descriptor let it go\n");
	printf("/proc/sys/fs/lease-break-time: ");
	FILE *f = fopen("/proc/sys/fs/lease-break-time", "r");
	int secs = 0;
	if (f && fscanf(f, "%d", &secs) == 1)
		printf("%d\n", secs);
	unlink(FILE_PATH);
	return 0;
}

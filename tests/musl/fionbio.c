/* The ioctls every descriptor takes, whatever it is open on, as Linux's
 * do_vfs_ioctl answers them: FIONBIO sets or clears O_NONBLOCK (Python's
 * os.set_blocking uses it, not fcntl), FIOCLEX and FIONCLEX close-on-exec,
 * FIOASYNC O_ASYNC; on a pipe, a file and /dev/null alike. A bad pointer
 * is EFAULT, a closed descriptor EBADF, and a request the file does not
 * know still ENOTTY. Same output as on Linux. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *err(int r) { return r ? strerror(errno) : "ok"; }

static void show(const char *what, int fd)
{
	int fl = fcntl(fd, F_GETFL), fd_flags = fcntl(fd, F_GETFD);
	printf("  %-22s nonblock %d async %d cloexec %d\n", what, !!(fl & O_NONBLOCK),
	       !!(fl & O_ASYNC), !!(fd_flags & FD_CLOEXEC));
}

static void each(const char *name, int fd)
{
	int on = 1, off = 0;
	printf("%s:\n", name);
	printf("  FIONBIO 1: %s\n", err(ioctl(fd, FIONBIO, &on)));
	show("after FIONBIO 1", fd);
	printf("  FIOASYNC 1: %s\n", err(ioctl(fd, FIOASYNC, &on)));
	show("after FIOASYNC 1", fd);
	printf("  FIOCLEX: %s\n", err(ioctl(fd, FIOCLEX)));
	show("after FIOCLEX", fd);
	printf("  FIONBIO 0, FIOASYNC 0, FIONCLEX: %s %s %s\n", err(ioctl(fd, FIONBIO, &off)),
	       err(ioctl(fd, FIOASYNC, &off)), err(ioctl(fd, FIONCLEX)));
	show("after clearing", fd);
	printf("  FIONBIO with a bad pointer: %s\n", err(ioctl(fd, FIONBIO, (int *)8)));
}

int main(void)
{
	int p[2];
	pipe(p);
	each("a pipe's read end", p[0]);
	int on = 1;
	ioctl(p[0], FIONBIO, &on);
	char c;
	printf("a read of the empty pipe after FIONBIO 1: %s\n",
	       read(p[0], &c, 1) < 0 ? strerror(errno) : "read");
	char path[] = "/tmp/fionbio.XXXXXX";
	int file = mkstemp(path);
	each("a file", file);
	unlink(path);
	each("/dev/null", open("/dev/null", O_RDWR));
	printf("FIONBIO on a closed descriptor: %s\n", err(ioctl(99, FIONBIO, &on)));
	printf("TCGETS on a pipe: %s\n", err(ioctl(p[1], TCGETS, &on)));
	return 0;
}

/* Linux's /init for the comparisons on the Debian root (`cargo xtask
 * pytests`, the suite debian-script): Debian's Linux boots an initramfs
 * with this program and the modules its disk needs, and runs a program
 * from the same Debian root this kernel boots.
 *
 *     init PROGRAM ARGS...    (the kernel command line after "--")
 *
 * It loads the modules in /modules/order (virtio and ext4 are modules in
 * Debian's kernel), mounts /dev/vda (a copy of the Debian root) at /root,
 * gives it what a booted Debian has (/proc, /sys, /dev with /dev/pts and
 * /dev/shm, /tmp in memory, the loopback interface up), changes root to
 * it, and runs PROGRAM as root in /, as this kernel's init runs the
 * program it is given. Then it powers the machine off. Lines
 * `debinit: FAIL ...` say what went wrong. Static musl: the initramfs
 * holds nothing else. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what)
{
	printf("debinit: FAIL %s: %s\n", what, strerror(errno));
}

/* The modules virtio and ext4 need, in /modules/order. */
static int load_modules(void)
{
	FILE *order = fopen("/modules/order", "r");
	char name[256];
	if (!order) {
		fail("/modules/order");
		return -1;
	}
	while (fscanf(order, "%255s", name) == 1) {
		char path[512];
		snprintf(path, sizeof path, "/modules/%s", name);
		int fd = open(path, O_RDONLY);
		if ((fd < 0 || syscall(SYS_finit_module, fd, "", 0) < 0) && errno != EEXIST) {
			fail(path);
			return -1;
		}
		close(fd);
	}
	fclose(order);
	return 0;
}

static int mount_at(const char *source, const char *dir, const char *type, const char *data)
{
	mkdir(dir, 0755);
	if (mount(source, dir, type, 0, data) < 0) {
		fail(dir);
		return -1;
	}
	return 0;
}

/* The loopback interface up, as a booted Debian has it: Python's socket
 * tests connect to 127.0.0.1. */
static void loopback_up(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		fail("lo");
		return;
	}
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		fail("lo up");
	close(s);
}

static int run(char **argv)
{
	mkdir("/dev", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) == 0) {
		int fd = open("/dev/console", O_RDWR);
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (load_modules() < 0)
		return -1;
	/* The disk's node comes once its driver has probed it. */
	for (int i = 0; i < 100 && access("/dev/vda", F_OK) < 0; i++)
		usleep(100000);
	if (mount_at("/dev/vda", "/root", "ext4", NULL) < 0 ||
	    mount_at("proc", "/root/proc", "proc", NULL) < 0 ||
	    mount_at("sysfs", "/root/sys", "sysfs", NULL) < 0 ||
	    mount_at("devtmpfs", "/root/dev", "devtmpfs", NULL) < 0 ||
	    mount_at("devpts", "/root/dev/pts", "devpts", "ptmxmode=0666") < 0 ||
	    mount_at("tmpfs", "/root/dev/shm", "tmpfs", "mode=1777") < 0 ||
	    mount_at("tmpfs", "/root/tmp", "tmpfs", "mode=1777") < 0)
		return -1;
	loopback_up();
	if (chroot("/root") < 0 || chdir("/") < 0) {
		fail("chroot");
		return -1;
	}
	if (!argv[0]) {
		printf("debinit: FAIL no program named\n");
		return -1;
	}
	char *envp[] = {
		"HOME=/root", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"TERM=linux", "USER=root", "LOGNAME=root", "SHELL=/bin/bash", NULL,
	};
	pid_t pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, envp);
		fail(argv[0]);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	printf("debinit: %s ended with status %d\n", argv[0], status);
	return 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	run(argv + 1);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}

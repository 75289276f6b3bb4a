/*
 * fstree: writes a tree of every kind of file on an ext3 disk, and lists
 * a tree with a hash of every file, the same way on Linux and on
 * profkern, so xtask can check that each reads what the other wrote
 * (the `ext3-linux` suite, xtask/src/linuxdisk.rs).
 *
 *   fstree [--init | --mount] write|list DIR
 *
 * --mount mounts /dev/vda on DIR (ext3) first and unmounts it after.
 * --init is that, as Linux's /init: it first loads the modules listed in
 * /modules/order (virtio and ext4 are modules in Debian's kernel),
 * mounts devtmpfs on /dev, and powers the machine off at the end.
 *
 * `write` makes files of every size class of a 1 KiB-block ext3 (direct,
 * single-, double- and triple-indirect, holes, a sparse 1 GiB file),
 * names of every length from 1 to 255, fast and slow symbolic links, hard
 * links, FIFOs, character and block device nodes, and nested
 * directories. `list` prints one line per name, in sorted order:
 *
 *   fstree: PATH TYPE PERM UID GID NLINK SIZE RDEV HASH-OR-TARGET
 *
 * (a directory's size and link count are left out: they are how each
 * kernel laid the directory out, not what it holds). The last line is
 * `fstree: done N` or `fstree: FAIL why`.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

static void fail(const char *what)
{
	printf("fstree: FAIL %s: %s\n", what, strerror(errno));
	fflush(stdout);
}

/* Byte `at` of the file whose pattern is `seed`. */
static unsigned char pattern(uint64_t seed, uint64_t at)
{
	uint64_t x = at * 0x9e3779b9u + seed * 0x85ebca6bu;
	return (unsigned char)(x ^ (x >> 13) ^ (at >> 10));
}

/* Writes `len` bytes of `seed`'s pattern at `at` of `fd`. */
static int put(int fd, uint64_t seed, uint64_t at, uint64_t len)
{
	static unsigned char buf[65536];
	while (len > 0) {
		size_t n = len < sizeof buf ? len : sizeof buf;
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(seed, at + i);
		if (pwrite(fd, buf, n, at) != (ssize_t)n)
			return -1;
		at += n;
		len -= n;
	}
	return 0;
}

static int make_file(const char *path, uint64_t seed, uint64_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || put(fd, seed, 0, len) < 0 || close(fd) < 0) {
		fail(path);
		return -1;
	}
	return 0;
}

static int write_tree(const char *dir)
{
	char path[4096];
	/* Every size class with 1 KiB blocks: 12 direct blocks, 256 more
	 * through the single-indirect block, 65536 through the double. */
	static const uint64_t sizes[] = {
		0, 1, 1023, 1024, 1025, 12 * 1024, 12 * 1024 + 1,
		268 * 1024, 268 * 1024 + 1, 2 << 20,
	};
	snprintf(path, sizeof path, "%s/sizes", dir);
	if (mkdir(path, 0755) < 0) {
		fail(path);
		return -1;
	}
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		snprintf(path, sizeof path, "%s/sizes/%llu", dir,
			 (unsigned long long)sizes[i]);
		if (make_file(path, sizes[i], sizes[i]) < 0)
			return -1;
	}
	/* Holes: pieces in the direct, single-, double- and
	 * triple-indirect ranges; and a 1 GiB file with bytes at its start
	 * and its end only. */
	snprintf(path, sizeof path, "%s/sparse", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static const uint64_t pieces[] = {5000, 100 << 10, 30 << 20, 70 << 20};
	for (size_t i = 0; fd >= 0 && i < 4; i++)
		if (put(fd, 100 + i, pieces[i], 3000) < 0)
			break;
	if (fd < 0 || close(fd) < 0) {
		fail(path);
		return -1;
	}
	snprintf(path, sizeof path, "%s/gigabyte", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || put(fd, 7, 0, 4096) < 0 ||
	    put(fd, 8, (1ULL << 30) - 4096, 4096) < 0 || close(fd) < 0) {
		fail(path);
		return -1;
	}
	/* Names of every length, in one directory (Linux indexes it). */
	snprintf(path, sizeof path, "%s/names", dir);
	if (mkdir(path, 0700) < 0) {
		fail(path);
		return -1;
	}
	for (int len = 1; len <= 255; len++) {
		int at = snprintf(path, sizeof path, "%s/names/", dir);
		for (int i = 0; i < len; i++)
			path[at + i] = 'a' + (len + i) % 26;
		path[at + len] = 0;
		if (make_file(path, len, len % 7) < 0)
			return -1;
	}
	/* Links, FIFOs, devices, owners, modes, nested directories. */
	snprintf(path, sizeof path, "%s/a/b/c/d", dir);
	for (char *p = path + strlen(dir) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0751);
			*p = '/';
		}
	if (mkdir(path, 0751) < 0) {
		fail(path);
		return -1;
	}
	char target[4096];
	snprintf(path, sizeof path, "%s/a/b/c/d/leaf", dir);
	if (make_file(path, 99, 77) < 0)
		return -1;
	snprintf(target, sizeof target, "%s/hard", dir);
	if (link(path, target) < 0 || chown(path, 1000, 100) < 0 ||
	    chmod(path, 04750) < 0) {
		fail("link, chown, chmod");
		return -1;
	}
	snprintf(path, sizeof path, "%s/fast", dir);
	if (symlink("a/b/c/d/leaf", path) < 0) {
		fail(path);
		return -1;
	}
	memset(target, 0, sizeof target);
	for (int i = 0; i < 100; i++)
		strcat(target, "../");
	strcat(target, "slow/target/of/a/link");
	snprintf(path, sizeof path, "%s/slow", dir);
	if (symlink(target, path) < 0) {
		fail(path);
		return -1;
	}
	snprintf(path, sizeof path, "%s/fifo", dir);
	if (mknod(path, S_IFIFO | 0640, 0) < 0) {
		fail(path);
		return -1;
	}
	snprintf(path, sizeof path, "%s/null", dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0) {
		fail(path);
		return -1;
	}
	snprintf(path, sizeof path, "%s/sda", dir);
	if (mknod(path, S_IFBLK | 0660, makedev(8, 0)) < 0) {
		fail(path);
		return -1;
	}
	/* A file made, renamed over and shortened, and one removed. */
	snprintf(path, sizeof path, "%s/first", dir);
	snprintf(target, sizeof target, "%s/renamed", dir);
	if (make_file(path, 5, 40000) < 0 || make_file(target, 6, 10) < 0)
		return -1;
	if (rename(path, target) < 0 || truncate(target, 30000) < 0) {
		fail("rename, truncate");
		return -1;
	}
	snprintf(path, sizeof path, "%s/gone", dir);
	if (make_file(path, 9, 9000) < 0 || unlink(path) < 0) {
		fail(path);
		return -1;
	}
	sync();
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static long listed;

/* An FNV-1a-like hash over a file's 8-byte words (a 1 GiB file is
 * hashed in seconds under emulation), then its length. */
static int hash_file(const char *path, uint64_t *out)
{
	static uint64_t buf[8192];
	uint64_t total = 0;
	uint64_t h = 0xcbf29ce484222325ULL;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (;;) {
		/* A whole buffer each time (or the end), so the words do not
		 * depend on how much each read returns. */
		ssize_t n = 0;
		while (n < (ssize_t)sizeof buf) {
			ssize_t got = read(fd, (char *)buf + n, sizeof buf - n);
			if (got < 0) {
				close(fd);
				return -1;
			}
			if (got == 0)
				break;
			n += got;
		}
		if (n == 0)
			break;
		/* Bytes past the last whole word are zero in the word. */
		memset((char *)buf + n, 0, (8 - n % 8) % 8);
		for (ssize_t i = 0; i < (n + 7) / 8; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ULL;
		}
		total += n;
	}
	close(fd);
	*out = h ^ total;
	return 0;
}

static int list(const char *root, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s", root, rel);
	DIR *d = opendir(path);
	if (!d) {
		fail(path);
		return -1;
	}
	char **names = NULL;
	size_t count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "lost+found"))
			continue;
		names = realloc(names, (count + 1) * sizeof *names);
		names[count++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, count, sizeof *names, by_name);
	for (size_t i = 0; i < count; i++) {
		char sub[4096], full[4096];
		snprintf(sub, sizeof sub, "%s/%s", rel, names[i]);
		snprintf(full, sizeof full, "%s%s", root, sub);
		struct stat st;
		if (lstat(full, &st) < 0) {
			fail(full);
			return -1;
		}
		char what[4200] = "-";
		const char *type = "?";
		switch (st.st_mode & S_IFMT) {
		case S_IFREG: {
			uint64_t h;
			type = "file";
			if (hash_file(full, &h) < 0) {
				fail(full);
				return -1;
			}
			snprintf(what, sizeof what, "%016llx", (unsigned long long)h);
			break;
		}
		case S_IFDIR:
			type = "dir";
			break;
		case S_IFLNK: {
			type = "link";
			ssize_t n = readlink(full, what, sizeof what - 1);
			if (n < 0) {
				fail(full);
				return -1;
			}
			what[n] = 0;
			break;
		}
		case S_IFIFO:
			type = "fifo";
			break;
		case S_IFCHR:
			type = "chr";
			break;
		case S_IFBLK:
			type = "blk";
			break;
		case S_IFSOCK:
			type = "sock";
			break;
		}
		int dir = S_ISDIR(st.st_mode);
		printf("fstree: %s %s %04o %u %u %lu %lld %u:%u %s\n", sub, type,
		       st.st_mode & 07777, st.st_uid, st.st_gid,
		       dir ? 0UL : (unsigned long)st.st_nlink,
		       dir ? 0LL : (long long)st.st_size,
		       major(st.st_rdev), minor(st.st_rdev), what);
		listed++;
		if (dir && list(root, sub) < 0)
			return -1;
		free(names[i]);
	}
	free(names);
	return 0;
}

/* Linux's /init: the modules virtio and ext4 need, in /modules/order. */
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
		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) < 0) {
			if (errno != EEXIST) {
				fail(path);
				return -1;
			}
		}
		close(fd);
	}
	fclose(order);
	return 0;
}

int main(int argc, char **argv)
{
	int init = 0, do_mount = 0, arg = 1;
	if (arg < argc && !strcmp(argv[arg], "--init"))
		init = do_mount = 1, arg++;
	else if (arg < argc && !strcmp(argv[arg], "--mount"))
		do_mount = 1, arg++;
	if (argc - arg != 2) {
		printf("usage: fstree [--init | --mount] write|list DIR\n");
		return 2;
	}
	const char *action = argv[arg], *dir = argv[arg + 1];
	int status = 1;
	if (init) {
		/* A console first (the initramfs has no /dev), as bench.c. */
		mkdir("/dev", 0755);
		if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) == 0) {
			int fd = open("/dev/console", O_RDWR);
			dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		}
		if (load_modules() < 0)
			goto out;
		/* The disk's node comes once its driver has probed it. */
		for (int i = 0; i < 100 && access("/dev/vda", F_OK) < 0; i++)
			usleep(100000);
	}
	if (do_mount) {
		mkdir(dir, 0755);
		if (mount("/dev/vda", dir, init ? "ext4" : "ext3", 0, NULL) < 0) {
			fail("mount /dev/vda");
			goto out;
		}
	}
	if (!strcmp(action, "write"))
		status = write_tree(dir) < 0;
	else if (!strcmp(action, "list"))
		status = list(dir, "") < 0;
	else
		printf("fstree: FAIL no action %s\n", action);
	if (do_mount && umount(dir) < 0) {
		fail("umount");
		status = 1;
	}
	if (!status)
		printf("fstree: done %ld\n", listed);
out:
	fflush(stdout);
	if (init) {
		sync();
		reboot(RB_POWER_OFF);
	}
	return status;
}

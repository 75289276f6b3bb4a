/* A directory read while its entries are removed gives every entry that
 * stays exactly once, and every entry once at most: readdir and unlink
 * each name as it comes (as rm -r and Python's shutil.rmtree do), with
 * 300 names, more than one getdents call returns; and /proc/self/fd read
 * with a small buffer while closing each descriptor it names (as Python's
 * subprocess closes descriptors in the child), then rewinddir. Same
 * output as on Linux. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FILES 300
#define FDS 40

int main(void)
{
	char dir[] = "/tmp/readdirdel.XXXXXX", path[128];
	if (!mkdtemp(dir))
		return 1;
	for (int i = 0; i < FILES; i++) {
		snprintf(path, sizeof path, "%s/file%03d", dir, i);
		close(open(path, O_CREAT | O_WRONLY, 0644));
	}
	static int seen[FILES];
	int given = 0, twice = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int n = atoi(e->d_name + 4);
		twice += seen[n]++ > 0;
		given++;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	printf("unlinked while reading: %d names given, %d twice\n", given, twice);
	printf("the directory removed after: %s\n", rmdir(dir) ? strerror(errno) : "ok");

	/* Descriptors 3.. open on /dev/null, then closed as /proc/self/fd names
	 * them, read 280 bytes at a time as CPython's _posixsubprocess does. */
	int first = -1;
	for (int i = 0; i < FDS; i++) {
		int fd = open("/dev/null", O_RDONLY);
		if (first < 0)
			first = fd;
	}
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
	char buf[280];
	long got;
	int closed = 0;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
		for (long at = 0; at < got;) {
			struct dirent64 *ent = (struct dirent64 *)(buf + at);
			at += ent->d_reclen;
			if (ent->d_name[0] == '.')
				continue;
			int fd = atoi(ent->d_name);
			if (fd >= first && fd < first + FDS && close(fd) == 0)
				closed++;
		}
	}
	printf("/proc/self/fd while closing: %d of %d closed\n", closed, FDS);
	int left = 0;
	for (int fd = first; fd < first + FDS; fd++)
		left += fcntl(fd, F_GETFD) >= 0;
	printf("descriptors left open: %d\n", left);
	lseek(dfd, 0, SEEK_SET);
	int dots = 0, from_first = 0;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
		for (long at = 0; at < got;) {
			struct dirent64 *ent = (struct dirent64 *)(buf + at);
			at += ent->d_reclen;
			if (ent->d_name[0] == '.')
				dots++;
			else if (atoi(ent->d_name) >= first && atoi(ent->d_name) <= first + FDS)
				from_first++;
		}
	printf("read again from the start: . and .. %d, from the first closed on %d (itself)\n", dots,
	       from_first);
	return 0;
}

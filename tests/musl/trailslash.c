/* A path that ends in '/' names a directory. open with O_CREAT never
 * makes one, so it is EISDIR once the directory the name would go in is
 * found, whatever the name is (a new name, a directory, a file), as
 * Linux's open_last_lookups says before it looks the name up; and the
 * new name is not made. O_CREAT that finds a directory by any name is
 * EISDIR too. Without O_CREAT a file named so is ENOTDIR. Same
 * output as on Linux (Python's shutil.copyfile turns the EISDIR of a
 * missing directory into FileNotFoundError). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void try(const char *what, const char *path, int flags)
{
	int fd = open(path, flags, 0644);
	printf("%-34s %s\n", what, fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char dir[] = "/tmp/trailslash.XXXXXX", path[128];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/file", dir);
	close(open(path, O_CREAT | O_WRONLY, 0644));

	snprintf(path, sizeof path, "%s/new/", dir);
	try("O_CREAT, a new name/", path, O_CREAT | O_WRONLY);
	snprintf(path, sizeof path, "%s/new", dir);
	printf("%-34s %s\n", "the new name made", access(path, F_OK) ? "no" : "YES");
	snprintf(path, sizeof path, "%s/", dir);
	try("O_CREAT, a directory/", path, O_CREAT | O_RDONLY);
	try("O_CREAT, a directory, no slash", dir, O_CREAT | O_RDONLY);
	snprintf(path, sizeof path, "%s/file/", dir);
	try("O_CREAT, a file/", path, O_CREAT | O_WRONLY);
	try("O_CREAT | O_EXCL, a file/", path, O_CREAT | O_EXCL | O_WRONLY);
	snprintf(path, sizeof path, "%s/missing/new/", dir);
	try("O_CREAT, in a missing directory", path, O_CREAT | O_WRONLY);
	snprintf(path, sizeof path, "%s/file/new/", dir);
	try("O_CREAT, in a file", path, O_CREAT | O_WRONLY);
	snprintf(path, sizeof path, "%s/file/", dir);
	try("no O_CREAT, a file/", path, O_RDONLY);
	snprintf(path, sizeof path, "%s/", dir);
	try("no O_CREAT, a directory/", path, O_RDONLY);

	snprintf(path, sizeof path, "%s/file", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* lseek's SEEK_DATA and SEEK_HOLE on a file in memory (/dev/shm: tmpfs on
 * Linux, the ramfs here), where a page never written is a hole: data and
 * holes found a page at a time, the end of the file a hole, ENXIO at or
 * past the end and before the start, the offset moved to what was found.
 * A directory is EINVAL, a pipe ESPIPE, /dev/null lands at 0. Run here and
 * on Linux: the same lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show(const char *what, int fd, off_t at, int whence)
{
    off_t r = lseek(fd, at, whence);
    if (r < 0)
        printf("%s from %ld: %s\n", what, (long)at,
               errno == ENXIO    ? "ENXIO"
               : errno == EINVAL ? "EINVAL"
               : errno == ESPIPE ? "ESPIPE"
                                 : strerror(errno));
    else
        printf("%s from %ld: %ld\n", what, (long)at, (long)r);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/holes-%d", getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    unlink(path);

    /* What Python's test_posix.test_fs_holes does. */
    write(fd, "hello", 5);
    for (int i = 0; i < 5; i++) {
        show("SEEK_DATA", fd, i, SEEK_DATA);
        show("SEEK_HOLE", fd, i, SEEK_HOLE);
    }
    show("SEEK_DATA", fd, 5, SEEK_DATA);
    show("SEEK_HOLE", fd, 5, SEEK_HOLE);
    show("SEEK_DATA", fd, -1, SEEK_DATA);
    show("SEEK_HOLE", fd, -1, SEEK_HOLE);

    /* Five pages, the last half used; data in pages 1 and 3 only. */
    ftruncate(fd, 0);
    ftruncate(fd, 4 * 4096 + 2048);
    pwrite(fd, "one", 3, 4096 + 100);
    pwrite(fd, "three", 5, 3 * 4096);
    off_t froms[] = {0, 100, 4096, 4096 + 200, 8192, 3 * 4096 + 7, 4 * 4096, 4 * 4096 + 2047, 4 * 4096 + 2048};
    for (unsigned i = 0; i < sizeof froms / sizeof froms[0]; i++) {
        show("SEEK_DATA", fd, froms[i], SEEK_DATA);
        show("SEEK_HOLE", fd, froms[i], SEEK_HOLE);
    }
    lseek(fd, 0, SEEK_SET);
    lseek(fd, 0, SEEK_DATA);
    printf("the offset after SEEK_DATA from 0: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
    lseek(fd, 77, SEEK_SET);
    lseek(fd, 99999, SEEK_HOLE);
    printf("the offset after a SEEK_HOLE that failed: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
    show("SEEK_DATA of an empty file", (ftruncate(fd, 0), fd), 0, SEEK_DATA);

    /* A file of a terabyte, data only in its first page and at 1 GiB: each
     * answer is one search, however long the holes. */
    printf("ftruncate to 1 TiB: %d\n", ftruncate(fd, 1LL << 40));
    show("SEEK_DATA, no data yet", fd, 0, SEEK_DATA);
    pwrite(fd, "x", 1, 10);
    pwrite(fd, "y", 1, 1LL << 30);
    show("SEEK_HOLE", fd, 0, SEEK_HOLE);
    show("SEEK_DATA", fd, 4096, SEEK_DATA);
    show("SEEK_HOLE", fd, 1LL << 30, SEEK_HOLE);
    show("SEEK_DATA", fd, (1LL << 30) + 4096, SEEK_DATA);
    show("SEEK_HOLE", fd, (1LL << 40) - 1, SEEK_HOLE);
    close(fd);

    int dir = open("/dev/shm", O_RDONLY | O_DIRECTORY);
    show("a directory: SEEK_DATA", dir, 0, SEEK_DATA);
    show("a directory: SEEK_HOLE", dir, 0, SEEK_HOLE);
    int p[2];
    pipe(p);
    show("a pipe: SEEK_DATA", p[0], 0, SEEK_DATA);
    int null = open("/dev/null", O_RDWR);
    show("/dev/null: SEEK_HOLE", null, 5, SEEK_HOLE);
    show("a bad whence", null, 0, 5);
    return 0;
}

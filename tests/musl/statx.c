/* statx(2), which coreutils' ls and stat call first, and fadvise64(2),
 * which cat and cp call before reading: statx says what stat says, for a
 * path, a link itself, and a descriptor (AT_EMPTY_PATH); bad flags, a
 * reserved mask bit, a missing file and a bad buffer get Linux's errors.
 * fadvise64 takes any of the six advices on a file and refuses a pipe, an
 * unknown advice, a negative length and a bad descriptor. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* <linux/stat.h>'s struct statx (musl-gcc sees no kernel headers). */
struct ts { int64_t sec; uint32_t nsec; int32_t reserved; };
struct statx_buf {
    uint32_t mask, blksize; uint64_t attributes;
    uint32_t nlink, uid, gid; uint16_t mode, spare0;
    uint64_t ino, size, blocks, attributes_mask;
    struct ts atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t spare[14];
};
#define STATX_BASIC_STATS 0x7ffU
#define STATX_RESERVED 0x80000000U
#define AT_STATX_SYNC_TYPE 0x6000

static long sx(int dirfd, const char *path, int flags, unsigned mask, struct statx_buf *buf)
{
    return syscall(SYS_statx, dirfd, path, flags, mask, buf);
}

static const char *outcome(long r)
{
    return r == 0 ? "0" : errno == EINVAL ? "EINVAL" : errno == ENOENT ? "ENOENT"
         : errno == EFAULT ? "EFAULT" : errno == ESPIPE ? "ESPIPE" : errno == EBADF ? "EBADF"
         : strerror(errno);
}

static const char *agrees(const struct statx_buf *x, const struct stat *st)
{
    int same = (x->mask & STATX_BASIC_STATS) == STATX_BASIC_STATS && x->ino == st->st_ino
        && x->size == (uint64_t)st->st_size && x->mode == st->st_mode
        && x->nlink == st->st_nlink && x->uid == st->st_uid && x->gid == st->st_gid
        && x->blocks == (uint64_t)st->st_blocks && x->blksize == (uint32_t)st->st_blksize
        && x->mtime.sec == st->st_mtim.tv_sec && x->mtime.nsec == st->st_mtim.tv_nsec
        && x->ctime.sec == st->st_ctim.tv_sec && x->atime.sec == st->st_atim.tv_sec
        && x->dev_major == major(st->st_dev) && x->dev_minor == minor(st->st_dev)
        && x->rdev_major == major(st->st_rdev) && x->rdev_minor == minor(st->st_rdev);
    return same ? "yes" : "no";
}

int main(void)
{
    const char *file = "/tmp/statx-file", *link = "/tmp/statx-link";
    unlink(file);
    unlink(link);
    int fd = open(file, O_CREAT | O_RDWR, 0640);
    write(fd, "twelve bytes", 12);
    symlink(file, link);

    struct statx_buf x;
    struct stat st;
    stat(file, &st);
    printf("statx(file): %s\n", outcome(sx(AT_FDCWD, file, 0, STATX_BASIC_STATS, &x)));
    printf("  says what stat says: %s (size %llu, mode %o)\n", agrees(&x, &st),
           (unsigned long long)x.size, x.mode);
    lstat(link, &st);
    printf("statx(link, AT_SYMLINK_NOFOLLOW): %s\n",
           outcome(sx(AT_FDCWD, link, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &x)));
    printf("  the link itself: %s, %s\n", agrees(&x, &st), S_ISLNK(x.mode) ? "a link" : "not a link");
    fstat(fd, &st);
    printf("statx(fd, \"\", AT_EMPTY_PATH): %s\n", outcome(sx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &x)));
    printf("  says what fstat says: %s\n", agrees(&x, &st));
    stat("/dev/null", &st);
    sx(AT_FDCWD, "/dev/null", 0, STATX_BASIC_STATS, &x);
    printf("statx(/dev/null): device %u,%u, same as stat: %s\n", x.rdev_major, x.rdev_minor,
           agrees(&x, &st));

    printf("an unknown flag: %s\n", outcome(sx(AT_FDCWD, file, 0x10000, 0, &x)));
    printf("both sync flags: %s\n", outcome(sx(AT_FDCWD, file, AT_STATX_SYNC_TYPE, 0, &x)));
    printf("a reserved mask bit: %s\n", outcome(sx(AT_FDCWD, file, 0, STATX_RESERVED, &x)));
    printf("a missing file: %s\n", outcome(sx(AT_FDCWD, "/tmp/statx-none", 0, 0, &x)));
    printf("a bad buffer: %s\n", outcome(sx(AT_FDCWD, file, 0, 0, (void *)8)));
    printf("a bad path: %s\n", outcome(sx(AT_FDCWD, (char *)8, 0, 0, &x)));

    int every = 1;
    for (int advice = 0; advice <= 5; advice++)
        every &= syscall(SYS_fadvise64, fd, 0L, 12L, advice) == 0;
    printf("fadvise64, every advice on a file: %s\n", every ? "0" : "refused");
    printf("fadvise64, advice 6: %s\n", outcome(syscall(SYS_fadvise64, fd, 0L, 0L, 6)));
    printf("fadvise64, length -1: %s\n", outcome(syscall(SYS_fadvise64, fd, 0L, -1L, 0)));
    int fds[2];
    pipe(fds);
    printf("fadvise64 on a pipe: %s\n", outcome(syscall(SYS_fadvise64, fds[0], 0L, 0L, 0)));
    printf("fadvise64 on no file: %s\n", outcome(syscall(SYS_fadvise64, 99, 0L, 0L, 0)));
    unlink(link);
    unlink(file);
    return 0;
}

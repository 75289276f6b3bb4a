/* preadv, pwritev, preadv2 and pwritev2: several buffers at a file offset
 * the file's own offset does not follow (or, for the v2 calls given -1,
 * at and moving the file's offset); a short file ends the read; a
 * negative offset is EINVAL, a pipe ESPIPE, an unknown RWF flag
 * EOPNOTSUPP. close_range: closes a range of descriptors (those open in
 * it), or marks them close-on-exec; bad ranges and flags are EINVAL.
 * Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_HIPRI
#define RWF_HIPRI 1
#define RWF_DSYNC 2
#define RWF_SYNC 4
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_preadv2
#define SYS_preadv2 327
#define SYS_pwritev2 328
#endif

#define TRY(what, call)                                          \
    do {                                                         \
        errno = 0;                                               \
        long result_ = (call);                                   \
        printf("%s: %ld, %s\n", what, result_, strerror(errno)); \
    } while (0)

int main(void) {
    int fd = open("/tmp/vectors.txt", O_CREAT | O_TRUNC | O_RDWR, 0600);
    write(fd, "0123456789abcdefghij", 20);
    char a[4], b[6];
    struct iovec two[2] = {{a, sizeof a}, {b, sizeof b}};
    long n = preadv(fd, two, 2, 3);
    printf("preadv at 3: %ld '%.4s' '%.6s', offset still %ld\n", n, a, b, (long)lseek(fd, 0, SEEK_CUR));
    n = preadv(fd, two, 2, 15);
    printf("preadv at 15 (5 left): %ld '%.4s' '%.1s'\n", n, a, b);
    struct iovec out[2] = {{"AB", 2}, {"CDE", 3}};
    n = pwritev(fd, out, 2, 8);
    char all[32] = {0};
    pread(fd, all, 20, 0);
    printf("pwritev at 8: %ld, file '%s', offset still %ld\n", n, all, (long)lseek(fd, 0, SEEK_CUR));
    n = pwritev(fd, out, 2, 30);
    printf("pwritev past the end: %ld, size %ld\n", n, (long)lseek(fd, 0, SEEK_END));

    lseek(fd, 2, SEEK_SET);
    n = syscall(SYS_preadv2, fd, two, 2, -1L, 0L, 0);
    printf("preadv2 at -1: %ld '%.4s' '%.6s', offset now %ld\n", n, a, b, (long)lseek(fd, 0, SEEK_CUR));
    n = syscall(SYS_preadv2, fd, two, 2, 0L, 0L, RWF_HIPRI);
    printf("preadv2 at 0, RWF_HIPRI: %ld '%.4s'\n", n, a);
    n = syscall(SYS_pwritev2, fd, out, 2, 0L, 0L, RWF_DSYNC | RWF_SYNC);
    pread(fd, all, 20, 0);
    printf("pwritev2 at 0, RWF_DSYNC|RWF_SYNC: %ld, file '%.20s'\n", n, all);

    TRY("preadv at -1", preadv(fd, two, 2, -1));
    TRY("pwritev2 with an unknown flag", syscall(SYS_pwritev2, fd, out, 2, 0L, 0L, 1 << 30));
    int p[2];
    pipe(p);
    TRY("pwritev on a pipe", pwritev(p[1], out, 2, 0));
    TRY("preadv with a bad vector", preadv(fd, (struct iovec *)8, 2, 0));
    close(p[0]);
    close(p[1]);
    close(fd);
    unlink("/tmp/vectors.txt");

    /* close_range: descriptors 10..14 open, 12 left out. */
    for (int i = 10; i <= 14; i++)
        dup2(0, i);
    close(12);
    TRY("close_range 11..13", syscall(SYS_close_range, 11, 13, 0));
    printf("open after:");
    for (int i = 10; i <= 14; i++)
        printf(" %d:%s", i, fcntl(i, F_GETFD) < 0 ? "closed" : "open");
    printf("\n");
    TRY("close_range CLOEXEC 10..~0", syscall(SYS_close_range, 10, ~0U, 4));
    printf("close-on-exec: 10 %s, 14 %s, 0 %s\n", fcntl(10, F_GETFD) & FD_CLOEXEC ? "yes" : "no",
           fcntl(14, F_GETFD) & FD_CLOEXEC ? "yes" : "no", fcntl(0, F_GETFD) & FD_CLOEXEC ? "yes" : "no");
    TRY("close_range UNSHARE 10..14", syscall(SYS_close_range, 10, 14, 2));
    printf("10 after: %s\n", fcntl(10, F_GETFD) < 0 ? "closed" : "open");
    TRY("close_range 5..3", syscall(SYS_close_range, 5, 3, 0));
    TRY("close_range unknown flag", syscall(SYS_close_range, 10, 14, 1));
    TRY("close_range of nothing open", syscall(SYS_close_range, 500, 600, 0));
    return 0;
}

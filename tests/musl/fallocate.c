/* fallocate as Linux's tmpfs answers it: mode 0 grows the file and gives
 * the range its memory (st_blocks counts it), FALLOC_FL_KEEP_SIZE
 * allocates without growing, FALLOC_FL_PUNCH_HOLE (with KEEP_SIZE) makes
 * a range read as zeros and gives its whole pages back, also under a
 * shared mapping, which sees the zeros; every refusal in Linux's order.
 * statvfs counts file nodes as tmpfs does: some, fewer free once a file
 * is made. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_COLLAPSE_RANGE 0x08
#define FALLOC_FL_ZERO_RANGE 0x10
#endif

#define TRY(what, call)                                          \
    do {                                                         \
        errno = 0;                                               \
        long result_ = (call);                                   \
        printf("%s: %ld, %s\n", what, result_, strerror(errno)); \
    } while (0)

static void show(const char *what, int fd) {
    struct stat st;
    fstat(fd, &st);
    printf("%s: size %ld, blocks %ld\n", what, (long)st.st_size, (long)st.st_blocks);
}

int main(void) {
    int fd = open("/dev/shm/falloc.bin", O_CREAT | O_TRUNC | O_RDWR, 0600);
    show("new", fd);
    TRY("fallocate 0..3 pages", fallocate(fd, 0, 0, 3 * 4096));
    show("after", fd);
    TRY("KEEP_SIZE 3..5 pages", fallocate(fd, FALLOC_FL_KEEP_SIZE, 3 * 4096, 2 * 4096));
    show("after", fd);
    TRY("inside the file again", fallocate(fd, 0, 100, 200));
    show("after", fd);

    char buf[3 * 4096];
    memset(buf, 'x', sizeof buf);
    pwrite(fd, buf, sizeof buf, 0);
    TRY("punch 1000..9192", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 8192));
    show("after", fd);
    char back[3 * 4096];
    pread(fd, back, sizeof back, 0);
    int zeros = 0;
    for (unsigned i = 0; i < sizeof back; i++)
        zeros += back[i] == 0;
    printf("zeros: %d, at 999 '%c', at 9192 '%c'\n", zeros, back[999], back[9192]);

    /* A hole under a shared mapping: the mapping sees the zeros. */
    pwrite(fd, buf, sizeof buf, 0);
    char *map = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    map[4096] = 'm';
    TRY("punch the mapped page", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096));
    printf("the mapping reads %d there, '%c' before\n", map[4096], map[4095]);
    munmap(map, 3 * 4096);

    TRY("negative offset", fallocate(fd, 0, -1, 10));
    TRY("zero length", fallocate(fd, 0, 0, 0));
    TRY("unknown mode", fallocate(fd, 0x1000, 0, 10));
    TRY("hole without KEEP_SIZE", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 10));
    TRY("ZERO_RANGE", fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 10));
    TRY("COLLAPSE_RANGE", fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096));
    TRY("past the largest size", fallocate(fd, 0, 0x7fffffffffffffffL, 10));
    int ro = open("/dev/shm/falloc.bin", O_RDONLY);
    TRY("read-only descriptor", fallocate(ro, 0, 0, 10));
    close(ro);
    int p[2];
    pipe(p);
    TRY("a pipe", fallocate(p[1], 0, 0, 10));
    int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
    TRY("a directory (read-only)", fallocate(dir, 0, 0, 10));
    int null = open("/dev/null", O_WRONLY);
    TRY("/dev/null", fallocate(null, 0, 0, 10));
    TRY("a closed descriptor", fallocate(99, 0, 0, 10));

    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {8192, 8192};
    setrlimit(RLIMIT_FSIZE, &small);
    TRY("past RLIMIT_FSIZE", fallocate(fd, 0, 0, 16384));
    TRY("past RLIMIT_FSIZE, KEEP_SIZE", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 16384));

    struct statvfs before, after;
    statvfs("/dev/shm", &before);
    int more = open("/dev/shm/falloc2.bin", O_CREAT | O_RDWR, 0600);
    statvfs("/dev/shm", &after);
    printf("statvfs: files %s, free %s, one fewer free after a create: %s\n",
           before.f_files > 0 ? "some" : "NONE", before.f_ffree > 0 && before.f_ffree < before.f_files ? "fewer" : "WRONG",
           after.f_ffree == before.f_ffree - 1 ? "yes" : "no");
    close(more);
    unlink("/dev/shm/falloc2.bin");
    close(fd);
    unlink("/dev/shm/falloc.bin");
    return 0;
}

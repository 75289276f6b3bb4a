/* copy_file_range and splice: bytes copied by the kernel, with offsets
 * given by pointer moved instead of the files' own, a short answer at the
 * end of the input, a full pipe or an empty one, and each call's errors
 * for the descriptors it does not take. Run here and on Linux: the same
 * lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *err(long r)
{
    static char text[32];
    if (r >= 0) {
        snprintf(text, sizeof text, "%ld", r);
        return text;
    }
    switch (errno) {
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case EISDIR: return "EISDIR";
    case ESPIPE: return "ESPIPE";
    case EFAULT: return "EFAULT";
    case EAGAIN: return "EAGAIN";
    default: return strerror(errno);
    }
}

static long cfr(int in, loff_t *oi, int out, loff_t *oo, size_t len, unsigned flags)
{
    return syscall(SYS_copy_file_range, in, oi, out, oo, len, flags);
}

static long spl(int in, loff_t *oi, int out, loff_t *oo, size_t len, unsigned flags)
{
    return syscall(SYS_splice, in, oi, out, oo, len, flags);
}

static void show_file(const char *name)
{
    char buf[64] = "";
    int fd = open(name, O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("  %s holds %zd bytes: \"%s\"\n", name, n, buf);
}

static void make(const char *name, const char *text)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    write(fd, text, strlen(text));
    close(fd);
}

static long offset(int fd)
{
    return (long)lseek(fd, 0, SEEK_CUR);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    make("in", "0123456789");
    int in = open("in", O_RDONLY);
    int out = open("out", O_RDWR | O_CREAT | O_TRUNC, 0644);

    printf("copy_file_range 5: %s\n", err(cfr(in, 0, out, 0, 5, 0)));
    printf("  offsets: in %ld, out %ld\n", offset(in), offset(out));
    show_file("out");
    loff_t oi = 2, oo = 3;
    printf("copy_file_range 4 at 2 to 3: %s\n", err(cfr(in, &oi, out, &oo, 4, 0)));
    printf("  given offsets now %ld and %ld, the files' %ld and %ld\n", (long)oi, (long)oo,
           offset(in), offset(out));
    show_file("out");
    oi = 7;
    printf("copy_file_range 100 from 7: %s\n", err(cfr(in, &oi, out, 0, 100, 0)));
    oi = 10;
    printf("copy_file_range from the end: %s\n", err(cfr(in, &oi, out, 0, 100, 0)));
    printf("copy_file_range of 0 bytes: %s\n", err(cfr(in, 0, out, 0, 0, 0)));
    printf("copy_file_range, flags 1: %s\n", err(cfr(in, 0, out, 0, 5, 1)));
    printf("copy_file_range, a bad offset pointer: %s\n",
           err(cfr(in, (loff_t *)8, out, 0, 5, 0)));
    mkdir("dir", 0755);
    int dir = open("dir", O_RDONLY | O_DIRECTORY);
    printf("copy_file_range from a directory: %s\n", err(cfr(dir, 0, out, 0, 5, 0)));
    int p[2];
    pipe(p);
    printf("copy_file_range to a pipe: %s\n", err(cfr(in, 0, p[1], 0, 5, 0)));
    int appending = open("out", O_WRONLY | O_APPEND);
    printf("copy_file_range to an O_APPEND file: %s\n", err(cfr(in, 0, appending, 0, 5, 0)));
    int write_only = open("in", O_WRONLY);
    printf("copy_file_range from a write-only descriptor: %s\n",
           err(cfr(write_only, 0, out, 0, 5, 0)));
    printf("copy_file_range from a bad descriptor: %s\n", err(cfr(99, 0, out, 0, 5, 0)));
    oi = 0;
    oo = 4;
    printf("copy_file_range within one file, overlapping: %s\n",
           err(cfr(out, &oi, out, &oo, 5, 0)));
    oi = 0;
    oo = 7;
    printf("copy_file_range within one file, apart: %s\n", err(cfr(out, &oi, out, &oo, 3, 0)));
    show_file("out");

    /* splice: a file into a pipe, and out again. */
    lseek(in, 0, SEEK_SET);
    printf("splice file to pipe, 5: %s\n", err(spl(in, 0, p[1], 0, 5, 0)));
    printf("  the file's offset: %ld\n", offset(in));
    char buf[128] = "";
    printf("  the pipe gives: \"%.*s\"\n", (int)read(p[0], buf, sizeof buf), buf);
    oi = 3;
    printf("splice file at 3 to pipe, 4: %s\n", err(spl(in, &oi, p[1], 0, 4, 0)));
    printf("  given offset now %ld, the file's %ld\n", (long)oi, offset(in));
    memset(buf, 0, sizeof buf);
    printf("  the pipe gives: \"%.*s\"\n", (int)read(p[0], buf, sizeof buf), buf);
    write(p[1], "abc", 3);
    oo = 1;
    printf("splice pipe holding 3 to file at 1, 100: %s\n", err(spl(p[0], 0, out, &oo, 100, 0)));
    printf("  given offset now %ld\n", (long)oo);
    show_file("out");
    int q[2];
    pipe(q);
    write(p[1], "xyz", 3);
    printf("splice pipe to pipe: %s\n", err(spl(p[0], 0, q[1], 0, 100, 0)));
    memset(buf, 0, sizeof buf);
    printf("  the second pipe gives: \"%.*s\"\n", (int)read(q[0], buf, sizeof buf), buf);
    printf("splice, an empty pipe with SPLICE_F_NONBLOCK: %s\n", err(spl(p[0], 0, out, 0, 5, 2)));
    printf("splice, no pipe: %s\n", err(spl(in, 0, out, 0, 5, 0)));
    oi = 0;
    printf("splice, an offset for the pipe: %s\n", err(spl(p[0], &oi, out, 0, 5, 0)));
    printf("splice, one pipe on both sides: %s\n", err(spl(p[0], 0, p[1], 0, 5, 0)));
    printf("splice, an unknown flag: %s\n", err(spl(in, 0, p[1], 0, 5, 0x10)));
    printf("splice to an O_APPEND file: %s\n", err(spl(p[0], 0, appending, 0, 5, 0)));
    printf("splice from a write-only descriptor: %s\n", err(spl(write_only, 0, p[1], 0, 5, 0)));
    printf("splice of 0 bytes: %s\n", err(spl(in, 0, p[1], 0, 0, 0)));

    /* More than a pipe holds, with nobody reading: what fits, no wait. */
    char *big = calloc(1, 200 * 1024);
    int bigfd = open("big", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(bigfd, big, 200 * 1024);
    lseek(bigfd, 0, SEEK_SET);
    printf("splice 200 KiB into an empty pipe: %s\n", err(spl(bigfd, 0, q[1], 0, 200 * 1024, 0)));
    printf("  the file's offset: %ld\n", offset(bigfd));
    printf("splice into the full pipe, SPLICE_F_NONBLOCK: %s\n",
           err(spl(bigfd, 0, q[1], 0, 100, 2)));

    /* A splice from an empty pipe waits for a writer, and ends at 0 when
     * the last writer is gone. */
    pid_t child = fork();
    if (child == 0) {
        struct timespec t = {0, 100000000};
        nanosleep(&t, 0);
        write(p[1], "late", 4);
        _exit(0);
    }
    oo = 0;
    printf("splice from an empty pipe a child writes to: %s\n",
           err(spl(p[0], 0, out, &oo, 100, 0)));
    waitpid(child, 0, 0);
    close(p[1]);
    printf("splice from a pipe with no writer: %s\n", err(spl(p[0], 0, out, 0, 100, 0)));
    show_file("out");
    return 0;
}

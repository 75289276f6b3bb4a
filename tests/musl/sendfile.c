/* sendfile(2) from a file to a pipe and to a file, with and without an
 * offset pointer; pwrite on an O_APPEND file (which appends on Linux);
 * fchdir; and getcwd after chdir through a symbolic link (the real path).
 * Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

static void show(const char *what, int fd) {
    char buf[64] = {0};
    lseek(fd, 0, SEEK_SET);
    int n = read(fd, buf, sizeof buf - 1);
    printf("%s: %d bytes \"%s\"\n", what, n, buf);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int in = open("sf-in", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(in, "0123456789abcdef", 16);
    lseek(in, 4, SEEK_SET);

    int p[2];
    pipe(p);
    ssize_t n = sendfile(p[1], in, NULL, 5);
    char buf[32] = {0};
    read(p[0], buf, sizeof buf);
    printf("to a pipe at the file's offset: %zd \"%s\", offset now %ld\n", n, buf,
           (long)lseek(in, 0, SEEK_CUR));
    off_t off = 10;
    n = sendfile(p[1], in, &off, 100);
    memset(buf, 0, sizeof buf);
    read(p[0], buf, sizeof buf);
    printf("with an offset: %zd \"%s\", offset %ld, file's %ld\n", n, buf, (long)off,
           (long)lseek(in, 0, SEEK_CUR));
    off = 16;
    printf("at the end: %zd\n", sendfile(p[1], in, &off, 10));

    int out = open("sf-out", O_RDWR | O_CREAT | O_TRUNC, 0644);
    off = 0;
    n = sendfile(out, in, &off, 16);
    printf("file to file: %zd\n", n);
    show("the copy", out);

    printf("negative offset: %s\n", (off = -1, err(sendfile(out, in, &off, 1))));
    printf("input a pipe: %s\n", err(sendfile(out, p[0], NULL, 1)));
    printf("output read-only: %s\n", err(sendfile(open("sf-in", O_RDONLY), in, NULL, 1)));
    printf("input write-only: %s\n", err(sendfile(out, open("sf-in", O_WRONLY), NULL, 1)));
    printf("bad descriptor: %s\n", err(sendfile(99, in, NULL, 1)));
    printf("bad offset pointer: %s\n", err(sendfile(out, in, (off_t *)8, 1)));
    int appender = open("sf-out", O_WRONLY | O_APPEND);
    printf("output O_APPEND: %s\n", err(sendfile(appender, in, NULL, 1)));

    /* pwrite with O_APPEND: Linux appends, whatever the offset. */
    printf("pwrite at 0 with O_APPEND: %zd\n", pwrite(appender, "XY", 2, 0));
    show("the file", out);

    /* In a directory of its own, so the start is never "/". */
    mkdir("sf-top", 0755);
    chdir("sf-top");
    mkdir("sf-dir", 0755);
    mkdir("sf-dir/sub", 0755);
    symlink("sf-dir/sub", "sf-link");
    char start[PATH_MAX], cwd[PATH_MAX];
    getcwd(start, sizeof start);
    int dirfd = open("sf-dir", O_RDONLY | O_DIRECTORY);
    chdir("sf-link");
    getcwd(cwd, sizeof cwd);
    printf("after chdir through a link: %s\n", cwd + strlen(start));
    printf("fchdir: %s\n", err(fchdir(dirfd)));
    getcwd(cwd, sizeof cwd);
    printf("now in: %s\n", cwd + strlen(start));
    printf("fchdir to a file: %s\n", err(fchdir(in)));
    printf("fchdir to a bad descriptor: %s\n", err(fchdir(99)));
    int opath = open("sub", O_PATH);
    printf("fchdir to an O_PATH directory: %s\n", err(fchdir(opath)));
    getcwd(cwd, sizeof cwd);
    printf("now in: %s\n", cwd + strlen(start));
    chdir(start);
    unlink("sf-link");
    rmdir("sf-dir/sub");
    rmdir("sf-dir");
    chdir("..");
    rmdir("sf-top");
    unlink("sf-in");
    unlink("sf-out");
    return 0;
}

/* Names and times of files: hard links (st_nlink kept, a file outlives its
 * names while open, rename between two names of one file does nothing),
 * directories' link counts, symbolic links (dangling, followed by O_CREAT,
 * refused by O_NOFOLLOW, loops), utimensat/futimens/utimes/utime with
 * UTIME_NOW and UTIME_OMIT, the times a write and a truncate set, statfs
 * and fstatfs, and the errors of each. Runs in an empty directory of its
 * own, here and on the host's Linux; what differs between file systems
 * (the type of ".") is not printed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static const char *err(int r) { return r == 0 ? "ok" : strerror(errno); }

static void show(const char *what, const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        printf("%s: lstat %s: %s\n", what, path, strerror(errno));
        return;
    }
    const char *type = S_ISREG(st.st_mode)   ? "file"
                       : S_ISDIR(st.st_mode) ? "directory"
                       : S_ISLNK(st.st_mode) ? "symlink"
                                             : "other";
    /* A directory's size is the file system's business. */
    long size = S_ISDIR(st.st_mode) ? 0 : (long)st.st_size;
    printf("%s: %s %s, %ld links, %ld bytes\n", what, path, type, (long)st.st_nlink, size);
}

static void put(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    write(fd, text, strlen(text));
    close(fd);
}

static void get(const char *path) {
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("read %s: %s\n", path, strerror(errno));
        return;
    }
    read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("read %s: %s\n", path, buf);
}

static void hard_links(void) {
    put("a", "hello");
    int r = link("a", "b");
    printf("link a b: %s\n", err(r));
    show("after link", "a");
    struct stat sa, sb;
    stat("a", &sa);
    stat("b", &sb);
    printf("same inode: %d\n", sa.st_ino == sb.st_ino);
    int fd = open("b", O_WRONLY | O_APPEND);
    write(fd, " world", 6);
    close(fd);
    get("a");
    r = link("a", "b");
    printf("link over an existing name: %s\n", err(r));
    r = link("missing", "c");
    printf("link of a missing file: %s\n", err(r));
    mkdir("d", 0755);
    r = link("d", "d2");
    printf("link of a directory: %s\n", err(r));
    r = link("/proc/self/status", "p");
    printf("link out of /proc: %s\n", err(r));
    r = link("a", "/proc/a");
    printf("link into /proc: %s\n", err(r)); /* Linux: /proc makes no new names */
    r = linkat(AT_FDCWD, "a", AT_FDCWD, "c", 0x8000);
    printf("linkat with a bad flag: %s\n", err(r));
    r = rename("a", "b");
    printf("rename between two names of one file: %s\n", err(r));
    show("both still there", "a");
    show("both still there", "b");
    r = unlink("a");
    printf("unlink a: %s\n", err(r));
    show("after unlink", "b");
    fd = open("b", O_RDONLY);
    unlink("b");
    struct stat st;
    fstat(fd, &st);
    char buf[16] = {0};
    ssize_t n = read(fd, buf, 5);
    printf("open after its last name went: %ld links, read %zd: %s\n", (long)st.st_nlink, n, buf);
    close(fd);

    show("a new directory", "d");
    mkdir("d/e", 0755);
    mkdir("d/f", 0755);
    show("with two subdirectories", "d");
    rmdir("d/e");
    rmdir("d/f");
    show("after removing them", "d");
    rmdir("d");
}

static void symbolic_links(void) {
    int r = symlink("target", "s");
    printf("symlink target s: %s\n", err(r));
    show("a dangling link", "s");
    char buf[64] = {0};
    ssize_t n = readlink("s", buf, sizeof buf);
    printf("readlink s: %zd %s\n", n, buf);
    struct stat st;
    r = stat("s", &st);
    printf("stat through a dangling link: %s\n", err(r));
    int fd = open("s", O_WRONLY | O_CREAT, 0644);
    write(fd, "made through s", 14);
    close(fd);
    show("O_CREAT through the link made", "target");
    get("s");
    fd = open("s", O_RDONLY | O_NOFOLLOW);
    printf("O_NOFOLLOW on a link: %d (%s)\n", fd, strerror(errno));
    fd = open("s", O_WRONLY | O_CREAT | O_EXCL, 0644);
    printf("O_CREAT|O_EXCL on a link: %d (%s)\n", fd, strerror(errno));
    r = symlink("other", "s");
    printf("symlink over an existing name: %s\n", err(r));
    r = symlink("", "empty");
    printf("symlink to an empty path: %s\n", err(r));
    symlink("loop2", "loop1");
    symlink("loop1", "loop2");
    fd = open("loop1", O_RDONLY);
    printf("open a loop: %d (%s)\n", fd, strerror(errno));
    r = link("s", "hard-to-link");
    show("link(2) of a symlink links the link", "hard-to-link");
    r = linkat(AT_FDCWD, "s", AT_FDCWD, "hard-to-target", AT_SYMLINK_FOLLOW);
    show("AT_SYMLINK_FOLLOW links the target", "hard-to-target");
    /* A path through a link can name a place inside the directory being
       moved: that would cut the directory off from the tree, in a loop. */
    mkdir("dir", 0755);
    mkdir("dir/sub", 0755);
    symlink("dir/sub", "into");
    r = rename("dir", "into/moved");
    printf("rename a directory into itself through a link: %s\n", err(r));
    r = rename("dir", "dir/sub/moved");
    printf("rename a directory into itself: %s\n", err(r));
    r = rename("dir/sub", "into/moved");
    printf("rename a directory into itself, by the link's target: %s\n", err(r));
    unlink("into");
    rmdir("dir/sub");
    rmdir("dir");
    unlink("s");
    show("unlink of a link leaves the target", "target");
    unlink("target");
    unlink("hard-to-link");
    unlink("hard-to-target");
    unlink("loop1");
    unlink("loop2");
}

static void times(void) {
    time_t start = time(NULL);
    put("t", "times");
    struct timespec set[2] = {{1000000000, 5}, {1200000000, 7}};
    int r = utimensat(AT_FDCWD, "t", set, 0);
    struct stat st;
    stat("t", &st);
    printf("utimensat: %s; atime %ld.%09ld mtime %ld.%09ld, ctime now %d\n", err(r),
           (long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec,
           st.st_mtim.tv_nsec, st.st_ctim.tv_sec >= start);
    struct timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
    r = utimensat(AT_FDCWD, "t", omit_now, 0);
    stat("t", &st);
    printf("UTIME_OMIT, UTIME_NOW: %s; atime kept %d, mtime now %d\n", err(r),
           st.st_atim.tv_sec == 1000000000, st.st_mtim.tv_sec >= start);
    struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
    r = utimensat(AT_FDCWD, "t", bad, 0);
    printf("nanoseconds of a second: %s\n", err(r));
    r = utimensat(AT_FDCWD, "t", set, 0x8000);
    printf("a bad flag: %s\n", err(r));
    r = utimensat(AT_FDCWD, "missing", set, 0);
    printf("a missing file: %s\n", err(r));
    /* musl reads the times itself: the bad pointer goes in raw. */
    r = syscall(SYS_utimensat, AT_FDCWD, "t", 16, 0);
    printf("a bad pointer: %s\n", err(r));

    int fd = open("t", O_RDWR);
    r = futimens(fd, set);
    fstat(fd, &st);
    printf("futimens: %s; mtime %ld\n", err(r), (long)st.st_mtim.tv_sec);
    write(fd, "more", 4);
    fstat(fd, &st);
    printf("a write sets mtime and ctime: %d %d\n", st.st_mtim.tv_sec >= start,
           st.st_ctim.tv_sec >= start);
    futimens(fd, set);
    ftruncate(fd, 2);
    fstat(fd, &st);
    printf("a truncate sets mtime: %d\n", st.st_mtim.tv_sec >= start);
    close(fd);

    struct timeval tv[2] = {{300, 1}, {400, 2}};
    r = utimes("t", tv);
    stat("t", &st);
    printf("utimes: %s; atime %ld.%09ld mtime %ld.%09ld\n", err(r), (long)st.st_atim.tv_sec,
           st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    struct timeval badtv[2] = {{300, 1000000}, {400, 2}};
    r = utimes("t", badtv);
    printf("utimes with a second of microseconds: %s\n", err(r));
    struct utimbuf ub = {123, 456};
    r = utime("t", &ub);
    stat("t", &st);
    printf("utime: %s; atime %ld mtime %ld\n", err(r), (long)st.st_atim.tv_sec,
           (long)st.st_mtim.tv_sec);
    r = utime("t", NULL);
    stat("t", &st);
    printf("utime(NULL): %s; now %d\n", err(r), st.st_mtim.tv_sec >= start);

    symlink("t", "tl");
    r = utimensat(AT_FDCWD, "tl", set, AT_SYMLINK_NOFOLLOW);
    struct stat link_st, file_st;
    lstat("tl", &link_st);
    stat("t", &file_st);
    printf("AT_SYMLINK_NOFOLLOW: %s; link mtime %ld, file's untouched %d\n", err(r),
           (long)link_st.st_mtim.tv_sec, file_st.st_mtim.tv_sec >= start);
    unlink("tl");
    unlink("t");
}

static void filesystems(void) {
    struct statfs fs;
    int r = statfs("/proc", &fs);
    printf("statfs /proc: %s, proc %d\n", err(r), fs.f_type == 0x9fa0);
    r = statfs(".", &fs);
    printf("statfs .: %s, names up to %ld, free <= total %d, block size > 0 %d\n", err(r),
           (long)fs.f_namelen, fs.f_bfree <= fs.f_blocks, fs.f_bsize > 0);
    r = statfs("missing", &fs);
    printf("statfs missing: %s\n", err(r));
    r = syscall(SYS_statfs, ".", 16);
    printf("statfs bad pointer: %s\n", err(r));
    int p[2];
    pipe(p);
    r = fstatfs(p[0], &fs);
    printf("fstatfs of a pipe: %s, pipefs %d\n", err(r), fs.f_type == 0x50495045);
    r = fstatfs(99, &fs);
    printf("fstatfs of a closed descriptor: %s\n", err(r));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    hard_links();
    symbolic_links();
    times();
    filesystems();
    return 0;
}

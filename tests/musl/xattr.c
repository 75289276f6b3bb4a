/* Extended attributes of files in memory (/dev/shm: tmpfs on Linux, the
 * ramfs here): set, get, list and remove by path, by link and by
 * descriptor; XATTR_CREATE and XATTR_REPLACE; a size of 0 asking the
 * length and a buffer too small; user. names refused on a link, a FIFO
 * and a pipe; trusted. and security. names as root; names of no
 * namespace kept; a hundred names on one file, as Python's test_os sets.
 * Run here and on Linux: the same lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
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
    case EPERM: return "EPERM";
    case ENODATA: return "ENODATA";
    case EEXIST: return "EEXIST";
    case ERANGE: return "ERANGE";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EACCES: return "EACCES";
    default: return strerror(errno);
    }
}

/* The list, NULs shown as spaces. */
static void show_list(const char *what, long n, const char *names)
{
    printf("%s: %s", what, err(n));
    for (long i = 0; i < n; i++)
        putchar(names[i] ? names[i] : ' ');
    putchar('\n');
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    char dir[64], file[96], link[96], fifo[96];
    snprintf(dir, sizeof dir, "/dev/shm/xattr-%d", getpid());
    mkdir(dir, 0755);
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    int fd = open(file, O_RDWR | O_CREAT, 0644);
    symlink(file, link);
    mkfifo(fifo, 0644);

    char names[4096], value[256];
    show_list("listxattr of a new file", listxattr(file, names, sizeof names), names);
    printf("setxattr user.mime_type: %s\n",
           err(setxattr(file, "user.mime_type", "text/plain", 10, 0)));
    memset(value, 0, sizeof value);
    long n = getxattr(file, "user.mime_type", value, sizeof value);
    printf("getxattr: %s \"%s\"\n", err(n), n > 0 ? value : "");
    printf("getxattr, size 0: %s\n", err(getxattr(file, "user.mime_type", 0, 0)));
    printf("getxattr, 4 bytes of room: %s\n", err(getxattr(file, "user.mime_type", value, 4)));
    printf("getxattr of a name not set: %s\n", err(getxattr(file, "user.none", value, 64)));
    printf("XATTR_CREATE over it: %s\n",
           err(setxattr(file, "user.mime_type", "x", 1, XATTR_CREATE)));
    printf("XATTR_REPLACE of a name not set: %s\n",
           err(setxattr(file, "user.other", "x", 1, XATTR_REPLACE)));
    printf("XATTR_REPLACE: %s\n",
           err(fsetxattr(fd, "user.mime_type", "text/html", 9, XATTR_REPLACE)));
    memset(value, 0, sizeof value);
    n = fgetxattr(fd, "user.mime_type", value, sizeof value);
    printf("fgetxattr: %s \"%s\"\n", err(n), n > 0 ? value : "");
    printf("an empty value: %s\n", err(setxattr(file, "user.empty", "", 0, 0)));
    printf("  its length: %s\n", err(getxattr(file, "user.empty", value, sizeof value)));
    n = listxattr(file, names, sizeof names);
    show_list("listxattr", n, names);
    printf("listxattr, size 0: %s\n", err(listxattr(file, 0, 0)));
    printf("listxattr, 5 bytes of room: %s\n", err(listxattr(file, names, 5)));
    n = llistxattr(link, names, sizeof names);
    show_list("llistxattr of the link", n, names);
    n = listxattr(link, names, sizeof names);
    show_list("listxattr through the link", n, names);
    memset(value, 0, sizeof value);
    n = getxattr(link, "user.mime_type", value, sizeof value);
    printf("getxattr through the link: %s \"%s\"\n", err(n), n > 0 ? value : "");
    printf("lsetxattr user. on the link: %s\n", err(lsetxattr(link, "user.x", "1", 1, 0)));
    printf("lgetxattr user. of the link: %s\n", err(lgetxattr(link, "user.x", value, 64)));
    printf("setxattr user. on a FIFO: %s\n", err(setxattr(fifo, "user.x", "1", 1, 0)));
    int p[2];
    pipe(p);
    printf("fsetxattr user. on a pipe: %s\n", err(fsetxattr(p[0], "user.x", "1", 1, 0)));
    printf("fgetxattr user. of a pipe: %s\n", err(fgetxattr(p[0], "user.x", value, 64)));
    printf("flistxattr of a pipe: %s\n", err(flistxattr(p[0], names, sizeof names)));
    printf("setxattr user. on the directory: %s\n", err(setxattr(dir, "user.d", "1", 1, 0)));
    printf("trusted. as root: %s\n", err(setxattr(file, "trusted.t", "1", 1, 0)));
    printf("security. as root: %s\n", err(setxattr(file, "security.s", "1", 1, 0)));
    printf("a name of no namespace: %s\n", err(setxattr(file, "nonsense", "1", 1, 0)));
    printf("the bare prefix user.: %s\n", err(setxattr(file, "user.", "1", 1, 0)));
    n = listxattr(file, names, sizeof names);
    show_list("listxattr", n, names);
    printf("removexattr: %s\n", err(removexattr(file, "user.mime_type")));
    printf("removexattr again: %s\n", err(removexattr(file, "user.mime_type")));
    printf("fremovexattr of trusted.t: %s\n", err(fremovexattr(fd, "trusted.t")));

    /* A hundred names, as Python's test_os.ExtendedAttributeTests. */
    int set = 0;
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "user.test%d", i);
        set += setxattr(file, name, "x", 1, 0) == 0;
    }
    n = listxattr(file, names, sizeof names);
    int listed = 0;
    for (long i = 0; i < n; i++)
        listed += names[i] == 0;
    printf("a hundred names set: %d, names listed: %d\n", set, listed);

    /* The change time moves with an attribute. */
    struct stat before, after;
    fstat(fd, &before);
    usleep(20000);
    setxattr(file, "user.late", "1", 1, 0);
    fstat(fd, &after);
    printf("ctime moved: %s\n",
           after.st_ctim.tv_sec * 1000000000L + after.st_ctim.tv_nsec >
                   before.st_ctim.tv_sec * 1000000000L + before.st_ctim.tv_nsec
               ? "yes"
               : "no");
    unlink(file);
    unlink(link);
    unlink(fifo);
    rmdir(dir);
    return 0;
}

/* memfd_create: a file in memory that no directory names. It reads and
 * writes and maps as any file, /proc/self/fd names it "/memfd:NAME
 * (deleted)", fstat says a regular file with mode 0777 and no links, a
 * shared mapping of it is what a child sees, and its memory goes with its
 * last descriptor. Bad flags and names are EINVAL, a bad pointer EFAULT.
 * Its /proc/self/fd link, and a deleted file's, opens the file itself.
 * Seals: a file in memory says F_SEAL_SEAL (no seal may be added), a
 * file of another kind cannot be sealed. Run here and on Linux: the same
 * lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 1
#define F_SEAL_WRITE 8
#endif

static const char *err(long r)
{
    if (r >= 0)
        return "ok";
    return errno == EINVAL ? "EINVAL" : errno == EFAULT ? "EFAULT" : errno == EPERM ? "EPERM"
                                                                                     : strerror(errno);
}

static long memfd(const char *name, unsigned flags)
{
    return syscall(SYS_memfd_create, name, flags);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);

    int fd = memfd("Hi", MFD_CLOEXEC);
    printf("memfd_create(\"Hi\", MFD_CLOEXEC): %s\n", fd >= 0 ? "a descriptor" : err(fd));
    printf("FD_CLOEXEC: %d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    printf("O_RDWR: %s\n", (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR ? "yes" : "no");
    char link[128] = "", path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    readlink(path, link, sizeof link - 1);
    printf("/proc/self/fd: %s\n", link);
    printf("write: %zd\n", write(fd, "memfd_create", 12));
    printf("offset: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
    char buf[32] = "";
    printf("pread: %zd \"%s\"\n", pread(fd, buf, sizeof buf - 1, 0), buf);
    struct stat st, st2;
    fstat(fd, &st);
    printf("fstat: regular %s, mode %o, links %lu, size %ld\n", S_ISREG(st.st_mode) ? "yes" : "no",
           st.st_mode & 07777, (unsigned long)st.st_nlink, (long)st.st_size);

    /* A shared mapping, stored into by a child, read by the parent. */
    printf("ftruncate to 8192: %s\n", err(ftruncate(fd, 8192)));
    char *map = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    pid_t child = fork();
    if (child == 0) {
        strcpy(map + 4096, "from the child");
        _exit(0);
    }
    waitpid(child, 0, 0);
    memset(buf, 0, sizeof buf);
    pread(fd, buf, 14, 4096);
    printf("what the child stored, read by pread: \"%s\"\n", buf);
    int found = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "/memfd:Hi (deleted)"))
            found = 1;
    printf("/proc/self/maps names the mapping: %s\n", found ? "yes" : "no");
    munmap(map, 8192);

    printf("F_GET_SEALS: %s %d\n", err(0), fcntl(fd, F_GET_SEALS));
    long r = fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE);
    printf("F_ADD_SEALS F_SEAL_WRITE: %s\n", err(r));
    r = fcntl(fd, F_ADD_SEALS, 0x1000);
    printf("F_ADD_SEALS unknown: %s\n", err(r));
    int fd2 = memfd("", 0);
    printf("memfd_create(\"\", 0): %s, FD_CLOEXEC %d\n", fd2 >= 0 ? "a descriptor" : err(fd2),
           fcntl(fd2, F_GETFD) & FD_CLOEXEC);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd2);
    memset(link, 0, sizeof link);
    readlink(path, link, sizeof link - 1);
    printf("/proc/self/fd: %s\n", link);
    int ro = open(path, O_RDONLY);
    printf("reopened through /proc/self/fd read-only: %s\n", ro >= 0 ? "yes" : err(ro));
    if (ro >= 0) {
        r = fcntl(ro, F_ADD_SEALS, F_SEAL_WRITE);
        printf("F_ADD_SEALS on it: %s\n", err(r));
        close(ro);
    }
    /* A deleted file has no name either: its link still leads to it. */
    int del = open("deleted", O_RDWR | O_CREAT | O_TRUNC, 0600);
    write(del, "still here", 10);
    unlink("deleted");
    snprintf(path, sizeof path, "/proc/self/fd/%d", del);
    int again = open(path, O_RDONLY);
    memset(buf, 0, sizeof buf);
    printf("a deleted file through /proc/self/fd: %s \"%s\"\n", again >= 0 ? "opened" : err(again),
           again >= 0 && read(again, buf, 10) == 10 ? buf : "");
    int created = open(path, O_RDWR | O_CREAT, 0600);
    printf("the same with O_CREAT: %s, same file %s\n", created >= 0 ? "opened" : err(created),
           created >= 0 && fstat(created, &st) == 0 && fstat(del, &st2) == 0 &&
                   st.st_ino == st2.st_ino ? "yes" : "no");
    struct stat lst;
    printf("lstat: a link %s; stat: regular %s\n", lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) ? "yes" : "no",
           stat(path, &lst) == 0 && S_ISREG(lst.st_mode) ? "yes" : "no");
    int pipefd[2];
    pipe(pipefd);
    r = fcntl(pipefd[1], F_GET_SEALS);
    printf("F_GET_SEALS on a pipe: %s\n", err(r));
    r = fcntl(pipefd[1], F_ADD_SEALS, F_SEAL_WRITE);
    printf("F_ADD_SEALS on a pipe: %s\n", err(r));

    char longest[250], too_long[251];
    memset(longest, 'a', 249);
    longest[249] = 0;
    memset(too_long, 'a', 250);
    too_long[250] = 0;
    r = memfd(longest, 0);
    printf("a name of 249 bytes: %s\n", r >= 0 ? "a descriptor" : err(r));
    r = memfd(too_long, 0);
    printf("a name of 250 bytes: %s\n", err(r));
    r = memfd("x", 0x100);
    printf("an unknown flag: %s\n", err(r));
    r = memfd((const char *)8, 0);
    printf("a bad name pointer: %s\n", err(r));
    return 0;
}

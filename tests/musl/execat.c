/* execat: execveat(2) and fexecve(3). A program runs by a descriptor
 * (AT_EMPTY_PATH, an O_PATH one too), by a name relative to a directory
 * descriptor, and through a symbolic link unless AT_SYMLINK_NOFOLLOW says
 * ELOOP. The errors are Linux's and in Linux's order: an empty name
 * without AT_EMPTY_PATH ENOENT, an unknown flag EINVAL, a bad descriptor
 * EBADF, a file as the directory ENOTDIR, and a bad argv EFAULT before a
 * missing file's ENOENT (the file is opened after the strings are read).
 * Each exec runs in a child, which prints how it was started. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *err(int e) {
    switch (e) {
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case ENOTDIR: return "ENOTDIR";
    case EFAULT: return "EFAULT";
    case ELOOP: return "ELOOP";
    case EACCES: return "EACCES";
    default: return strerror(e);
    }
}

static long execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                     int flags) {
    return syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* Runs one execveat in a child: "ran" (the child printed its line) or
 * the error it returned. */
static void try(const char *what, int dirfd, const char *path, char *const *argv, int flags) {
    pid_t pid = fork();
    if (pid == 0) {
        execveat(dirfd, path, argv, environ, flags);
        printf("%s: %s\n", what, err(errno));
        _exit(1);
    }
    int status;
    waitpid(pid, &status, 0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, 0, _IONBF, 0);
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        printf("%s: ran, argv[0] %s\n", argv[2], argv[0]);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = 0;
    char dir[PATH_MAX];
    strcpy(dir, exe);
    char *slash = strrchr(dir, '/');
    *slash = 0;
    const char *base = slash + 1;

    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    int path_fd = open(exe, O_PATH | O_CLOEXEC);
    int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *by_fd[] = {"by-fd", "child", "AT_EMPTY_PATH", 0};
    try("AT_EMPTY_PATH", fd, "", by_fd, AT_EMPTY_PATH);
    char *by_path_fd[] = {"by-path-fd", "child", "O_PATH descriptor", 0};
    try("O_PATH descriptor", path_fd, "", by_path_fd, AT_EMPTY_PATH);
    char *by_dir[] = {"by-dir", "child", "relative to a directory", 0};
    try("relative to a directory", dir_fd, base, by_dir, 0);
    char *by_fexecve[] = {"by-fexecve", "child", "fexecve", 0};
    pid_t pid = fork();
    if (pid == 0) {
        fexecve(fd, by_fexecve, environ);
        printf("fexecve: %s\n", err(errno));
        _exit(1);
    }
    waitpid(pid, 0, 0);

    char link[64];
    snprintf(link, sizeof link, "/tmp/execat-%d", getpid());
    if (symlink(exe, link))
        return 1;
    char *by_link[] = {"by-link", "child", "through a link", 0};
    try("through a link", AT_FDCWD, link, by_link, 0);
    try("AT_SYMLINK_NOFOLLOW", AT_FDCWD, link, by_link, AT_SYMLINK_NOFOLLOW);
    unlink(link);

    char *none[] = {"none", "child", "should not run", 0};
    try("empty name without AT_EMPTY_PATH", fd, "", none, 0);
    try("unknown flag", fd, "", none, AT_EMPTY_PATH | 0x8000);
    try("bad descriptor", 999, "x", none, 0);
    try("a file as the directory", fd, "x", none, 0);
    try("missing file", AT_FDCWD, "/no/such/program", none, 0);
    try("bad argv and missing file", AT_FDCWD, "/no/such/program", (char **)8, 0);
    try("a directory by descriptor", dir_fd, "", none, AT_EMPTY_PATH);
    return 0;
}

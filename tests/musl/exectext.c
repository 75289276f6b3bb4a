/* A running program and its file: exec maps the file's own pages (text
 * read-only, initialised data copy-on-write, .bss zeros), so the file of a
 * running program cannot be written or truncated (ETXTBSY) until the last
 * process running it is gone; a store to the program's data stays in that
 * process; /proc/self/maps names the file for the text.
 *
 * Works on a copy of itself in /tmp, so nothing it tries can hurt the
 * binary that runs it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int initialised = 42;
static char zeros[3 * 4096 + 100];

static const char *err(int r) { return r >= 0 ? "ok" : strerror(errno); }

static int try_open(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd >= 0)
        close(fd);
    return fd;
}

/* Copies `from` to `to`, executable. */
static int copy(const char *from, const char *to) {
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0)
        return -1;
    char buf[8192];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, n) != n)
            return -1;
    close(in);
    close(out);
    return 0;
}

static int all_zero(void) {
    for (size_t i = 0; i < sizeof zeros; i++)
        if (zeros[i])
            return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "wait")) {
        /* Run from the copy: report the data as exec left it, say so on
         * the `ready` pipe, then wait for the parent to close `go`. */
        printf("running copy: initialised %d, .bss zero %d\n", initialised, all_zero());
        fflush(stdout);
        write(atoi(argv[3]), "r", 1);
        char c;
        read(atoi(argv[2]), &c, 1);
        return 0;
    }
    setvbuf(stdout, NULL, _IONBF, 0);

    /* This process's own data: stores stay in it. */
    initialised = 7;
    memset(zeros, 0xab, sizeof zeros);

    const char *copy_path = "/tmp/exectext-copy";
    unlink(copy_path);
    printf("copy: %s\n", err(copy(argv[0], copy_path)));
    int go[2], ready[2];
    pipe(go);
    pipe(ready);
    int pid = fork();
    if (pid == 0) {
        close(go[1]);
        close(ready[0]);
        char go_fd[16], ready_fd[16];
        snprintf(go_fd, sizeof go_fd, "%d", go[0]);
        snprintf(ready_fd, sizeof ready_fd, "%d", ready[1]);
        execl(copy_path, copy_path, "wait", go_fd, ready_fd, (char *)NULL);
        _exit(127);
    }
    close(go[0]);
    close(ready[1]);
    char c;
    printf("the copy runs: %d\n", read(ready[0], &c, 1) == 1);

    printf("while it runs: O_WRONLY %s, O_RDWR %s, O_RDONLY %s\n", err(try_open(copy_path, O_WRONLY)),
           err(try_open(copy_path, O_RDWR)), err(try_open(copy_path, O_RDONLY)));
    printf("while it runs: O_RDONLY|O_TRUNC %s, truncate %s\n",
           err(try_open(copy_path, O_RDONLY | O_TRUNC)), err(truncate(copy_path, 0)));
    struct stat st;
    stat(copy_path, &st);
    printf("while it runs: the file kept its size %d\n", st.st_size > 4096);
    printf("while it runs: chmod %s\n", err(chmod(copy_path, 0700)));

    close(go[1]);
    int status;
    waitpid(pid, &status, 0);
    printf("copy exited %d\n", WEXITSTATUS(status));
    printf("after it ended: O_WRONLY %s, truncate %s\n", err(try_open(copy_path, O_WRONLY)),
           err(truncate(copy_path, 0)));
    printf("unlink: %s\n", err(unlink(copy_path)));

    /* The running program's text, as /proc/self/maps shows it. */
    char self[256] = "";
    readlink("/proc/self/exe", self, sizeof self - 1);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int text = 0, data = 0;
    unsigned long inode;
    char perms[8], path[256];
    while (maps && fgets(line, sizeof line, maps)) {
        path[0] = 0;
        if (sscanf(line, "%*lx-%*lx %7s %*lx %*s %lu %255s", perms, &inode, path) < 2)
            continue;
        int ours = inode != 0 && !strcmp(path, self);
        text += ours && !strcmp(perms, "r-xp");
        data += ours && !strcmp(perms, "rw-p");
    }
    printf("maps: text from the file %d, data from the file %d\n", text > 0, data > 0);
    printf("own data after the stores: initialised %d, .bss 0xab %d\n", initialised,
           (unsigned char)zeros[sizeof zeros - 1] == 0xab);
    return 0;
}

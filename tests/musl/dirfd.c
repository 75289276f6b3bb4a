/* Directory descriptors: the *at calls relative to a directory opened
 * with O_DIRECTORY, as every tree walk in the style of rm -r uses them
 * (fdopendir, fstatat, unlinkat with AT_REMOVEDIR, openat, mkdirat,
 * renameat, readlinkat's neighbours), and the errors Linux gives for a
 * descriptor that is not a directory, one that is closed, and a relative
 * path on AT_FDCWD. Every line printed is the same on every run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *err(int r) {
    if (r >= 0)
        return "ok";
    switch (errno) {
    case ENOTDIR: return "ENOTDIR";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case ENOTEMPTY: return "ENOTEMPTY";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    default: return strerror(errno);
    }
}

/* Removes everything under the directory open as `dir`, then closes it:
 * the walk of rm -r, every step relative to a directory descriptor. */
static int remove_tree(int dir, int depth, int *removed) {
    DIR *d = fdopendir(dir);
    if (!d) {
        printf("fdopendir: %s\n", err(-1));
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            printf("fstatat %s: %s\n", e->d_name, err(-1));
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY);
            if (sub < 0 || remove_tree(sub, depth + 1, removed) < 0)
                return -1;
            if (unlinkat(dir, e->d_name, AT_REMOVEDIR) < 0) {
                printf("unlinkat(%s, AT_REMOVEDIR): %s\n", e->d_name, err(-1));
                return -1;
            }
        } else if (unlinkat(dir, e->d_name, 0) < 0) {
            printf("unlinkat(%s): %s\n", e->d_name, err(-1));
            return -1;
        }
        ++*removed;
        rewinddir(d);
    }
    closedir(d);
    return 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("mkdir tree: %s\n", err(mkdir("tree", 0755)));
    int top = open("tree", O_RDONLY | O_DIRECTORY);
    printf("open tree O_DIRECTORY: %s\n", err(top));

    /* Build a tree through the descriptor only. */
    printf("mkdirat a: %s\n", err(mkdirat(top, "a", 0755)));
    printf("mkdirat a/b: %s\n", err(mkdirat(top, "a/b", 0755)));
    int f = openat(top, "a/b/file", O_CREAT | O_WRONLY | O_EXCL, 0644);
    printf("openat a/b/file O_CREAT: %s\n", err(f));
    printf("write: %zd\n", write(f, "hello\n", 6));
    close(f);
    printf("openat again O_EXCL: %s\n", err(openat(top, "a/b/file", O_CREAT | O_EXCL | O_WRONLY, 0644)));
    printf("symlinkat: %s\n", err(symlinkat("b/file", top, "a/link")));
    char target[64] = {0};
    ssize_t n = readlinkat(top, "a/link", target, sizeof target - 1);
    printf("readlinkat a/link: %s -> %s\n", err(n), n > 0 ? target : "");
    printf("renameat a/b/file -> a/moved: %s\n", err(renameat(top, "a/b/file", top, "a/moved")));
    struct stat st;
    int r = fstatat(top, "a/moved", &st, 0);
    printf("fstatat a/moved: %s, size %lld\n", err(r), (long long)st.st_size);
    printf("fstatat a/link (followed, dangling now): %s\n", err(fstatat(top, "a/link", &st, 0)));
    printf("faccessat a/moved R_OK: %s\n", err(faccessat(top, "a/moved", R_OK, 0)));
    printf("fchmodat a/moved 0600: %s\n", err(fchmodat(top, "a/moved", 0600, 0)));
    fstatat(top, "a/moved", &st, 0);
    printf("mode now %o\n", st.st_mode & 07777);

    /* What Linux refuses. */
    int file = openat(top, "a/moved", O_RDONLY);
    printf("openat with a file's descriptor: %s\n", err(openat(file, "x", O_RDONLY)));
    printf("unlinkat a non-empty directory: %s\n", err(unlinkat(top, "a", AT_REMOVEDIR)));
    printf("unlinkat a directory without AT_REMOVEDIR: %s\n", err(unlinkat(top, "a/b", 0)));
    printf("unlinkat a file with AT_REMOVEDIR: %s\n", err(unlinkat(top, "a/moved", AT_REMOVEDIR)));
    printf("unlinkat with a bad flag: %s\n", err(unlinkat(top, "a/moved", 0x4000)));
    close(file);
    printf("openat with a closed descriptor: %s\n", err(openat(file, "x", O_RDONLY)));
    printf("openat with -5: %s\n", err(openat(-5, "x", O_RDONLY)));
    /* An absolute path ignores the descriptor, even a bad one. */
    printf("openat an absolute path with a bad descriptor: %s\n",
           err(close(openat(-5, "/", O_RDONLY | O_DIRECTORY))));

    int removed = 0;
    int walk = dup(top);
    r = remove_tree(walk, 0, &removed);
    printf("remove the tree through descriptors: %s, %d entries\n", err(r), removed);
    printf("tree is empty: %s\n", err(rmdir("tree")));
    close(top);
    return 0;
}

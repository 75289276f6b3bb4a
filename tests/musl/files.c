/* Files and directories through musl's stdio and POSIX calls: create,
 * write, read back, seek, stat, rename, list, remove, and the errors. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void) {
    if (mkdir("musl-files.d", 0755) != 0) {
        printf("mkdir: %s\n", strerror(errno));
        return 1;
    }
    FILE *f = fopen("musl-files.d/lines.txt", "w");
    for (int i = 1; i <= 1000; i++)
        fprintf(f, "line %d of 1000\n", i);
    fclose(f);

    struct stat st;
    stat("musl-files.d/lines.txt", &st);
    printf("wrote %lld bytes, regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));

    f = fopen("musl-files.d/lines.txt", "r");
    char line[64];
    int count = 0;
    while (fgets(line, sizeof line, f))
        count++;
    fseek(f, -16, SEEK_END);
    fgets(line, sizeof line, f);
    printf("read %d lines; the last 16 bytes: %s", count, line);
    printf("ftell at end: %ld\n", ftell(f));
    fclose(f);

    int fd = open("musl-files.d/raw", O_CREAT | O_RDWR | O_TRUNC, 0644);
    write(fd, "0123456789", 10);
    lseek(fd, 4, SEEK_SET);
    write(fd, "xy", 2);
    lseek(fd, 0, SEEK_SET);
    char raw[16] = {0};
    read(fd, raw, sizeof raw - 1);
    printf("overwrite in place: %s\n", raw);
    ftruncate(fd, 3);
    fstat(fd, &st);
    printf("after ftruncate: %lld bytes\n", (long long)st.st_size);
    close(fd);

    rename("musl-files.d/raw", "musl-files.d/renamed");
    mkdir("musl-files.d/sub", 0755);
    DIR *dir = opendir("musl-files.d");
    char *names[16];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && n < 16)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(dir);
    qsort(names, n, sizeof names[0], by_name);
    printf("directory:");
    for (int i = 0; i < n; i++)
        printf(" %s", names[i]);
    printf("\n");

    printf("open missing: %s\n", open("musl-files.d/missing", O_RDONLY) < 0 ? strerror(errno) : "opened?");
    printf("rmdir non-empty: %s\n", rmdir("musl-files.d") < 0 ? strerror(errno) : "removed?");
    printf("mkdir existing: %s\n", mkdir("musl-files.d/sub", 0755) < 0 ? strerror(errno) : "made?");
    printf("access: %d %d\n", access("musl-files.d/lines.txt", R_OK), access("musl-files.d/nope", F_OK));

    unlink("musl-files.d/lines.txt");
    unlink("musl-files.d/renamed");
    rmdir("musl-files.d/sub");
    printf("cleaned up: %d\n", rmdir("musl-files.d"));
    return 0;
}

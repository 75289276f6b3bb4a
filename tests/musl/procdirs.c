/* /proc/PID/fd and /proc/PID/task as programs use them: Python's
 * subprocess closes descriptors by listing /proc/self/fd, and ps -T and
 * debuggers list a process's threads in /proc/PID/task (and a thread's
 * stat says its own state). Only what is the
 * same on every kernel and every run is printed (the host's runner may
 * leave other descriptors open, so they are not counted). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int listed(const char *dir, const char *name) {
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)))
        if (!strcmp(e->d_name, name))
            found = 1;
    closedir(d);
    return found;
}

static int count(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static const char *yes(int b) { return b > 0 ? "yes" : b == 0 ? "no" : "cannot list"; }

static volatile int stop;
static pid_t tids[3];

static void *thread(void *arg) {
    tids[(long)arg] = (pid_t)syscall(SYS_gettid);
    while (!stop)
        usleep(1000);
    return NULL;
}

static volatile pid_t reader_tid;

static void *blocked_reader(void *fd) {
    reader_tid = (pid_t)syscall(SYS_gettid);
    char c;
    read(*(int *)fd, &c, 1);
    return NULL;
}

/* The state letter in /proc/self/task/TID/stat. */
static char task_state(pid_t tid) {
    char path[64], state = '?';
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
            state = '?';
        fclose(f);
    }
    return state;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char name[32];

    /* Descriptors. */
    int file = open("procdirs-file", O_CREAT | O_RDWR | O_TRUNC, 0600);
    int p[2];
    pipe(p);
    snprintf(name, sizeof name, "%d", file);
    printf("fd: /proc/self/fd lists an open file: %s\n", yes(listed("/proc/self/fd", name)));
    /* A number above any the listing itself may take. */
    dup2(p[1], 50);
    printf("fd: and a pipe's write end: %s\n", yes(listed("/proc/self/fd", "50")));
    close(50);
    close(p[1]);
    printf("fd: not once it is closed: %s\n", yes(listed("/proc/self/fd", "50")));

    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", file);
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = 0;
    char *slash = strrchr(target, '/');
    printf("fd: the file's link ends in %s\n", slash ? slash : "(no link)");
    struct stat st;
    printf("fd: lstat says a link: %s\n", yes(lstat(path, &st) == 0 && S_ISLNK(st.st_mode)));
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
    n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = 0;
    printf("fd: the pipe's link starts pipe:[ and ends ]: %s\n",
           yes(!strncmp(target, "pipe:[", 6) && target[strlen(target) - 1] == ']'));
    printf("fd: /proc/self/fd/9999 does not exist: %s\n",
           yes(readlink("/proc/self/fd/9999", target, sizeof target) < 0));
    close(p[0]);
    close(file);
    unlink("procdirs-file");

    /* Threads. */
    printf("task: one thread alone: %d\n", count("/proc/self/task"));
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, thread, (void *)i);
    for (int i = 0; i < 3; i++)
        while (!((volatile pid_t *)tids)[i])
            usleep(1000);
    printf("task: with three more: %d\n", count("/proc/self/task"));
    int all = 1;
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", tids[i]);
        all &= listed("/proc/self/task", name) == 1;
    }
    snprintf(name, sizeof name, "%d", getpid());
    printf("task: each thread's tid and the pid are listed: %s\n",
           yes(all && listed("/proc/self/task", name) == 1));
    char comm[64] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tids[0]);
    FILE *f = fopen(path, "r");
    if (f) {
        fgets(comm, sizeof comm, f);
        fclose(f);
    }
    char own[64] = {0};
    f = fopen("/proc/self/comm", "r");
    if (f) {
        fgets(own, sizeof own, f);
        fclose(f);
    }
    /* The program's name differs between the host and the guest. */
    printf("task: a thread's comm is the process's: %s\n", yes(comm[0] && !strcmp(comm, own)));
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tids[1]);
    f = fopen(path, "r");
    int first = 0;
    if (f) {
        fscanf(f, "%d", &first);
        fclose(f);
    }
    printf("task: a thread's stat starts with its tid: %s\n", yes(first == tids[1]));
    /* Each thread's stat has its own state: one blocked in read sleeps
     * (S) while the thread reading the file runs (R). */
    int block[2];
    pipe(block);
    pthread_t reader;
    pthread_create(&reader, NULL, blocked_reader, &block[0]);
    while (!reader_tid)
        usleep(1000);
    char state = '?';
    for (int i = 0; i < 10000 && state != 'S'; i++) {
        state = task_state(reader_tid);
        usleep(1000);
    }
    printf("task: a thread blocked in read: %c\n", state);
    printf("task: the thread reading its own: %c\n", task_state((pid_t)syscall(SYS_gettid)));
    write(block[1], "x", 1);
    pthread_join(reader, NULL);
    stop = 1;
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("task: after the joins: %d\n", count("/proc/self/task"));
    return 0;
}

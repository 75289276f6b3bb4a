/* /proc as programs read it: the calling process's stat, status, cmdline,
 * maps and exe, a zombie child's state, the threads count, and the system
 * files' formats. Figures that differ between machines (memory sizes,
 * times, pids) are checked for their form and their relations, not
 * printed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char text[65536];

/* The whole file at `path`, read until end of file; its length, -1 on error. */
static int slurp(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int len = 0, n;
    while ((n = read(fd, text + len, sizeof text - 1 - len)) > 0)
        len += n;
    close(fd);
    text[len] = 0;
    return len;
}

/* Field `n` (1-based, as proc(5) numbers them) of a stat line. */
static const char *stat_field(const char *line, int n, char *out, size_t size) {
    if (n == 2) {
        const char *open = strchr(line, '('), *close = strrchr(line, ')');
        snprintf(out, size, "%.*s", (int)(close - open - 1), open + 1);
        return out;
    }
    const char *p = strrchr(line, ')') + 2;
    for (int i = 3; i < n; i++)
        p = strchr(p, ' ') + 1;
    size_t len = strcspn(p, " \n");
    snprintf(out, size, "%.*s", (int)len, p);
    return out;
}

static long stat_number(const char *line, int n) {
    if (n == 1)
        return atol(line);
    char buf[64];
    return atol(stat_field(line, n, buf, sizeof buf));
}

static int count_fields(const char *line) {
    const char *p = strrchr(line, ')') + 1;
    int n = 2;
    while (*p && *p != '\n') {
        while (*p == ' ')
            p++;
        if (*p && *p != '\n')
            n++;
        while (*p && *p != ' ' && *p != '\n')
            p++;
    }
    return n;
}

/* The value after "Name:" in a status-style text. */
static const char *status_value(const char *name) {
    static char value[256];
    char key[64];
    snprintf(key, sizeof key, "\n%s:", name);
    /* The first line has no newline before it. */
    size_t len = strlen(key + 1);
    const char *at = text;
    if (strncmp(text, key + 1, len) != 0) {
        at = strstr(text, key);
        if (!at)
            return "(missing)";
        at++;
    }
    at += len;
    while (*at == ' ' || *at == '\t')
        at++;
    snprintf(value, sizeof value, "%.*s", (int)strcspn(at, "\n"), at);
    return value;
}

static void *sleeper(void *arg) {
    (void)arg;
    pause();
    return 0;
}

int main(int argc, char **argv) {
    (void)argc;
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

    /* /proc/self/stat */
    /* C leaves the order of a call's arguments open, and the helpers share
     * buffers: every value printed is computed in a statement of its own. */
    slurp("/proc/self/stat");
    char buf[256], state[8];
    int comm_ok = strncmp(stat_field(text, 2, buf, sizeof buf), base, 15) == 0;
    stat_field(text, 3, state, sizeof state);
    printf("stat: %d fields, pid matches %d, comm matches %d, state %s, ppid matches %d\n",
           count_fields(text), stat_number(text, 1) == getpid(), comm_ok, state,
           stat_number(text, 4) == getppid());
    /* rss (field 24) is left out: Linux updates it lazily, and a small
     * program can read 0 there. */
    printf("stat: pgrp matches %d, threads %ld, vsize > 0 %d\n", stat_number(text, 5) == getpgrp(),
           stat_number(text, 20), stat_number(text, 23) > 0);

    /* /proc/self/status */
    slurp("/proc/self/status");
    char pid[16];
    snprintf(pid, sizeof pid, "%d", getpid());
    int name_ok = strncmp(status_value("Name"), base, 15) == 0;
    int pid_ok = strcmp(status_value("Pid"), pid) == 0;
    char state_line[64], threads[16], uid[64];
    snprintf(state_line, sizeof state_line, "%s", status_value("State"));
    snprintf(threads, sizeof threads, "%s", status_value("Threads"));
    snprintf(uid, sizeof uid, "%s", status_value("Uid"));
    printf("status: Name matches %d, State %s, Pid matches %d, Threads %s, Uid %s\n", name_ok,
           state_line, pid_ok, threads, uid);

    /* cmdline: argv, NUL-separated */
    int len = slurp("/proc/self/cmdline");
    printf("cmdline: length matches %d, argv[0] matches %d, ends with NUL %d\n", len == (int)strlen(argv[0]) + 1,
           strcmp(text, argv[0]) == 0, len > 0 && text[len - 1] == 0);

    /* exe and self are symbolic links */
    char link[4096];
    ssize_t n = readlink("/proc/self/exe", link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    printf("exe: is argv[0] %d\n", strcmp(link, argv[0]) == 0);
    n = readlink("/proc/self", link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    printf("self: links to the pid %d\n", strcmp(link, pid) == 0);
    struct stat st, lst;
    stat("/proc/self", &st);
    lstat("/proc/self", &lst);
    printf("self: stat says directory %d, lstat says link %d\n", S_ISDIR(st.st_mode),
           S_ISLNK(lst.st_mode));
    errno = 0;
    n = readlink("/proc/self/status", link, sizeof link);
    printf("readlink of a file: %zd (%s)\n", n, strerror(errno));

    /* maps: the heap after malloc, a mapping with its rights, the stack */
    char *heap = malloc(100);
    heap[0] = 1;
    char *area = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(area + 4096, 4096, PROT_NONE);
    slurp("/proc/self/maps");
    char want[64];
    snprintf(want, sizeof want, "%lx-%lx rw-p", (unsigned long)area, (unsigned long)(area + 4096));
    int rw = strstr(text, want) != 0;
    snprintf(want, sizeof want, "%lx-%lx ---p", (unsigned long)(area + 4096),
             (unsigned long)(area + 8192));
    int none = strstr(text, want) != 0;
    printf("maps: [stack] %d, the mapping's pieces rw-p %d ---p %d, the program %d\n",
           strstr(text, "[stack]\n") != 0, rw, none, strstr(text, argv[0]) != 0);

    /* Threads: counted in stat and status */
    pthread_t t;
    pthread_create(&t, 0, sleeper, 0);
    slurp("/proc/self/status");
    printf("with a thread: Threads %s\n", status_value("Threads"));

    /* A zombie child */
    pid_t child = fork();
    if (child == 0)
        _exit(3);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", child);
    int child_state = '?';
    for (int tries = 0; tries < 1000 && child_state != 'Z'; tries++) {
        slurp(path);
        child_state = stat_field(text, 3, buf, sizeof buf)[0];
        if (child_state != 'Z')
            usleep(1000);
    }
    printf("child before wait: state %c, ppid matches %d\n", child_state,
           stat_number(text, 4) == getpid());
    waitpid(child, 0, 0);
    int fd = open(path, O_RDONLY);
    printf("child after wait: open %d (%s)\n", fd, strerror(errno));

    /* /proc lists itself, pids included */
    DIR *dir = opendir("/proc");
    int own = 0, self = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        own |= strcmp(e->d_name, pid) == 0 && e->d_type == DT_DIR;
        self |= strcmp(e->d_name, "self") == 0 && e->d_type == DT_LNK;
    }
    closedir(dir);
    printf("/proc lists: own pid as a directory %d, self as a link %d\n", own, self);

    /* The system files */
    slurp("/proc/meminfo");
    long total = atol(status_value("MemTotal"));
    long free_kb = atol(status_value("MemFree"));
    printf("meminfo: MemTotal > MemFree > 0 %d, kB %d, MemAvailable %d\n",
           total > free_kb && free_kb > 0, strstr(text, " kB\n") != 0,
           strstr(text, "\nMemAvailable:") != 0);
    slurp("/proc/uptime");
    double up, idle;
    printf("uptime: two numbers %d\n", sscanf(text, "%lf %lf", &up, &idle) == 2 && up > 0);
    slurp("/proc/loadavg");
    double l1, l5, l15;
    int running, all_threads, last;
    printf("loadavg: form %d\n",
           sscanf(text, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running, &all_threads, &last) == 6 &&
               running >= 1 && all_threads >= running);
    slurp("/proc/stat");
    long user, nice, sys, idle_ticks;
    printf("stat: cpu line %d, btime %d\n",
           sscanf(text, "cpu %ld %ld %ld %ld", &user, &nice, &sys, &idle_ticks) == 4,
           strstr(text, "\nbtime ") != 0);
    slurp("/proc/cpuinfo");
    printf("cpuinfo: processor 0 %d, flags %d\n", strncmp(text, "processor\t: 0\n", 14) == 0,
           strstr(text, "\nflags\t\t: ") != 0);
    slurp("/proc/mounts");
    printf("mounts: /proc is proc %d\n", strstr(text, " /proc proc ") != 0);

    /* Nothing under /proc changes: as root on Linux, a file opens for
     * writing but a write is EIO; names cannot be made or removed. */
    fd = open("/proc/meminfo", O_WRONLY);
    ssize_t wrote = write(fd, "x", 1);
    printf("write to meminfo: open %d, write %zd (%s)\n", fd >= 0, wrote, strerror(errno));
    close(fd);
    fd = open("/proc/99999/stat", O_RDONLY);
    printf("no such pid: %d (%s)\n", fd, strerror(errno));
    fd = open("/proc/new", O_CREAT | O_WRONLY, 0644);
    printf("create in /proc: %d (%s)\n", fd, strerror(errno));
    int r = mkdir("/proc/newdir", 0755);
    printf("mkdir in /proc: %d (%s)\n", r, strerror(errno));
    r = unlink("/proc/meminfo");
    printf("unlink in /proc: %d (%s)\n", r, strerror(errno));
    r = rmdir("/proc");
    printf("rmdir /proc: %d (%s)\n", r, strerror(errno));
    return 0;
}

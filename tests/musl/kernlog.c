/* The kernel log as Linux's readers see it: syslog(2) (klogctl, what
 * dmesg calls) gives lines "<level>[seconds] text"; /dev/kmsg gives one
 * record a read, "level,seq,usec,-;text", and logs what is written to it
 * ("<N>" first: at level N); and the bad input of each. Same output as on
 * Linux (which log lines there are differs; their form does not). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(long r) { return r < 0 ? strerror(errno) : "ok"; }

/* Whether `text` ends a line and starts with "<digit>[ seconds.micros] ".
 * (Only the first line is looked at: on Linux a message that holds a
 * newline, such as a segfault report's, gives lines with no prefix.) */
static int well_formed(char *text, int n) {
    double seconds;
    int level, used = 0;
    if (n <= 0 || text[n - 1] != '\n')
        return 0;
    return sscanf(text, "<%d>[%lf]%n", &level, &seconds, &used) == 2 && used > 0 && level >= 0 &&
           level <= 7;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int size = klogctl(10, NULL, 0);
    printf("SIZE_BUFFER: %s\n", size > 0 ? "positive" : err(size));
    char *text = malloc(size);
    int n = klogctl(3, text, size);
    printf("READ_ALL: %s, the first line well formed: %s\n", n > 0 ? "some" : err(n),
           well_formed(text, n) ? "yes" : "no");

    int kmsg = open("/dev/kmsg", O_WRONLY);
    const char *line = "<4>kernlog: a line from user space\n";
    printf("write to /dev/kmsg: %s\n",
           write(kmsg, line, strlen(line)) == (ssize_t)strlen(line) ? "all of it" : strerror(errno));
    close(kmsg);

    kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
    char record[8192];
    char tiny[4];
    printf("read into 4 bytes: %s\n", err(read(kmsg, tiny, sizeof tiny)));
    int found = 0, records = 0, bad = 0;
    ssize_t got;
    while ((got = read(kmsg, record, sizeof record - 1)) > 0) {
        record[got] = 0;
        unsigned prio;
        unsigned long long seq, usec;
        int used = 0;
        if (sscanf(record, "%u,%llu,%llu,%*[^;];%n", &prio, &seq, &usec, &used) != 3 || used == 0)
            bad++;
        records++;
        if (strstr(record, ";kernlog: a line from user space\n"))
            found = 1 + (prio & 7);
    }
    printf("records: %s, malformed %d; the end: %s\n", records > 0 ? "some" : "none", bad,
           got < 0 ? strerror(errno) : "end of file");
    printf("the line written: %s, level %d\n", found ? "found" : "missing", found - 1);
    close(kmsg);

    printf("unknown action: %s\n", err(klogctl(11, NULL, 0)));
    printf("READ_ALL into nothing: %s\n", err(klogctl(3, NULL, 10)));
    printf("READ_ALL negative length: %s\n", err(klogctl(3, text, -1)));
    printf("CONSOLE_LEVEL 9: %s\n", err(klogctl(8, NULL, 9)));
    printf("CONSOLE_LEVEL 0: %s\n", err(klogctl(8, NULL, 0)));
    pid_t pid = fork();
    if (pid == 0) {
        setuid(1000);
        printf("a user's CLEAR: %s\n", err(klogctl(5, NULL, 0)));
        printf("a user's CONSOLE_LEVEL: %s\n", err(klogctl(8, NULL, 7)));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    return 0;
}

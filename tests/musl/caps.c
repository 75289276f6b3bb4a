/* Capabilities: capget and capset (version 3 headers, two data structs),
 * and how root's powers bound file access. Only bits whose value is the
 * same on every root are printed (a container's root may lack some). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* From Linux's uapi/linux/capability.h (musl ships no kernel headers). */
#define _LINUX_CAPABILITY_VERSION_3 0x20080522
#define CAP_DAC_OVERRIDE 1
#define CAP_DAC_READ_SEARCH 2
#define CAP_KILL 5
struct __user_cap_header_struct {
    unsigned version;
    int pid;
};
struct __user_cap_data_struct {
    unsigned effective, permitted, inheritable;
};

static int capget_(struct __user_cap_header_struct *h, struct __user_cap_data_struct *d) {
    return syscall(SYS_capget, h, d);
}
static int capset_(struct __user_cap_header_struct *h, struct __user_cap_data_struct *d) {
    return syscall(SYS_capset, h, d);
}

static const char *err(int r) {
    if (r >= 0)
        return "ok";
    switch (errno) {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case EINVAL: return "EINVAL";
    case ESRCH: return "ESRCH";
    default: return strerror(errno);
    }
}

static struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};

static const char *has(int cap, const char *set) {
    struct __user_cap_data_struct d[2];
    if (capget_(&hdr, d) < 0)
        return "capget failed";
    unsigned v = set[0] == 'e' ? d[0].effective : set[0] == 'p' ? d[0].permitted : d[0].inheritable;
    return v & (1u << cap) ? "yes" : "no";
}

static void drop(int effective_only) {
    struct __user_cap_data_struct d[2];
    capget_(&hdr, d);
    unsigned both = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
    d[0].effective &= ~both;
    if (!effective_only)
        d[0].permitted &= ~both;
    printf("capset dropping DAC_OVERRIDE and DAC_READ_SEARCH%s: %s\n",
           effective_only ? " (effective)" : " (permitted too)", err(capset_(&hdr, d)));
}

static void raise_again(void) {
    struct __user_cap_data_struct d[2];
    capget_(&hdr, d);
    d[0].effective |= (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
    printf("capset raising them again: %s\n", err(capset_(&hdr, d)));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = open("caps-secret", O_CREAT | O_TRUNC | O_WRONLY, 0600);
    close(fd);
    chown("caps-secret", 1000, 1000);

    printf("root: effective DAC_OVERRIDE %s, permitted %s, KILL %s\n", has(CAP_DAC_OVERRIDE, "e"),
           has(CAP_DAC_OVERRIDE, "p"), has(CAP_KILL, "e"));
    struct __user_cap_header_struct bad = {0x12345678, 0};
    struct __user_cap_data_struct d[2];
    int r = capget_(&bad, d);
    printf("capget with an unknown version: %s, the header now says %#x\n", err(r), bad.version);
    bad.version = 0x12345678;
    r = capget_(&bad, NULL);
    printf("capget of an unknown version with no data: %s, %#x\n", err(r), bad.version);
    struct __user_cap_header_struct other = {_LINUX_CAPABILITY_VERSION_3, 1};
    printf("capget of pid 1: %s\n", err(capget_(&other, d)));
    struct __user_cap_header_struct nobody = {_LINUX_CAPABILITY_VERSION_3, 999999};
    printf("capget of a pid nobody has: %s\n", err(capget_(&nobody, d)));
    struct __user_cap_header_struct negative = {_LINUX_CAPABILITY_VERSION_3, -5};
    printf("capget of pid -5: %s\n", err(capget_(&negative, d)));
    capget_(&hdr, d);
    printf("capset of another process: %s\n", err(capset_(&other, d)));

    pid_t child = fork();
    if (child == 0) {
        drop(1);
        printf("effective DAC_OVERRIDE %s, permitted %s\n", has(CAP_DAC_OVERRIDE, "e"),
               has(CAP_DAC_OVERRIDE, "p"));
        printf("open another user's 0600 file: %s\n", err(open("caps-secret", O_RDONLY)));
        raise_again();
        printf("open it now: %s\n", err(open("caps-secret", O_RDONLY)));
        drop(0);
        raise_again();
        printf("open it at last: %s\n", err(open("caps-secret", O_RDONLY)));
        _exit(0);
    }
    waitpid(child, NULL, 0);

    child = fork();
    if (child == 0) {
        seteuid(1000);
        printf("euid 1000: effective DAC_OVERRIDE %s, permitted %s\n", has(CAP_DAC_OVERRIDE, "e"),
               has(CAP_DAC_OVERRIDE, "p"));
        seteuid(0);
        printf("euid 0 again: effective %s\n", has(CAP_DAC_OVERRIDE, "e"));
        setfsuid(1000);
        printf("fsuid 1000: effective DAC_OVERRIDE %s, KILL %s\n", has(CAP_DAC_OVERRIDE, "e"),
               has(CAP_KILL, "e"));
        setfsuid(0);
        setuid(1000);
        printf("setuid 1000: effective %s, permitted %s\n", has(CAP_KILL, "e"), has(CAP_KILL, "p"));
        _exit(0);
    }
    waitpid(child, NULL, 0);
    unlink("caps-secret");
    return 0;
}

/* exec of dynamic programs whose interpreter is wrong, each a copy of this
 * program with its PT_INTERP changed: what execve answers must be what
 * Linux answers (a missing loader is ENOENT, a damaged name ENOEXEC or
 * EIO, a loader that is no x86_64 ELF ELIBBAD, one that cannot be run
 * EACCES), and the kernel must say it, not crash. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *self;
static long self_len;
static Elf64_Phdr *interp_ph;

static const char *errno_name(int e)
{
    switch (e) {
    case ENOENT: return "ENOENT";
    case ENOEXEC: return "ENOEXEC";
    case EIO: return "EIO";
    case EACCES: return "EACCES";
    case ELIBBAD: return "ELIBBAD";
    case ENOTDIR: return "ENOTDIR";
    case ELOOP: return "ELOOP";
    default: return "another error";
    }
}

static char *read_file(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *bytes = malloc(*len);
    if (fread(bytes, 1, *len, f) != (size_t)*len)
        exit(1);
    fclose(f);
    return bytes;
}

static void write_file(const char *path, const char *bytes, long len, int mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0 || write(fd, bytes, len) != len || close(fd) != 0) {
        perror(path);
        exit(1);
    }
}

/* Runs `path` (as "--child") and prints how its exec failed. */
static void try_exec(const char *what, const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {(char *)path, "--child", 0};
        execv(path, argv);
        printf("%s: %s\n", what, errno_name(errno));
        fflush(stdout);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status))
        printf("%s: the child died (status %#x)\n", what, status);
}

/* A copy of this program with PT_INTERP's name (or header) changed. */
static void with_name(const char *what, const char *name, long name_len)
{
    char *copy = malloc(self_len);
    memcpy(copy, self, self_len);
    long off = (char *)interp_ph - self;
    Elf64_Phdr *ph = (Elf64_Phdr *)(copy + off);
    memset(copy + ph->p_offset, 0, ph->p_filesz);
    memcpy(copy + ph->p_offset, name, name_len);
    write_file("/tmp/badinterp-prog", copy, self_len, 0755);
    try_exec(what, "/tmp/badinterp-prog");
    free(copy);
}

static void with_header(const char *what, unsigned long offset, unsigned long size)
{
    char *copy = malloc(self_len);
    memcpy(copy, self, self_len);
    Elf64_Phdr *ph = (Elf64_Phdr *)(copy + ((char *)interp_ph - self));
    ph->p_offset = offset;
    ph->p_filesz = size;
    write_file("/tmp/badinterp-prog", copy, self_len, 0755);
    try_exec(what, "/tmp/badinterp-prog");
    free(copy);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child") == 0) {
        printf("the program ran\n");
        return 0;
    }
    self = read_file("/proc/self/exe", &self_len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)self;
    for (int i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr *ph = (Elf64_Phdr *)(self + eh->e_phoff + i * eh->e_phentsize);
        if (ph->p_type == PT_INTERP)
            interp_ph = ph;
    }
    if (!interp_ph) {
        printf("not a dynamic program\n");
        return 1;
    }
    const char *loader = self + interp_ph->p_offset;
    long loader_len;
    char *loader_bytes = read_file(loader, &loader_len);

    const char missing[] = "/no/such/ld.so";
    with_name("a missing interpreter", missing, sizeof missing);
    char no_nul[4096];
    memset(no_nul, 'a', interp_ph->p_filesz);
    with_name("a name without its NUL", no_nul, interp_ph->p_filesz);
    with_header("a name of one byte", interp_ph->p_offset, 1);
    with_header("a name past the end of the file", self_len + 8192, 16);
    with_header("a name longer than PATH_MAX", interp_ph->p_offset, 4097);
    with_name("a directory", "/tmp", 5);
    with_name("a name through a file", "/proc/self/exe/ld.so", 21);

    /* Shorter than an ELF header: Linux's read of it comes up short. */
    write_file("/tmp/badinterp-text", "#!/bin/sh\necho hello\n", 21, 0755);
    with_name("an interpreter that is a short script", "/tmp/badinterp-text", 20);
    char text[200];
    memset(text, '#', sizeof text);
    write_file("/tmp/badinterp-text", text, sizeof text, 0755);
    with_name("an interpreter that is a long text file", "/tmp/badinterp-text", 20);

    Elf64_Ehdr *leh = (Elf64_Ehdr *)loader_bytes;
    leh->e_machine = EM_386;
    write_file("/tmp/badinterp-ld", loader_bytes, loader_len, 0755);
    with_name("an interpreter for another machine", "/tmp/badinterp-ld", 18);
    leh->e_machine = EM_X86_64;
    memcpy(loader_bytes, "\177ELG", 4);
    write_file("/tmp/badinterp-ld", loader_bytes, loader_len, 0755);
    with_name("an interpreter without ELF's magic", "/tmp/badinterp-ld", 18);
    memcpy(loader_bytes, "\177ELF", 4);
    write_file("/tmp/badinterp-ld", loader_bytes, loader_len, 0644);
    with_name("an interpreter without execute permission", "/tmp/badinterp-ld", 18);

    /* And the loader itself, copied whole, works. */
    write_file("/tmp/badinterp-ld", loader_bytes, loader_len, 0755);
    with_name("a copy of the loader", "/tmp/badinterp-ld", 18);
    unlink("/tmp/badinterp-prog");
    unlink("/tmp/badinterp-text");
    unlink("/tmp/badinterp-ld");
    printf("done\n");
    return 0;
}

/* What a dynamically linked program finds when it starts: the auxiliary
 * vector the kernel built, the loader (AT_BASE) where dl_iterate_phdr says
 * it is, libc's functions reached through the PLT, thread-local storage in
 * a second thread, and /proc/self/maps naming the loader's file. Built
 * with musl-gcc and with gcc (PIE and not) by `cargo xtask test`, run here
 * and on the host's Linux: every line must be the same. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

extern char _start[];

extern char **environ;

/* The kernel's own value for `key`, from the vector past the environment
 * (glibc's getauxval gives its own AT_HWCAP, not the kernel's). */
static unsigned long raw_aux(unsigned long key)
{
    char **p = environ;
    while (*p)
        p++;
    for (ElfW(auxv_t) *av = (void *)(p + 1); av->a_type != AT_NULL; av++)
        if (av->a_type == key)
            return av->a_un.a_val;
    return 0;
}

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

struct seen {
    unsigned long first_phdr, first_phnum;
    int loader_found, objects;
};

static int look(struct dl_phdr_info *info, size_t size, void *data)
{
    struct seen *seen = data;
    (void)size;
    if (seen->objects++ == 0) {
        seen->first_phdr = (unsigned long)info->dlpi_phdr;
        seen->first_phnum = info->dlpi_phnum;
    }
    if (info->dlpi_addr == getauxval(AT_BASE))
        seen->loader_found = 1;
    return 0;
}

/* The interpreter this program names, from its own program headers. */
static const char *interpreter(void)
{
    const ElfW(Phdr) *ph = (const void *)getauxval(AT_PHDR);
    unsigned long n = getauxval(AT_PHNUM), bias = 0;
    for (unsigned long i = 0; i < n; i++)
        if (ph[i].p_type == PT_PHDR)
            bias = (unsigned long)ph - ph[i].p_vaddr;
    for (unsigned long i = 0; i < n; i++)
        if (ph[i].p_type == PT_INTERP)
            return (const char *)(bias + ph[i].p_vaddr);
    return "";
}

static __thread int mine = 42;

static void *thread(void *arg)
{
    (void)arg;
    mine = 7;
    return (void *)(long)mine;
}

static volatile int on_alt_stack;
static char *alt_low, *alt_high;

static void handler(int sig)
{
    char here;
    (void)sig;
    on_alt_stack = &here >= alt_low && &here < alt_high;
}

int main(int argc, char **argv)
{
    printf("argc %d, last argument %s\n", argc, argv[argc - 1]);

    struct seen seen = {0};
    dl_iterate_phdr(look, &seen);
    printf("AT_ENTRY is _start: %s\n", yes(getauxval(AT_ENTRY) == (unsigned long)_start));
    printf("AT_PHDR and AT_PHNUM are the program's headers: %s\n",
           yes(seen.first_phdr == getauxval(AT_PHDR) && seen.first_phnum == getauxval(AT_PHNUM)));
    printf("AT_PHENT: %lu\n", getauxval(AT_PHENT));
    printf("AT_BASE is the loader's address: %s\n", yes(getauxval(AT_BASE) != 0 && seen.loader_found));
    printf("AT_PAGESZ: %lu\n", getauxval(AT_PAGESZ));
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("AT_EXECFN names this program: %s\n",
           yes(execfn && strcmp(base_name(execfn), base_name(argv[0])) == 0));
    const unsigned char *random = (const void *)getauxval(AT_RANDOM);
    int nonzero = 0;
    for (int i = 0; random && i < 16; i++)
        nonzero |= random[i];
    printf("AT_RANDOM holds 16 bytes: %s\n", yes(random && nonzero));
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    printf("AT_HWCAP is CPUID 1's EDX: %s\n", yes(raw_aux(AT_HWCAP) == d));
    const char *platform = (const char *)getauxval(AT_PLATFORM);
    printf("AT_PLATFORM: %s\n", platform ? platform : "(none)");
    printf("AT_SECURE: %lu\n", getauxval(AT_SECURE));
    printf("AT_UID is getuid(): %s\n", yes(getauxval(AT_UID) == getuid()));

    /* A stack of AT_MINSIGSTKSZ bytes (or the least sigaltstack takes)
     * holds a handler's frame. */
    unsigned long least = getauxval(AT_MINSIGSTKSZ);
    printf("AT_MINSIGSTKSZ given: %s\n", yes(least > 0));
    if (least < MINSIGSTKSZ)
        least = MINSIGSTKSZ;
    alt_low = malloc(least);
    alt_high = alt_low + least;
    stack_t alt = {.ss_sp = alt_low, .ss_size = least};
    struct sigaction act = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
    if (sigaltstack(&alt, 0) != 0 || sigaction(SIGUSR1, &act, 0) != 0)
        perror("sigaltstack");
    raise(SIGUSR1);
    printf("a handler ran on that stack: %s\n", yes(on_alt_stack));

    pthread_t t;
    void *theirs;
    pthread_create(&t, 0, thread, 0);
    pthread_join(t, &theirs);
    printf("thread-local: mine %d, the thread's %ld\n", mine, (long)theirs);

    char interp_real[PATH_MAX];
    if (!realpath(interpreter(), interp_real))
        strcpy(interp_real, "(none)");
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int named = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path) {
            path[strcspn(path, "\n")] = 0;
            named |= strcmp(path, interp_real) == 0;
        }
    }
    printf("/proc/self/maps names the loader's file: %s\n", yes(named));
    return 0;
}

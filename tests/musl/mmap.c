/* The address space as Linux keeps it: what munmap gives back is handed out
 * again, munmap of part of a mapping splits it, MAP_FIXED replaces,
 * MAP_FIXED_NOREPLACE refuses, mprotect needs every page mapped and opens a
 * PROT_NONE reservation, mremap grows in place when it can and moves when it
 * must, and a hint is taken when the range is free. Addresses differ from
 * Linux's, so only relations between them are printed. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE 4096UL
#define TIB (1UL << 40)

static int failures;

static void check(const char *what, int ok) {
    printf("%s: %s\n", what, ok ? "yes" : "NO");
    if (!ok)
        failures++;
}

static sigjmp_buf back;
static volatile int last_code;

static void on_segv(int signal, siginfo_t *info, void *context) {
    (void)signal;
    (void)context;
    last_code = info->si_code;
    siglongjmp(back, 1);
}

/* The si_code of a SIGSEGV from writing at p, or 0 if the write worked. */
static int write_fault(char *p) {
    last_code = 0;
    if (sigsetjmp(back, 1) == 0)
        *(volatile char *)p = 1;
    return last_code;
}

static char *map(void *hint, size_t len, int prot, int flags) {
    return mmap(hint, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
}

int main(void) {
    /* A 64 TiB reservation, a thousand times: the same address each time. */
    char *first = map(0, 64 * TIB, PROT_NONE, MAP_NORESERVE);
    int same = first != MAP_FAILED;
    for (int i = 0; same && i < 1000; i++) {
        same = munmap(first, 64 * TIB) == 0;
        char *again = map(0, 64 * TIB, PROT_NONE, MAP_NORESERVE);
        same = same && again == first;
    }
    check("64 TiB mapped and unmapped 1000 times at one address", same);
    munmap(first, 64 * TIB);

    /* malloc and free of 1 MiB blocks, a million times (musl maps each
     * one and unmaps it at free): the address space and the memory must
     * both come back every time. */
    int fresh = 1;
    for (long i = 0; i < 1000000 && fresh; i++) {
        unsigned char *p = malloc(1 << 20);
        fresh = p && p[4096 * (i % 256)] == 0;
        if (p)
            p[4096 * (i % 256)] = 1;
        free(p);
    }
    check("a million blocks of 1 MiB, each zeroed", fresh);

    /* Reuse. */
    char *a = map(0, 4 * PAGE, PROT_READ | PROT_WRITE, 0);
    munmap(a, 4 * PAGE);
    char *b = map(0, 4 * PAGE, PROT_READ | PROT_WRITE, 0);
    check("unmapped range handed out again", a == b);

    /* Splitting: unmap the middle page of three. */
    char *s = map(0, 3 * PAGE, PROT_READ | PROT_WRITE, 0);
    s[0] = 'a';
    s[2 * PAGE] = 'c';
    check("munmap of the middle page", munmap(s + PAGE, PAGE) == 0);
    check("both ends keep their bytes", s[0] == 'a' && s[2 * PAGE] == 'c');
    check("mprotect over the hole is ENOMEM",
          mprotect(s, 3 * PAGE, PROT_READ) == -1 && errno == ENOMEM);
    char *mid = map(s + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED_NOREPLACE);
    check("MAP_FIXED_NOREPLACE into the hole", mid == s + PAGE);
    char *clash = map(s, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED_NOREPLACE);
    check("MAP_FIXED_NOREPLACE over a mapping is EEXIST",
          clash == MAP_FAILED && errno == EEXIST);
    check("and the mapping is untouched", s[0] == 'a');
    char *over = map(s, PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
    check("MAP_FIXED replaces it with zeroes", over == s && s[0] == 0 && s[2 * PAGE] == 'c');
    check("one munmap across three mappings", munmap(s, 3 * PAGE) == 0);
    check("and the whole range is free again",
          map(s, 3 * PAGE, PROT_READ, MAP_FIXED_NOREPLACE) == s);
    munmap(s, 3 * PAGE);

    /* A hint is taken when free. */
    char *hint = map(0, 2 * PAGE, PROT_READ, 0);
    munmap(hint, 2 * PAGE);
    check("a free hint is taken", map(hint, 2 * PAGE, PROT_READ, 0) == hint);
    munmap(hint, 2 * PAGE);

    /* A PROT_NONE reservation opened in part. */
    char *r = map(0, 16 * PAGE, PROT_NONE, 0);
    check("mprotect opens part of a reservation",
          mprotect(r + 4 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE) == 0);
    r[4 * PAGE] = 'x';
    r[6 * PAGE - 1] = 'y';
    check("the opened pages hold zeroes and take writes",
          r[4 * PAGE + 1] == 0 && r[4 * PAGE] == 'x' && r[6 * PAGE - 1] == 'y');
    mprotect(r + 4 * PAGE, 2 * PAGE, PROT_NONE);
    mprotect(r + 4 * PAGE, 2 * PAGE, PROT_READ);
    check("closing and opening keeps the bytes", r[4 * PAGE] == 'x');
    munmap(r, 16 * PAGE);

    /* mremap grows in place into free pages, else moves. */
    char *g = map(0, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
    munmap(g + 4 * PAGE, 4 * PAGE);
    g[0] = 'g';
    char *grown = mremap(g, 4 * PAGE, 8 * PAGE, 0);
    check("mremap grows in place into free pages", grown == g && g[0] == 'g');
    g[8 * PAGE - 1] = 'h';
    /* Ours, or one that was there already (top-down, g sits below the
     * mappings made before it). */
    char *wall = map(g + 8 * PAGE, PAGE, PROT_READ, MAP_FIXED_NOREPLACE);
    check("a mapping right above", wall == g + 8 * PAGE || errno == EEXIST);
    char *moved = mremap(g, 8 * PAGE, 16 * PAGE, 0);
    check("without MREMAP_MAYMOVE it cannot grow", moved == MAP_FAILED && errno == ENOMEM);
    moved = mremap(g, 8 * PAGE, 16 * PAGE, MREMAP_MAYMOVE);
    check("with it, it moves and keeps the bytes",
          moved != MAP_FAILED && moved != g && moved[0] == 'g' && moved[8 * PAGE - 1] == 'h' &&
              moved[16 * PAGE - 1] == 0);
    check("and the old range is free",
          map(g, 8 * PAGE, PROT_READ, MAP_FIXED_NOREPLACE) == g);
    check("mremap of what is not mapped is EFAULT",
          mremap(g + 64 * TIB, PAGE, 2 * PAGE, MREMAP_MAYMOVE) == MAP_FAILED && errno == EFAULT);

    /* SEGV_ACCERR inside a mapping (even a page never touched), SEGV_MAPERR
     * outside every mapping. */
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
    sigaction(SIGSEGV, &sa, 0);
    char *ro = map(0, 2 * PAGE, PROT_READ, 0);
    check("writing a fresh read-only page is SEGV_ACCERR", write_fault(ro) == SEGV_ACCERR);
    char *none = map(0, PAGE, PROT_NONE, 0);
    check("writing a PROT_NONE page is SEGV_ACCERR", write_fault(none) == SEGV_ACCERR);
    munmap(ro, 2 * PAGE);
    check("writing where nothing is mapped is SEGV_MAPERR", write_fault(ro) == SEGV_MAPERR);

    printf("%d failures\n", failures);
    return failures != 0;
}

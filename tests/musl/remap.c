/* mremap with MREMAP_FIXED: the mapping moves to exactly the address
 * given, replacing what was mapped there, with its bytes; it may grow or
 * shrink as it moves; and the bad requests: FIXED without MAYMOVE, an
 * unaligned or overlapping target, a target past the end of user space,
 * an old range that is not mapped; and a new size of the same number of
 * pages, which changes nothing. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096L

static const char *result(void *p) { return p == MAP_FAILED ? strerror(errno) : "ok"; }

static char *map(long pages) {
    return mmap(0, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(void) {
    char *old = map(3), *target = map(4);
    for (int i = 0; i < 3; i++)
        memset(old + i * PAGE, 'a' + i, PAGE);
    memset(target, 'x', 4 * PAGE);

    /* Grow from 3 to 4 pages into the place of the other mapping. */
    char *moved = mremap(old, 3 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    printf("move and grow: %s, %s\n", result(moved), moved == target ? "at the target" : "ELSEWHERE");
    printf("bytes: %c %c %c, new page %s\n", moved[0], moved[PAGE], moved[2 * PAGE],
           moved[3 * PAGE] == 0 ? "zero" : "NOT ZERO");
    printf("old place unmapped: %s\n", msync(old, PAGE, MS_ASYNC) ? strerror(errno) : "NO");

    /* Shrink from 4 to 2 pages as it moves back. */
    char *back = mremap(moved, 4 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, old);
    printf("move and shrink: %s, %s, bytes %c %c\n", result(back),
           back == old ? "at the target" : "ELSEWHERE", back[0], back[PAGE]);
    printf("the tail it left: %s\n", msync(moved + 2 * PAGE, PAGE, MS_ASYNC) ? strerror(errno) : "STILL MAPPED");

    char *other = map(2);
    errno = 0;
    printf("FIXED without MAYMOVE: %s\n", result(mremap(back, PAGE, PAGE, MREMAP_FIXED, other)));
    printf("unaligned target: %s\n",
           result(mremap(back, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, other + 1)));
    printf("overlapping target: %s\n",
           result(mremap(back, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, back + PAGE)));
    printf("target past user space: %s\n",
           result(mremap(back, PAGE, 3 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)0x7fffffffe000)));
    munmap(other, 2 * PAGE);
    printf("unmapped old range: %s\n",
           result(mremap(other, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, old + 8 * PAGE)));
    printf("unknown flag: %s\n", result(mremap(back, PAGE, PAGE, 8, 0)));

    /* The same number of pages: no change, in place or moved. Python's
     * mmap.resize() asks this when a size stays within its last page. */
    char *same = mremap(back, 2 * PAGE, 2 * PAGE, 0);
    printf("same size: %s, %s\n", result(same), same == back ? "in place" : "ELSEWHERE");
    same = mremap(back, 2 * PAGE - 100, 2 * PAGE - 10, 0);
    printf("same pages, other bytes: %s, %s, bytes %c %c\n", result(same),
           same == back ? "in place" : "ELSEWHERE", same[0], same[PAGE]);
    char *place = map(2);
    same = mremap(back, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, place);
    printf("same size, moved: %s, %s, bytes %c %c\n", result(same),
           same == place ? "at the target" : "ELSEWHERE", same[0], same[PAGE]);
    return 0;
}

/* The heap under load: thousands of allocations of mixed sizes, frees,
 * reallocs that move, calloc, and blocks large enough that musl maps them
 * with mmap; every byte is checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 12345;
static uint32_t next(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

#define SLOTS 4000

int main(void) {
    static unsigned char *slot[SLOTS];
    static size_t size[SLOTS];
    unsigned long allocated = 0, checked = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < SLOTS; i++) {
            if (slot[i] && next() % 2) {
                for (size_t j = 0; j < size[i]; j++)
                    if (slot[i][j] != (unsigned char)(i + j)) {
                        printf("corrupted block %d at %zu\n", i, j);
                        return 1;
                    }
                checked += size[i];
                free(slot[i]);
                slot[i] = NULL;
            }
            if (!slot[i]) {
                size[i] = next() % 3000 + 1;
                slot[i] = malloc(size[i]);
                if (!slot[i]) {
                    printf("malloc failed\n");
                    return 1;
                }
                for (size_t j = 0; j < size[i]; j++)
                    slot[i][j] = (unsigned char)(i + j);
                allocated += size[i];
            }
        }
    }
    printf("small blocks: allocated %lu bytes, checked %lu bytes\n", allocated, checked);
    for (int i = 0; i < SLOTS; i++)
        free(slot[i]);

    char *grow = malloc(16);
    strcpy(grow, "keep me");
    for (size_t n = 32; n <= (1 << 20); n *= 2) {
        grow = realloc(grow, n);
        memset(grow + n / 2, 'x', n / 2);
    }
    printf("realloc to 1 MiB kept: %s\n", grow);
    free(grow);

    size_t big = 8 << 20;
    unsigned char *block = malloc(big);
    for (size_t i = 0; i < big; i += 4096)
        block[i] = (unsigned char)(i / 4096);
    unsigned long sum = 0;
    for (size_t i = 0; i < big; i += 4096)
        sum += block[i];
    printf("8 MiB block: page sum %lu\n", sum);
    free(block);

    int *zeros = calloc(100000, sizeof *zeros);
    long nonzero = 0;
    for (int i = 0; i < 100000; i++)
        nonzero += zeros[i] != 0;
    printf("calloc: %ld nonzero ints\n", nonzero);
    free(zeros);
    return 0;
}

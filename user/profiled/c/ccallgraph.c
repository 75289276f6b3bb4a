/* /bin/ccallgraph: the C example for `cargo xtask prof`, built with
 * `gcc -pg` and linked with the profiled libc-lite. main calls a() exactly
 * 1000 times and b() exactly 10 times; a takes about three times as long as
 * b in all, so gprof must show a on top and those call counts. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long cycles_per_ms;

static inline unsigned long rdtsc(void) {
    unsigned int lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((unsigned long)hi << 32) | lo;
}

/* Busy for `cycles`, inside the function that calls it. */
static inline void spin(unsigned long cycles) {
    unsigned long end = rdtsc() + cycles;
    while (rdtsc() < end)
        __asm__ volatile("pause");
}

__attribute__((noinline)) void a(void) { spin(cycles_per_ms * 3 / 2); }
__attribute__((noinline)) void b(void) { spin(cycles_per_ms * 50); }

static unsigned long measure_cycles_per_ms(void) {
    /* 20 ms of the kernel's clock against the TSC. */
    unsigned long t0 = rdtsc();
    usleep(20000);
    return (rdtsc() - t0) / 20;
}


int main(void) {
    cycles_per_ms = measure_cycles_per_ms();
    for (int i = 0; i < 1000; i++) {
        a();
        if (i % 100 == 0)
            b();
    }
    printf("ccallgraph: called a %d times and b %d times\n", 1000, 10);
    return 0;
}

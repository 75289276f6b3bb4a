/* A write racing an mprotect on another CPU: once mprotect(PROT_READ)
 * returns, no thread of the process may store to the page again.
 *
 * A CPU keeps the translations it used in its TLB, and a thread spinning
 * on a write to a page never asks the page tables again while the entry
 * stays cached. So when another CPU makes the page read-only, it must have
 * every CPU that may hold the old, writable entry flush it (a TLB
 * shootdown, by inter-processor interrupt) before mprotect returns; a CPU
 * left out would go on writing through its stale entry. Here a writer
 * thread stores an ever larger count to the page while the main thread
 * makes it read-only: the count the page holds when mprotect returns must
 * be the writer's last, and its next store must fault (SIGSEGV, caught and
 * left by siglongjmp). Rounds vary the moment of the mprotect. On one CPU
 * the two threads take turns, and the same must hold. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 100

static volatile unsigned long *page;
/* The last count the writer stored without a fault. */
static atomic_ulong written;
static atomic_int faulted;
static sigjmp_buf writer_jump;

static void on_segv(int sig) {
    (void)sig;
    atomic_store(&faulted, 1);
    siglongjmp(writer_jump, 1);
}

static void *writer(void *arg) {
    (void)arg;
    if (sigsetjmp(writer_jump, 1))
        return NULL;
    for (unsigned long i = 1;; i++) {
        page[0] = i;
        atomic_store(&written, i);
    }
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    struct sigaction sa = {.sa_handler = on_segv};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    int bad = 0;
    for (int round = 0; round < ROUNDS && !bad; round++) {
        page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) {
            printf("mmap failed\n");
            return 1;
        }
        atomic_store(&written, 0);
        atomic_store(&faulted, 0);
        pthread_t t;
        if (pthread_create(&t, NULL, writer, NULL) != 0) {
            printf("pthread_create failed\n");
            return 1;
        }
        /* Until the writer is storing, then a little longer each round. */
        while (atomic_load(&written) == 0)
            sched_yield();
        for (volatile int spin = 0; spin < round * 1000; spin++) {
        }
        if (mprotect((void *)page, 4096, PROT_READ) != 0) {
            printf("mprotect failed\n");
            return 1;
        }
        unsigned long at_return = page[0];
        double start = seconds();
        while (!atomic_load(&faulted) && seconds() - start < 20)
            sched_yield();
        unsigned long after = page[0];
        unsigned long last = atomic_load(&written);
        if (!atomic_load(&faulted)) {
            printf("round %d: the writer never faulted on the read-only page\n", round);
            bad = 1;
        } else if (after != at_return) {
            printf("round %d: a store landed after mprotect returned (%lu, then %lu)\n", round,
                   at_return, after);
            bad = 1;
        } else if (after != last) {
            printf("round %d: the page holds %lu, the writer's last store was %lu\n", round, after,
                   last);
            bad = 1;
        }
        if (!atomic_load(&faulted)) {
            /* It never stopped: leave with it still spinning. */
            return 1;
        }
        pthread_join(t, NULL);
        munmap((void *)page, 4096);
    }
    if (!bad)
        printf("mprotect: %d rounds, every store after the mprotect faulted\n", ROUNDS);
    return bad;
}

/* Condition variables as musl builds them: pthread_cond_broadcast moves
 * the waiters from the condition variable's futex to the mutex's with
 * FUTEX_REQUEUE, so without it a broadcast leaves them asleep (musl's
 * own pthread_cond tests hung so). 8 waiters on one condition and one
 * mutex, woken by a broadcast, several rounds; then one at a time with
 * pthread_cond_signal; then a broadcast to waiters with a timeout. Every
 * line printed is the same on every run. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define WAITERS 8
#define ROUNDS 20

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t all_waiting = PTHREAD_COND_INITIALIZER;
static int generation, waiting, woken, timed;

static void *waiter(void *arg) {
    int rounds = (int)(long)arg;
    pthread_mutex_lock(&lock);
    for (int r = 0; r < rounds; r++) {
        int seen = generation;
        waiting++;
        pthread_cond_signal(&all_waiting);
        while (generation == seen)
            pthread_cond_wait(&cond, &lock);
        woken++;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Waits (holding the lock) until every waiter sleeps on the condition. */
static void until_all_wait(int want) {
    while (waiting < want)
        pthread_cond_wait(&all_waiting, &lock);
}

static void broadcasts(void) {
    pthread_t t[WAITERS];
    for (long i = 0; i < WAITERS; i++)
        pthread_create(&t[i], NULL, waiter, (void *)(long)ROUNDS);
    int all_woken = 1;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&lock);
        until_all_wait(WAITERS);
        waiting = 0;
        woken = 0;
        generation++;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        /* The next round starts when all are waiting again; the last
         * round's waiters are joined. */
        if (r == ROUNDS - 1)
            break;
    }
    for (int i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    if (woken != WAITERS)
        all_woken = 0;
    printf("broadcast: %d rounds of %d waiters, the last woke %d: %s\n", ROUNDS, WAITERS, woken,
           all_woken ? "ok" : "WRONG");
}

static void *one_waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    int seen = generation;
    waiting++;
    pthread_cond_signal(&all_waiting);
    while (generation == seen)
        pthread_cond_wait(&cond, &lock);
    woken++;
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void signals(void) {
    pthread_t t[WAITERS];
    waiting = 0;
    woken = 0;
    for (int i = 0; i < WAITERS; i++)
        pthread_create(&t[i], NULL, one_waiter, NULL);
    pthread_mutex_lock(&lock);
    until_all_wait(WAITERS);
    generation++;
    pthread_mutex_unlock(&lock);
    /* Each signal wakes at least one; keep signalling until all ran. */
    int signalled = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        int done = woken;
        pthread_mutex_unlock(&lock);
        if (done == WAITERS)
            break;
        pthread_cond_signal(&cond);
        signalled++;
        sched_yield();
    }
    for (int i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    printf("signal: %d waiters woken one signal at a time: %s\n", woken,
           signalled >= 1 ? "ok" : "WRONG");
}

static void *timed_waiter(void *arg) {
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&lock);
    int seen = generation;
    waiting++;
    pthread_cond_signal(&all_waiting);
    int e = 0;
    while (generation == seen && e == 0)
        e = pthread_cond_timedwait(&cond, &lock, &until);
    if (e == 0)
        timed++;
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void timed_broadcast(void) {
    pthread_t t[WAITERS];
    waiting = 0;
    for (int i = 0; i < WAITERS; i++)
        pthread_create(&t[i], NULL, timed_waiter, NULL);
    pthread_mutex_lock(&lock);
    until_all_wait(WAITERS);
    generation++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    printf("timed: a broadcast woke %d of %d timed waiters before their timeout\n", timed,
           WAITERS);

    /* A timed wait nobody wakes times out. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&lock);
    int e = pthread_cond_timedwait(&cond, &lock, &until);
    pthread_mutex_unlock(&lock);
    printf("timed: an unwoken wait gives %s\n", e == ETIMEDOUT ? "ETIMEDOUT" : "something else");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    broadcasts();
    signals();
    timed_broadcast();
    return 0;
}

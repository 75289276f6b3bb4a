/* Threads: musl's pthreads on clone, futexes, set_tid_address and TLS.
 * Mutex, condition variable, rwlock, barrier, semaphores, thread-local
 * storage, join and detach, timed waits, pthread_kill, many short-lived
 * threads, a robust mutex whose owner dies, and how threads meet process
 * calls: getpid/gettid, a process-directed signal taken by the one thread
 * that does not block it, exit and exec from a thread, fork from a thread.
 * Everything printed is the same on every run and every kernel. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 8

static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

/* --- a mutex guarding a counter --------------------------------------- */
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *add_many(void *arg) {
    long times = (long)arg;
    for (long i = 0; i < times; i++) {
        pthread_mutex_lock(&counter_lock);
        counter++;
        pthread_mutex_unlock(&counter_lock);
        if (i % 1000 == 0)
            sched_yield();
    }
    return (void *)(times * 2);
}

static void mutex_counter(void) {
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, add_many, (void *)(10000 + i));
    long returned = 0;
    for (int i = 0; i < N; i++) {
        void *r;
        pthread_join(t[i], &r);
        returned += (long)r;
    }
    printf("mutex: counter %ld (want %d), join values sum %ld\n", counter, 8 * 10000 + 28,
           returned);
}

/* --- a condition variable: a bounded queue ----------------------------- */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_not_full = PTHREAD_COND_INITIALIZER;
static int queue[4], q_len, q_head;

static void *producer(void *arg) {
    (void)arg;
    for (int i = 1; i <= 1000; i++) {
        pthread_mutex_lock(&q_lock);
        while (q_len == 4)
            pthread_cond_wait(&q_not_full, &q_lock);
        queue[(q_head + q_len++) % 4] = i;
        pthread_cond_signal(&q_not_empty);
        pthread_mutex_unlock(&q_lock);
    }
    return NULL;
}

static void *consumer(void *arg) {
    long sum = 0;
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&q_lock);
        while (q_len == 0)
            pthread_cond_wait(&q_not_empty, &q_lock);
        sum += queue[q_head];
        q_head = (q_head + 1) % 4;
        q_len--;
        pthread_cond_signal(&q_not_full);
        pthread_mutex_unlock(&q_lock);
    }
    *(long *)arg = sum;
    return NULL;
}

static void condvar_queue(void) {
    pthread_t p, c1, c2;
    long s1 = 0, s2 = 0;
    pthread_create(&c1, NULL, consumer, &s1);
    pthread_create(&c2, NULL, consumer, &s2);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c1, NULL);
    pthread_join(c2, NULL);
    printf("condvar: consumers took %ld in all (want %d)\n", s1 + s2, 1000 * 1001 / 2);
}

/* --- rwlock and barrier ------------------------------------------------ */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t barrier;
static int shared_value, readers_agree = 1, serial_seen;

static void *rw_worker(void *arg) {
    long id = (long)arg;
    int r = pthread_barrier_wait(&barrier);
    if (r == PTHREAD_BARRIER_SERIAL_THREAD)
        __atomic_add_fetch(&serial_seen, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 200; i++) {
        if (id == 0) {
            pthread_rwlock_wrlock(&rw);
            shared_value++;
            int copy = shared_value;
            sched_yield();
            if (copy != shared_value)
                readers_agree = 0;
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_rdlock(&rw);
            int a = shared_value;
            sched_yield();
            if (a != shared_value)
                readers_agree = 0;
            pthread_rwlock_unlock(&rw);
        }
    }
    if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
        __atomic_add_fetch(&serial_seen, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void rwlock_and_barrier(void) {
    pthread_t t[4];
    pthread_barrier_init(&barrier, NULL, 4);
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, rw_worker, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    printf("rwlock: writer counted to %d, readers saw no change under the lock: %s\n",
           shared_value, readers_agree ? "yes" : "no");
    printf("barrier: one serial thread per round: %s\n", serial_seen == 2 ? "yes" : "no");
}

/* --- thread-local storage, ids ----------------------------------------- */
static __thread int tls_value = 7;
static __thread char tls_name[16];

static void *tls_worker(void *arg) {
    long id = (long)arg;
    int fresh = tls_value == 7 && tls_name[0] == 0;
    tls_value = 100 + (int)id;
    snprintf(tls_name, sizeof tls_name, "thread-%ld", id);
    sched_yield();
    int kept = tls_value == 100 + id && strcmp(tls_name + 7, "") != 0;
    int ids = getpid() != gettid_();
    return (void *)(long)(fresh && kept && ids);
}

static void tls_and_ids(void) {
    pthread_t t[N];
    tls_value = 1;
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, tls_worker, (void *)i);
    int good = 0;
    for (int i = 0; i < N; i++) {
        void *r;
        pthread_join(t[i], &r);
        good += (long)r;
    }
    printf("tls: %d of %d threads started with the initial value, kept their own, "
           "and had a tid of their own; main's value still %d; main's tid is the pid: %s\n",
           good, N, tls_value, gettid_() == getpid() ? "yes" : "no");
}

/* --- detach and semaphores ---------------------------------------------- */
static sem_t done;

static void *detached(void *arg) {
    (void)arg;
    sem_post(&done);
    return NULL;
}

static void detach_and_semaphores(void) {
    sem_init(&done, 0, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < N; i++) {
        pthread_t t;
        pthread_create(&t, &attr, detached, NULL);
    }
    for (int i = 0; i < N; i++)
        sem_wait(&done);
    int v;
    sem_getvalue(&done, &v);
    printf("detach: %d detached threads posted, semaphore back to %d\n", N, v);
}

/* --- timed waits --------------------------------------------------------- */
static void timed_waits(void) {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_nsec += 30 * 1000 * 1000;
    if (at.tv_nsec >= 1000000000) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&m);
    int r = pthread_cond_timedwait(&c, &m, &at);
    pthread_mutex_unlock(&m);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int late_enough = now.tv_sec > at.tv_sec || (now.tv_sec == at.tv_sec && now.tv_nsec >= at.tv_nsec);
    printf("timedwait: %s, not before the deadline: %s\n", strerror(r), late_enough ? "yes" : "no");
    sem_t s;
    sem_init(&s, 0, 0);
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_nsec += 10 * 1000 * 1000;
    if (at.tv_nsec >= 1000000000) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000;
    }
    r = sem_timedwait(&s, &at);
    printf("sem_timedwait: %d (%s)\n", r, r ? strerror(errno) : "ok");
}

/* --- many short-lived threads ------------------------------------------ */
static void *nothing(void *arg) { return arg; }

static void many_threads(void) {
    long sum = 0;
    for (long i = 0; i < 300; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, (void *)i) != 0) {
            printf("many: create %ld failed\n", i);
            return;
        }
        void *r;
        pthread_join(t, &r);
        sum += (long)r;
    }
    for (int round = 0; round < 20; round++) {
        pthread_t t[16];
        for (long i = 0; i < 16; i++)
            pthread_create(&t[i], NULL, nothing, (void *)i);
        for (int i = 0; i < 16; i++) {
            void *r;
            pthread_join(t[i], &r);
            sum += (long)r;
        }
    }
    printf("many: 300 one at a time and 20 rounds of 16, sum %ld (want %d)\n", sum,
           300 * 299 / 2 + 20 * 120);
}

/* --- signals and threads ------------------------------------------------ */
static volatile sig_atomic_t handled_by_worker, handled_elsewhere;
static __thread int i_am_worker;

static void on_usr1(int sig) {
    (void)sig;
    if (i_am_worker)
        handled_by_worker++;
    else
        handled_elsewhere++;
}

static sem_t worker_ready, worker_go;

static void *signal_worker(void *arg) {
    (void)arg;
    i_am_worker = 1;
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    sem_post(&worker_ready);
    while (handled_by_worker < 2)
        sem_wait(&worker_go);
    return NULL;
}

static void signals_and_threads(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* main blocks it; the worker does not */
    sem_init(&worker_ready, 0, 0);
    sem_init(&worker_go, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, signal_worker, NULL);
    sem_wait(&worker_ready);
    kill(getpid(), SIGUSR1); /* process-directed: only the worker may take it */
    sem_post(&worker_go);
    while (handled_by_worker < 1)
        sched_yield();
    pthread_kill(t, SIGUSR1); /* thread-directed */
    sem_post(&worker_go);
    pthread_join(t, NULL);
    sigset_t pending;
    sigpending(&pending);
    printf("signals: worker handled %d, main handled %d, main has it pending: %s\n",
           (int)handled_by_worker, (int)handled_elsewhere,
           sigismember(&pending, SIGUSR1) ? "yes" : "no");
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    signal(SIGUSR1, SIG_DFL);
}

/* --- a robust mutex whose owner dies ------------------------------------ */
static pthread_mutex_t robust;

static void *die_holding(void *arg) {
    (void)arg;
    pthread_mutex_lock(&robust);
    return NULL; /* exits holding it */
}

static void robust_mutex(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&robust, &a);
    pthread_t t;
    pthread_create(&t, NULL, die_holding, NULL);
    pthread_join(t, NULL);
    int r = pthread_mutex_lock(&robust);
    printf("robust: lock after the owner died: %s\n", strerror(r));
    if (r == EOWNERDEAD) {
        pthread_mutex_consistent(&robust);
        pthread_mutex_unlock(&robust);
        r = pthread_mutex_lock(&robust);
        printf("robust: after pthread_mutex_consistent: %s\n", r ? strerror(r) : "locked");
        pthread_mutex_unlock(&robust);
    }
}

/* --- exit, exec and fork from threads ----------------------------------- */
static void *sleep_forever(void *arg) {
    (void)arg;
    for (;;)
        pause();
}

static void *exit_from_thread(void *arg) {
    exit((int)(long)arg); /* ends every thread of the process */
}

static const char *self;

static void *exec_from_thread(void *arg) {
    (void)arg;
    char *args[] = {(char *)self, "--exit", "7", NULL};
    execv(self, args);
    _exit(127);
}

static void *fork_from_thread(void *arg) {
    (void)arg;
    pid_t pid = fork();
    if (pid == 0) {
        /* Only the forking thread exists in the child. */
        pthread_t t;
        int ok = pthread_create(&t, NULL, nothing, (void *)5) == 0;
        void *r = 0;
        ok = ok && pthread_join(t, &r) == 0 && (long)r == 5;
        _exit(ok ? 9 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    return (void *)(long)(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void report(const char *what, int status) {
    if (WIFEXITED(status))
        printf("%s: exited with %d\n", what, WEXITSTATUS(status));
    else
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
}

static void process_calls_from_threads(void) {
    int status;
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, sleep_forever, NULL);
        pthread_create(&b, NULL, exit_from_thread, (void *)3);
        for (;;)
            pause();
    }
    waitpid(pid, &status, 0);
    report("exit from a thread, others sleeping", status);

    pid = fork();
    if (pid == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, sleep_forever, NULL);
        pthread_create(&b, NULL, exec_from_thread, NULL);
        for (;;)
            pause();
    }
    waitpid(pid, &status, 0);
    report("exec from a thread", status);

    pid = fork();
    if (pid == 0) {
        pthread_t a;
        pthread_create(&a, NULL, sleep_forever, NULL);
        pthread_exit(NULL); /* main ends; the process lives on in `a` */
    }
    usleep(20000);
    int gone = waitpid(pid, &status, WNOHANG);
    printf("pthread_exit from main: process still there: %s\n", gone == 0 ? "yes" : "no");
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    report("then SIGTERM", status);

    pthread_t t;
    void *r;
    pthread_create(&t, NULL, fork_from_thread, NULL);
    pthread_join(t, &r);
    printf("fork from a thread: child exited with %ld\n", (long)r);

    pid = fork();
    if (pid == 0) {
        pthread_t a;
        pthread_create(&a, NULL, sleep_forever, NULL);
        *(volatile int *)0 = 1; /* a fault ends every thread */
        _exit(0);
    }
    waitpid(pid, &status, 0);
    report("fault in one of two threads", status);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "--exit") == 0) {
        printf("exec'd from a thread: pid is tid: %s\n", getpid() == gettid_() ? "yes" : "no");
        return atoi(argv[2]);
    }
    self = argv[0];
    mutex_counter();
    condvar_queue();
    rwlock_and_barrier();
    tls_and_ids();
    detach_and_semaphores();
    timed_waits();
    many_threads();
    signals_and_threads();
    robust_mutex();
    process_calls_from_threads();
    return 0;
}

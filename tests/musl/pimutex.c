/* Priority-inheritance futexes (FUTEX_LOCK_PI, FUTEX_TRYLOCK_PI,
 * FUTEX_UNLOCK_PI), through musl's PTHREAD_PRIO_INHERIT mutexes and by
 * hand: the word holds the owner's tid, FUTEX_WAITERS while someone
 * waits, and the kernel gives the lock to the first waiter at unlock; an
 * owner that exits holding it leaves FUTEX_OWNER_DIED for the next owner
 * (EOWNERDEAD for a robust mutex); the errors are Linux's. Same output as
 * on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FUTEX_WAKE 1
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_TRYLOCK_PI 8
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_TID_MASK 0x3fffffffu

static long futex(uint32_t *word, int op, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op, 0, timeout, 0, 0);
}

static const char *err(long r)
{
	return r ? strerror(errno) : "ok";
}

static pid_t tid(void)
{
	return syscall(SYS_gettid);
}

static const char *flags(uint32_t word)
{
	static char s[64];
	snprintf(s, sizeof s, "%s%s%s", word & FUTEX_WAITERS ? "WAITERS " : "",
		 word & FUTEX_OWNER_DIED ? "OWNER_DIED " : "",
		 word & FUTEX_TID_MASK ? "(an owner)" : "(free)");
	return s;
}

/* Waits until thread `t` sleeps in the kernel (its /proc state is S), up
 * to a minute: a busy host may be slow to run it that far. */
static void until_asleep(pid_t t)
{
	char path[64], state = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", t);
	for (int i = 0; i < 60000 && state != 'S'; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
				state = 0;
			fclose(f);
		}
		usleep(1000);
	}
}

/* -- musl's PI mutexes */
static pthread_mutex_t pi;
static long counter;

static void *add(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&pi);
		counter++;
		pthread_mutex_unlock(&pi);
	}
	return 0;
}

static void *lock_and_leave(void *m)
{
	pthread_mutex_lock(m);
	return 0;
}

/* -- by hand */
static uint32_t word;
static volatile pid_t waiter_tid;
static volatile int held, go;

/* What a waiter saw, printed by the main thread once it has joined it:
 * a thread printing as it wakes would race the thread that woke it. */
struct waiter {
	const char *name;
	pthread_t thread;
	char saw[256];
};

/* Takes the lock (waiting for it), notes what it found, and frees it. */
static void *waiter(void *arg)
{
	struct waiter *w = arg;
	waiter_tid = tid();
	long r = futex(&word, FUTEX_LOCK_PI, 0);
	int mine = (word & FUTEX_TID_MASK) == (uint32_t)tid();
	int n = snprintf(w->saw, sizeof w->saw, "%s: LOCK_PI %s, owner is me: %d, %s\n", w->name,
			 err(r), mine, flags(word));
	if (r == 0) {
		/* What the word holds after is another waiter's to change. */
		const char *u = err(futex(&word, FUTEX_UNLOCK_PI, 0));
		snprintf(w->saw + n, sizeof w->saw - n, "%s: UNLOCK_PI %s\n", w->name, u);
	}
	return 0;
}

/* Joins waiter `w` and prints what it saw. */
static void join(struct waiter *w)
{
	pthread_join(w->thread, 0);
	fputs(w->saw, stdout);
}

/* Takes the lock, and when told to, exits holding it. */
static void *holder(void *arg)
{
	(void)arg;
	printf("holder: LOCK_PI %s\n", err(futex(&word, FUTEX_LOCK_PI, 0)));
	held = 1;
	while (!go)
		usleep(1000);
	return 0;
}

/* `holder` without its line: takes the lock and exits holding it. */
static void *quiet_holder(void *arg)
{
	(void)arg;
	futex(&word, FUTEX_LOCK_PI, 0);
	return 0;
}

static void *not_the_owner(void *arg)
{
	(void)arg;
	printf("another thread's UNLOCK_PI: %s\n", err(futex(&word, FUTEX_UNLOCK_PI, 0)));
	printf("another thread's TRYLOCK_PI: %s\n", err(futex(&word, FUTEX_TRYLOCK_PI, 0)));
	printf("which leaves: %s\n", flags(word));
	struct timespec at;
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_nsec += 100 * 1000 * 1000;
	if (at.tv_nsec >= 1000000000) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000;
	}
	printf("another thread's LOCK_PI for 100 ms: %s\n", err(futex(&word, FUTEX_LOCK_PI, &at)));
	return 0;
}

static void start_waiter(struct waiter *w, const char *name)
{
	w->name = name;
	waiter_tid = 0;
	pthread_create(&w->thread, 0, waiter, w);
	while (!waiter_tid)
		usleep(1000);
	until_asleep(waiter_tid);
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	pthread_t t[4];
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&pi, &a);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], 0, add, 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], 0);
	printf("4 threads x 20000 under a PI mutex: %ld\n", counter);
	pthread_mutex_lock(&pi);
	printf("trylock of a held PI mutex: %s\n", strerror(pthread_mutex_trylock(&pi)));
	pthread_mutex_unlock(&pi);

	pthread_mutex_t robust;
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &a);
	pthread_create(&t[0], 0, lock_and_leave, &robust);
	pthread_join(t[0], 0);
	printf("robust PI mutex left by an exited thread: %s\n", strerror(pthread_mutex_lock(&robust)));
	printf("consistent: %s\n", strerror(pthread_mutex_consistent(&robust)));
	pthread_mutex_unlock(&robust);
	printf("lock again: %s\n", strerror(pthread_mutex_lock(&robust)));
	pthread_mutex_unlock(&robust);

	printf("-- by hand\n");
	const char *r = err(futex(&word, FUTEX_LOCK_PI, 0));
	printf("LOCK_PI of a free word: %s, owner is me: %d\n", r, word == (uint32_t)tid());
	printf("LOCK_PI again: %s\n", err(futex(&word, FUTEX_LOCK_PI, 0)));
	printf("TRYLOCK_PI by its owner: %s\n", err(futex(&word, FUTEX_TRYLOCK_PI, 0)));
	pthread_create(&t[0], 0, not_the_owner, 0);
	pthread_join(t[0], 0);

	/* A waiter: the word gets FUTEX_WAITERS, a plain wake is refused, and
	 * the unlock gives the waiter the lock. */
	struct waiter w[2];
	start_waiter(&w[0], "waiter");
	printf("with a waiter: %s\n", flags(word));
	printf("FUTEX_WAKE on it: %s\n", err(syscall(SYS_futex, &word, FUTEX_WAKE, 1, 0, 0, 0)));
	printf("UNLOCK_PI: %s\n", err(futex(&word, FUTEX_UNLOCK_PI, 0)));
	join(&w[0]);
	printf("after: %s\n", flags(word));

	/* Two waiters: the first to come gets it first. */
	futex(&word, FUTEX_LOCK_PI, 0);
	start_waiter(&w[0], "first");
	start_waiter(&w[1], "second");
	printf("UNLOCK_PI with two waiting: %s\n", err(futex(&word, FUTEX_UNLOCK_PI, 0)));
	join(&w[0]);
	join(&w[1]);
	printf("after both: %s\n", flags(word));

	/* An owner that exits holding it: the waiter gets it, marked. */
	pthread_create(&t[1], 0, holder, 0);
	while (!held)
		usleep(1000);
	start_waiter(&w[0], "waiter for an exiting owner");
	go = 1;
	pthread_join(t[1], 0);
	join(&w[0]);
	printf("after: %s\n", flags(word));

	/* Left by an owner that exited with nobody waiting. */
	word = 0;
	held = go = 0;
	pthread_create(&t[1], 0, holder, 0);
	go = 1;
	pthread_join(t[1], 0);
	printf("left by an exited holder: %s\n", flags(word));
	printf("LOCK_PI of it: %s\n", err(futex(&word, FUTEX_LOCK_PI, 0)));
	printf("which leaves: %s\n", flags(word));
	/* The same, many times: the join can return while the holder is still
	 * on its way out (its tid word is cleared before it is gone), and a
	 * locker that comes then waits for the exit to end and gets ESRCH all
	 * the same: the lock was not left to anyone waiting. */
	int esrch = 0;
	for (int i = 0; i < 100; i++) {
		word = 0;
		pthread_create(&t[1], 0, quiet_holder, 0);
		pthread_join(t[1], 0);
		esrch += futex(&word, FUTEX_LOCK_PI, 0) == -1 && errno == ESRCH;
	}
	printf("LOCK_PI of an exited holder's word, 100 times: %d ESRCH\n", esrch);

	word = 0x3ffffff0;
	printf("LOCK_PI of a word naming no thread: %s\n", err(futex(&word, FUTEX_LOCK_PI, 0)));
	printf("which leaves: %s\n", flags(word));
	printf("UNLOCK_PI of it: %s\n", err(futex(&word, FUTEX_UNLOCK_PI, 0)));
	word = 0;
	printf("UNLOCK_PI of a free word: %s\n", err(futex(&word, FUTEX_UNLOCK_PI, 0)));
	printf("LOCK_PI of an unaligned word: %s\n",
	       err(futex((uint32_t *)((char *)&word + 1), FUTEX_LOCK_PI, 0)));
	printf("LOCK_PI of a bad address: %s\n", err(futex((uint32_t *)8, FUTEX_LOCK_PI, 0)));
	printf("LOCK_PI with FUTEX_CLOCK_REALTIME: %s\n",
	       err(futex(&word, FUTEX_LOCK_PI | FUTEX_CLOCK_REALTIME, 0)));
	static const uint32_t read_only = 0;
	printf("LOCK_PI of a read-only word: %s\n", err(futex((uint32_t *)&read_only, FUTEX_LOCK_PI, 0)));
	return 0;
}

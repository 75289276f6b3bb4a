/* futex_waitv(2): one sleep on several words, ended by a wake of any of
 * them, which the call names by its index; EAGAIN when a word already
 * differs; absolute timeouts on CLOCK_MONOTONIC and CLOCK_REALTIME; and
 * Linux's errors for bad arguments, in its order. Same output as on
 * Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SYS_futex_waitv 449
#define FUTEX_WAKE 1
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX2_SIZE_U32 2

struct futex_waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

static uint32_t words[3];
static struct futex_waitv v[3];

static long waitv(struct futex_waitv *w, unsigned n, unsigned flags, struct timespec *t, int clock)
{
	return syscall(SYS_futex_waitv, w, n, flags, t, clock);
}

static const char *result(long r)
{
	static char s[64];
	if (r < 0)
		return strerror(errno);
	snprintf(s, sizeof s, "woken by word %ld", r);
	return s;
}

static void fill(void)
{
	for (int i = 0; i < 3; i++) {
		words[i] = 0;
		v[i] = (struct futex_waitv){.val = 0, .uaddr = (uintptr_t)&words[i],
					    .flags = FUTEX2_SIZE_U32 | (i == 1 ? FUTEX_PRIVATE_FLAG : 0)};
	}
}

static struct timespec in_ms(clockid_t clock, long ms)
{
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_nsec += ms * 1000000;
	while (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

static volatile int asleep_tid;
static long got;

static void *sleeper(void *arg)
{
	(void)arg;
	asleep_tid = syscall(SYS_gettid);
	got = waitv(v, 3, 0, 0, 0);
	return 0;
}

/* Waits until thread `t` sleeps (its /proc state is S), up to a minute: a
 * busy host may be slow to run it that far. */
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

static void wake_word(int i)
{
	fill();
	asleep_tid = 0;
	pthread_t t;
	pthread_create(&t, 0, sleeper, 0);
	while (!asleep_tid)
		usleep(1000);
	until_asleep(asleep_tid);
	int op = FUTEX_WAKE | (i == 1 ? FUTEX_PRIVATE_FLAG : 0);
	long n = syscall(SYS_futex, &words[i], op, 1, 0, 0, 0);
	pthread_join(t, 0);
	printf("wake of word %d woke %ld: %s\n", i, n, result(got));
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	for (int i = 0; i < 3; i++)
		wake_word(i);

	fill();
	words[2] = 5;
	printf("word 2 differs: %s\n", result(waitv(v, 3, 0, 0, 0)));
	fill();
	struct timespec t = in_ms(CLOCK_MONOTONIC, 100);
	printf("100 ms on CLOCK_MONOTONIC: %s\n", result(waitv(v, 3, 0, &t, CLOCK_MONOTONIC)));
	t = in_ms(CLOCK_REALTIME, 100);
	printf("100 ms on CLOCK_REALTIME: %s\n", result(waitv(v, 3, 0, &t, CLOCK_REALTIME)));
	/* 1 ns after boot: long past on any machine (a guest's clock may be
	 * only a second old, so "now minus 2 s" could be negative). */
	t = (struct timespec){0, 1};
	printf("a deadline passed: %s\n", result(waitv(v, 3, 0, &t, CLOCK_MONOTONIC)));

	printf("-- errors\n");
	printf("flags 1: %s\n", result(waitv(v, 3, 1, 0, 0)));
	printf("no words: %s\n", result(waitv(v, 0, 0, 0, 0)));
	printf("129 words: %s\n", result(waitv(v, 129, 0, 0, 0)));
	printf("a null vector: %s\n", result(waitv(0, 3, 0, 0, 0)));
	printf("a bad vector: %s\n", result(waitv((void *)8, 3, 0, 0, 0)));
	t = in_ms(CLOCK_MONOTONIC, 100);
	printf("CLOCK_BOOTTIME: %s\n", result(waitv(v, 3, 0, &t, CLOCK_BOOTTIME)));
	printf("a bad timeout: %s\n", result(waitv(v, 3, 0, (void *)8, CLOCK_MONOTONIC)));
	t.tv_nsec = 1000000000;
	printf("nanoseconds past a second: %s\n", result(waitv(v, 3, 0, &t, CLOCK_MONOTONIC)));
	fill();
	words[0] = 1;
	printf("a bad clock with no timeout: %s\n", result(waitv(v, 3, 0, 0, 99)));
	fill();
	v[1].flags = 0;
	printf("an entry without FUTEX2_SIZE_U32: %s\n", result(waitv(v, 3, 0, 0, 0)));
	fill();
	v[1].reserved = 1;
	printf("an entry's reserved field set: %s\n", result(waitv(v, 3, 0, 0, 0)));
	fill();
	v[2].uaddr += 1;
	printf("an unaligned word: %s\n", result(waitv(v, 3, 0, 0, 0)));
	fill();
	v[2].uaddr = 8;
	printf("a word at a bad address: %s\n", result(waitv(v, 3, 0, 0, 0)));
	fill();
	v[0].uaddr += 1;
	v[2].uaddr = 8;
	printf("both, the unaligned one first: %s\n", result(waitv(v, 3, 0, 0, 0)));
	return 0;
}

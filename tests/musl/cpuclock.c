/* The CPU-time clocks of a process and of a thread by id, as
 * clock_getcpuclockid(3) and pthread_getcpuclockid(3) make them (Linux's
 * layout: ~id << 3, a bit for a thread, which time in the low bits):
 * each reads, moves with work, and is refused with EINVAL (ESRCH from
 * clock_getcpuclockid) for no such process or a thread of another one.
 * Same output as on Linux (Python's time.pthread_getcpuclockid). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void spin(double how_long)
{
	double start = seconds(CLOCK_MONOTONIC);
	while (seconds(CLOCK_MONOTONIC) - start < how_long)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

static int thread_ready, thread_stop;
static pid_t thread_tid;

static void *worker(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	__atomic_store_n(&thread_ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&thread_stop, __ATOMIC_SEQ_CST))
		sink++;
	return NULL;
}

static const char *err(long r) { return r ? strerror(errno) : "ok"; }

int main(void)
{
	clockid_t mine, self, other;
	int r = clock_getcpuclockid(0, &mine);
	printf("clock_getcpuclockid(0): %s\n", r ? strerror(r) : "ok");
	r = clock_getcpuclockid(getpid(), &mine);
	printf("clock_getcpuclockid(getpid()): %s, a CPU clock id: %s\n", r ? strerror(r) : "ok",
	       mine < 0 ? "yes" : "NO");
	printf("clock_getcpuclockid(no such pid): %s\n", strerror(clock_getcpuclockid(4000000, &other)));

	pthread_getcpuclockid(pthread_self(), &self);
	printf("this thread's id differs from CLOCK_THREAD_CPUTIME_ID: %s\n",
	       self != CLOCK_THREAD_CPUTIME_ID ? "yes" : "NO");
	/* Work until this thread's clock shows 0.1 s (a busy host may give
	 * the machine less than the wall clock's time), at most 30 s. */
	double p0 = seconds(mine), t0 = seconds(self), start = seconds(CLOCK_MONOTONIC);
	while (seconds(self) - t0 < 0.1 && seconds(CLOCK_MONOTONIC) - start < 30)
		spin(0.01);
	double p1 = seconds(mine), t1 = seconds(self);
	printf("the thread's clock moved with work: %s\n", t1 - t0 >= 0.1 ? "yes" : "NO");
	printf("the process's clock moved as much: %s\n", p1 - p0 >= 0.09 ? "yes" : "NO");
	printf("the thread's clock is within the process's: %s\n", t1 <= p1 + 0.01 ? "yes" : "NO");

	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&thread_ready, __ATOMIC_SEQ_CST))
		;
	pthread_getcpuclockid(t, &other);
	spin(0.05);
	struct timespec res;
	printf("another thread's clock: %s, getres %s\n", seconds(other) >= 0 ? "reads" : strerror(errno),
	       err(clock_getres(other, &res)));
	__atomic_store_n(&thread_stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);

	pid_t child = fork();
	if (child == 0) {
		spin(0.05);
		_exit(0);
	}
	clockid_t childs;
	r = clock_getcpuclockid(child, &childs);
	printf("the child's process clock: %s, reads %s\n", r ? strerror(r) : "ok",
	       seconds(childs) >= 0 ? "yes" : strerror(errno));
	/* A thread clock names threads of the caller's process only. */
	clockid_t childs_thread = (~child << 3) | 6;
	struct timespec ts;
	printf("the child's thread clock: %s\n",
	       err(syscall(SYS_clock_gettime, childs_thread, &ts)));
	waitpid(child, NULL, 0);
	printf("a clock descriptor id: %s\n", err(syscall(SYS_clock_gettime, (~3 << 3) | 3, &ts)));
	return 0;
}

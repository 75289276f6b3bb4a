/*
 * A program for GNU gprof built the Debian way: `gcc -pg -static`, against
 * glibc, whose gmon samples the pc with an ITIMER_PROF timer and a SIGPROF
 * handler (glibc has no profil system call to make; see docs/profil.md,
 * "Programs built with gcc -pg"). The test command builds it on the host,
 * adds it to the ramdisk and profiles it with `cargo xtask prof`'s path:
 * gprof must find the exact call counts (from mcount, 20 each) and about
 * three quarters of the time in heavy(), which does three times light()'s
 * work.
 *
 * Built without -static it is also the program of the suite
 * gprof-glibc-preload: `cargo xtask prof ./a.out`'s way for a dynamic
 * program, with the project's libgmon.so in LD_PRELOAD. The last line
 * says which runtime sampled: glibc's keeps ITIMER_PROF armed until exit,
 * the native profil needs no timer of the program's.
 */
#include <stdio.h>
#include <sys/time.h>

/* volatile: the compiler may neither fold the loops nor hoist the calls. */
static volatile unsigned long sink;
static volatile unsigned long rounds = 3000000;

/* Inlined into both callers, so each has its own loop and its own samples. */
static inline __attribute__((always_inline)) unsigned long spin(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void heavy(void) { sink += spin(3 * rounds); }
__attribute__((noinline)) void light(void) { sink += spin(rounds); }

int main(void)
{
	int calls = 20;
	for (int i = 0; i < calls; i++) {
		heavy();
		light();
	}
	printf("split: heavy %d light %d\n", calls, calls);
	struct itimerval timer;
	getitimer(ITIMER_PROF, &timer);
	printf("split: %s\n", timer.it_interval.tv_usec || timer.it_interval.tv_sec
			       ? "sampled by ITIMER_PROF and SIGPROF (glibc's profil)"
			       : "no ITIMER_PROF armed (the native profil)");
	return 0;
}

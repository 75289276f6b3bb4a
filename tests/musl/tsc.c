/* prctl's PR_SET_TSC and PR_GET_TSC: a thread that asks for
 * PR_TSC_SIGSEGV gets SIGSEGV (si_code SI_KERNEL, as for any general
 * protection fault) from rdtsc instead of the counter; the setting is
 * kept by fork, by a new thread and across exec, is per thread, and
 * comes back with PR_TSC_ENABLE; bad modes are EINVAL and a bad pointer
 * EFAULT. Two processes with different settings take turns on the CPUs
 * many times, and each always gets its own answer: the kernel loads
 * the setting at every switch. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile int code;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	code = si->si_code;
	siglongjmp(back, 1);
}

/* "counter" if rdtsc gave one, else what the signal said. */
static const char *try_rdtsc(void)
{
	static char what[64];
	if (sigsetjmp(back, 1)) {
		snprintf(what, sizeof what, "SIGSEGV, si_code %d", code);
		return what;
	}
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return "counter";
}

static const char *mode(void)
{
	int m = -1;
	if (prctl(PR_GET_TSC, &m) < 0)
		return strerror(errno);
	return m == PR_TSC_ENABLE ? "PR_TSC_ENABLE" : m == PR_TSC_SIGSEGV ? "PR_TSC_SIGSEGV" : "?";
}

static const char *err(int r)
{
	return r < 0 ? strerror(errno) : "ok";
}

static void *thread_main(void *arg)
{
	(void)arg;
	printf("new thread: %s, rdtsc: %s\n", mode(), try_rdtsc());
	prctl(PR_SET_TSC, PR_TSC_ENABLE);
	printf("new thread after PR_TSC_ENABLE: %s, rdtsc: %s\n", mode(), try_rdtsc());
	return 0;
}

/* Reads the counter `rounds` times, giving the CPU up between reads:
 * how many reads faulted. */
static int faults_in(int rounds)
{
	int faults = 0;
	for (int i = 0; i < rounds; i++) {
		if (strcmp(try_rdtsc(), "counter") != 0)
			faults++;
		sched_yield();
	}
	return faults;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, 0, _IONBF, 0);
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER};
	sigaction(SIGSEGV, &sa, 0);
	if (argc > 1) {
		printf("after exec: %s, rdtsc: %s\n", mode(), try_rdtsc());
		return 0;
	}

	printf("at start: %s, rdtsc: %s\n", mode(), try_rdtsc());
	printf("PR_SET_TSC PR_TSC_SIGSEGV: %s\n", err(prctl(PR_SET_TSC, PR_TSC_SIGSEGV)));
	printf("now: %s, rdtsc: %s\n", mode(), try_rdtsc());
	printf("PR_SET_TSC 0: %s\n", err(prctl(PR_SET_TSC, 0)));
	printf("PR_SET_TSC 3: %s\n", err(prctl(PR_SET_TSC, 3)));
	printf("PR_GET_TSC to a bad pointer: %s\n", err(prctl(PR_GET_TSC, (int *)8)));

	pid_t child = fork();
	if (child == 0) {
		printf("forked child: %s, rdtsc: %s\n", mode(), try_rdtsc());
		execl("/proc/self/exe", argv[0], "exec", (char *)0);
		printf("exec: %s\n", strerror(errno));
		_exit(1);
	}
	waitpid(child, 0, 0);

	pthread_t t;
	pthread_create(&t, 0, thread_main, 0);
	pthread_join(t, 0);
	printf("main thread still: %s, rdtsc: %s\n", mode(), try_rdtsc());

	/* A child keeps PR_TSC_SIGSEGV, this process goes back to the counter,
	 * and the two take turns. */
	child = fork();
	if (child == 0) {
		int faults = faults_in(3000);
		printf("child with PR_TSC_SIGSEGV: %d of 3000 reads faulted\n", faults);
		_exit(0);
	}
	prctl(PR_SET_TSC, PR_TSC_ENABLE);
	int faults = faults_in(3000);
	waitpid(child, 0, 0);
	printf("parent with PR_TSC_ENABLE: %d of 3000 reads faulted\n", faults);
	printf("at end: %s, rdtsc: %s\n", mode(), try_rdtsc());
	return 0;
}

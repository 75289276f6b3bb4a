/* RLIMIT_CPU: a process that spends its soft limit of CPU time gets
 * SIGXCPU, and another each second after (the soft limit moves on a
 * second each time, as getrlimit shows in the handler); at the hard
 * limit it gets SIGKILL. Without a handler the first SIGXCPU ends it.
 * The CPU time is what counts, not the time on the clock: a child that
 * sleeps is not stopped. Same output as on Linux (the shape of a
 * well-known suite's setrlimit06). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Shared with the children: the soft limit each SIGXCPU handler saw. */
static volatile long *seen;

static void on_xcpu(int sig)
{
	(void)sig;
	struct rlimit r;
	getrlimit(RLIMIT_CPU, &r);
	seen[++seen[0]] = (long)r.rlim_cur;
}

static void report(const char *what, int status)
{
	printf("%s: ", what);
	if (WIFSIGNALED(status))
		printf("killed (%s)", strsignal(WTERMSIG(status)));
	else
		printf("exited %d", WEXITSTATUS(status));
	printf(", %ld SIGXCPU", seen[0]);
	for (long i = 1; i <= seen[0]; i++)
		printf("%s%ld", i == 1 ? " (soft limit then: " : ", ", seen[i]);
	printf("%s\n", seen[0] ? ")" : "");
}

/* A child with limits soft/hard that spins (or sleeps 3 s if `sleeps`),
 * catching SIGXCPU if `catches`. */
static void run(const char *what, rlim_t soft, rlim_t hard, int catches, int sleeps)
{
	memset((void *)seen, 0, 4096);
	pid_t child = fork();
	if (child == 0) {
		if (catches)
			signal(SIGXCPU, on_xcpu);
		struct rlimit r = {soft, hard};
		if (setrlimit(RLIMIT_CPU, &r) < 0) {
			perror("setrlimit");
			_exit(2);
		}
		alarm(30);
		if (sleeps) {
			struct timespec t = {3, 0};
			nanosleep(&t, 0);
			_exit(0);
		}
		for (;;)
			;
	}
	int status;
	waitpid(child, &status, 0);
	report(what, status);
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	seen = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	run("soft 1 s, hard 3 s, caught", 1, 3, 1, 0);
	run("soft 1 s, hard 1 s, caught", 1, 1, 1, 0);
	run("soft 1 s, hard 2 s, not caught", 1, 2, 0, 0);
	run("soft 1 s, sleeping 3 s", 1, 1, 1, 1);
	struct rlimit r;
	getrlimit(RLIMIT_CPU, &r);
	printf("this process's limit: %s\n", r.rlim_cur == RLIM_INFINITY ? "unlimited" : "set");
	return 0;
}

/*
 * gprof and fork with musl: the child inherits the profile (the kernel's
 * profil state and the runtime's tables) and writes its own when it exits,
 * the parent after it. Run as `cargo xtask prof` runs programs, with
 * GMON_OUT_PREFIX, each process writes PREFIX.PID: the first process's
 * (the parent's) has a() 1000 times and no b(), which only the child
 * called; the sum of both (`--all`) has both. (Without the prefix both
 * write gmon.out, and the parent's, written last, is what is left.)
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

/* Work enough for the clock to find it: a() is the parent's hot spot. */
__attribute__((noinline)) void a(void)
{
	for (int i = 0; i < 20000; i++)
		sink += 1;
}

__attribute__((noinline)) void b(void)
{
	for (int i = 0; i < 20000; i++)
		sink += 2;
}

int main(void)
{
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < 10; i++)
			b();
		return 0;
	}
	int status;
	waitpid(child, &status, 0);
	for (int i = 0; i < 1000; i++)
		a();
	printf("fork: the parent called a 1000 times, the child b 10 times (exit %d)\n",
	       WEXITSTATUS(status));
	return 0;
}

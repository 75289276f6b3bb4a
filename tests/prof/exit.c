/*
 * gprof with musl when main never returns: the program ends in exit()
 * from a function main called, and the runtime's exit handler (atexit)
 * still writes gmon.out, with the 100 calls to step() made before.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

/* Work enough for the clock to find it: step() is the hot spot. */
__attribute__((noinline)) void step(void)
{
	for (int i = 0; i < 200000; i++)
		sink += 3;
}

/* noipa: the compiler must not learn that finish() never returns and turn
 * main's call into a jump, which gprof would rightly show as a call from
 * wherever main was called. */
__attribute__((noinline, noipa)) void finish(void)
{
	for (int i = 0; i < 100; i++)
		step();
	printf("exit: step 100 times, then exit(0) from finish\n");
	exit(0);
}

int main(void)
{
	finish();
	return 1;
}

/* MAP_GROWSDOWN: an anonymous area that grows down when something below
 * it is touched, as a stack does (the suite's mmap18). It grows page by
 * page into free space, as far as RLIMIT_STACK allows, but never closer
 * than the stack guard gap (256 pages) to the mapping below it: there the
 * access is a SIGSEGV. A thread can run on such a stack, its recursion
 * growing it. A shared one is refused. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096L
#define GAP (256 * PAGE)

/* The size of the area of /proc/self/maps that holds `addr`, in pages. */
static long area_pages(void *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi, a = (unsigned long)addr;
	long pages = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= a && a < hi)
			pages = (hi - lo) / PAGE;
	fclose(f);
	return pages;
}

/* A growsdown area of `mapped` pages at the top of `room` free pages:
 * returns its lowest byte. */
static char *grows_down(long room, long mapped)
{
	char *start = mmap(0, room * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(start, room * PAGE);
	char *low = start + (room - mapped) * PAGE;
	char *p = mmap(low, mapped * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, -1, 0);
	if (p == MAP_FAILED) {
		printf("mmap MAP_GROWSDOWN: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

static void report(const char *what, int status)
{
	if (WIFSIGNALED(status))
		printf("%s: killed by %s\n", what, strsignal(WTERMSIG(status)));
	else
		printf("%s: exited %d\n", what, WEXITSTATUS(status));
}

/* In a child: `touch` runs, and the child's end is reported. */
static void in_child(const char *what, void (*touch)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		touch();
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	report(what, status);
}

static void touch_ten_below(void)
{
	char *p = grows_down(300, 1);
	for (int i = 1; i <= 10; i++)
		p[-i * PAGE] = 1;
	printf("  touched 10 pages below: the area has %ld pages\n", area_pages(p));
	p[-20 * PAGE] = 2;
	printf("  then 20 below, skipping some: %ld pages, the skipped read %d\n",
	       area_pages(p), p[-15 * PAGE]);
}

static void touch_into_the_gap(void)
{
	/* 100 free pages below the area, then a mapping. */
	char *p = grows_down(101, 1);
	mmap(p - 101 * PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("  area before: %ld pages\n", area_pages(p));
	p[-PAGE] = 1;
	printf("  not reached\n");
}

static void touch_past_the_limit(void)
{
	struct rlimit r = {16 * PAGE, RLIM_INFINITY};
	setrlimit(RLIMIT_STACK, &r);
	char *p = grows_down(400, 1);
	p[-15 * PAGE] = 1;
	printf("  16 pages in all: %ld pages\n", area_pages(p));
	p[-16 * PAGE] = 1;
	printf("  not reached\n");
}

/* Recursion that the compiler cannot turn into a loop: each call keeps a
 * page of its own on the stack. */
static __attribute__((noinline)) long deep(char *limit)
{
	volatile char frame[PAGE];
	frame[0] = 1;
	if ((char *)frame < limit)
		return frame[0];
	return deep(limit) + frame[0];
}

static void *run_deep(void *limit)
{
	return (void *)deep(limit);
}

static char *thread_stack;

static void thread_on_it(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, thread_stack, 64 * PAGE);
	pthread_t t;
	pthread_create(&t, &attr, run_deep, thread_stack + 4 * PAGE);
	pthread_join(t, 0);
	printf("  the thread's stack grew to %ld pages\n", area_pages(thread_stack + 63 * PAGE));
}

static void thread_stack_with_room(void)
{
	/* 64 pages of stack (8 mapped) above the guard gap's worth of room. */
	char *p = grows_down(256 + 64, 8);
	thread_stack = p - 56 * PAGE;
	thread_on_it();
}

static void thread_stack_without_room(void)
{
	char *p = grows_down(256 + 64, 8);
	thread_stack = p - 56 * PAGE;
	/* A page at the stack's bottom: the gap is gone. */
	mmap(thread_stack, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
	     0);
	thread_on_it();
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	in_child("grows into free space", touch_ten_below);
	in_child("into the guard gap", touch_into_the_gap);
	in_child("past RLIMIT_STACK", touch_past_the_limit);
	in_child("a thread's stack with room below", thread_stack_with_room);
	in_child("a thread's stack with a mapping below", thread_stack_without_room);
	void *s = mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
	printf("shared anonymous MAP_GROWSDOWN: %s\n", s == MAP_FAILED ? strerror(errno) : "mapped");
	return 0;
}

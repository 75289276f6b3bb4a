/* madvise's MADV_WIPEONFORK and MADV_KEEPONFORK: a child made by fork gets
 * a range marked WIPEONFORK empty (it reads zeros, as a fresh mapping),
 * the rest of the area as usual; the parent keeps its bytes and may write
 * them; the mark is the child's too, so a grandchild gets it empty again;
 * KEEPONFORK takes the mark away. Only private anonymous memory may be
 * marked (the suite's madvise10 and madvise11). Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static char *mem;

static void show(const char *who)
{
	printf("%s: pages 0..3 read %d %d %d %d\n", who, mem[0], mem[PAGE], mem[2 * PAGE + 9],
	       mem[3 * PAGE]);
}

static void in_child(const char *who, void (*then)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		show(who);
		if (then)
			then();
		exit(0);
	}
	waitpid(pid, 0, 0);
}

static void child_then_grandchild(void)
{
	memset(mem + PAGE, 'c', PAGE);
	printf("child wrote page 1: %d\n", mem[PAGE]);
	in_child("grandchild", 0);
}

static const char *err(int r)
{
	return r ? strerror(errno) : "ok";
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	mem = mmap(0, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(mem, 'a', 4 * PAGE);
	printf("WIPEONFORK on pages 1 and 2: %s\n", err(madvise(mem + PAGE, 2 * PAGE, MADV_WIPEONFORK)));
	in_child("child", child_then_grandchild);
	show("parent");
	mem[PAGE] = 'P';
	printf("parent wrote page 1: %d\n", mem[PAGE]);

	printf("KEEPONFORK on page 1: %s\n", err(madvise(mem + PAGE, PAGE, MADV_KEEPONFORK)));
	in_child("child after KEEPONFORK", 0);

	/* Pages never touched, and a range split by the mark, then merged. */
	char *fresh = mmap(0, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(fresh, 2 * PAGE, MADV_WIPEONFORK);
	pid_t pid = fork();
	if (pid == 0) {
		fresh[0] = 'x';
		printf("child writes a wiped, untouched page: %c\n", fresh[0]);
		exit(0);
	}
	waitpid(pid, 0, 0);

	int fd = open("/tmp/wipeonfork", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ftruncate(fd, PAGE);
	char *file = mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	char *shared = mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	printf("on a private file mapping: %s\n", err(madvise(file, PAGE, MADV_WIPEONFORK)));
	printf("on shared memory: %s\n", err(madvise(shared, PAGE, MADV_WIPEONFORK)));
	printf("KEEPONFORK on a file mapping: %s\n", err(madvise(file, PAGE, MADV_KEEPONFORK)));
	munmap(fresh + PAGE, PAGE);
	printf("over a hole: %s\n", err(madvise(fresh, 2 * PAGE, MADV_WIPEONFORK)));
	printf("unaligned: %s\n", err(madvise(mem + 1, PAGE, MADV_WIPEONFORK)));
	unlink("/tmp/wipeonfork");
	return 0;
}

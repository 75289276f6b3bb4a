/* An address space that mmap has filled: once every free range is taken,
 * the room above the heap included, brk cannot grow and malloc fails with
 * ENOMEM; when munmap gives some back, away from the heap, malloc works
 * again through mmap. This is musl's own regression test malloc-brk-fail,
 * which needs mmap to use the heap's room when nothing else is left, as
 * Linux's does. Same output as on Linux. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	/* Map PROT_NONE ranges, each as large as will go, until not even a
	 * page will: the largest is [big, big + big_len). */
	char *big = 0;
	size_t big_len = 0, len = (size_t)1 << 46, maps = 0;
	while (len >= 4096) {
		void *p = mmap(0, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			len /= 2;
			continue;
		}
		maps++;
		if (len > big_len) {
			big = p;
			big_len = len;
		}
	}
	printf("filled: %s\n", maps > 1 && big_len >= 2 * 65536 ? "yes" : "no");
	void *page = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("one more page: %s\n", page == MAP_FAILED ? strerror(errno) : "mapped");
	/* musl's sbrk refuses to move the break, so brk(2) itself: it
	 * answers with the break, unchanged when it cannot grow. */
	long old = syscall(SYS_brk, 0);
	long now = syscall(SYS_brk, old + 65536);
	printf("brk 64 KiB higher: %s\n", now == old ? "unchanged" : "grew");

	errno = 0;
	void *q = malloc(10000);
	printf("malloc(10000) with memory full: %s\n", q ? "succeeded" : strerror(errno));

	munmap(big + 65536, big_len - 65536);
	q = malloc(10000);
	printf("malloc(10000) after munmap: %s\n", q ? "succeeded" : strerror(errno));
	if (q)
		memset(q, 1, 10000);
	return 0;
}

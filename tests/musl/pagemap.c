/* /proc/self/pagemap: eight bytes per page, read at the page's index times
 * eight. A page never touched reads 0; a touched one has bit 63 (present)
 * and, for root, its frame number; an anonymous page this process alone
 * maps has bit 56, one fork shares with a child does not; a MAP_SHARED
 * page has bit 61. Reads off the entries are EINVAL, past the address
 * space the end of the file. Same output as on Linux (only the bits
 * both kernels keep are printed: Linux also sets soft-dirty). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static int fd;

static uint64_t entry(void *addr)
{
	uint64_t e = 0;
	if (pread(fd, &e, 8, (uintptr_t)addr / PAGE * 8) != 8)
		printf("pread: %s\n", strerror(errno));
	return e;
}

static void show(const char *what, void *addr, int exclusive_too)
{
	uint64_t e = entry(addr);
	printf("%s: present %d, shared %d", what, (int)(e >> 63), (int)(e >> 61 & 1));
	if (exclusive_too)
		printf(", mapped once %d", (int)(e >> 56 & 1));
	printf(", a frame number %d\n", (e & ((1ULL << 55) - 1)) != 0);
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	fd = open("/proc/self/pagemap", O_RDONLY);
	char *m = mmap(0, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m[0] = 1;
	m[2 * PAGE] = 1;
	volatile char c = m[3 * PAGE];
	(void)c;
	show("written page", m, 1);
	show("untouched page", m + PAGE, 1);
	show("another written page", m + 2 * PAGE, 1);
	show("page only read", m + 3 * PAGE, 1);
	char *s = mmap(0, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 1;
	show("shared page", s, 0);
	pid_t pid = fork();
	if (pid == 0) {
		show("in a child, the written page", m, 1);
		m[0] = 2;
		show("in a child, after it writes", m, 1);
		_exit(0);
	}
	waitpid(pid, 0, 0);
	show("the written page again", m, 1);
	uint64_t e[4];
	printf("4 entries at once: %zd bytes\n", pread(fd, e, sizeof e, (uintptr_t)m / PAGE * 8));
	printf("the same: %d\n", e[0] == entry(m) && e[1] == 0 && e[2] == entry(m + 2 * PAGE));
	printf("at an offset off the entries: %s\n", pread(fd, e, 8, 4) < 0 ? strerror(errno) : "read");
	printf("7 bytes: %s\n", pread(fd, e, 7, 0) < 0 ? strerror(errno) : "read");
	printf("past the address space: %zd\n", pread(fd, e, 8, (1ULL << 47) / PAGE * 8));
	return 0;
}

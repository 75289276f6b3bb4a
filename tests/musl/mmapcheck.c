/* The order of mmap's checks: which error a call with more than one thing
 * wrong gets. Linux checks the offset's alignment, then the descriptor,
 * the length, the address (MAP_FIXED), the file's size limit, and only
 * then the mapping type and the descriptor's access mode (a well-known
 * suite's mmap06 and mmap20 test these). Each line is one call and what
 * it gave; the output must be the same as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
/* A flag bit no kernel defines. */
#define MAP_UNKNOWN 0x800000

static void try(const char *what, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = mmap(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED) {
		printf("%-58s %s\n", what, strerror(errno));
		return;
	}
	printf("%-58s mapped\n", what);
	munmap(p, len ? len : 1);
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	int wr = open("/tmp/mmapcheck", O_WRONLY | O_CREAT | O_TRUNC, 0666);
	char page[4096] = {1};
	write(wr, page, sizeof page);
	int rd = open("/tmp/mmapcheck", O_RDONLY);
	int rw = open("/tmp/mmapcheck", O_RDWR | O_APPEND);
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	int pipes[2];
	pipe(pipes);
	const int A = MAP_ANONYMOUS, P = MAP_PRIVATE, S = MAP_SHARED, R = PROT_READ, W = PROT_WRITE;

	printf("-- what the suite's mmap06 asks (a descriptor open for writing only)\n");
	try("write-only, PROT_WRITE, MAP_PRIVATE", 0, 1024, W, P, wr, 0);
	try("write-only, PROT_WRITE, MAP_SHARED", 0, 1024, W, S, wr, 0);
	try("write-only, PROT_READ, MAP_PRIVATE", 0, 1024, R, P, wr, 0);
	try("write-only, PROT_READ, MAP_SHARED", 0, 1024, R, S, wr, 0);
	try("write-only, length 0", 0, 0, R | W, S, wr, 0);
	try("write-only, no mapping type", 0, 1024, R | W, 0, wr, 0);

	printf("-- mapping types\n");
	try("read-only, no mapping type", 0, 1024, R, 0, rd, 0);
	try("read-only, type 0xf", 0, 1024, R, 0xf, rd, 0);
	try("read-only, MAP_SHARED_VALIDATE", 0, 1024, R, MAP_SHARED_VALIDATE, rd, 0);
	try("read-only, MAP_SHARED_VALIDATE with an unknown flag", 0, 1024, R,
	    MAP_SHARED_VALIDATE | MAP_UNKNOWN, rd, 0);
	try("read-only, MAP_SHARED_VALIDATE with MAP_SYNC", 0, 1024, R, MAP_SHARED_VALIDATE | MAP_SYNC,
	    rd, 0);
	try("read-only, MAP_SHARED_VALIDATE with MAP_POPULATE", 0, 1024, R,
	    MAP_SHARED_VALIDATE | MAP_POPULATE, rd, 0);
	try("read-only, MAP_SHARED_VALIDATE with MAP_FIXED_NOREPLACE", (void *)0x50000000, 1024, R,
	    MAP_SHARED_VALIDATE | MAP_FIXED_NOREPLACE, rd, 0);
	try("read-only, MAP_SHARED with an unknown flag", 0, 1024, R, S | MAP_UNKNOWN, rd, 0);
	try("read-only, MAP_PRIVATE with an unknown flag", 0, 1024, R, P | MAP_UNKNOWN, rd, 0);
	try("write-only, MAP_SHARED_VALIDATE with an unknown flag", 0, 1024, R,
	    MAP_SHARED_VALIDATE | MAP_UNKNOWN, wr, 0);
	try("anonymous, MAP_SHARED_VALIDATE", 0, 4096, R, MAP_SHARED_VALIDATE | A, -1, 0);
	try("anonymous, no mapping type", 0, 4096, R, A, -1, 0);
	try("anonymous, MAP_PRIVATE with an unknown flag", 0, 4096, R, P | A | MAP_UNKNOWN, -1, 0);
	try("anonymous, MAP_SHARED with an unknown flag", 0, 4096, R, S | A | MAP_UNKNOWN, -1, 0);
	try("anonymous, an unknown protection bit", 0, 4096, R | 0x100, P | A, -1, 0);

	printf("-- which check comes first\n");
	try("bad descriptor", 0, 4096, R, P, 99, 0);
	try("bad descriptor, length 0", 0, 0, R, P, 99, 0);
	try("bad descriptor, offset not page-aligned", 0, 4096, R, P, 99, 1);
	try("bad descriptor, no mapping type", 0, 4096, R, 0, 99, 0);
	try("anonymous, descriptor 99", 0, 4096, R, P | A, 99, 0);
	try("write-only, offset not page-aligned", 0, 4096, R, P, wr, 1);
	try("write-only, MAP_FIXED at an unaligned address", (void *)0x10000001, 4096, R,
	    P | MAP_FIXED, wr, 0);
	try("write-only, length past the address space", 0, 1UL << 62, R, P, wr, 0);
	try("write-only, offset + length past a file's limit", 0, 0x2000, R, P, wr,
	    0x7ffffffffffff000);
	try("read-only, offset + length past a file's limit", 0, 0x2000, R, P, rd,
	    0x7ffffffffffff000);
	try("read-only, offset at a file's limit", 0, 0x1000, R, P, rd, 0x7ffffffffffff000);
	try("read-only, PROT_WRITE, MAP_SHARED", 0, 4096, R | W, S, rd, 0);
	try("read-only, PROT_WRITE, MAP_PRIVATE", 0, 4096, R | W, P, rd, 0);
	try("O_APPEND, PROT_WRITE, MAP_SHARED", 0, 4096, R | W, S, rw, 0);
	try("a directory", 0, 4096, R, P, dir, 0);
	try("a pipe's read end", 0, 4096, R, P, pipes[0], 0);
	try("a pipe's write end", 0, 4096, R, P, pipes[1], 0);
	try("a pipe's read end, no mapping type", 0, 4096, R, 0, pipes[0], 0);

	/* mprotect may not give a shared mapping rights its descriptor did not
	 * have, /dev/zero's included (the suite's mprotect01). musl's
	 * mprotect rounds the range out to pages, so the last two calls go
	 * to the kernel as they are. */
	printf("-- mprotect\n");
	int zero = open("/dev/zero", O_RDONLY);
	char *z = mmap(0, 4096, R, S, zero, 0);
	printf("/dev/zero read-only, MAP_SHARED, PROT_WRITE: %s\n",
	       mprotect(z, 4096, R | W) ? strerror(errno) : "ok");
	char *zp = mmap(0, 4096, R, P, zero, 0);
	printf("/dev/zero read-only, MAP_PRIVATE, PROT_WRITE: %s\n",
	       mprotect(zp, 4096, R | W) ? strerror(errno) : "ok");
	char *f = mmap(0, 4096, R, S, rd, 0);
	printf("file read-only, MAP_SHARED, PROT_WRITE: %s\n",
	       mprotect(f, 4096, R | W) ? strerror(errno) : "ok");
	printf("address 0, a page and a byte: %s\n",
	       syscall(SYS_mprotect, 0, 4097, R) ? strerror(errno) : "ok");
	printf("an address inside a page: %s\n", syscall(SYS_mprotect, z + 1, 1024, R) ? strerror(errno) : "ok");
	unlink("/tmp/mmapcheck");
	return 0;
}

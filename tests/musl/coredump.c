/* Core dumps: a child killed by a signal whose default action is "core"
 * leaves an ELF core file named `core` in its working directory, and its
 * wait status says so (WCOREDUMP), if RLIMIT_CORE allows one. The file is
 * read back here as GDB would: ET_CORE, an NT_PRSTATUS note with the
 * signal, the thread's id and the registers where it died, NT_PRPSINFO
 * with its name, and PT_LOAD segments that hold its memory (a global, a
 * heap block, the stack) as it was. Nothing is written with RLIMIT_CORE
 * 0, the file stops at the limit (and the status does not claim a dump),
 * and SIGKILL never dumps. The output must be the same as on Linux with
 * the default core_pattern ("core"), which this checks first.
 *
 * `musl-coredump crash DIR` only dies, leaving DIR/core for the test
 * command to read with GDB (xtask's core-file-in-gdb suite): it runs
 * itself again with a 256 KiB stack first, so the core stays small. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIR "/tmp/coredump-test"
#define CORE DIR "/core"

static volatile uint64_t global = 0x1122334455667788;

/* What the child tells the parent before it dies. */
struct told {
	uint64_t heap, stack;
};
static struct told *told;

/* Null, but the compiler cannot know it (a plain null store it would
 * take for unreachable and drop, call and all). */
static int *volatile nowhere;

static __attribute__((noinline)) void crash(void)
{
	*nowhere = 1;
}

static void die_segv(void)
{
	char *heap = malloc(200000);
	memset(heap, 0x5a, 200000);
	volatile uint64_t on_stack = 0xfeedfacecafebeef;
	told->heap = (uintptr_t)heap;
	told->stack = (uintptr_t)&on_stack;
	crash();
}

static void die_abort(void)
{
	abort();
}

static void die_quit(void)
{
	kill(getpid(), SIGQUIT);
	pause();
}

static void die_kill(void)
{
	kill(getpid(), SIGKILL);
	pause();
}

/* A child that sets RLIMIT_CORE to `limit`, works in DIR and dies. */
static int run(rlim_t limit, void (*die)(void), pid_t *pid)
{
	*pid = fork();
	if (*pid == 0) {
		/* The signals' default actions, whatever was inherited (a shell
		 * running the tests in the background ignores SIGQUIT). */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, 0);
		for (int s = 1; s < 32; s++)
			if (s != SIGKILL && s != SIGSTOP)
				signal(s, SIG_DFL);
		struct rlimit r = {limit, RLIM_INFINITY};
		setrlimit(RLIMIT_CORE, &r);
		chdir(DIR);
		die();
		_exit(99);
	}
	int status;
	waitpid(*pid, &status, 0);
	return status;
}

static void report(const char *what, int status)
{
	struct stat st;
	int there = stat(CORE, &st) == 0;
	printf("%s: killed by %s, WCOREDUMP %d, core file %s\n", what,
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "nothing",
	       WIFSIGNALED(status) && WCOREDUMP(status) ? 1 : 0, there ? "there" : "not there");
}

static uint64_t read_at(int fd, uint64_t at)
{
	uint64_t v = 0;
	pread(fd, &v, sizeof v, at);
	return v;
}

/* The file offset of address `addr` in the core, or 0 if no PT_LOAD
 * holds it in the file. */
static uint64_t offset_of(Elf64_Phdr *ph, int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr &&
		    addr + 8 <= ph[i].p_vaddr + ph[i].p_filesz)
			return ph[i].p_offset + (addr - ph[i].p_vaddr);
	return 0;
}

static void read_back(pid_t pid)
{
	int fd = open(CORE, O_RDONLY);
	Elf64_Ehdr eh;
	pread(fd, &eh, sizeof eh, 0);
	printf("ELF: %d, type ET_CORE: %d, machine x86-64: %d, no sections: %d\n",
	       memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0, eh.e_type == ET_CORE,
	       eh.e_machine == EM_X86_64, eh.e_shnum == 0);
	Elf64_Phdr ph[64];
	int n = eh.e_phnum < 64 ? eh.e_phnum : 64;
	pread(fd, ph, n * sizeof ph[0], eh.e_phoff);
	int notes = 0, loads = 0;
	for (int i = 0; i < n; i++) {
		notes += ph[i].p_type == PT_NOTE;
		loads += ph[i].p_type == PT_LOAD;
	}
	printf("one PT_NOTE: %d, PT_LOADs: %d\n", notes == 1, loads > 3);
	for (int i = 0; i < n; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		char *buf = malloc(ph[i].p_filesz);
		pread(fd, buf, ph[i].p_filesz, ph[i].p_offset);
		int prstatus = 0;
		for (size_t at = 0; at + 12 <= ph[i].p_filesz;) {
			Elf64_Nhdr *h = (Elf64_Nhdr *)(buf + at);
			char *name = buf + at + 12;
			char *desc = name + ((h->n_namesz + 3) & ~3u);
			if (h->n_namesz == 5 && !memcmp(name, "CORE", 5) && h->n_type == NT_PRSTATUS) {
				prstatus++;
				short cursig;
				int tid;
				uint64_t rip, rsp;
				memcpy(&cursig, desc + 12, 2);
				memcpy(&tid, desc + 32, 4);
				memcpy(&rip, desc + 112 + 16 * 8, 8);
				memcpy(&rsp, desc + 112 + 19 * 8, 8);
				printf("NT_PRSTATUS: signal %d, the child's id: %d, size %u\n", cursig,
				       tid == pid, h->n_descsz);
				printf("  rip in crash(): %d, rsp below the stack word: %d\n",
				       rip >= (uintptr_t)crash && rip < (uintptr_t)crash + 32,
				       rsp <= told->stack && told->stack - rsp < 4096);
			}
			if (h->n_namesz == 5 && !memcmp(name, "CORE", 5) && h->n_type == NT_PRPSINFO) {
				char comm[32] = {0}, fname[17] = {0};
				FILE *f = fopen("/proc/self/comm", "r");
				fgets(comm, sizeof comm, f);
				fclose(f);
				comm[strcspn(comm, "\n")] = 0;
				memcpy(fname, desc + 40, 16);
				printf("NT_PRPSINFO: the child's name: %d, size %u\n", !strcmp(fname, comm),
				       h->n_descsz);
			}
			at = desc - buf + ((h->n_descsz + 3) & ~3u);
		}
		printf("NT_PRSTATUS notes: %d\n", prstatus);
		free(buf);
	}
	uint64_t g = offset_of(ph, n, (uintptr_t)&global);
	uint64_t h = offset_of(ph, n, told->heap + 100000);
	uint64_t s = offset_of(ph, n, told->stack);
	printf("the global reads back: %d\n", g && read_at(fd, g) == 0x1122334455667788);
	printf("the heap block reads back: %d\n", h && read_at(fd, h) == 0x5a5a5a5a5a5a5a5a);
	printf("the stack word reads back: %d\n", s && read_at(fd, s) == 0xfeedfacecafebeef);
	close(fd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, 0, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "crash")) {
		struct rlimit r = {256 << 10, RLIM_INFINITY};
		setrlimit(RLIMIT_STACK, &r);
		execl("/proc/self/exe", argv[0], "crashing", argv[2], (char *)0);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "crashing")) {
		struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};
		setrlimit(RLIMIT_CORE, &r);
		chdir(argv[2]);
		told = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		die_segv();
		return 1;
	}
	char pattern[256] = {0};
	FILE *f = fopen("/proc/sys/kernel/core_pattern", "r");
	if (f) {
		fgets(pattern, sizeof pattern, f);
		fclose(f);
	}
	printf("core_pattern: %s", pattern);
	told = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	mkdir(DIR, 0755);
	unlink(CORE);

	pid_t pid;
	report("RLIMIT_CORE 0, SIGSEGV", run(0, die_segv, &pid));

	/* An old file of that name is replaced. */
	int old = open(CORE, O_WRONLY | O_CREAT, 0644);
	write(old, "old", 3);
	close(old);
	report("unlimited, SIGSEGV", run(RLIM_INFINITY, die_segv, &pid));
	read_back(pid);
	struct stat st;
	stat(CORE, &st);
	printf("mode 0600: %d\n", (st.st_mode & 0777) == 0600);

	unlink(CORE);
	report("unlimited, abort()", run(RLIM_INFINITY, die_abort, &pid));
	unlink(CORE);
	report("unlimited, SIGQUIT", run(RLIM_INFINITY, die_quit, &pid));
	unlink(CORE);
	report("unlimited, SIGKILL", run(RLIM_INFINITY, die_kill, &pid));
	unlink(CORE);
	report("one page, SIGSEGV", run(4096, die_segv, &pid));
	stat(CORE, &st);
	printf("at most the limit: %d\n", st.st_size <= 4096);
	unlink(CORE);
	rmdir(DIR);
	return 0;
}

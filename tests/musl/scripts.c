/* #! scripts, as Linux's binfmt_script runs them: the interpreter named
 * on the first line gets its name, the line's one argument (spaces kept),
 * the script's path, then the caller's arguments after argv[0]. The
 * interpreter here is this program itself ("--show" makes it print what
 * it got); a script may name a script, five deep, and a sixth is ELOOP;
 * no name is ENOEXEC, a missing interpreter ENOENT, one not executable
 * EACCES, a name longer than the 256 bytes read ENOEXEC. Same output as
 * on Linux (Python's subprocess runs "#!/bin/sh" scripts by exec). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], self[256];

/* An argument with the directory's (random) name hidden. */
static void show(const char *arg)
{
	size_t n = strlen(dir);
	if (!strncmp(arg, dir, n))
		printf(" [DIR%s]", arg + n);
	else if (!strcmp(arg, self))
		printf(" [SELF]");
	else
		printf(" [%s]", arg);
}

static void write_script(const char *name, const char *text, int mode)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0700);
	write(fd, text, strlen(text));
	close(fd);
	chmod(path, mode);
}

static void run(const char *what, const char *name)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"argv0", "one", "two words", NULL};
		execv(path, argv);
		printf("%-32s %s\n", what, strerror(errno));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "--show", 6)) {
		strcpy(dir, getenv("SCRIPTS_DIR"));
		readlink("/proc/self/exe", self, sizeof self - 1);
		printf("%-32s", getenv("SCRIPTS_CASE"));
		for (int i = 1; i < argc; i++)
			show(argv[i]);
		printf("\n");
		return 0;
	}
	strcpy(dir, "/tmp/scripts.XXXXXX");
	if (!mkdtemp(dir) || readlink("/proc/self/exe", self, sizeof self - 1) < 0)
		return 1;
	setenv("SCRIPTS_DIR", dir, 1);
	char text[512];

	snprintf(text, sizeof text, "#!%s --show\necho never\n", self);
	write_script("plain", text, 0755);
	setenv("SCRIPTS_CASE", "#!SELF --show:", 1);
	run("plain", "plain");

	snprintf(text, sizeof text, "#! \t%s  --show with  spaces \t \nrest\n", self);
	write_script("spaces", text, 0755);
	setenv("SCRIPTS_CASE", "spaces around and inside:", 1);
	run("spaces", "spaces");

	snprintf(text, sizeof text, "#!%s --show", self);
	write_script("no-newline", text, 0755);
	setenv("SCRIPTS_CASE", "no newline at the end:", 1);
	run("no newline", "no-newline");

	write_script("nested1", "#!DIR/plain\n", 0755);
	snprintf(text, sizeof text, "#!%s/plain\n", dir);
	write_script("nested1", text, 0755);
	char prev[16] = "nested1";
	for (int depth = 2; depth <= 6; depth++) {
		char name[16];
		snprintf(name, sizeof name, "nested%d", depth);
		snprintf(text, sizeof text, "#!%s/%s\n", dir, prev);
		write_script(name, text, 0755);
		strcpy(prev, name);
	}
	setenv("SCRIPTS_CASE", "a script of a script:", 1);
	run("a script of a script", "nested1");
	setenv("SCRIPTS_CASE", "five scripts deep:", 1);
	run("five scripts deep", "nested4");
	run("six scripts deep", "nested5");

	write_script("empty", "#!\n/bin/sh\n", 0755);
	run("no interpreter named", "empty");
	write_script("blank", "#!   \t  \n", 0755);
	run("only spaces", "blank");
	write_script("missing", "#!/no/such/interpreter\n", 0755);
	run("a missing interpreter", "missing");
	snprintf(text, sizeof text, "#!%s/data\n", dir);
	write_script("data", "just text\n", 0644);
	write_script("to-data", text, 0755);
	run("an interpreter not executable", "to-data");
	snprintf(text, sizeof text, "#!%s --show\n", self);
	write_script("not-exec", text, 0644);
	run("a script not executable", "not-exec");
	memset(text, 'a', 300);
	memcpy(text, "#!/", 3);
	text[300] = '\n';
	text[301] = 0;
	write_script("long", text, 0755);
	run("a name past 256 bytes", "long");

	const char *names[] = {"plain", "spaces", "no-newline", "nested1", "nested2", "nested3",
			       "nested4", "nested5", "nested6", "empty", "blank", "missing",
			       "data", "to-data", "not-exec", "long"};
	for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	return 0;
}

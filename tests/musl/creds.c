/* User and group ids and what they allow: the set*id calls' rules (real,
 * effective, saved), supplementary groups, file permission bits (search,
 * read, write, create and remove in a directory, the sticky bit, access()
 * with the real ids), chmod and chown and who may use them, kill between
 * users, resource limits of another user's process, and System V objects
 * with keys another user may not use. Run as root, each part in a child
 * that becomes user 1000 or 1001; the output must be the same as on
 * Linux, so it prints no pid, time or id number that differs between
 * systems. Nothing here lives in a sticky world-writable directory but
 * the sticky test's own files, so Linux's protected_* settings do not
 * apply. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIR "/tmp/creds.d"

static void check(const char *what, long r)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %ld\n", what, r);
}

/* An open's result without the descriptor's number, which depends on
 * what the process inherited. */
static void opened(const char *what, int fd)
{
	if (fd < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: ok\n", what);
}

static void ids(const char *when)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	printf("%s: uid %d %d %d gid %d %d %d, getuid %d geteuid %d\n", when, (int)r, (int)e, (int)s,
	       (int)gr, (int)ge, (int)gs, (int)getuid(), (int)geteuid());
}

/* Runs f in a child and waits for it, so each part starts as root. */
static void in_child(const char *name, void (*f)(void))
{
	printf("-- %s\n", name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		f();
		fflush(stdout);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		printf("%s: child status %#x\n", name, status);
}

/* Becomes user `uid` in group 100 with no supplementary groups. */
static void become(uid_t uid)
{
	if (setgroups(0, NULL) || setgid(100) || setuid(uid))
		printf("become %d: %s\n", (int)uid, strerror(errno));
}

static void setid_rules(void)
{
	ids("root");
	check("setresuid(1000, 2000, 3000)", setresuid(1000, 2000, 3000));
	ids("after");
	check("setuid(3000), the saved id", setuid(3000));
	ids("after");
	check("setuid(0)", setuid(0));
	check("setreuid(-1, 1000), the real id", setreuid(-1, 1000));
	ids("after");
	check("seteuid(3000), the saved id kept", seteuid(3000));
	check("setreuid(5, -1)", setreuid(5, -1));
	check("setresuid(-1, 7, -1)", setresuid(-1, 7, -1));
	check("setfsuid(-1) answers the file-system id", setfsuid(-1));
	check("setfsuid(9) answers the old id", setfsuid(9));
	check("setfsuid(-1) again: 9 was refused", setfsuid(-1));
	gid_t one = 50;
	check("setgroups as user 3000", setgroups(1, &one));
	check("setgid(100)", setgid(100));
	check("setregid(100, 100)", setregid(100, 100));
}

static void root_groups(void)
{
	gid_t list[3] = { 30, 10, 20 };
	gid_t got[8];
	check("setgroups(3)", setgroups(3, list));
	check("getgroups(0, NULL)", getgroups(0, NULL));
	check("getgroups(2, ...) too small", getgroups(2, got));
	int n = getgroups(8, got);
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += got[i];
	printf("getgroups: %d groups summing to %d\n", n, sum);
	check("setgroups(-1)", setgroups((size_t)-1, list));
	check("setresgid(7, 8, 9)", setresgid(7, 8, 9));
	gid_t r, e, s;
	getresgid(&r, &e, &s);
	printf("gids %d %d %d\n", (int)r, (int)e, (int)s);
}

static void files_as_user(void)
{
	become(1000);
	ids("user 1000");
	opened("open secret (0600 root) for reading", open(DIR "/secret", O_RDONLY));
	opened("open shared (0644 root) for reading", open(DIR "/shared", O_RDONLY));
	opened("open shared for writing", open(DIR "/shared", O_WRONLY));
	opened("open shared O_RDONLY|O_TRUNC", open(DIR "/shared", O_RDONLY | O_TRUNC));
	check("truncate shared", truncate(DIR "/shared", 0));
	struct stat st;
	check("stat private/inside (0700 dir)", stat(DIR "/private/inside", &st));
	check("chdir private", chdir(DIR "/private"));
	opened("open noread (0222) for writing", open(DIR "/noread", O_WRONLY));
	opened("create in the 0755 dir", open(DIR "/new", O_CREAT | O_WRONLY, 0644));
	check("mkdir in the 0755 dir", mkdir(DIR "/newdir", 0755));
	check("unlink shared", unlink(DIR "/shared"));
	check("rename shared", rename(DIR "/shared", DIR "/moved"));
	check("symlink in the 0755 dir", symlink("shared", DIR "/link"));
	check("chmod shared", chmod(DIR "/shared", 0666));
	check("chown shared to me", chown(DIR "/shared", 1000, 100));
	check("access secret R_OK", access(DIR "/secret", R_OK));
	check("access shared R_OK", access(DIR "/shared", R_OK));
	check("access shared W_OK", access(DIR "/shared", W_OK));
	check("access shared X_OK", access(DIR "/shared", X_OK));
	check("access private/inside F_OK", access(DIR "/private/inside", F_OK));
	check("execve of a 0644 file", execl(DIR "/shared", "shared", (char *)NULL));
	/* A directory of its own, made by root and given to user 1000. */
	int fd = open(DIR "/mine/file", O_CREAT | O_EXCL | O_WRONLY, 0666);
	opened("create in my own dir", fd);
	check("fstat it", fstat(fd, &st));
	printf("owner %d group %d mode %o (umask 022)\n", (int)st.st_uid, (int)st.st_gid,
	       (unsigned)st.st_mode & 07777);
	check("fchmod 0604", fchmod(fd, 0604));
	check("fchown to group 100", fchown(fd, -1, 100));
	check("fchown to group 200 (not mine)", fchown(fd, -1, 200));
	check("fchown to user 0", fchown(fd, 0, -1));
	check("fchown to myself", fchown(fd, 1000, -1));
	check("fchmod 02755 (the file's group is mine: the bit stays)", fchmod(fd, 02755));
	fstat(fd, &st);
	printf("mode %o\n", (unsigned)st.st_mode & 07777);
	close(fd);
	check("mkdir in my own dir", mkdir(DIR "/mine/sub", 0777));
	stat(DIR "/mine/sub", &st);
	printf("sub: owner %d group %d mode %o\n", (int)st.st_uid, (int)st.st_gid,
	       (unsigned)st.st_mode & 07777);
	check("unlink my file", unlink(DIR "/mine/file"));
	check("rmdir my sub", rmdir(DIR "/mine/sub"));
}

static void sticky(void)
{
	become(1000);
	opened("create in the sticky dir", open(DIR "/sticky/mine", O_CREAT | O_EXCL | O_WRONLY, 0644));
	check("unlink root's file in the sticky dir", unlink(DIR "/sticky/rootfile"));
	check("rename root's file in the sticky dir", rename(DIR "/sticky/rootfile", DIR "/sticky/x"));
	check("rename my file in the sticky dir", rename(DIR "/sticky/mine", DIR "/sticky/mine2"));
}

static void sticky_other(void)
{
	become(1001);
	check("user 1001: unlink user 1000's file in the sticky dir", unlink(DIR "/sticky/mine2"));
}

static void sticky_owner(void)
{
	become(1000);
	check("user 1000: unlink its own file in the sticky dir", unlink(DIR "/sticky/mine2"));
}

/* A child that becomes `uid` and waits to be killed; its pid once it has. */
static pid_t user_process(uid_t uid)
{
	int ready[2];
	pipe(ready);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		become(uid);
		write(ready[1], "x", 1);
		for (;;)
			pause();
	}
	char c;
	read(ready[0], &c, 1);
	close(ready[0]);
	close(ready[1]);
	return pid;
}

static pid_t other, same;

static void signals_and_limits(void)
{
	pid_t parent = getppid();
	become(1000);
	check("kill(root parent, 0)", kill(parent, 0));
	check("kill(user 1001, SIGTERM)", kill(other, SIGTERM));
	check("kill(myself, 0)", kill(getpid(), 0));
	check("kill(another process of user 1000, 0)", kill(same, 0));
	struct rlimit rl;
	check("prlimit(user 1001's process)", prlimit(other, RLIMIT_NOFILE, NULL, &rl));
	check("prlimit(user 1000's process)", prlimit(same, RLIMIT_NOFILE, NULL, &rl));
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_max += 1;
	check("raise my hard limit", setrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_max -= 2;
	rl.rlim_cur = rl.rlim_max;
	check("lower it", setrlimit(RLIMIT_NOFILE, &rl));
	check("setuid(0) as user 1000", setuid(0));
	check("kill(user 1000's, SIGKILL)", kill(same, SIGKILL));
}

static int queue_open, queue_closed, sem_closed, shm_closed;

static void ipc_as_user(void)
{
	become(1000);
	struct msqid_ds ds;
	check("msgget(key of a 0600 queue, 0): asks nothing", msgget(0x7c1, 0) == queue_closed ? 0 : -1);
	check("msgget(key of a 0600 queue, 0600)", msgget(0x7c1, 0600));
	check("msgsnd to a 0600 queue", msgsnd(queue_closed, "\1\0\0\0\0\0\0\0x", 1, IPC_NOWAIT));
	check("IPC_STAT of a 0600 queue", msgctl(queue_closed, IPC_STAT, &ds));
	check("IPC_RMID of root's queue", msgctl(queue_closed, IPC_RMID, NULL));
	check("msgsnd to a 0622 queue", msgsnd(queue_open, "\1\0\0\0\0\0\0\0x", 1, IPC_NOWAIT));
	check("msgrcv from a 0622 queue", msgrcv(queue_open, &ds, 8, 0, IPC_NOWAIT));
	msgctl(queue_open, IPC_STAT, &ds);
	ds.msg_perm.mode = 0666;
	check("IPC_SET of root's queue", msgctl(queue_open, IPC_SET, &ds));
	check("semget(key of a 0600 set, 1, 0400)", semget(0x7c2, 1, 0400));
	struct sembuf up = { 0, 1, IPC_NOWAIT };
	check("semop on a 0600 set", semop(sem_closed, &up, 1));
	check("semctl GETVAL on a 0600 set", semctl(sem_closed, 0, GETVAL));
	check("shmget(key of a 0600 segment, 0, 0400)", shmget(0x7c3, 0, 0400));
	check("shmat of a 0600 segment", shmat(shm_closed, NULL, SHM_RDONLY) == (void *)-1 ? -1 : 0);
	check("IPC_RMID of root's segment", shmctl(shm_closed, IPC_RMID, NULL));
	int mine = msgget(IPC_PRIVATE, 0600);
	check("my own queue", mine < 0 ? -1 : 0);
	msgctl(mine, IPC_STAT, &ds);
	printf("its owner %d group %d creator %d %d\n", (int)ds.msg_perm.uid, (int)ds.msg_perm.gid,
	       (int)ds.msg_perm.cuid, (int)ds.msg_perm.cgid);
	check("IPC_RMID of my own queue", msgctl(mine, IPC_RMID, NULL));
}

static void ipc_group(void)
{
	/* Group 100 may read a 0640 queue owned by root and group 100. */
	if (setgroups(0, NULL) || setgid(100) || setuid(1001))
		printf("become: %s\n", strerror(errno));
	struct msqid_ds ds;
	check("IPC_STAT of a 0640 queue of my group", msgctl(queue_open, IPC_STAT, &ds));
	check("msgsnd to it", msgsnd(queue_open, "\1\0\0\0\0\0\0\0x", 1, IPC_NOWAIT));
}

/* Removes what setup and the parts made (rm -r of a known tree). */
static void clean(void)
{
	const char *files[] = { "secret", "shared", "noread", "private/inside", "mine/file",
				"sticky/rootfile", "sticky/mine", "sticky/mine2", "new", "link" };
	const char *dirs[] = { "private", "mine/sub", "mine", "sticky", "newdir" };
	char path[64];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(path, sizeof path, "%s/%s", DIR, files[i]);
		unlink(path);
	}
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(path, sizeof path, "%s/%s", DIR, dirs[i]);
		rmdir(path);
	}
	rmdir(DIR);
}

static void setup(void)
{
	clean();
	umask(022);
	mkdir(DIR, 0755);
	close(open(DIR "/secret", O_CREAT | O_WRONLY, 0600));
	close(open(DIR "/shared", O_CREAT | O_WRONLY, 0644));
	close(open(DIR "/noread", O_CREAT | O_WRONLY, 0644));
	chmod(DIR "/noread", 0222);
	mkdir(DIR "/private", 0700);
	close(open(DIR "/private/inside", O_CREAT | O_WRONLY, 0644));
	mkdir(DIR "/mine", 0755);
	chown(DIR "/mine", 1000, 100);
	mkdir(DIR "/sticky", 0777);
	chmod(DIR "/sticky", 01777);
	close(open(DIR "/sticky/rootfile", O_CREAT | O_WRONLY, 0644));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	struct stat st;
	stat(DIR "/mine", &st);
	printf("root made mine: owner %d group %d\n", (int)st.st_uid, (int)st.st_gid);
	opened("root opens noread (0222) for reading", open(DIR "/noread", O_RDONLY));
	check("root execs a 0644 file", execl(DIR "/shared", "shared", (char *)NULL));
	in_child("set*id rules", setid_rules);
	in_child("supplementary groups", root_groups);
	in_child("files", files_as_user);
	in_child("sticky directory", sticky);
	in_child("sticky directory, another user", sticky_other);
	in_child("sticky directory, the owner", sticky_owner);
	other = user_process(1001);
	same = user_process(1000);
	in_child("signals and limits", signals_and_limits);
	int status;
	waitpid(same, &status, 0);
	printf("user 1000's process: %s\n", WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "not killed");
	check("root: kill(user 1001's, SIGKILL)", kill(other, SIGKILL));
	waitpid(other, &status, 0);

	queue_closed = msgget(0x7c1, IPC_CREAT | 0600);
	queue_open = msgget(IPC_PRIVATE, 0622);
	sem_closed = semget(0x7c2, 1, IPC_CREAT | 0600);
	shm_closed = shmget(0x7c3, 4096, IPC_CREAT | 0600);
	in_child("System V IPC as another user", ipc_as_user);
	struct msqid_ds ds;
	msgctl(queue_open, IPC_STAT, &ds);
	ds.msg_perm.gid = 100;
	ds.msg_perm.mode = 0640;
	check("root: IPC_SET group 100, mode 0640", msgctl(queue_open, IPC_SET, &ds));
	in_child("System V IPC as a member of the group", ipc_group);
	msgctl(queue_closed, IPC_RMID, NULL);
	msgctl(queue_open, IPC_RMID, NULL);
	semctl(sem_closed, 0, IPC_RMID);
	shmctl(shm_closed, IPC_RMID, NULL);
	clean();
	struct stat gone;
	check("the test's directory is gone", stat(DIR, &gone));
	return 0;
}

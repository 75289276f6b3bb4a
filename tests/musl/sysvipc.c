/* System V IPC: message queues (types, sizes, a full queue, waiting on
 * both sides), semaphore sets (all-or-nothing operations, waiting counts,
 * SEM_UNDO at exit, timeouts) and shared memory (fork shares it, two
 * attachments see each other, read-only attachments, SHM_RND and
 * SHM_REMAP, removal while attached), with IPC_RMID waking waiters to
 * EIDRM, a signal ending a wait in EINTR, the errors, and the tables in
 * /proc/sysvipc. The output must
 * be the same as on Linux, so it prints no id, pid, time or address. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

static void check(const char *what, long r)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %ld\n", what, r);
}

static void ok(const char *what, long r)
{
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: ok\n", what);
}

struct msg {
	long mtype;
	char mtext[64];
};

static long send(int q, long type, const char *text, int flags)
{
	struct msg m = { .mtype = type };
	strcpy(m.mtext, text);
	return msgsnd(q, &m, strlen(text), flags);
}

static void receive(const char *what, int q, size_t size, long type, int flags)
{
	struct msg m;
	memset(&m, 0, sizeof m);
	long n = msgrcv(q, &m, size, type, flags);
	if (n < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: type %ld \"%.*s\"\n", what, m.mtype, (int)n, m.mtext);
}

static void queue_state(const char *what, int q)
{
	struct msqid_ds ds;
	if (msgctl(q, IPC_STAT, &ds) < 0) {
		printf("%s: stat -1 %s\n", what, strerror(errno));
		return;
	}
	printf("%s: %lu messages, %lu bytes of %lu, mode %o, last sender %s\n", what,
	       (unsigned long)ds.msg_qnum, (unsigned long)ds.__msg_cbytes,
	       (unsigned long)ds.msg_qbytes, (unsigned)ds.msg_perm.mode & 0777,
	       ds.msg_lspid == getpid() ? "me" : ds.msg_lspid == 0 ? "none" : "other");
}

static void on_alarm(int sig) { (void)sig; }

/* Runs `body` in a child and waits for it; prints its exit status. */
static void in_child(const char *what, void (*body)(int), int arg)
{
	pid_t pid = fork();
	if (pid == 0) {
		body(arg);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("%s: killed by signal %d\n", what, WTERMSIG(status));
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&t, 0);
}

static void messages(void)
{
	const key_t key = 0x70726f66;
	int old = msgget(key, 0);
	if (old >= 0)
		msgctl(old, IPC_RMID, 0);
	check("msgget key absent", msgget(key, 0600));
	int q = msgget(key, IPC_CREAT | 0640);
	ok("msgget IPC_CREAT", q);
	check("msgget IPC_EXCL", msgget(key, IPC_CREAT | IPC_EXCL | 0600));
	printf("msgget again: %s\n", msgget(key, 0) == q ? "same queue" : "other");
	int p1 = msgget(IPC_PRIVATE, 0600), p2 = msgget(IPC_PRIVATE, 0600);
	printf("private queues differ: %s\n", p1 != p2 ? "yes" : "no");
	msgctl(p1, IPC_RMID, 0);
	msgctl(p2, IPC_RMID, 0);
	queue_state("new", q);

	ok("send 3", send(q, 3, "three", 0));
	ok("send 1", send(q, 1, "one", 0));
	ok("send 2", send(q, 2, "two", 0));
	ok("send 1 again", send(q, 1, "uno", 0));
	queue_state("four sent", q);
	receive("copy #2", q, 64, 2, MSG_COPY | IPC_NOWAIT);
	receive("copy #9", q, 64, 9, MSG_COPY | IPC_NOWAIT);
	receive("copy waiting", q, 64, 0, MSG_COPY);
	receive("small buffer", q, 2, 0, 0);
	queue_state("still four", q);
	receive("any", q, 2, 0, MSG_NOERROR);
	receive("type 2", q, 64, 2, 0);
	receive("not type 1", q, 64, 1, MSG_EXCEPT | IPC_NOWAIT);
	receive("lowest up to 5", q, 64, -5, 0);
	receive("type 1", q, 64, 1, 0);
	receive("empty", q, 64, 0, IPC_NOWAIT);
	queue_state("empty", q);

	struct msg big = { .mtype = 1 };
	check("send type 0", msgsnd(q, &(struct msg){ .mtype = 0 }, 1, 0));
	check("send 8193 bytes", msgsnd(q, &big, 8193, 0));
	check("send bad pointer", msgsnd(q, (void *)8, 1, 0));
	check("send bad id", msgsnd(-1, &big, 1, 0));
	check("receive removed id", msgrcv(p1, &big, 1, 0, IPC_NOWAIT));
	check("ctl unknown", msgctl(q, 99, 0));
	check("ctl IPC_64", msgctl(q, IPC_STAT | 0x100, &(struct msqid_ds){ 0 }));
	check("ctl bad buffer", msgctl(q, IPC_STAT, (void *)8));

	struct msqid_ds ds;
	msgctl(q, IPC_STAT, &ds);
	ds.msg_qbytes = 10;
	ds.msg_perm.mode = 0600;
	ok("IPC_SET 10 bytes", msgctl(q, IPC_SET, &ds));
	ok("send 6", send(q, 5, "sixsix", IPC_NOWAIT));
	check("send 6 more", send(q, 5, "sixsix", IPC_NOWAIT));
	ok("send 4", send(q, 5, "four", IPC_NOWAIT));
	check("send 0 bytes", send(q, 5, "", IPC_NOWAIT));
	queue_state("full", q);

	/* A sender waits for room; a receiver makes it. */
	pid_t pid = fork();
	if (pid == 0) {
		long r = send(q, 7, "late", 0);
		_exit(r == 0 ? 0 : 1);
	}
	sleep_ms(100);
	queue_state("sender waiting", q);
	receive("make room", q, 64, 0, 0);
	int status;
	waitpid(pid, &status, 0);
	printf("sender: exit %d\n", WEXITSTATUS(status));
	receive("after", q, 64, 0, 0);
	receive("after", q, 64, 0, 0);
	queue_state("sender's message", q);

	/* A receiver waits for its type; a send of it wakes it. */
	pid = fork();
	if (pid == 0) {
		struct msg m;
		long n = msgrcv(q, &m, sizeof m.mtext, 9, 0);
		_exit(n == 4 && memcmp(m.mtext, "nine", 4) == 0 ? 0 : 1);
	}
	sleep_ms(100);
	ok("send 8", send(q, 8, "x", 0));
	ok("send 9", send(q, 9, "nine", 0));
	waitpid(pid, &status, 0);
	printf("receiver: exit %d\n", WEXITSTATUS(status));
	receive("left", q, 64, 0, IPC_NOWAIT);
	receive("left", q, 64, 0, IPC_NOWAIT);

	/* A signal ends a wait with EINTR, SA_RESTART or not. */
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, 0);
	ualarm(50000, 0);
	receive("interrupted", q, 64, 0, 0);

	/* IPC_RMID wakes a waiter with EIDRM. */
	pid = fork();
	if (pid == 0) {
		struct msg m;
		long n = msgrcv(q, &m, sizeof m.mtext, 0, 0);
		_exit(n < 0 && errno == EIDRM ? 0 : 1);
	}
	sleep_ms(100);
	ok("IPC_RMID", msgctl(q, IPC_RMID, 0));
	waitpid(pid, &status, 0);
	printf("waiter saw EIDRM: %s\n", WEXITSTATUS(status) == 0 ? "yes" : "no");
	check("send after removal", send(q, 1, "x", IPC_NOWAIT));
	check("IPC_RMID again", msgctl(q, IPC_RMID, 0));
	check("msgget removed key", msgget(key, 0));

	struct msginfo info;
	int highest = msgctl(0, IPC_INFO, (struct msqid_ds *)&info);
	printf("IPC_INFO: %s, msgmax %d, msgmnb %d\n", highest >= 0 ? "ok" : "failed",
	       info.msgmax, info.msgmnb);
	q = msgget(IPC_PRIVATE, 0600);
	printf("MSG_STAT of its slot: %s\n",
	       msgctl(q % 32768, MSG_STAT, &ds) == q ? "its id" : "other");
	msgctl(q, IPC_RMID, 0);
}

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static long sem_op(int s, unsigned short num, short op, short flags)
{
	struct sembuf b = { num, op, flags };
	return semop(s, &b, 1);
}

static void values(const char *what, int s)
{
	unsigned short v[3];
	semctl(s, 0, GETALL, (union semun){ .array = v });
	printf("%s: %u %u %u\n", what, v[0], v[1], v[2]);
}

static void wait_for_count(int s, int num, int cmd, int want)
{
	for (int i = 0; i < 200 && semctl(s, num, cmd) != want; i++)
		sleep_ms(10);
}

static void undo_child(int s)
{
	sem_op(s, 0, 3, SEM_UNDO);
	sem_op(s, 1, -1, SEM_UNDO);
	sem_op(s, 1, 1, SEM_UNDO);
	sem_op(s, 1, -1, SEM_UNDO);
}

static void semaphores(void)
{
	check("semget 0 new", semget(IPC_PRIVATE, 0, 0600));
	check("semget 32001", semget(IPC_PRIVATE, 32001, 0600));
	check("semget -1", semget(IPC_PRIVATE, -1, 0600));
	const key_t key = 0x73656d61;
	int old = semget(key, 0, 0);
	if (old >= 0)
		semctl(old, 0, IPC_RMID);
	int s = semget(key, 3, IPC_CREAT | 0600);
	ok("semget 3", s);
	check("semget more than it has", semget(key, 4, 0));
	printf("semget 0 of it: %s\n", semget(key, 0, 0) == s ? "same set" : "other");

	struct semid_ds ds;
	ok("IPC_STAT", semctl(s, 0, IPC_STAT, (union semun){ .buf = &ds }));
	printf("nsems %lu, mode %o, otime %s\n", (unsigned long)ds.sem_nsems,
	       (unsigned)ds.sem_perm.mode & 0777, ds.sem_otime ? "set" : "0");
	values("new", s);
	ok("SETVAL 1 5", semctl(s, 1, SETVAL, (union semun){ .val = 5 }));
	check("GETVAL 1", semctl(s, 1, GETVAL));
	check("SETVAL 32768", semctl(s, 1, SETVAL, (union semun){ .val = 32768 }));
	check("SETVAL -1", semctl(s, 1, SETVAL, (union semun){ .val = -1 }));
	check("GETVAL 3", semctl(s, 3, GETVAL));
	unsigned short all[3] = { 2, 0, 7 };
	ok("SETALL", semctl(s, 0, SETALL, (union semun){ .array = all }));
	values("set", s);
	check("GETALL bad pointer", semctl(s, 0, GETALL, (union semun){ .array = (void *)8 }));
	check("ctl unknown", semctl(s, 0, 99));

	struct sembuf two[2] = { { 0, -1, 0 }, { 1, -1, IPC_NOWAIT } };
	check("all or nothing", semop(s, two, 2));
	values("unchanged", s);
	two[1].sem_op = 1;
	ok("both", semop(s, two, 2));
	values("both done", s);
	check("GETPID is me", semctl(s, 0, GETPID) == getpid());
	check("sem 3", sem_op(s, 3, 1, 0));
	check("no operations", semop(s, two, 0));
	struct sembuf many[501] = { 0 };
	check("501 operations", semop(s, many, 501));
	check("bad pointer", semop(s, (void *)8, 1));
	check("past SEMVMX", sem_op(s, 2, 32767, 0));
	check("zero, not zero", sem_op(s, 2, 0, IPC_NOWAIT));
	struct timespec t = { 0, 50000000 };
	struct sembuf down = { 1, -5, 0 };
	check("timed out", semtimedop(s, &down, 1, &t));
	t.tv_nsec = 1000000000;
	check("bad timeout", semtimedop(s, &down, 1, &t));

	/* A waiter is counted, and goes when the value lets it. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(sem_op(s, 1, -3, 0) == 0 ? 0 : 1);
	wait_for_count(s, 1, GETNCNT, 1);
	check("GETNCNT", semctl(s, 1, GETNCNT));
	check("GETZCNT", semctl(s, 1, GETZCNT));
	ok("up 2", sem_op(s, 1, 2, 0));
	int status;
	waitpid(pid, &status, 0);
	printf("waiter: exit %d\n", WEXITSTATUS(status));
	check("GETNCNT after", semctl(s, 1, GETNCNT));
	printf("GETPID is the waiter: %s\n", semctl(s, 1, GETPID) == pid ? "yes" : "no");
	values("after", s);

	pid = fork();
	if (pid == 0)
		_exit(sem_op(s, 2, 0, 0) == 0 ? 0 : 1);
	wait_for_count(s, 2, GETZCNT, 1);
	check("GETZCNT", semctl(s, 2, GETZCNT));
	ok("down to 0", sem_op(s, 2, -7, 0));
	waitpid(pid, &status, 0);
	printf("zero waiter: exit %d\n", WEXITSTATUS(status));

	/* SEM_UNDO: what a process did goes back when it ends. */
	ok("SETVAL 1 1", semctl(s, 1, SETVAL, (union semun){ .val = 1 }));
	values("before undo", s);
	in_child("undo child", undo_child, s);
	values("after undo", s);
	/* The undo is clamped at 0 when someone else took the value. */
	int ready[2];
	pipe(ready);
	pid = fork();
	if (pid == 0) {
		sem_op(s, 0, 3, SEM_UNDO);
		write(ready[1], "x", 1);
		sleep_ms(200);
		_exit(0);
	}
	char c;
	read(ready[0], &c, 1);
	ok("take what the child gave", sem_op(s, 0, -3, 0));
	waitpid(pid, &status, 0);
	values("clamped", s);
	/* SETVAL clears the adjustments of that semaphore. */
	pid = fork();
	if (pid == 0) {
		sem_op(s, 1, 4, SEM_UNDO);
		semctl(s, 1, SETVAL, (union semun){ .val = 9 });
		_exit(0);
	}
	waitpid(pid, &status, 0);
	values("SETVAL cleared the undo", s);

	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, 0);
	ualarm(50000, 0);
	check("interrupted", sem_op(s, 0, -1, 0));

	ds.sem_perm.mode = 0640;
	ok("IPC_SET", semctl(s, 0, IPC_SET, (union semun){ .buf = &ds }));
	semctl(s, 0, IPC_STAT, (union semun){ .buf = &ds });
	printf("mode %o, otime %s\n", (unsigned)ds.sem_perm.mode & 0777,
	       ds.sem_otime ? "set" : "0");

	pid = fork();
	if (pid == 0)
		_exit(sem_op(s, 0, -1, 0) < 0 && errno == EIDRM ? 0 : 1);
	wait_for_count(s, 0, GETNCNT, 1);
	ok("IPC_RMID", semctl(s, 0, IPC_RMID));
	waitpid(pid, &status, 0);
	printf("waiter saw EIDRM: %s\n", WEXITSTATUS(status) == 0 ? "yes" : "no");
	check("GETVAL after removal", semctl(s, 0, GETVAL));

	struct seminfo info;
	int highest = semctl(0, 0, IPC_INFO, (union semun){ .buf = (void *)&info });
	printf("IPC_INFO: %s, semmsl %d, semopm %d, semvmx %d\n", highest >= 0 ? "ok" : "failed",
	       info.semmsl, info.semopm, info.semvmx);
}

static void segment_state(const char *what, int id)
{
	struct shmid_ds ds;
	if (shmctl(id, IPC_STAT, &ds) < 0) {
		printf("%s: stat -1 %s\n", what, strerror(errno));
		return;
	}
	printf("%s: %lu bytes, %lu attached, mode %o%s%s, key %s\n", what,
	       (unsigned long)ds.shm_segsz, (unsigned long)ds.shm_nattch,
	       (unsigned)ds.shm_perm.mode & 0777, ds.shm_perm.mode & SHM_DEST ? " dest" : "",
	       ds.shm_perm.mode & SHM_LOCKED ? " locked" : "",
	       ds.shm_perm.__key ? "kept" : "private");
}

/* The name /proc/self/maps gives the area at `at`. */
static void maps_name(const char *what, void *at)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[256];
	unsigned long start;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%lx-", &start) == 1 && start == (unsigned long)at) {
			char *name = strchr(line, '/');
			printf("%s: %s", what, name ? name : "(none)\n");
		}
	}
	fclose(f);
}

static void shared_memory(void)
{
	check("shmget 0 bytes", shmget(IPC_PRIVATE, 0, 0600));
	const key_t key = 0x73686d21;
	int old = shmget(key, 0, 0);
	if (old >= 0)
		shmctl(old, IPC_RMID, 0);
	int id = shmget(key, 10000, IPC_CREAT | 0600);
	ok("shmget 10000", id);
	check("shmget larger", shmget(key, 20000, 0));
	printf("shmget smaller: %s\n", shmget(key, 100, 0) == id ? "same segment" : "other");
	segment_state("new", id);

	char *a = shmat(id, 0, 0);
	ok("shmat", a == (void *)-1 ? -1 : 0);
	maps_name("maps", a);
	segment_state("attached", id);
	printf("zeroed: %s\n", a[0] == 0 && a[9999] == 0 ? "yes" : "no");
	strcpy(a, "written by the parent");
	a[9999] = 'z';
	char *b = shmat(id, 0, 0);
	printf("second attachment elsewhere: %s, sees \"%s\" and '%c'\n",
	       b != a ? "yes" : "no", b, b[9999]);
	strcpy(b + 100, "through b");
	printf("a sees \"%s\"\n", a + 100);
	segment_state("twice", id);

	pid_t pid = fork();
	if (pid == 0) {
		strcpy(a, "written by the child");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("after the child: \"%s\"\n", a);
	segment_state("child gone", id);

	char *r = shmat(id, 0, SHM_RDONLY);
	printf("read-only sees \"%s\"\n", r);
	check("mprotect read-only writable", mprotect(r, 4096, PROT_READ | PROT_WRITE));
	pid = fork();
	if (pid == 0) {
		r[0] = 'x';
		_exit(0);
	}
	waitpid(pid, &status, 0);
	printf("store to read-only: %s\n",
	       WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? "SIGSEGV" : "no fault");
	ok("shmdt read-only", shmdt(r));
	check("shmdt again", shmdt(r));
	check("shmdt unaligned", shmdt(a + 1));
	check("shmdt not a segment", shmdt(&status));

	/* A place nothing is mapped at: mapped and given back. */
	long page = sysconf(_SC_PAGESIZE);
	char *hole = mmap(0, 8 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, 8 * page);
	check("shmat unaligned", (long)shmat(id, hole + 5, 0));
	char *rounded = shmat(id, hole + 5, SHM_RND);
	printf("SHM_RND: %s\n", rounded == hole ? "rounded down" : "elsewhere");
	check("shmat over it", (long)shmat(id, hole, 0));
	char *again = shmat(id, hole, SHM_REMAP);
	printf("SHM_REMAP: %s, sees \"%s\"\n", again == hole ? "same place" : "elsewhere", again);
	check("SHM_REMAP without address", (long)shmat(id, 0, SHM_REMAP));
	segment_state("three", id);
	munmap(hole + page, page);
	segment_state("one split in two", id);
	ok("shmdt takes both halves", shmdt(hole));
	segment_state("after shmdt", id);

	ok("SHM_LOCK", shmctl(id, SHM_LOCK, 0));
	segment_state("locked", id);
	ok("SHM_UNLOCK", shmctl(id, SHM_UNLOCK, 0));
	check("ctl unknown", shmctl(id, 99, 0));
	check("bad id", (long)shmat(id + 1, 0, 0));

	ok("IPC_RMID attached", shmctl(id, IPC_RMID, 0));
	segment_state("removed", id);
	check("shmget its key", shmget(key, 0, 0));
	strcpy(b, "still there");
	printf("a sees \"%s\" after removal\n", a);
	char *late = shmat(id, 0, 0);
	printf("attach after removal: %s\n", late == (void *)-1 ? strerror(errno) : "ok");
	if (late != (void *)-1)
		shmdt(late);
	ok("shmdt a", shmdt(a));
	segment_state("one left", id);
	ok("shmdt b", shmdt(b));
	segment_state("none left", id);

	struct shminfo info;
	int highest = shmctl(0, IPC_INFO, (struct shmid_ds *)&info);
	printf("IPC_INFO: %s, shmmin %lu\n", highest >= 0 ? "ok" : "failed",
	       (unsigned long)info.shmmin);
}

/* The lines of /proc/sysvipc/NAME, and the one whose id (the second
 * column) is `id` into `line` (empty if none). */
static int proc_lines(const char *name, int id, char *header, char *line)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/sysvipc/%s", name);
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("%s: %s\n", path, strerror(errno));
		return -1;
	}
	int n = 0;
	line[0] = 0;
	while (fgets(buf, sizeof buf, f)) {
		int key, found;
		if (n == 0)
			strcpy(header, buf);
		else if (sscanf(buf, "%d %d", &key, &found) == 2 && found == id)
			strcpy(line, buf);
		n++;
	}
	fclose(f);
	return n;
}

/* /proc/sysvipc/shm, msg and sem, as ipcs(1) and a well-known suite's
 * "how many ids are in use" read them: the header, a line more for each
 * object made and a line fewer when it goes, and the object's figures
 * (not its id, pids, owner or times, which differ from run to run). */
static void proc_files(void)
{
	char header[512], line[512];
	int before[3], i;
	const char *names[3] = {"shm", "msg", "sem"};
	for (i = 0; i < 3; i++)
		before[i] = proc_lines(names[i], -1, header, line);

	int shm = shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0640);
	char *p = shmat(shm, 0, 0);
	memset(p, 1, 5000);
	int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	struct { long type; char text[7]; } m = {1, "abcdef"};
	check("msgsnd", msgsnd(msg, &m, sizeof m.text, 0));
	int sem = semget(IPC_PRIVATE, 3, IPC_CREAT | 0666);
	int ids[3] = {shm, msg, sem};

	for (i = 0; i < 3; i++) {
		int n = proc_lines(names[i], ids[i], header, line);
		printf("%s: %d more; header: %s", names[i], n - before[i], header);
		long key, id, mode, a, b, c, d, e, f, g, h, t1, t2, t3, rss, swap;
		if (i == 0 && sscanf(line, "%ld %ld %lo %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld",
				     &key, &id, &mode, &a, &b, &c, &d, &e, &f, &g, &h, &t1, &t2, &t3,
				     &rss, &swap) == 16)
			printf("  key %ld perms %lo size %ld nattch %ld atime set %d dtime %ld rss %ld swap %ld\n",
			       key, mode, a, d, t1 > 0, t2, rss, swap);
		else if (i == 1 && sscanf(line, "%ld %ld %lo %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld",
					  &key, &id, &mode, &a, &b, &c, &d, &e, &f, &g, &h, &t1, &t2,
					  &t3) == 14)
			printf("  key %ld perms %lo cbytes %ld qnum %ld lrpid %ld rtime %ld\n", key,
			       mode, a, b, d, t2);
		else if (i == 2 && sscanf(line, "%ld %ld %lo %ld %ld %ld %ld %ld %ld %ld", &key, &id,
					  &mode, &a, &b, &c, &d, &e, &t1, &t2) == 10)
			printf("  key %ld perms %lo nsems %ld otime %ld\n", key, mode, a, t1);
		else
			printf("  no line for the new object: %s", line[0] ? line : "(none)\n");
	}

	shmdt(p);
	shmctl(shm, IPC_RMID, 0);
	msgctl(msg, IPC_RMID, 0);
	semctl(sem, 0, IPC_RMID);
	for (i = 0; i < 3; i++)
		printf("%s after removal: %d more\n", names[i],
		       proc_lines(names[i], -1, header, line) - before[i]);
}

int main(void)
{
	setvbuf(stdout, 0, _IONBF, 0);
	printf("-- message queues\n");
	messages();
	printf("-- semaphores\n");
	semaphores();
	printf("-- shared memory\n");
	shared_memory();
	printf("-- /proc/sysvipc\n");
	proc_files();
	return 0;
}

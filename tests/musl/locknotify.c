/* A lock that changes wakes the right waiters: a parent holds a write
 * lock, two children block in F_SETLKW on parts of it, and the parent
 * then weakens, shrinks or splits its lock (the cases of a well-known
 * suite's "notification on lock change" test). A child whose range became
 * free gets its lock at once and exits 0; one still blocked is ended by
 * SIGUSR1 (no SA_RESTART: EINTR) after the parent's wait() itself was
 * ended by SIGALRM (EINTR), and exits 1. Second round: the file opened
 * O_NDELAY with mode 02600 (the old mandatory-locking mark, advisory on
 * Linux). Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define NB 2
#define WB 3
struct lk { short t; long s, l; int f; };
struct tc { struct lk pa, pb, ca, cb, pc, pd; };
static struct tc cases[] = {
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,0,5,NB},{F_RDLCK,6,5,NB},{F_RDLCK,0,0,1},{0}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,0,5,WB},{F_RDLCK,6,5,WB},{F_WRLCK,0,0,1},{0}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,2,3,WB},{F_RDLCK,6,3,WB},{F_RDLCK,3,5,1},{0}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,2,3,WB},{F_RDLCK,6,3,NB},{F_RDLCK,5,5,1},{0}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,3,5,NB},{F_RDLCK,5,6,WB},{F_RDLCK,2,7,1},{0}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,2,3,WB},{F_RDLCK,6,3,NB},{F_UNLCK,3,7,1},{0}},
 {{F_WRLCK,0,0,1},{F_RDLCK,3,5,1},{F_RDLCK,2,3,NB},{F_RDLCK,6,3,NB},{F_RDLCK,1,9,1},{0}},
 {{F_WRLCK,2,3,1},{F_WRLCK,6,3,1},{F_RDLCK,3,5,NB},{0},{F_RDLCK,1,5,1},{F_RDLCK,5,5,1}},
 {{F_WRLCK,0,0,1},{F_RDLCK,3,5,1},{F_RDLCK,2,3,NB},{F_RDLCK,6,3,NB},{F_RDLCK,1,3,1},{F_RDLCK,7,3,1}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,2,3,NB},{F_RDLCK,6,3,NB},{F_RDLCK,1,7,1},{F_RDLCK,3,7,1}},
 {{F_WRLCK,0,0,1},{0},{F_RDLCK,3,5,NB},{F_RDLCK,3,5,NB},{F_RDLCK,3,5,1},{0}},
};
static volatile int f1, f2, alarmed, interrupted;
static pid_t parent;
static void usr1(int s) { (void)s; f1 = 1; }
static void usr2(int s) { (void)s; f2 = 1; }
static void alrm(int s) { (void)s; alarmed = 1; }
static void intr(int s) { (void)s; interrupted = 1; }
static int setlk(int fd, int cmd, struct lk *l) {
  struct flock fl = {.l_type = l->t, .l_whence = SEEK_SET, .l_start = l->s, .l_len = l->l};
  return fcntl(fd, cmd, &fl);
}
static void on(int sig, void (*h)(int)) {
  struct sigaction sa = {0}; sa.sa_handler = h; sigemptyset(&sa.sa_mask); sigaction(sig, &sa, 0);
}
int main(void) {
  int timeout = 1;
  parent = getpid();
  on(SIGUSR1, usr1); on(SIGUSR2, usr2); on(SIGALRM, alrm);
  for (int block = 0; block < 2; block++)
  for (unsigned t = 0; t < sizeof cases / sizeof *cases; t++) {
    struct tc *c = &cases[t];
    int fd = open("/tmp/lk16.f", O_CREAT | O_RDWR | O_TRUNC | (block ? O_NDELAY : 0), block ? 02600 : 0777);
    write(fd, "tenbytes!", 10);
    setlk(fd, F_SETLK, &c->pa);
    if (c->pb.f) setlk(fd, F_SETLK, &c->pb);
    struct lk *kids[2] = {&c->ca, &c->cb};
    pid_t pid[2]; int n = 0; f1 = f2 = alarmed = 0;
    for (int i = 0; i < 2; i++) {
      if (!kids[i]->f) continue;
      pid_t p = fork();
      if (p == 0) {
        on(SIGUSR1, intr);
        kill(parent, i ? SIGUSR2 : SIGUSR1);
        if (setlk(fd, F_SETLKW, kids[i]) < 0) _exit(errno == EINTR && interrupted ? 1 : 2);
        _exit(0);
      }
      pid[n++] = p;
    }
    alarm(timeout);
    while (!alarmed && f1 + f2 != n) pause();
    alarm(0);
    if (f1 + f2 != n) printf("%u: kids didn't signal\n", t + 1);
    alarmed = 0;
    setlk(fd, F_SETLK, &c->pc);
    if (c->pd.f) setlk(fd, F_SETLK, &c->pd);
    int exited = 0, timeouts = 0, status[2] = {-1, -1};
    while (exited < n) {
      int st;
      alarm(timeout);
      pid_t w = wait(&st);
      alarm(0);
      if (w == -1) {
        if (errno != EINTR || alarmed != 1) { printf("%u: wait %s alarmed %d\n", t + 1, strerror(errno), alarmed); break; }
        timeouts++;
        for (int i = 0; i < n; i++) kill(pid[i], SIGUSR1);
        continue;
      }
      int i = w == pid[0] ? 0 : 1;
      status[i] = WEXITSTATUS(st);
      exited++;
    }
    for (int i = 0; i < n; i++) {
      struct lk *k = n == 1 ? (c->ca.f ? &c->ca : &c->cb) : kids[i];
      int expect = k->f == NB ? 0 : 1;
      printf("%u.%d: child %d exit %d (%s)\n", t + 1, block, i, status[i],
             status[i] == expect ? "as expected" : "WRONG");
    }
    printf("%u.%d: %d timeouts\n", t + 1, block, timeouts);
    close(fd);
    unlink("/tmp/lk16.f");
  }
  puts("done");
}

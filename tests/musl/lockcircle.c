/* A circle of waiters that closes late: F_SETLKW must look for a deadlock
 * again each time the lock it waits for changes hands, not only when it
 * first goes to sleep (the case of a well-known suite's "delayed
 * deadlock" test, which hung here).
 *
 * A holds [2,7), B holds [9,14), C holds [17,22). B asks for C's range,
 * C asks for [2,16): it waits for A first. When A lets go, C's request
 * meets B's lock, and B waits for C: one of the two must get EDEADLK.
 * Which one depends on which asked first (both orders are Linux's
 * answers), so the test prints the outcome, not the name: one waiter
 * fails with EDEADLK, and when it exits the other gets its lock. A kernel
 * that never looks again hangs both; the alarm then says so. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd;

static int setlk(int cmd, short type, off_t start, off_t len) {
  struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
  return fcntl(fd, cmd, &fl) < 0 ? errno : 0;
}

/* A child: takes its own lock, says so on `up`, then on each byte read
 * from `down`: 'w' asks for (ws, wl) with F_SETLKW and reports the answer
 * as one byte (0 or the errno), 'u' unlocks everything, 'q' exits. */
static pid_t child(int up, off_t s, off_t l, off_t ws, off_t wl, int *down) {
  int p[2];
  if (pipe(p)) { perror("pipe"); exit(1); }
  pid_t pid = fork();
  if (pid) { close(p[0]); *down = p[1]; return pid; }
  close(p[1]);
  char r = (char)setlk(F_SETLK, F_WRLCK, s, l);
  write(up, &r, 1);
  char cmd;
  while (read(p[0], &cmd, 1) == 1) {
    if (cmd == 'w') { r = (char)setlk(F_SETLKW, F_WRLCK, ws, wl); write(up, &r, 1); }
    if (cmd == 'u') setlk(F_SETLK, F_UNLCK, 0, 0);
    if (cmd == 'q') break;
  }
  _exit(0);
}

static void hung(int sig) {
  (void)sig;
  static const char m[] = "hung: no waiter was told EDEADLK\n";
  write(1, m, sizeof m - 1);
  kill(0, SIGKILL);
}

static const char *said(char r) { return r ? strerror(r) : "granted"; }

static char answer(int up) {
  char r = -1;
  if (read(up, &r, 1) != 1) puts("a child went away");
  return r;
}

int main(void) {
  fd = open("/tmp/lockcircle.f", O_CREAT | O_RDWR | O_TRUNC, 0600);
  write(fd, "abcdefghijklmnopqrstuvwxyz\n", 27);
  int up[2];
  pipe(up);
  int a, b, c;
  pid_t pa = child(up[1], 2, 5, 0, 0, &a);
  printf("A locks [2,7): %s\n", said(answer(up[0])));
  pid_t pb = child(up[1], 9, 5, 17, 5, &b);
  printf("B locks [9,14): %s\n", said(answer(up[0])));
  pid_t pc = child(up[1], 17, 5, 2, 14, &c);
  printf("C locks [17,22): %s\n", said(answer(up[0])));
  fflush(stdout);

  signal(SIGALRM, hung);
  alarm(30);
  write(b, "w", 1);      /* B waits for C */
  usleep(100000);
  write(c, "w", 1);      /* C waits for A */
  usleep(100000);
  write(a, "u", 1);      /* A lets go: the circle B -> C -> B closes */

  char first = answer(up[0]);
  printf("first answer: %s\n", said(first));
  /* Whoever got EDEADLK exits, which frees its lock for the other. */
  write(b, "q", 1);
  write(c, "q", 1);
  char second = answer(up[0]);
  printf("second answer: %s\n", said(second));
  alarm(0);
  write(a, "q", 1);
  waitpid(pa, 0, 0);
  waitpid(pb, 0, 0);
  waitpid(pc, 0, 0);
  unlink("/tmp/lockcircle.f");
  puts("done");
  return 0;
}

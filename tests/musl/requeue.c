/* A thousand processes asleep on one futex in shared memory, then moved
 * by FUTEX_CMP_REQUEUE (the shape of a well-known suite's requeue test,
 * which needs that many processes and forks that do not slow down as the
 * children pile up). Each case: N children wait (FUTEX_WAIT, a timeout far
 * beyond the test); once /proc says every one sleeps, the parent changes
 * the word, requeues (wake W, move R to the second word) and wakes what is
 * left on each word. Every child must be woken, none time out, and the
 * counts are exact because nobody woke early. Same output as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_CMP_REQUEUE 4

static struct shared { int word[2]; int early; } *sh;

static long futex(int *addr, int op, int val, long val2, int *addr2, int val3) {
  return syscall(SYS_futex, addr, op, val, val2, addr2, val3);
}

/* The one-letter state in /proc/PID/stat ('?' if it cannot be read). */
static char state(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *end = strrchr(buf, ')');
  return end && end[1] ? end[2] : '?';
}

static void run(int n, int wakes, int moves) {
  sh->word[0] = 0;
  sh->word[1] = 1000;
  sh->early = 0;
  pid_t *pid = calloc(n, sizeof *pid);
  for (int i = 0; i < n; i++) {
    pid[i] = fork();
    if (pid[i] < 0) {
      printf("fork %d of %d: %s\n", i + 1, n, strerror(errno));
      exit(1);
    }
    if (pid[i] == 0) {
      struct timespec far = {600, 0};
      if (futex(&sh->word[0], FUTEX_WAIT, 0, (long)&far, 0, 0) < 0) {
        if (errno != EAGAIN) _exit(1); /* timed out or failed */
        __atomic_add_fetch(&sh->early, 1, __ATOMIC_SEQ_CST);
      }
      _exit(0);
    }
  }
  for (int i = 0; i < n; i++)
    while (state(pid[i]) != 'S') usleep(1000);
  __atomic_add_fetch(&sh->word[0], 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&sh->word[1], 1, __ATOMIC_SEQ_CST);
  long done = futex(&sh->word[0], FUTEX_CMP_REQUEUE, wakes, moves, &sh->word[1], sh->word[0]);
  long on1 = futex(&sh->word[1], FUTEX_WAKE, n, 0, 0, 0);
  long on0 = futex(&sh->word[0], FUTEX_WAKE, n, 0, 0, 0);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    int st;
    if (waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0) ok++;
  }
  printf("%4d waiters, wake %3d, move %3d: requeue %ld, then %ld woken on the second word,"
         " %ld on the first; %d of %d woken, %d early\n",
         n, wakes, moves, done, on1, on0, ok, n, sh->early);
  free(pid);
}

int main(void) {
  sh = mmap(0, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int cases[][3] = {{10, 3, 7}, {10, 0, 10}, {10, 2, 6}, {100, 50, 50},
                    {100, 0, 70}, {1000, 100, 900}, {1000, 300, 500}};
  for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++)
    run(cases[i][0], cases[i][1], cases[i][2]);
  puts("done");
  return 0;
}

/* Threads of one process race for OFD and POSIX record locks on one file
 * (OFD read against OFD write, OFD against POSIX, both ways), each thread
 * reading back what the lock protects: a reader never sees a block half
 * written. Threads of one process share their POSIX locks, and a POSIX
 * lock still conflicts with an OFD lock of the same process. Same output
 * as on Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define SZ 4096
static volatile int loop_flag;
static int nthreads;
static pthread_barrier_t barrier;
struct param { long off, len, cnt; int ofd, write; };
static void die(const char *w) { printf("%s: %s\n", w, strerror(errno)); exit(1); }
static void *worker(void *arg) {
  struct param *p = arg;
  unsigned char buf[SZ];
  int fd = open("/tmp/lk36.f", O_RDWR);
  if (fd < 0) die("open");
  long wt = p->cnt;
  struct flock l = {.l_whence = SEEK_SET, .l_start = p->off, .l_len = p->len};
  int setw = p->ofd ? F_OFD_SETLKW : F_SETLKW;
  long iters = 0;
  while (loop_flag) {
    if (p->write) memset(buf, wt, SZ);
    l.l_type = p->write ? F_WRLCK : F_RDLCK;
    if (fcntl(fd, setw, &l)) die("lock");
    lseek(fd, p->off, SEEK_SET);
    if (p->write) { if (write(fd, buf, SZ) != SZ) die("write"); }
    else {
      if (read(fd, buf, SZ) != SZ) die("read");
      for (int i = 0; i < SZ; i++) {
        int j = (i / (SZ / 4)) * SZ / 4;
        if (buf[i] < 1 || buf[i] > 254 || buf[i] != buf[j]) { printf("bad data at %ld\n", p->off + i); break; }
      }
    }
    l.l_type = F_UNLCK;
    if (fcntl(fd, setw, &l)) die("unlock");
    if (++wt >= 255) wt = p->cnt;
    iters++;
    sched_yield();
  }
  pthread_barrier_wait(&barrier);
  close(fd);
  return (void *)iters;
}
int main(void) {
  nthreads = 6;
  int kinds[][4] = {{1,0,1,1},{1,1,0,1},{1,0,0,1},{1,1,0,0},{1,1,1,1}}; /* ofd0 w0 ofd1 w1 */
  const char *names[] = {"OFD r vs OFD w", "OFD w vs POSIX w", "OFD r vs POSIX w", "OFD w vs POSIX r", "OFD w vs OFD w"};
  for (int k = 0; k < 5; k++) {
    int fd = open("/tmp/lk36.f", O_CREAT | O_TRUNC | O_RDWR, 0644);
    unsigned char one[SZ]; memset(one, 1, SZ);
    for (int i = 0; i <= nthreads; i++) write(fd, one, SZ);
    close(fd);
    pthread_barrier_init(&barrier, 0, nthreads * 2);
    pthread_t id[2][16]; struct param p[2][16];
    loop_flag = 1;
    for (int i = 0; i < nthreads; i++)
      for (int s = 0; s < 2; s++) {
        p[s][i] = (struct param){i * SZ + s * SZ / 4, SZ, i + 2, kinds[k][2*s], kinds[k][2*s+1]};
        pthread_create(&id[s][i], 0, worker, &p[s][i]);
      }
    sleep(1);
    loop_flag = 0;
    long total = 0;
    for (int i = 0; i < nthreads; i++) for (int s = 0; s < 2; s++) { void *r; pthread_join(id[s][i], &r); total += (long)r; }
    pthread_barrier_destroy(&barrier);
    printf("%s: %s\n", names[k], total > 0 ? "ran" : "no progress");
  }
  unlink("/tmp/lk36.f");
  puts("done");
}

/* libc-lite: processes and files (Linux numbering underneath). */
#ifndef _UNISTD_H
#define _UNISTD_H
#include <sys/types.h>
#define STDIN_FILENO 0
#define STDOUT_FILENO 1
#define STDERR_FILENO 2
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
ssize_t read(int fd, void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n);
int close(int fd);
off_t lseek(int fd, off_t offset, int whence);
pid_t fork(void);
int execve(const char *path, char *const argv[], char *const envp[]);
void _exit(int status) __attribute__((noreturn));
pid_t getpid(void);
pid_t getppid(void);
int pipe(int fds[2]);
int dup(int fd);
int dup2(int old, int new_fd);
int unlink(const char *path);
int rmdir(const char *path);
int chdir(const char *path);
char *getcwd(char *buf, size_t size);
unsigned int sleep(unsigned int seconds);
int usleep(unsigned int micros);
unsigned int alarm(unsigned int seconds);
int pause(void);
void *sbrk(ssize_t increment);
long syscall(long number, ...);
/* profil(2): see <sys/gmon.h> and docs/profil.md. */
int profil(unsigned short *samples, size_t size, size_t offset, unsigned int scale);
/* The same, emulated glibc-style with setitimer(ITIMER_PROF) and SIGPROF. */
int profil_sigprof(unsigned short *samples, size_t size, size_t offset, unsigned int scale);
#endif

/* libc-lite: heap, exit, number parsing, environment. */
#ifndef _STDLIB_H
#define _STDLIB_H
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *p, size_t size);
void free(void *p);
void exit(int status) __attribute__((noreturn));
int atexit(void (*f)(void));
void abort(void) __attribute__((noreturn));
long strtol(const char *s, char **end, int base);
int atoi(const char *s);
long atol(const char *s);
int abs(int n);
char *getenv(const char *name);
#endif

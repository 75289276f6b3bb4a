/* libc-lite: formatted output (no floating point; no buffered streams). */
#ifndef _STDIO_H
#define _STDIO_H
#include <stddef.h>
typedef struct FILE FILE;
extern FILE *stdin, *stdout, *stderr;
int printf(const char *fmt, ...);
int fprintf(FILE *stream, const char *fmt, ...);
int sprintf(char *buf, const char *fmt, ...);
int snprintf(char *buf, size_t size, const char *fmt, ...);
int puts(const char *s);
int fputs(const char *s, FILE *stream);
int putchar(int c);
int fflush(FILE *stream);
int rename(const char *from, const char *to);
FILE *fopen(const char *path, const char *mode);
char *fgets(char *buf, int size, FILE *stream);
int fclose(FILE *stream);
#endif

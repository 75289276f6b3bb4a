/* libc-lite: profiling for gprof (see docs/profil.md). A program linked with
   the profiled library (cargo xtask builds liblibc_lite.a with the gprof
   feature for -pg programs) starts with monstartup over its text and writes
   gmon.out at exit. */
#ifndef _SYS_GMON_H
#define _SYS_GMON_H
#include <stddef.h>
void monstartup(unsigned long lowpc, unsigned long highpc);
void moncontrol(int on);
void _mcleanup(void);
int profil(unsigned short *samples, size_t size, size_t offset, unsigned int scale);
#endif

/* libc-lite: the AIX multi-region form of profil(2), and sprofil(3). */
#ifndef _SYS_PROF_H
#define _SYS_PROF_H
#include <stddef.h>
struct prof {
    void *p_low;            /* lowest pc of the region */
    void *p_high;           /* one past its highest pc; 0 ends the array */
    unsigned short *p_buff; /* the region's bins */
    int p_bufsize;          /* bytes in p_buff */
    unsigned int p_scale;   /* as profil's scale; (unsigned)-1: computed */
};
#define PROF_SCALE_AUTO ((unsigned int)-1)
#define PROFIL_MULTI ((size_t)-1)
/* profil((unsigned short *)array, PROFIL_MULTI, 0, 0) with an array of
   struct prof ended by p_high == 0; or sprofil with a count: */
int sprofil(struct prof *profp, int profcnt, void *tvp, unsigned int flags);
#endif

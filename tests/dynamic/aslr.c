/* Address-space layout randomisation, as Linux does it at level 2
 * (/proc/sys/kernel/randomize_va_space): three runs of this program see
 * its base (for a PIE), its stack, its mmap region, its loader and its
 * heap at different places, unless the personality says
 * ADDR_NO_RANDOMIZE (setarch -R, and GDB), when two runs see the same.
 * `cargo xtask test` boots this kernel with the host's setting, so both
 * run under the same rule, and every line must be the same. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#define PARTS 5
static const char *names[PARTS] = {"program's base", "stack", "mmap region", "loader", "heap"};

/* Where this run's parts are, one hex number each. */
static void report(void)
{
    char here;
    void *map = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("%lx %lx %lx %lx %lx\n", getauxval(AT_PHDR), (unsigned long)&here,
           (unsigned long)map, getauxval(AT_BASE), (unsigned long)sbrk(0));
}

/* Runs this program again in a child (with `persona`) and reads its parts. */
static void run(unsigned long parts[PARTS], unsigned long persona)
{
    int fds[2];
    if (pipe(fds) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        if (persona && personality(persona) == -1)
            perror("personality");
        dup2(fds[1], 1);
        execl("/proc/self/exe", "aslr", "--report", (char *)0);
        perror("exec");
        _exit(1);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    for (int i = 0; i < PARTS; i++)
        if (fscanf(in, "%lx", &parts[i]) != 1)
            parts[i] = 0;
    fclose(in);
    waitpid(pid, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--report") == 0) {
        report();
        return 0;
    }
    unsigned long runs[3][PARTS];
    for (int r = 0; r < 3; r++)
        run(runs[r], 0);
    for (int i = 0; i < PARTS; i++) {
        int moved = runs[0][i] != runs[1][i] || runs[1][i] != runs[2][i];
        printf("randomised: the %s moves: %s\n", names[i], moved ? "yes" : "no");
    }
    printf("the heap is above the program: %s\n", runs[0][4] > runs[0][0] ? "yes" : "NO");
    unsigned long fixed[2][PARTS];
    for (int r = 0; r < 2; r++)
        run(fixed[r], ADDR_NO_RANDOMIZE);
    for (int i = 0; i < PARTS; i++)
        printf("ADDR_NO_RANDOMIZE: the %s stays: %s\n", names[i],
               fixed[0][i] == fixed[1][i] ? "yes" : "no");
    return 0;
}

/*
 * gprof on an ordinary C program with musl's full C library: floating
 * point (printf's %f too), qsort with a comparison function, malloc, and
 * a recursive function, built by the test command as `cargo xtask prof
 * work.c` builds it (musl-gcc -pg -static -O2 -g and libgmon.a) and run
 * with the kernel's native profil. The program counts the calls it makes
 * and prints the counts; gprof must show exactly those, and about three
 * quarters of the time in heavy(), which does three times light()'s work.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;
static volatile long rounds = 2000000;
static long compared, summed;

/* Floating-point work with no library call in it, so its samples are its
 * own; inlined into both callers, so each has its own loop. */
static inline __attribute__((always_inline)) double spin(long n)
{
	double x = sink;
	for (long i = 0; i < n; i++)
		x = x * 0.999999 + 0.5;
	return x;
}

__attribute__((noinline)) void heavy(void) { sink += spin(3 * rounds); }
__attribute__((noinline)) void light(void) { sink += spin(rounds); }

__attribute__((noinline)) int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	compared++;
	return (x > y) - (x < y);
}

struct node {
	double value;
	struct node *left, *right;
};

/* A complete tree of `depth` levels, from malloc. */
static struct node *grow(int depth, double value)
{
	if (depth == 0)
		return NULL;
	struct node *n = malloc(sizeof *n);
	n->value = value;
	n->left = grow(depth - 1, value / 2);
	n->right = grow(depth - 1, value / 3);
	return n;
}

/* Recursive, and not a tail call: double addition does not reassociate,
 * so the compiler keeps both calls. */
__attribute__((noinline)) double tree_sum(const struct node *n)
{
	summed++;
	if (!n)
		return 0;
	double left = tree_sum(n->left);
	double right = tree_sum(n->right);
	return n->value + left + right;
}

int main(void)
{
	int calls = 10;
	for (int i = 0; i < calls; i++) {
		heavy();
		light();
	}
	double values[500];
	for (int i = 0; i < 500; i++)
		values[i] = (double)((i * 7919) % 500) / 7.0;
	qsort(values, 500, sizeof values[0], by_value);
	struct node *root = grow(10, 1000.0);
	double total = tree_sum(root);
	printf("work: heavy %d light %d, sorted %.3f..%.3f, tree %.4f\n", calls, calls,
	       values[0], values[499], total);
	printf("work: by_value %ld calls\n", compared);
	printf("work: tree_sum %ld calls\n", summed);
	return 0;
}

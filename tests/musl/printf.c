/* stdio formatting, numbers both ways, and the string and sort functions:
 * musl's own code, so the output must be byte-for-byte Linux's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(void) {
    printf("integers: %d %i %u %ld %lld %hd %hhu\n", -42, 7, 3000000000u, -1234567890123L, 9223372036854775807LL, (short)-2, (unsigned char)300);
    printf("bases: %x %X %#x %o %#o\n", 48879, 48879, 255, 8, 8);
    printf("widths: [%5d] [%-5d] [%05d] [%+d] [% d] [%.3d]\n", 42, 42, 42, 42, 42, 7);
    printf("strings: [%s] [%10s] [%-10s] [%.3s] [%c]\n", "abc", "right", "left", "truncate", 'z');
    printf("floats: %f %.2f %e %g %g %.10g\n", 3.14159265358979, 2.5, 123456.789, 0.0001, 1e20, M_PI);
    printf("special: %f %f %.1f\n", INFINITY, -INFINITY, -0.0);
    printf("math: sqrt(2)=%.12f exp(1)=%.12f sin(1)=%.12f\n", sqrt(2.0), exp(1.0), sin(1.0));
    char buf[64];
    int n = snprintf(buf, 8, "%s", "snprintf truncates");
    printf("snprintf: %d [%s]\n", n, buf);
    printf("strtod: %.6f %.6f strtol: %ld %ld\n", strtod("1.5e3", NULL), strtod("-0.125", NULL), strtol("0x7f", NULL, 16), strtol("-0777", NULL, 8));
    int values[] = {5, -3, 99, 0, 42, 7, -100, 18};
    qsort(values, 8, sizeof values[0], by_value);
    printf("qsort:");
    for (int i = 0; i < 8; i++)
        printf(" %d", values[i]);
    printf("\n");
    char s[32] = "hello";
    strcat(s, ", world");
    printf("strings: len %zu, strchr %s, strrchr %s, strstr %s, cmp %d\n", strlen(s), strchr(s, 'o'), strrchr(s, 'o'), strstr(s, "wor"), strcmp("abc", "abd") < 0);
    printf("%%done\n");
    return 0;
}

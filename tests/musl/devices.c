/* The devices every Unix has and the directories every program may write
 * in: /dev/null, zero, full, random, urandom; /tmp and /dev/shm; and
 * getrandom(2), with its bad input. /dev/tty and /dev/console are left out:
 * whether the host's test run has a controlling terminal depends on how it
 * was started (usertests checks /dev/tty here). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void show_device(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("%s: %s\n", path, strerror(errno));
        return;
    }
    printf("%s: character device %d, %u,%u, mode %o\n", path, S_ISCHR(st.st_mode),
           major(st.st_rdev), minor(st.st_rdev), st.st_mode & 0777);
}

static int ones(const unsigned char *buf, int len) {
    int n = 0;
    for (int i = 0; i < len; i++)
        n += __builtin_popcount(buf[i]);
    return n;
}

/* Fair-looking bytes: between 3/8 and 5/8 of the bits set (for 300 random
 * bytes that is twelve standard deviations either side, so a true source
 * never fails it) and not all one value. */
static int looks_random(const unsigned char *buf, int len) {
    int bits = ones(buf, len);
    int same = 1;
    for (int i = 1; i < len; i++)
        same &= buf[i] == buf[0];
    return !same && bits > len * 3 && bits < len * 5;
}

static void writable_dir(const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        printf("%s: %s\n", dir, strerror(errno));
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/musl-devices.%d", dir, getpid());
    int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    int wrote = fd >= 0 ? (int)write(fd, "kept", 4) : -1;
    char back[8] = {0};
    if (fd >= 0)
        pread(fd, back, 4, 0);
    printf("%s: directory %d, mode %o, create and write %d, read back \"%s\", unlink %d\n",
           dir, S_ISDIR(st.st_mode), st.st_mode & 07777, wrote, back, unlink(path));
    if (fd >= 0)
        close(fd);
}

int main(void) {
    const char *devices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
    for (int i = 0; i < 5; i++)
        show_device(devices[i]);

    unsigned char buf[4096];
    /* C leaves the order of a call's arguments open: every value printed
     * is computed in a statement of its own first. */
    int fd = open("/dev/null", O_RDWR);
    ssize_t got = read(fd, buf, sizeof buf);
    ssize_t put = write(fd, "gone", 4);
    printf("null: read %zd, write %zd\n", got, put);
    close(fd);

    memset(buf, 0xff, sizeof buf);
    fd = open("/dev/zero", O_RDONLY);
    got = read(fd, buf, 1000);
    printf("zero: read %zd, ones %d\n", got, ones(buf, 1000));
    close(fd);

    memset(buf, 0xff, sizeof buf);
    fd = open("/dev/full", O_RDWR);
    got = read(fd, buf, 100);
    errno = 0;
    put = write(fd, "x", 1);
    printf("full: read %zd, ones %d; write %zd (%s)\n", got, ones(buf, 100), put, strerror(errno));
    close(fd);

    /* O_TRUNC leaves a device alone; truncating one is EINVAL. */
    fd = open("/dev/null", O_WRONLY | O_TRUNC);
    printf("open /dev/null O_TRUNC: %s\n", fd >= 0 ? "ok" : strerror(errno));
    int r = ftruncate(fd, 0);
    printf("ftruncate /dev/null: %d (%s)\n", r, strerror(errno));
    r = truncate("/dev/zero", 0);
    printf("truncate /dev/zero: %d (%s)\n", r, strerror(errno));
    printf("lseek /dev/null to 100: %lld\n", (long long)lseek(fd, 100, SEEK_SET));
    close(fd);

    static const char *randoms[] = {"/dev/urandom", "/dev/random"};
    for (int i = 0; i < 2; i++) {
        unsigned char a[4096], b[4096];
        fd = open(randoms[i], O_RDWR);
        ssize_t n1 = read(fd, a, sizeof a), n2 = read(fd, b, sizeof b);
        /* Writing mixes the bytes in; it is no error. */
        ssize_t w = write(fd, "more entropy, perhaps", 21);
        printf("%s: read %zd and %zd, random-looking %d %d, differ %d, write %zd\n", randoms[i],
               n1, n2, looks_random(a, sizeof a), looks_random(b, sizeof b),
               memcmp(a, b, sizeof a) != 0, w);
        close(fd);
    }

    unsigned char small[300], again[300];
    got = getrandom(small, sizeof small, 0);
    put = getrandom(again, sizeof again, GRND_NONBLOCK);
    printf("getrandom 300: %zd, again %zd, differ %d, random-looking %d\n", got, put,
           memcmp(small, again, sizeof small) != 0, looks_random(small, sizeof small));
    got = getrandom(small, 16, GRND_RANDOM);
    printf("getrandom GRND_RANDOM: %zd\n", got);
    got = getrandom(small, 0, 0);
    printf("getrandom 0 bytes: %zd\n", got);
    got = getrandom(small, 16, 0x100);
    printf("getrandom bad flag: %zd (%s)\n", got, strerror(errno));
    got = getrandom(small, 16, GRND_RANDOM | 4 /* GRND_INSECURE */);
    printf("getrandom RANDOM|INSECURE: %zd (%s)\n", got, strerror(errno));
    void *volatile unmapped = (void *)16;
    got = getrandom(unmapped, 16, 0);
    printf("getrandom bad pointer: %zd (%s)\n", got, strerror(errno));
    unsigned char entropy[32];
    r = getentropy(entropy, sizeof entropy);
    printf("getentropy 32: %d\n", r);

    writable_dir("/tmp");
    writable_dir("/dev/shm");
    return 0;
}

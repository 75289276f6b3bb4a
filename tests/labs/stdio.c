/* Lab 10.1's check: fopen, fgets and fclose, here and on the host (glibc).
   The program writes its own input with open and write, so both sides
   read the same bytes; a 5-byte buffer makes fgets split a long line. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    const char *path = "/tmp/lab-stdio.txt";
    const char *text = "alpha\nbeta\na longer line\nno newline at the end";
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        printf("stdio: cannot write %s\n", path);
        return 1;
    }
    close(fd);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        printf("stdio: fopen(\"%s\", \"r\") gave NULL\n", path);
        return 1;
    }
    char piece[5];
    int n = 0;
    while (fgets(piece, sizeof piece, f) != NULL) {
        size_t len = strlen(piece);
        int newline = len > 0 && piece[len - 1] == '\n';
        if (newline)
            piece[len - 1] = '\0';
        printf("stdio: piece %d [%s]%s\n", ++n, piece, newline ? " and the newline" : "");
    }
    printf("stdio: %d pieces, fclose gave %d\n", n, fclose(f));
    printf("stdio: fopen of a missing file gave %s\n",
           fopen("/tmp/lab-stdio-missing", "r") == NULL ? "NULL" : "a stream");
    unlink(path);
    return 0;
}

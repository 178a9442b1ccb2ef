/* state_walk.c: what the check of a --state file costs (lib/state_lmdb_check.c):
 * its meta pages read and every page and record walked in a child process,
 * as a crawl does before it writes a byte of the file. Prints the seconds
 * one check took, from the monotonic clock; with "dropped", the file's
 * pages are written back and dropped from the page cache first
 * (posix_fadvise), as after a reboot. Exits 1 when the file is refused:
 * it measures, it does not judge. scripts/bench-state-check.sh runs it. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "state_lmdb.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: state_walk STATE_FILE [dropped]\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(argv[1]);
        return 2;
    }
    if (argc > 2 && strcmp(argv[2], "dropped") == 0) {
        /* Dirty pages are not dropped: written back first. */
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    struct state_lmdb_meta m;
    char why[256] = "";
    unsigned format = 0;
    double t0 = now();
    enum state_lmdb_verdict v = state_lmdb_read_meta(fd, &m, why, sizeof why);
    if (v == STATE_LMDB_OK)
        v = state_lmdb_walk(argv[1], fd, &m, &format, why, sizeof why);
    double t1 = now();
    close(fd);
    if (v != STATE_LMDB_OK) {
        fprintf(stderr, "state_walk: %s: refused: %s\n", argv[1], why);
        return 1;
    }
    printf("%.4f %llu %u\n", t1 - t0, (unsigned long long)m.last_pg + 1, m.psize);
    return 0;
}

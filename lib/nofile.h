/* nofile.h: raising the open-file limit, for the crawler and the fixture
 * server alike (header-only, so that neither library needs the other). */
#ifndef CRAWL_NOFILE_H
#define CRAWL_NOFILE_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/resource.h>
#include <unistd.h>

/* Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the soft
 * limit now in force (1,048,576 for "unlimited", 1024 if it cannot be
 * read). */
static inline size_t nofile_raise(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = { rl.rlim_max, rl.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl.rlim_cur = rl.rlim_max;
    }
    return rl.rlim_cur == RLIM_INFINITY ? (size_t)1 << 20 : (size_t)rl.rlim_cur;
}

/* The most descriptors nofile_reserve makes room for: 16,384 slots are
 * 128 KiB of the kernel's; a run with more in flight grows the table the
 * rest of the way itself, a few times in all. */
#define NOFILE_RESERVE_MAX 16384

/* Grows this process's descriptor table to hold n descriptors (at most
 * NOFILE_RESERVE_MAX), by opening one at n - 1 and closing it again: the
 * table never shrinks. Called while the process has one thread, since a
 * process of several threads that grows its table waits, at each doubling,
 * for every CPU to pass a quiescent state (synchronize_rcu in the kernel's
 * expand_fdtable): milliseconds each, the time of a thousand connects on
 * loopback. Best effort: nothing is said if it cannot be done. */
static inline void nofile_reserve(size_t n)
{
    if (n > NOFILE_RESERVE_MAX)
        n = NOFILE_RESERVE_MAX;
    if (n <= 64)
        return;         /* the table a process starts with */
    int any = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (any < 0)
        return;
    int far = fcntl(any, F_DUPFD_CLOEXEC, (int)(n - 1));
    if (far >= 0)
        close(far);
    close(any);
}

#endif

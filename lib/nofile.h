/* nofile.h: raising the open-file limit, for the crawler and the fixture
 * server alike (header-only, so that neither library needs the other). */
#ifndef CRAWL_NOFILE_H
#define CRAWL_NOFILE_H

#include <stddef.h>
#include <sys/resource.h>

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

#endif

/* compare.h: --mode=all. Runs the same crawl through several models, each
 * in a process of its own (a fresh exec of crawl, as a peer is measured) so
 * that its CPU time, peak memory and context switches are measured cleanly,
 * and prints the comparison table. */
#ifndef CRAWL_COMPARE_H
#define CRAWL_COMPARE_H

#include <stdatomic.h>
#include <stdio.h>
#include <sys/types.h>
#include "crawl.h"

/* What one run of one model measured. */
struct compare_run {
    char   mode[16];
    size_t urls, ok, failed, conns, dns;
    size_t retries;             /* fetches tried again (--retry) */
    int    threads;             /* most threads alive at once */
    int    reuse;               /* the reuse policy that ran */
    int    limit;               /* transfers in flight at most; 0: all */
    double wall;                /* the crawl's own wall time, seconds */
    double user, sys;           /* CPU seconds of the child process */
    double rss_mb;              /* its peak resident set, MiB */
    int    procs;               /* it ran in several processes: CPU, switches
                                 * and threads summed, rss_mb each process's
                                 * own peak summed */
    long   vcsw, ivcsw;         /* voluntary and involuntary context switches */
    double total_ms[4];         /* time_total of the fetched URLs: p50, p90, p99, max */
    double ttfb_ms[4];          /* time_ttfb the same way */
    int    status;              /* the child's exit status; -1 if it died */
};

/* Starts one run of model b in a process of its own, which writes its
 * struct compare_run to result_fd (inherited: not close-on-exec) and exits;
 * returns its pid, or -errno. data is what compare_models was given. */
typedef pid_t (*compare_spawn_fn)(const struct crawl_backend *b, int result_fd, void *data);

/* Runs each backend in list (NULL-terminated) repeat times, rounds
 * interleaved, each run in a process that spawn starts; wait4 gives its
 * CPU time, peak RSS and context switches. Fills results[i] with the run
 * whose wall time is the median of model i, and min_wall / max_wall with
 * the spread. Stops starting runs once *stop is set (an interrupt). Returns
 * how many models have results (the first ones of list), or -errno when a
 * process could not be started. */
int compare_models(const struct crawl_backend *const *list, int repeat,
                   compare_spawn_fn spawn, void *data, atomic_int *stop,
                   struct compare_run *results, double *min_wall, double *max_wall);

/* Fills r's percentiles and counts from a finished crawl c. */
void compare_fill(struct compare_run *r, struct crawl *c);

/* Writes into buf (size n) the line that says what the n runs in r shared
 * (the fetch options o) and each one's in-flight limit. Returns buf. */
char *compare_shared(const struct crawl_opts *o, const struct compare_run *r, int n,
                     char *buf, size_t size);

/* Prints the comparison in format fmt. shared is the line that says what
 * every model shared (printed above a table). */
void compare_print(FILE *out, enum crawl_format fmt, const char *shared,
                   const struct compare_run *r, const double *min_wall,
                   const double *max_wall, int n);

#endif

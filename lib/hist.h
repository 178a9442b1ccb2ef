/* hist.h: a histogram of times in buckets 1% wide, for percentiles that
 * cost the same memory for ten times and for ten million. Not locked: the
 * caller keeps it under its lock. */
#ifndef CRAWL_HIST_H
#define CRAWL_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_BUCKETS 2400

/* Bucket k counts times from 1.01^k to 1.01^(k+1) microseconds; the
 * largest is kept exactly. Zeroed: empty. */
struct hist {
    uint32_t b[HIST_BUCKETS];
    size_t n;
    double max;               /* seconds */
};

/* Counts a time (seconds) in h. */
void hist_add(struct hist *h, double seconds);

/* Returns the q-quantile (0 < q < 1, nearest rank) of h's times in
 * milliseconds, within 1% and never above their largest; q >= 1 gives the
 * largest exactly. 0 when h is empty. */
double hist_quantile_ms(const struct hist *h, double q);

#endif

/* retry.h: which failures are worth another try (--retry), and how long to
 * wait before it: exponential backoff with full jitter, or what the
 * server's Retry-After asks. Pure functions: the core decides and keeps the
 * waiting jobs (crawl.c, frontier.c); fetch.c reads the header. */
#ifndef CRAWL_RETRY_H
#define CRAWL_RETRY_H

#include <time.h>
#include "crawl.h"

/* Returns 1 when a response with this status may carry a Retry-After that
 * crawl honours (429 and 503, RFC 9110 10.2.3 and RFC 6585 4), else 0. */
int retry_after_applies(long status);

/* Parses a Retry-After value v (RFC 9110, 10.2.3): delay-seconds, or an
 * HTTP-date, which is turned into seconds from now (0 when it is past).
 * Returns 0 with the seconds in *secs, or -1 when v is neither. */
int retry_after_parse(const char *v, time_t now, double *secs);

/* Returns the wait before retry number `attempt` (1 for the first retry):
 * a uniform draw u (0 <= u < 1) of [0, min(cap, base * 2^(attempt-1))]
 * ("full jitter"); or, when retry_after >= 0, retry_after itself, capped by
 * cap. */
double retry_wait(double base, double cap, int attempt, double retry_after, double u);

#endif

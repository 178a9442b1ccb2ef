/* retry.h: --retry. How long to wait before another try: exponential
 * backoff with full jitter, or what the server's Retry-After asks (pure
 * functions); and the hook that sends a transient failure (job_transient)
 * back to its queue, where the core and the frontier keep it waiting. */
#ifndef CRAWL_RETRY_H
#define CRAWL_RETRY_H

#include <time.h>
#include "crawl.h"

/* Returns the wait before retry number `attempt` (1 for the first retry):
 * a uniform draw u (0 <= u < 1) of [0, min(cap, base * 2^(attempt-1))]
 * ("full jitter"); or, when retry_after >= 0, retry_after itself, capped by
 * cap. */
double retry_wait(double base, double cap, int attempt, double retry_after, double u);

/* Attaches --retry to c (its options say how many tries and how long the
 * waits). Returns 0 or CRAWL_ENOMEM. */
int retry_attach(struct crawl *c);

#endif

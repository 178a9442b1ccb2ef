/* future.h: a single-assignment result slot that one thread fills and
 * others wait on (the future of concurrent.futures). */
#ifndef CRAWL_FUTURE_H
#define CRAWL_FUTURE_H

struct future;

/* Returns a new pending future, or NULL when out of memory. The caller owns
 * it and frees it with future_free once nobody waits on it. */
struct future *future_new(void);

/* Completes f with value and wakes every waiter. Returns 0, or -EALREADY if
 * f was already completed or cancelled (value is then ignored). */
int future_set(struct future *f, void *value);

/* Completes f as cancelled: waiters get NULL and future_cancelled is true.
 * Returns 0, -EALREADY if f was already completed or cancelled, or -EBUSY
 * if f came from pool_submit and its job has already started (the job's
 * value will complete it). */
int future_cancel(struct future *f);

/* Blocks until f is completed; returns its value (NULL if cancelled). */
void *future_wait(struct future *f);

/* Waits at most timeout_ms milliseconds (0 or less: does not wait) on the
 * monotonic clock. Returns 0 and sets *value (when value is not NULL) if f
 * is complete, -ETIMEDOUT otherwise. */
int future_wait_for(struct future *f, long timeout_ms, void **value);

/* Returns 1 when f is complete (set or cancelled), 0 while pending. */
int future_done(struct future *f);

/* Returns 1 when f was cancelled. */
int future_cancelled(struct future *f);

/* Frees f. A future from pool_submit may be freed at any time, even while
 * its job is queued or running: the pool keeps its own hold on it until
 * the job is over. Freeing a future somebody still waits on is a bug. */
void future_free(struct future *f);

/* For the executor that runs a future's job (pool.c), so that the caller
 * may cancel or free the future at any moment. */

/* Takes one more hold on f; each hold is released by one future_free, and
 * the memory goes with the last. Returns f. */
struct future *future_hold(struct future *f);

/* Marks a pending f as running, after which future_cancel refuses it with
 * -EBUSY and only future_set completes it. Returns 0, or -ECANCELED if f
 * was cancelled (or -EALREADY if already set) and its job must not run. */
int future_start(struct future *f);

#endif

/* pool.h: a fixed pool of worker threads fed from one FIFO job queue; each
 * submission returns a future (ThreadPoolExecutor.submit). */
#ifndef CRAWL_POOL_H
#define CRAWL_POOL_H

#include <stddef.h>
#include "future.h"

struct pool;

/* A job: runs on worker number worker (0 .. size-1) and returns the value
 * its future completes with. */
typedef void *(*pool_fn)(void *arg, int worker);

/* Starts nthreads workers with stacks of at least stack_size bytes (0: the
 * system default; rounded up to PTHREAD_STACK_MIN and whole pages). Returns
 * the pool, or NULL with errno set when nthreads < 1 (EINVAL) or not even
 * one worker could start (pthread_create's error, usually EAGAIN); fewer
 * workers than asked is not an error (see pool_size). The caller frees it
 * with pool_free. */
struct pool *pool_new(int nthreads, size_t stack_size);

/* Returns the number of workers that are running. */
int pool_size(const struct pool *p);

/* Queues fn(arg) and returns its future, which the caller owns (future_free
 * after waiting on it); NULL with errno set: ENOMEM when out of memory,
 * ESHUTDOWN when a job submits after pool_free has begun, EINVAL if fn is
 * NULL. Jobs may submit jobs. */
struct future *pool_submit(struct pool *p, pool_fn fn, void *arg);

/* Cancels every queued job that has not started: each one's future is
 * cancelled and its fn never runs; running jobs are left alone. Returns how
 * many futures it cancelled (one its owner cancelled already is not
 * counted). */
size_t pool_cancel(struct pool *p);

/* Runs what is queued to the end, stops and joins the workers, frees p.
 * Futures already returned stay valid and owned by their callers. Must not
 * be called from one of p's own jobs (a worker cannot join itself). */
void pool_free(struct pool *p);

#endif

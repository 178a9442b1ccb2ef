/* clock.h: the one clock the crawler measures and schedules by: monotonic
 * seconds as a double, and the absolute time a timed wait on a condition
 * variable set to CLOCK_MONOTONIC (clock_cond_init) needs. */
#ifndef CRAWL_CLOCK_H
#define CRAWL_CLOCK_H

#include <pthread.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* at (clock_now's seconds) as a struct timespec for pthread_cond_timedwait
 * on a condition variable made by clock_cond_init. */
static inline struct timespec clock_timespec(double at)
{
    struct timespec ts;
    if (at < 0)
        at = 0;
    ts.tv_sec = (time_t)at;
    ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Initialises cond so that its timed waits run on the monotonic clock: a
 * clock set back or forward neither stretches nor cuts them. Returns 0 or
 * an errno value. */
static inline int clock_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);
    if (rc)
        return rc;
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    rc = pthread_cond_init(cond, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

#endif

/* progress.h: the live progress line on stderr (--progress): a thread that
 * samples the core's counters, so that no model needs to know about it. */
#ifndef CRAWL_PROGRESS_H
#define CRAWL_PROGRESS_H

#include <pthread.h>
#include "crawl.h"

struct progress {
    struct crawl *c;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t stop_cond;
    int stop;
};

/* Starts the line for c in p (the caller's memory), redrawn every 200 ms.
 * Returns 0, or pthread_create's error (no line then). */
int progress_start(struct progress *p, struct crawl *c);

/* Stops the thread and clears the line. */
void progress_stop(struct progress *p);

#endif

/* progress.h: the live progress line on stderr (--progress). */
#ifndef CRAWL_PROGRESS_H
#define CRAWL_PROGRESS_H

#include "crawl.h"

struct progress;

/* Starts a thread that rewrites one line on stderr with c's counters every
 * 200 ms until progress_stop. Returns it, or NULL when it cannot start (the
 * run goes on without it). */
struct progress *progress_start(struct crawl *c);

/* Stops the thread, clears the line and frees p. NULL is fine. */
void progress_stop(struct progress *p);

#endif

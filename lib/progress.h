/* progress.h: the live progress line on a terminal, drawn by a thread of
 * its own from the counters a crawl publishes (struct crawl_live), which
 * may be in memory shared with the process that runs the crawl: with
 * --mode=all the line is drawn by the parent, outside every measured
 * child. */
#ifndef CRAWL_PROGRESS_H
#define CRAWL_PROGRESS_H

#include <stddef.h>
#include "crawl.h"

struct progress;

/* Starts redrawing the line for l on descriptor fd every 200 ms. Returns
 * the drawer, or NULL when no thread could be started. */
struct progress *progress_start(const struct crawl_live *l, int fd);

/* Stops the drawer, clears the line and frees p. NULL is fine. */
void progress_stop(struct progress *p);

/* Writes the line for l at monotonic time now (seconds), at most width - 1
 * columns, into buf (size n); empty before the run starts. Returns its
 * length. */
size_t progress_format(const struct crawl_live *l, double now, int width, char *buf,
                       size_t n);

#endif

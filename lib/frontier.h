/* frontier.h: the core's queue of jobs waiting to be handed out: one FIFO
 * for a plain list, or one per host (scheme://host:port) when robots.txt,
 * --per-host or --delay need per-host state; the set of URLs already seen;
 * the admission of links found in pages. Internal to the core: every call
 * is made with the crawl's lock held. */
#ifndef CRAWL_FRONTIER_H
#define CRAWL_FRONTIER_H

#include "crawl.h"

/* Sets up c->fr for c's options. Returns 0 or CRAWL_ENOMEM. */
int frontier_init(struct crawl *c);

/* Frees c->fr, the robots jobs and the links still pending. */
void frontier_free(struct crawl *c);

/* Queues a job that is already in c's job list (a listed URL). Returns 0,
 * or 1 when the job was recorded as failed at once (robots.txt forbids it),
 * or CRAWL_ENOMEM. */
int frontier_push(struct crawl *c, struct crawl_job *j);

/* Takes the next job that may start now, or NULL. When jobs wait only for
 * a host's --delay, *wake (if not NULL) is set to the monotonic time when
 * one may start. */
struct crawl_job *frontier_pick(struct crawl *c, double *wake);

/* Takes back a job that finished: per-host counts, robots.txt rules, and
 * the links it found (queued as new jobs when they pass depth, scope,
 * --include/--exclude, --max-pages, de-duplication and robots.txt). */
void frontier_done(struct crawl *c, struct crawl_job *j);

/* Returns the number of jobs queued and not yet handed out. */
size_t frontier_queued(const struct crawl *c);

/* Empties every queue (a cancelled crawl). */
void frontier_clear(struct crawl *c);

#endif

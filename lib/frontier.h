/* frontier.h: the core's queue of jobs waiting to be handed out: one FIFO
 * for a plain list, or one per host (scheme://host:port) when robots.txt,
 * --per-host or --delay need per-host state; the set of URLs already seen;
 * the admission of links found in pages. Internal to the core: every call
 * but frontier_drain is made with the crawl's lock held. */
#ifndef CRAWL_FRONTIER_H
#define CRAWL_FRONTIER_H

#include "crawl.h"

/* Sets up c->fr for c's options. Returns 0 or CRAWL_ENOMEM. */
int frontier_init(struct crawl *c);

/* Frees c->fr, the jobs still queued and the links still pending. */
void frontier_free(struct crawl *c);

/* Queues a listed job. Returns 0 (robots.txt may already have failed it:
 * then it waits in the queue of failed jobs), or CRAWL_ENOMEM (the job is
 * not queued). */
int frontier_push(struct crawl *c, struct crawl_job *j);

/* Queues a job as it is, at the end of the one FIFO, with no admission
 * rules (a relaying crawl's jobs). */
void frontier_push_plain(struct crawl *c, struct crawl_job *j);

/* Queues a job whose failure is already recorded, to be finished in its
 * turn; such jobs go first. */
void frontier_push_failed(struct crawl *c, struct crawl_job *j);

/* Takes the next job that may start now, or NULL; discovered links past
 * --max-pages are dropped on the way (counted in c->queued_left). When jobs
 * wait only for a host's --delay, *wake (if not NULL) is set to the
 * monotonic time when one may start. */
struct crawl_job *frontier_pick(struct crawl *c, double *wake);

/* Takes back a job that finished: per-host counts, robots.txt rules, and
 * the links it found (queued as new jobs when they pass depth, scope,
 * --include/--exclude, --max-pages, de-duplication and robots.txt). */
void frontier_done(struct crawl *c, struct crawl_job *j);

/* What the answer to page job j, about to be tried again, says of its
 * host's pace (a pause asked for, --auto-throttle's latency); called
 * before its result is cleared for the next try. frontier_done does the
 * same for a job that is finished. */
void frontier_observe(struct crawl *c, const struct crawl_job *j);

/* Takes back job j, handed out and not finished, to start again no sooner
 * than `at` (monotonic seconds): it waits apart, counted as queued, and
 * goes back to the front of its queue when its time comes. */
void frontier_retry(struct crawl *c, struct crawl_job *j, double at);

/* Returns the number of retries waiting for their time. */
size_t frontier_delayed(const struct crawl *c);

/* Returns the number of jobs queued and not yet handed out (waiting retries
 * included). */
size_t frontier_queued(const struct crawl *c);

/* Empties every queue and hands each page job to fn, in queue order,
 * without the lock (links held back for robots.txt are counted in
 * c->queued_left and dropped). Takes the lock itself. */
void frontier_drain(struct crawl *c, void (*fn)(struct crawl *c, struct crawl_job *j));

#endif

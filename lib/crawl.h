/* crawl.h: the crawler core's public types: options, jobs and their
 * results, the backend contract, and the calls a backend makes to take jobs
 * and hand results back. */
#ifndef CRAWL_H
#define CRAWL_H

#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <curl/curl.h>

#include "cancel.h"
#include "errors.h"
#include "job.h"
#include "model.h"
#include "opts.h"

/* Transfers in flight at most, without -c, in a crawl that follows links. */
#define CRAWL_LINK_CONCURRENCY 100

struct crawl;

/* Adds up to `want` more jobs to c from the URL lists (crawl_add and
 * crawl_add_failed), without holding c's lock. Returns 1 while more may
 * follow, 0 when the lists are exhausted, or a negative code (a read
 * error: the lists end there). */
typedef int (*crawl_input_fn)(struct crawl *c, size_t want, void *data);

/* Returns a new crawl with options o (which must outlive it), or NULL when
 * out of memory. The caller frees it with crawl_free. */
struct crawl *crawl_new(const struct crawl_opts *o);

/* Frees c and every job still queued in it. NULL is fine. */
void crawl_free(struct crawl *c);

/* Where warnings go; NULL: nowhere. once is the key of a warning said
 * once (its text's hash), 0 for one said every time. */
void crawl_on_warn(struct crawl *c, void (*fn)(const char *msg, uint64_t once, void *data),
                   void *data);

/* Returns 0, or the negative code the URL lists ended on (a read error). */
int crawl_input_error(const struct crawl *c);

struct fetch_ctx;

/* Passes a printf-style message to c->on_warn, every time. */
void crawl_warn(struct crawl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A finished run's figures, for the report and the comparison. */
struct crawl_summary {
    const char *mode;         /* the model's name; "none" before a run */
    size_t rows;              /* rows written: listed URLs and pages started */
    size_t failed;            /* ... of which failed */
    size_t queued_left;       /* links found and never fetched */
    size_t queue_dropped;     /* ... and never queued, past --max-queue */
    size_t conns;             /* connections opened */
    size_t retries;           /* fetches tried again (--retry) */
    size_t robots_fetched, robots_blocked;
    size_t dns_lookups;       /* names looked up: libcurl's DNS cache missed */
    double wall;              /* seconds the run took */
    int    limit;             /* transfers in flight at most; 0: all at once */
    int    reuse;             /* the reuse policy that ran */
    int    threads;           /* most threads alive at once */
    long   rss_peak_kb;       /* the sum of each of the run's processes' own
                               * peak resident set, when the model measures
                               * it (procs); else 0 */
};

/* Writes into buf (size n) what every transfer of the run shares: "in
 * flight 10, reuse on (auto), timeout 30s, ..., libcurl 7.88.1". Returns
 * buf. */
const char *crawl_describe(const struct crawl *c, char *buf, size_t n);

/* Fills s with c's figures. Thread-safe. */
void crawl_get_summary(struct crawl *c, struct crawl_summary *s);

/* Takes listed jobs from fn (see crawl_input_fn) as the crawl needs them,
 * instead of all before it starts. streams: the lists include a pipe or a
 * terminal, whose lines come when they come; a thread of the core then
 * reads them, so that no model waits on a line, and the run starts
 * without reading ahead (fn must then return within a moment, 1 when it
 * has nothing yet, unless it has an input waker). */
void crawl_set_input(struct crawl *c, crawl_input_fn fn, void *data, int streams);

struct urllist;

/* Takes listed jobs from the URL lists l (urllist.h) as the crawl needs
 * them: each URL a job (crawl_add), each bad line a job that has already
 * failed; a pipe is read no further once c is cancelled. l must outlive
 * c's run. */
void crawl_set_lists(struct crawl *c, struct urllist *l);

/* For a streamed input whose fn blocks until something comes (a procs
 * worker's socket): fn(data) is called, from any thread and possibly with
 * the core's lock held, when a read in progress on the core's reader
 * thread is to return at once: the crawl was cancelled, or the run is over
 * and the reader ends. From then on the input's fn, on that thread, is to
 * return without waiting. fn must be quick (a write to a pipe) and call
 * nothing of the core. */
void crawl_set_input_waker(struct crawl *c, void (*fn)(void *data), void *data);

/* Reads every listed job into c now (for runs that need the whole list
 * before they start). Returns 0 or the input's negative code. */
int crawl_fill(struct crawl *c);

/* Queues url (copied) as a job from input line `line` of `source`. A line
 * that is not an absolute http or https URL is recorded at once as a failed
 * job with the reason, which is also stored in *why when why is not NULL.
 * Returns 0, 1 when the line was recorded as failed, or CRAWL_ENOMEM. */
int crawl_add(struct crawl *c, const char *url, const char *source, long line,
              const char **why);

/* Records text (copied) from input line `line` as a failed job with reason
 * why (copied), without looking at it. Returns 0 or CRAWL_ENOMEM. */
int crawl_add_failed(struct crawl *c, const char *text, const char *source,
                     long line, const char *why);

/* Runs every job through the backend and records the wall time. Returns the
 * backend's code. */
int crawl_run(struct crawl *c, const struct crawl_backend *b);

/* Runs b's prepare step now, if it has one, and grows the process's
 * descriptor table to what the run may hold in flight: a program that
 * starts threads of its own (an output flusher, a progress line) calls it
 * first, since a fork taken while another thread holds a lock (an
 * allocator's) leaves that lock held in the child for good, and a table
 * grown with several threads costs a wait on every CPU at each doubling.
 * crawl_run calls it when nobody did. Returns 0 or a negative code. */
int crawl_prepare(struct crawl *c, const struct crawl_backend *b);

/* Stops handing out jobs and makes the models abandon transfers in flight;
 * the first reason given sticks (cancel.h). */
void crawl_cancel(struct crawl *c, enum crawl_cancel_why why);

/* With --cookie-jar, a relaying crawl (a procs worker) hands every cookie
 * of its jar to fn at the end of its run, one Netscape cookie-file line at
 * a time, instead of writing the jar's file. */
void crawl_on_cookies(struct crawl *c, void (*fn)(const char *line, void *data), void *data);

/* Adds a cookie (a Netscape cookie-file line, as crawl_on_cookies gives)
 * to the jar of a crawl that runs with --cookie-jar; the jar's file gets it
 * at the end. Returns 0, or CRAWL_ENOMEM. Without a jar it does nothing. */
int crawl_add_cookie(struct crawl *c, const char *line);

/* 0 while the frontier's home works; once it failed during the run (the
 * rows written before are in the output), CRAWL_EFRONTIER when a
 * --frontier server was lost, CRAWL_ESTORE when the store lost data or
 * could not write it (a full disk, a damaged record). Either way the crawl
 * was cancelled. */
int crawl_frontier_lost(struct crawl *c);

/* A consistent view of a running crawl's counters. */
struct crawl_progress {
    size_t done;              /* rows written */
    size_t failed;
    size_t running;
    size_t queued;
    size_t total;             /* rows the run will write, once known; else 0 */
    double elapsed;           /* seconds since the crawl started; 0 before */
};

/* Fills p with c's counters now. Thread-safe. */
void crawl_get_progress(struct crawl *c, struct crawl_progress *p);

/* Counters a running crawl publishes as it goes, for a progress line drawn
 * by another thread or another process (the block may be shared memory):
 * read them without the crawl's lock, and without costing the crawl more
 * than a few stores a job. */
struct crawl_live {
    atomic_size_t done;       /* rows written */
    atomic_size_t failed;
    atomic_size_t queued;     /* jobs waiting to be handed out */
    atomic_size_t total;      /* rows the run will write, once known; else 0 */
    atomic_long transfers;    /* transfers in flight now */
    atomic_llong t0_ns;       /* monotonic nanoseconds at the run's start;
                               * 0 before it (set after mode) */
    char mode[16];            /* the model that runs */
};

/* Makes c publish its counters in l (zeroed here) from now on; NULL
 * stops it. Call before crawl_run. */
void crawl_set_live(struct crawl *c, struct crawl_live *l);

/* The times of a fetched URL that the core keeps percentiles of. */
enum crawl_time {
    CRAWL_TIME_TOTAL,         /* time_total: the whole transfer */
    CRAWL_TIME_TTFB,          /* time_ttfb: until the first byte of the response */
    CRAWL_TIME_DNS            /* time_dns of every fetch that looked a name up
                               * (robots.txt's, sitemaps' and tries again too) */
};

/* Returns the q-quantile (0 < q < 1, nearest rank) of the fetched URLs'
 * time `which` in milliseconds, within 1% and never above their largest;
 * q >= 1 gives the largest exactly. 0 when none was fetched. */
double crawl_latency_ms(const struct crawl *c, enum crawl_time which, double q);

/* Passes msg, a warning relayed from another process, to c->on_warn: every
 * time when once is 0, else the first time a warning keyed once comes. */
void crawl_warn_relayed(struct crawl *c, uint64_t once, const char *msg);

/* Passes a printf-style message to c->on_warn, once per text: the first
 * call that makes a message speaks, later ones that make the same text
 * (of whatever format, here or relayed) are dropped. The first 64 texts
 * are remembered; one past them is said every time. */
void crawl_warn_once(struct crawl *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Returns how many jobs are queued and not yet taken. */
size_t crawl_queued(struct crawl *c);

/* Returns 1 once the input can add no more jobs (the lists are read, or
 * there were none), else 0: a streamed list may still add some. */
int crawl_input_over(struct crawl *c);

#endif

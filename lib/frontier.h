/* frontier.h: which job may start now, and which links become jobs. The
 * frontier keeps the queues (one FIFO for a plain list, or one per host,
 * scheme://host:port, when robots.txt, --per-host or --delay need per-host
 * state), the set of URLs seen, each host's robots.txt and pace, the
 * retries waiting for their time, and its own counts. It is the core's:
 * every call is made with the core's lock held, and nothing here calls
 * back up. A --state or --frontier crawl keeps its queue in a store
 * (state.h); a store's error is latched for the core to read. */
#ifndef CRAWL_FRONTIER_H
#define CRAWL_FRONTIER_H

#include <regex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "job.h"

struct frontier;
struct state;
struct url_parts;

/* What the frontier is told of the run: the options that decide which
 * links are followed and when a host's next request may start. */
struct frontier_conf {
    int    depth;             /* link hops followed from the listed URLs */
    long   max_pages;         /* pages started at most, listed ones included; 0: no bound */
    size_t max_queue;         /* jobs queued at most, in memory and the spill
                               * file: a link found past it is dropped; 0: no bound */
    int    span_hosts;        /* follow links to other hosts than the listed URL's */
    const regex_t *include;   /* a followed link must match one of these, if any */
    size_t ninclude;
    const regex_t *exclude;   /* ... and none of these */
    size_t nexclude;
    int    robots;            /* obey robots.txt when following links */
    const char *user_agent;   /* robots.txt is read for the product token it
                               * starts with, unless robots_agent is given */
    const char *robots_agent;
    int    per_host;          /* transfers in flight to one host at most; 0: no bound */
    double delay;             /* seconds between the starts of requests to one host */
    int    ignore_crawl_delay;  /* robots.txt's Crawl-delay does not space requests */
    int    auto_throttle;     /* each host's delay follows its latency and errors */
    int    sitemaps;          /* the listed hosts' sitemaps add their URLs at depth 0 */
    double retry_max_delay;   /* the longest pause a 429's or 503's Retry-After buys */
    int    canonical;         /* the seen set keys on a URL with its query's
                               * arguments sorted by name (url_canonical) */
    const regex_t *strip;     /* ... and without the arguments whose whole name
                               * one of these matches */
    size_t nstrip;
    int    verdicts;          /* a page's links are kept with what became of
                               * each (j->verdicts), for --links-out */
    long   max_redirs;        /* redirects in a row a page's fetch hands over at most */
    double (*now)(void);      /* the clock (monotonic seconds); NULL: clock_now */
};

/* The frontier's counts, for the report. */
struct frontier_counts {
    size_t queued;            /* jobs queued and not handed out (waiting retries too) */
    size_t delayed;           /* ... of which retries waiting for their time */
    size_t left;              /* links found and queued but never fetched */
    size_t dropped;           /* links found when the queue held max_queue: never queued */
    uint64_t spill_bytes;     /* bytes of the spill file now */
    size_t seen;              /* URLs in the seen set (in memory; not a store's) */
    size_t started;           /* pages handed out, for --max-pages */
    size_t robots_fetched;    /* robots.txt files fetched */
    size_t robots_blocked;    /* links and URLs robots.txt kept from being fetched */
};

/* Makes a frontier for conf (copied; its regexes must outlive the
 * frontier). Returns it, or NULL when out of memory. */
struct frontier *frontier_new(const struct frontier_conf *conf);

/* Frees f, the jobs still queued and the links still pending. NULL is fine. */
void frontier_free(struct frontier *f);

/* --state, --frontier: f's queue, seen set and robots.txt live in st (the
 * caller's), which has started `fetched` pages already. */
void frontier_use_store(struct frontier *f, struct state *st, size_t fetched);

/* A recrawl pass of the store (state_recrawl): its pages are queued from
 * id first on, and each carries what the store kept of it (its validators,
 * for a conditional request); one fetched after due_before (seconds since
 * 1970; 0: none is) is not due, and is handed out with skip set, neither
 * fetched nor given a row (its links admitted from the store). */
void frontier_recrawl(struct frontier *f, uint64_t first, double due_before);

/* The run starts: limit is its transfers in flight at most (0: all at
 * once: a shared store leases pages by it), deadline_at when --deadline
 * ends it (0: never; no pause lasts past it), cancelled the core's flag,
 * read to stop admitting links. */
void frontier_start(struct frontier *f, int limit, double deadline_at,
                    const atomic_int *cancelled);

/* 1 when frontier_push wants a listed URL split (url_split, or
 * url_validate_split): the frontier keys it by its host. Reads only the
 * configuration, so the caller splits the URL before it takes its lock. */
int frontier_splits_listed(const struct frontier *f);

/* Gives listed URL p, split, its seen-set key (p->seen) when frontier_push
 * will look it up (links or sitemaps followed, no store), so that it is
 * made before the caller takes its lock (with --canonical, a parse of
 * the query). Reads only the configuration. Returns 0 or CRAWL_ENOMEM. */
int frontier_key_listed(const struct frontier *f, struct url_parts *p);

/* Queues listed job j, p its URL split when frontier_splits_listed says so
 * (else, or for a URL that does not split, NULL: it goes in the plain
 * queue), with its seen-set key in p->seen (frontier_seen_hash; 0: made
 * here, which parses a --canonical URL's query). Takes the strings of p
 * it keeps (set NULL there); the rest stay the caller's
 * (url_parts_free). Returns 0
 * (robots.txt may already have failed it: then it waits in the queue of
 * failed jobs), or CRAWL_ENOMEM (the job is not queued). */
int frontier_push(struct frontier *f, struct crawl_job *j, struct url_parts *p);

/* Queues a job as it is, at the end of the one FIFO, with no admission
 * rules (a relaying crawl's jobs). */
void frontier_push_plain(struct frontier *f, struct crawl_job *j);

/* Queues a job whose failure is already recorded, to be finished in its
 * turn; such jobs go first. */
void frontier_push_failed(struct frontier *f, struct crawl_job *j);

/* Memory holds the head of the queue; the rest waits in the --state or
 * --frontier store or, without one, in the spill (links admitted past
 * FRONTIER_MEM_JOBS, in temporary files). Both are read in as memory
 * drains, in three steps so that the files or the store are read and
 * written, and what they hold parsed, without the caller's lock:
 * frontier_refill_begin (lock held) returns 1 when a read is due, and
 * claims it (no other begins until it ends); frontier_refill_read (lock
 * not held; touches only what the claim set aside) does the I/O and the
 * parsing; frontier_refill_end (lock held) places what it read. Links
 * admitted meanwhile wait for the next read, after those claimed.
 * frontier_refill_end returns 1 when another read is due at once (links
 * went to the store during this one, or the store or the spill may hold
 * more and memory is still short of them): until it is made, an empty
 * queue does not mean the crawl is over. frontier_refill does all three,
 * as often as that asks, without letting a lock go. */
int frontier_refill_begin(struct frontier *f);
/* 1 when a --frontier store's lease is due and no read is claimed, or
 * hosts wait for their turns (frontier_turns_begin): the thread that
 * leases (not the one asking) is to make it. The lock is held. */
int frontier_lease_due(const struct frontier *f);
/* When a --frontier store's lease comes due by time alone (memory wants
 * pages, and the last lease found none: the server is asked again after a
 * pause, for pages other workers found or gave back meanwhile); 0: not by
 * time (due now, or only once memory drains or links are sent). The lock
 * is held. */
double frontier_lease_at(const struct frontier *f);
void frontier_refill_read(struct frontier *f);
int frontier_refill_end(struct frontier *f);
void frontier_refill(struct frontier *f);

/* A worker of a shared store that does not lease its hosts whole (no
 * --per-host, --delay, --auto-throttle) still keeps a host's Crawl-delay
 * over all the workers: the server gives the host's turns. The server is
 * asked in three steps, as a refill reads, so that no pick waits on it:
 * frontier_turns_begin (lock held) claims the hosts a pick found waiting
 * for a turn (0: none, or a claim not ended), frontier_turns_read (lock
 * not held) asks the server for them, frontier_turns_end (lock held)
 * gives each its turn, or its time to ask again, and returns 1 when it
 * did either (whoever waits is to look again). frontier_lease_due says 1 while
 * hosts wait to be claimed. */
struct frontier_turn {
    struct crawl_host *host;
    double delay, wait;
    double at;                  /* when its answer came */
    int rc;                     /* state_host_take's */
};
struct frontier_turns {
    size_t n;
    struct frontier_turn *v;
};
int frontier_turns_begin(struct frontier *f, struct frontier_turns *t);
void frontier_turns_read(struct frontier *f, struct frontier_turns *t);
int frontier_turns_end(struct frontier *f, struct frontier_turns *t);

/* 1 while a read claimed by frontier_refill_begin has not ended: the
 * crawl is not over, whatever the queues hold. */
int frontier_refilling(const struct frontier *f);

/* Takes the next job that may start now, or NULL (from memory: a store's
 * pages are read in by the refill above); discovered links past
 * --max-pages are dropped on the way (counted as left). When jobs wait
 * only for their time (a host's delay or pause, a retry), *wake (if not
 * NULL) is set to the monotonic time when one may start. */
struct crawl_job *frontier_pick(struct frontier *f, double *wake);

/* Job j, handed out, has started: its request is on its way. A host with
 * a delay hands out nothing between the two, and its next start is due a
 * delay after this one, however long the model took to start it. */
void frontier_started(struct frontier *f, struct crawl_job *j);

/* Does for finished job j the work of frontier_done that needs none of the
 * crawl's state, so that it is done without the core's lock: a robots.txt
 * body is parsed (into j->rules), each found link split, held to depth,
 * scope, --include and --exclude and given its seen-set key (kept in
 * j->parts), a redirect's target the same (j->target), and with
 * --sitemaps the sitemaps a robots.txt or an index names split (j->maps);
 * a job prepared must then be given to frontier_done, which takes them. With a store (--state,
 * --frontier), the robots.txt is written to it, and a page's links and its
 * redirect's target are sent to it, each with its verdict. Reads only f's
 * configuration, which is fixed before the run starts, the count of pages
 * started and the cache of hashes sent (both atomically); safe from any
 * thread at once. */
void frontier_prepare(const struct frontier *f, struct crawl_job *j);

/* Returns 1 when frontier_done would do nothing for finished job j (a
 * page of a plain list: no host kept, no pace, no links, no store), so
 * that the core need not take its lock for it. Reads only j and what is
 * fixed before the run. */
int frontier_done_is_noop(const struct frontier *f, const struct crawl_job *j);

/* Takes back a job that finished: per-host counts and pace, robots.txt
 * rules, and the links it found (queued as new jobs when they pass depth,
 * scope, --include/--exclude, --max-pages, de-duplication and robots.txt;
 * none once the crawl is cancelled, unless a store keeps them). */
void frontier_done(struct frontier *f, struct crawl_job *j);

/* What the answer to page job j, about to be tried again, says of its
 * host's pace (a pause asked for, --auto-throttle's latency); called
 * before its result is cleared for the next try. frontier_done does the
 * same for a job that is finished. */
void frontier_observe(struct frontier *f, const struct crawl_job *j);

/* Takes back job j, handed out and not finished, to start again no sooner
 * than `at` (monotonic seconds): it waits apart, counted as queued, and
 * goes back to the front of its queue when its time comes. */
void frontier_retry(struct frontier *f, struct crawl_job *j, double at);

/* Returns 1 when a job's start may be held back by its host (per-host
 * queues: links, robots.txt, --per-host, a pace), else 0: then nothing but
 * its turn decides when a job starts. */
int frontier_paced(const struct frontier *f);

/* Returns the number of jobs queued and not yet handed out (waiting retries
 * included). */
size_t frontier_queued(const struct frontier *f);

/* Fills *n with f's counts. */
void frontier_counts(const struct frontier *f, struct frontier_counts *n);

/* Returns 1 once, after the first link dropped for max_queue, else 0: the
 * core says so once. */
int frontier_queue_full(struct frontier *f);

/* Whether job j, back from frontier_done, is still the frontier's (a
 * robots.txt job is its host's), not the caller's to free. */
int frontier_keeps(const struct crawl_job *j);

/* Says through say (one text a call) what the frontier has to tell of
 * job j once frontier_done took it: a sitemap it could not read, and the
 * queue's first link dropped when full (frontier_queue_full's answer,
 * read with the lock held). Needs no lock: the core calls it once the lock
 * is let go, so that no warning is written with it held. */
void frontier_notes(const struct frontier *f, const struct crawl_job *j, int full,
                    void (*say)(void *data, const char *text), void *data);

/* Returns 1 once, after a call failed in the store (its error says why;
 * state_error), else 0. */
int frontier_store_failed(struct frontier *f);

/* The frontier's home, as the core sees it: whether a store holds the
 * queue (frontier_use_store), and whether other processes share it (a
 * --frontier server: the core then reads it on a thread of its own). */
int frontier_stored(const struct frontier *f);
int frontier_shared(const struct frontier *f);

/* Whether other processes hold pages of a shared store, as its last read
 * said: the crawl is not over while they do. 0 for memory and a file. */
int frontier_elsewhere(struct frontier *f);

/* Whether a page may start now: 0 once a shared store's hold on this
 * process's pages may have lapsed (its heartbeats unanswered), until a
 * heartbeat renews it (frontier_on_change's fn is told) or the store
 * fails (latched: frontier_store_failed says so). 1 for memory and a file. */
int frontier_may_start(struct frontier *f);

/* After the store failed: writes "state: ..." or "frontier: ..." with the
 * store's error into buf (size n; NULL: none) and returns why the crawl
 * must stop, CRAWL_ESTORE (the store lost what the crawl wrote) or
 * CRAWL_EFRONTIER (a shared store stopped answering, or gave this
 * process's pages to others). 0 without a store. */
int frontier_failure(struct frontier *f, char *buf, size_t n);

/* fn(data) is told, from a shared store's own thread, when
 * frontier_may_start or frontier_store_failed may say otherwise than they
 * did (state_on_change's rules); NULL: nobody. Nothing for memory or a
 * file. */
void frontier_on_change(struct frontier *f, void (*fn)(void *data), void *data);

/* Gives the store the pages the frontier dropped without a row since the
 * last call (robots.txt forbade them, --max-pages was reached), before a
 * commit: called without the core's lock, for the frontier drops them
 * with it held. A page whose drop never reaches a commit is dropped again
 * by the next run. Returns 1 when there were any, 0 when none, -1 when the
 * store failed (state_error says why). */
int frontier_store_flush(struct frontier *f);

/* Empties every queue and returns the page jobs that were in them, in
 * queue order, linked by qnext (links held back for robots.txt and spilled
 * are counted as left and dropped; robots jobs stay their hosts'). */
struct crawl_job *frontier_drain(struct frontier *f);

/* A second, independent 64-bit hash of URL s (its normal form), for the
 * seen set. */
uint64_t frontier_hash_url(const char *s);

/* The seen set's key of the URL whose normal form is norm: its hash
 * (frontier_hash_url), of its canonical form when f's configuration asks
 * for one (canonical, strip). Returns 0 with *hash set, or CRAWL_ENOMEM.
 * Reads only the configuration. */
int frontier_seen_hash(const struct frontier *f, const char *norm, uint64_t *hash);

#endif

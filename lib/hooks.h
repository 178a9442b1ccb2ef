/* hooks.h: what a feature attaches to the core with. The report and the
 * trace write rows, --retry keeps a job back for another try, --state and
 * --frontier keep the list and the outcome in a store, and a procs worker
 * relays every job to its coordinator: each is a hook user, and the core
 * names none of them.
 *
 * A crawl has one hook per slot, and hooks run in slot order: a job back
 * from its model meets the relay first (which takes every job), then
 * --retry (which takes a transient failure with tries left), then the
 * store (which takes a page the cancellation stopped: the next run's);
 * a job no hook took goes back to the frontier, and then its row is
 * written by the output, its links by --links-out, then the trace, and its
 * validators noted (--validators, which also gives each listed job those
 * it had). The crawl's digest set (revisit.c) attaches to the run's start
 * and stop alone. */
#ifndef CRAWL_HOOKS_H
#define CRAWL_HOOKS_H

#include "crawl.h"

struct url_parts;

enum crawl_hook_slot {
    CRAWL_HOOK_RELAY,           /* a procs worker: every job to the coordinator */
    CRAWL_HOOK_RETRY,           /* --retry */
    CRAWL_HOOK_STORE,           /* --state, --frontier */
    CRAWL_HOOK_OUTPUT,          /* the report: the row */
    CRAWL_HOOK_LINKS,           /* --links-out: the page's links and their verdicts */
    CRAWL_HOOK_TRACE,           /* --trace */
    CRAWL_HOOK_VALIDATORS,      /* --validators, --if-modified-since */
    CRAWL_HOOK_DIGESTS,         /* the crawl's digest set: --dedupe, --warc's revisits */
    CRAWL_HOOK_SLOTS
};

struct crawl_hook {
    /* The crawl is being prepared for its model, before the model's own
     * set-up (a procs crawl forks its workers there): what the processes
     * of the crawl share is made now. Once a crawl, however often it is
     * prepared. */
    void (*prepare)(void *data, struct crawl *c);
    /* The run starts (prepared, its warnings with somewhere to go), before
     * the model runs. */
    void (*start)(void *data, struct crawl *c);
    /* A listed line was read (url, and its problem when it is no URL
     * crawl fetches, else NULL, and then url split: parts, read only).
     * Returns 0 for the core to queue it, 1 when the hook took it (a
     * store, which hands it out in its turn), or a negative code (the
     * input ends there). */
    int  (*listed)(void *data, struct crawl *c, const char *url, const char *source,
                   long line, const char *problem, const struct url_parts *parts);
    /* The core made the job of a listed URL to fetch (no hook took the
     * line): the hook may set what its request carries (its validators). */
    void (*made)(void *data, struct crawl_job *job);
    /* A job is back from its model, its result filled in and its attempts
     * counted. Returns 0 to pass it on, or 1 when the hook took it: it
     * handed it to crawl_retry, crawl_drop or crawl_release (or will). */
    int  (*back)(void *data, struct crawl *c, struct crawl_job *job);
    /* Page job's row is final: the frontier has taken the job back and
     * the run is not over before this returns. Called without the core's
     * lock, from whichever thread finished the job. */
    void (*row)(void *data, struct crawl *c, struct crawl_job *job);
    /* The run is about to wait (a model blocks, or crawl_take_wait waits): what
     * the hook holds goes out now. */
    void (*idle)(void *data);
    /* The run is over with rc, every job with its row or given back (after
     * the model returned, or when the run failed before the model ran:
     * every start has its stop). */
    void (*stop)(void *data, struct crawl *c, int rc);
    /* Frees data when the crawl is freed; NULL: the caller's. */
    void (*free)(void *data);
};

/* Attaches h (copied) with data in slot, replacing what was there. Call it
 * before crawl_run. */
void crawl_hook(struct crawl *c, enum crawl_hook_slot slot, const struct crawl_hook *h,
                void *data);

/* For a back hook: job goes back to its queue, to start again no sooner
 * than `at` (monotonic seconds), its result cleared but for its attempts;
 * it holds no transfer meanwhile and keeps its row number. */
void crawl_retry(struct crawl *c, struct crawl_job *job, double at);

/* For a back hook: job ends without a row: the frontier takes it back
 * (the links it found are admitted) and it is freed, not counted. */
void crawl_drop(struct crawl *c, struct crawl_job *job);

/* For a back hook: job ends without a row and without the frontier (its
 * links and body went elsewhere), and is freed. */
void crawl_release(struct crawl *c, struct crawl_job *job);

/* The data attached in slot (crawl_hook), or NULL: how a feature's calls
 * that take the crawl find their state. */
void *crawl_hook_data(struct crawl *c, enum crawl_hook_slot slot);

/* The crawl's frontier (frontier.h), for a feature that gives it a home
 * (--state, --frontier: frontier_use_store) or asks what it keeps. */
struct frontier *crawl_frontier(struct crawl *c);

/* For a feature that gave the frontier a home: the home failed
 * (frontier_failure says how). The crawl stops, and the failure is said
 * once. Called without the core's lock. */
void crawl_frontier_failed(struct crawl *c);

/* For a stop hook: 1 when the model took every job and nothing cancelled
 * the run (none was left queued when it returned). */
int crawl_took_all(const struct crawl *c);

#endif

/* crawl_internal.h: the core's state, for crawl.c alone (and the unit
 * tests that build a crawl on the stack); the rest of the program goes
 * through crawl.h, model.h and hooks.h. */
#ifndef CRAWL_INTERNAL_H
#define CRAWL_INTERNAL_H

#include "crawl.h"
#include "fetch.h"
#include "hist.h"
#include "hooks.h"
#include "hset.h"

struct frontier;

/* The texts crawl_warn_once keeps, at most. */
#define CRAWL_WARNED 65536

/* The core's state: crawl.c alone reads and writes it. */
struct crawl {
    const struct crawl_opts *opts;
    const struct crawl_backend *backend;
    pthread_mutex_t lock;     /* guards everything below that changes during a run */
    pthread_cond_t  cond;     /* signalled when a job is queued or one finishes */
    uint64_t nseq;            /* row numbers given out */
    size_t running;           /* handed out and not yet done */
    size_t nrows;             /* rows written: pages done, whatever the outcome */
    size_t nfailed;           /* ... of which failed */
    size_t left;              /* links found and queued, never started, counted
                               * after the run (the frontier counts its own) */
    size_t conns;             /* connections opened, as libcurl counts them */
    size_t retries;           /* jobs queued again for another try (--retry) */
    int    limit;             /* transfers in flight at most; 0: all at once.
                               * The core sets it from -c, the model's default
                               * and the descriptors there are: models obey it */
    int    reuse;             /* the policy that runs: 1 reuse, 0 fresh connections */
    int    threads_peak;      /* most threads alive at once, for the report */
    size_t fetchable;         /* listed jobs read so far that need a fetch */
    size_t fetchable_at_start;  /* ... when the model started (policies read it
                                 * without the lock; a streamed list grows) */
    int    https;             /* a listed URL read so far is an https one */
    crawl_input_fn input;     /* where more listed jobs come from; NULL: none */
    void  *input_data;
    int    input_open;        /* input may still add jobs */
    int    input_busy;        /* a thread is reading input, without the lock */
    int    input_err;         /* input ended on this error (negative code) */
    int    input_streams;     /* read by input_tid, not by the takers */
    int    input_stop;        /* the reader thread is to end */
    void (*input_waker)(void *data); /* crawl_set_input_waker's (waker_lock) */
    void  *input_waker_data;
    pthread_t input_tid;
    int    lease_on;          /* a --frontier store's leases are lease_tid's */
    int    lease_stop;        /* the leasing thread is to end */
    pthread_t lease_tid;
    pthread_cond_t lease_cond;    /* wakes the leasing thread: a lease is due */
    struct hist hist[3];  /* fetched URLs' times, by enum crawl_time */
    size_t dns_lookups;   /* names looked up, every fetch's */
    double t0;                /* monotonic seconds at crawl_run's start */
    double wall;              /* seconds crawl_run took */
    struct crawl_hook_at {
        struct crawl_hook h;
        void *data;
    } hooks[CRAWL_HOOK_SLOTS];  /* the features attached, in slot order (hooks.h) */
    int    split_listed;      /* crawl_add splits a listed URL as it checks it:
                               * the frontier or a listed hook keys it */
    struct fetch_ctx fx;      /* what every transfer shares (fetch.h) */
    struct cancel cancel;     /* why the run was cancelled (crawl_cancel), and its --deadline */
    const char *abandoned;    /* set by crawl_abandon: why the jobs left never ran */
    const struct crawl_backend *prepared;   /* crawl_prepare ran for it */
    int    hooks_prepared;    /* the hooks' prepare ran, the table grown (once a crawl) */
    void *model_data;         /* crawl_set_model_data's */
    void (*model_done)(void *data);
    size_t nofile;            /* file descriptors this process may open */
    struct frontier *fr;      /* queues, hosts, seen URLs (frontier.c) */
    void (*on_warn)(const char *msg, uint64_t once, void *data);
    void  *on_warn_data;      /* where crawl_warn's messages go; none when NULL */
    pthread_mutex_t warn_lock;  /* guards warned */
    struct hset64 warned;     /* hashes of the texts crawl_warn_once said */
    void (*waker)(void *data);  /* crawl_set_waker's: wakes the model's loop */
    void  *waker_data;
    pthread_mutex_t waker_lock; /* guards waker: taken inside lock, never around a core call */
    int    waiting;           /* crawl_take said "nothing now" since the waker last ran */
    void (*on_cookies)(const char *line, void *data);   /* crawl_on_cookies */
    void *on_cookies_data;
    struct crawl_live *live;  /* where the counters are published, or NULL */
    long   rss_peak_kb;       /* a model's own measure: its processes' peak
                               * resident sets, summed; 0: not measured */
    int    took_all;          /* the model took every job: none was left queued
                               * when it returned, and nothing cancelled it */
    atomic_int lost;          /* 0, or why the frontier's home was lost:
                               * CRAWL_EFRONTIER, CRAWL_ESTORE (crawl_frontier_lost) */
    atomic_int lost_unsaid;   /* ... and its warning waits for the lock to go */
};

/* Whether a run with options o finds pages beyond its lists (links,
 * sitemaps): its length is then unknown until it ends. */
static inline int crawl__finds(const struct crawl_opts *o)
{
    return o->depth > 0 || o->sitemaps;
}

/* Initialises c (the caller's memory) for options o. Returns 0 or
 * CRAWL_ENOMEM. For tests that keep a crawl on the stack. */
int crawl__init(struct crawl *c, const struct crawl_opts *o);

/* Frees what c holds, not c itself. */
void crawl__fini(struct crawl *c);


/* Counts a page's row and publishes the counters; the lock is held. */
void crawl__count_row(struct crawl *c, const struct crawl_job *job);
void crawl__publish(struct crawl *c);

#endif

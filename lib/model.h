/* model.h: the model contract. A model is how jobs are scheduled: one file
 * (lib/mode_NAME.c) defining a struct crawl_backend, and one line in the
 * registry (lib/modes.c). Its run(c) does exactly this:
 *
 *   1. Take a job only when it can start it now (it has a thread, a
 *      coroutine, a slot under crawl_limit): crawl_take, or crawl_take_wait
 *      for a model that may block. Every pacing rule (--per-host, --delay,
 *      Crawl-delay, --auto-throttle, Retry-After pauses, retries' times)
 *      was decided by the frontier before the job was handed out, the same
 *      way for every model. Only when crawl_paced says no rule can hold a
 *      job back may a model with a queue of its own take ahead of its
 *      free workers.
 *   2. Fetch it through fetch.h with crawl_fetch_ctx(c): fetch_perform
 *      (blocking), or fetch_prepare, the easy handle run on a multi handle
 *      (multi_ev.h drives one on libev), fetch_follow while it asks, then
 *      fetch_finish (and fetch_parse when that says so).
 *   3. Give it back: crawl_done; crawl_fail when it could not even start,
 *      crawl_fail_nomem when memory for it ran out (its handle, its
 *      thread's or coroutine's state): the job fails, the crawl goes on.
 *      A job handed back is the core's: never look at it again.
 *   4. When crawl_take says CRAWL_EAGAIN, sleep until the waker runs
 *      (crawl_set_waker: a job was queued or came back, the input ended,
 *      a --frontier lease placed pages or found the crawl over, the
 *      server held the worker's lease again or the store failed, the
 *      crawl was cancelled), a transfer of the model's ends, or the due
 *      time crawl_take gave passes; then take again. Nothing polls: no
 *      timer but that due time wakes a model. Before a loop blocks, call
 *      crawl_waiting (crawl_take_wait does). On crawl_take's 0 the run is
 *      over: once the model's transfers are back, run returns. When the
 *      crawl is cancelled (crawl_is_cancelled, the waker says so), abandon
 *      the transfers in flight; each comes back as cancelled.
 *   5. Say how many threads it had at most (crawl_set_threads).
 *
 * run returns 0 or a negative code; whatever it returns, every job it took
 * has been handed back. */
#ifndef CRAWL_MODEL_H
#define CRAWL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "job.h"
#include "opts.h"

struct crawl;
struct fetch_ctx;

/* Options only some models read, for struct crawl_backend's options. */
enum crawl_model_option {
    CRAWL_MODEL_LOOPS = 1 << 0,         /* --loops */
    CRAWL_MODEL_PROCS = 1 << 1,         /* --procs, --worker-timeout */
    CRAWL_MODEL_STACK = 1 << 2,         /* --stack-size */
    CRAWL_MODEL_PARSE_THREADS = 1 << 3, /* --parse-threads */
};

struct crawl_backend {
    const char *name;
    const char *summary;      /* one line for --help */
    const char *manual;       /* what crawl(1)'s MODELS says of it: sentences,
                               * options named as typed (--loops N); the
                               * manual is made from these at build time */
    int default_concurrency;  /* transfers in flight without -c; 0: all at once */
    int max_concurrency;      /* the most the model can have in flight; 0: no bound */
    int fds_per_transfer;     /* descriptors a transfer in flight holds */
    int processes;            /* its workers are processes: a worker id divided
                               * by 1,000,000 numbers the process */
    unsigned options;         /* the model options it reads (CRAWL_MODEL_*);
                               * one given to a run of models that read none
                               * of it is said to be ignored */
    const struct crawl_backend *worker; /* a model of processes: the model
                               * each process runs (its registry entry) */
    int (*run)(struct crawl *c);
    /* Optional: set-up that must happen while the process has one thread
     * (forking workers), before the caller starts threads of its own; see
     * crawl_prepare. It keeps what it made with crawl_set_model_data. */
    int (*prepare)(struct crawl *c);
};

/* The registry (lib/modes.c): every model, NULL-terminated, in the order
 * --help, --mode=all and the tests list them; the first is the baseline
 * of --mode=all's speed-up. */
extern const struct crawl_backend *const crawl_backends[];

/* Returns the backend called name, or NULL. */
const struct crawl_backend *crawl_backend_find(const char *name);

/* Returns the model that runs without --mode. */
const struct crawl_backend *crawl_backend_default(void);

/* Writes every model's name into buf (size n), separated by sep. Returns
 * buf. */
char *crawl_backend_names(char *buf, size_t n, const char *sep);

/* ---- taking and giving back --------------------------------------------- */

/* Takes a job that may start now into *job and marks it running. Returns
 * 1 with a job; 0 when the crawl is over (nothing queued or running, or
 * cancelled); CRAWL_EAGAIN when nothing may start now, with *due (if not
 * NULL) set to the monotonic time when something comes due by itself (a
 * host's pace, a retry, the deadline), 0 when only the waker or a transfer
 * of the model's ending brings more. Jobs that failed before any fetch get
 * their rows here, not handed out. Never blocks on the network. */
int crawl_take(struct crawl *c, struct crawl_job **job, double *due);

/* The same for a model that may block: waits until a job may start or the
 * crawl is over. Returns 1 or 0. */
int crawl_take_wait(struct crawl *c, struct crawl_job **job);

/* fn(data) is called when crawl_take may have more to give than when it
 * last said CRAWL_EAGAIN (a job queued or back, the input's end, a
 * --frontier lease that placed pages or found nothing left anywhere, the
 * server's lease held again or the store failed), and at once when the
 * crawl is cancelled; from any thread, possibly with the core's lock
 * held: fn must be quick and call nothing of the core (ev_async_send, a
 * write to a pipe). NULL: nobody. */
void crawl_set_waker(struct crawl *c, void (*fn)(void *data), void *data);

/* What a model calls just before its loop blocks, from its own thread: the
 * idle hooks (a relay sends what it holds). crawl_take_wait calls it. */
void crawl_waiting(struct crawl *c);

/* Hands back a job whose result is filled in: the hooks, the frontier and
 * the row take it from there. */
void crawl_done(struct crawl *c, struct crawl_job *job);

/* Hands back a job taken and never fetched (no thread for it, out of
 * memory): fail and a printf-style reason. */
void crawl_fail(struct crawl *c, struct crawl_job *job, enum crawl_fail fail,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Hands back a job taken and never fetched because memory ran out: the
 * one text and class every model gives it (CRAWL_FAIL_OTHER, "out of
 * memory"). */
void crawl_fail_nomem(struct crawl *c, struct crawl_job *job);

/* Returns the reason once the crawl was cancelled or its --deadline passed
 * (which cancels it), else 0; and the error text of a job it stopped. */
int crawl_is_cancelled(struct crawl *c);
const char *crawl_cancel_text(struct crawl *c);

/* Called by a model that can run no more jobs (every worker process is
 * gone) before it returns: the listed URLs it never took get failed rows
 * (CRAWL_FAIL_OTHER) with the text why, a static string, instead of
 * "cancelled". */
void crawl_abandon(struct crawl *c, const char *why);

/* ---- what the core set up ------------------------------------------------- */

/* What every transfer of the run shares, for fetch.h's calls. */
struct fetch_ctx *crawl_fetch_ctx(struct crawl *c);

/* Transfers in flight at most (0: all at once; the core set it from -c,
 * the model's default and the descriptors there are), whether connections
 * are reused, the options. */
int crawl_limit(const struct crawl *c);
int crawl_reuse(const struct crawl *c);

/* Returns 1 when a job's start may be held back by its host (a pace,
 * --per-host, robots.txt, links followed), 0 when only its turn decides. */
int crawl_paced(const struct crawl *c);
const struct crawl_opts *crawl_options(const struct crawl *c);

/* Monotonic seconds at which the run started, or 0 before it has. */
double crawl_started(const struct crawl *c);

/* The host name of the listed URL job was reached from (the scope its links
 * are admitted in without --span-hosts), or NULL when it has none. */
const char *crawl_job_scope(const struct crawl_job *job);

/* What a backend's prepare step made, for its run (or, when the crawl is
 * freed without running, for done, which may be NULL). crawl_take_model_data
 * returns it and forgets it. */
void crawl_set_model_data(struct crawl *c, void *data, void (*done)(void *data));
void *crawl_take_model_data(struct crawl *c);

/* ---- what the model measures ------------------------------------------------ */

/* The most threads the model had alive at once, for the report. */
void crawl_set_threads(struct crawl *c, int n);

/* A model of several processes: the sum of each one's own peak resident
 * set (ru_maxrss), in KiB; what it gave out to them as transfers in
 * flight (n: 1 or -1), and the connections they opened. */
void crawl_set_rss_peak(struct crawl *c, long kb);
void crawl_count_transfers(struct crawl *c, long n);
void crawl_count_conns(struct crawl *c, long n);

/* A model that fetches elsewhere (procs, whose workers fetch) says when it
 * sent job on its way; fetch_prepare says it for the others. A host whose
 * requests are spaced hands out nothing between its take and this. */
void crawl_job_started(struct crawl *c, struct crawl_job *job);

/* ---- a crawl fed by another (a procs worker) -------------------------------- */

/* c keeps its digests in from's set (a procs worker, its coordinator's,
 * mapped before the fork so that every worker claims in the same one) and
 * makes none of its own, even when from has none. */
void crawl_share_digests(struct crawl *c, const struct crawl *from);

/* Queues a job as it is, with no admission rules (the jobs a procs worker
 * fetches for its coordinator, which applied them): url (copied), its kind
 * and depth, its row number id, whether its start is to be said
 * (fetch_ctx's started: the coordinator paces its host), and the
 * validators its request carries (copied; NULL: none). Returns 0 or
 * CRAWL_ENOMEM. */
int crawl_push_job(struct crawl *c, enum crawl_job_kind kind, const char *url, int depth,
                   uint64_t id, int paced, const char *if_etag, const char *if_modified);

/* 1 when every page's links are to come back whole (a store keeps them
 * for the next pass: --state, --frontier), not only those new to what a
 * model has sent before (procs' workers leave out the links they sent). */
int crawl_links_whole(const struct crawl *c);

#endif

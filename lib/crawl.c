/* crawl.c: the core. It owns the job list (input order, then discovered
 * links), hands jobs to a backend, takes results back, and knows when a
 * crawl is over. Every call that a backend makes is thread-safe. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "crawl_internal.h"
#include "fetch.h"
#include "fetch_stage.h"
#include "frontier.h"
#include "hset.h"
#include "html.h"
#include "nofile.h"
#include "stage.h"
#include "url.h"
#include "urllist.h"
#include "version.h"

void crawl_opts_init(struct crawl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->timeout = 30;
    o->connect_timeout = 10;
    o->max_redirs = 10;
    o->reuse = CRAWL_REUSE_AUTO;
    o->user_agent = "crawl/" CRAWL_VERSION;
    o->max_size = (curl_off_t)64 << 20;
    o->loops = 1;
    o->parse_threads = -1;
    o->robots = 1;
    o->retry_delay = 1;
    o->retry_max_delay = 30;
    o->warc_worker = -1;
    o->digests = 1;
    o->max_queue = CRAWL_MAX_QUEUE;
}

static void warn_once_text(void *data, const char *msg);
static void job_started(void *data, struct crawl_job *job);

/* The run's body stages (fetch_stage.h), in the context fetch works from:
 * the program's (the WARC writer, --save), then the core's own: the
 * decoder when one of those takes bodies as sent, the row's digest when a
 * row shows it or --dedupe needs it, and the parser when pages give links
 * or values (a list crawl without --depth, --extract or --links-out
 * parses nothing). fetch orders them into the chain. */
static void list_stages(struct fetch_ctx *fx, const struct crawl_opts *o)
{
    int raw = 0, n = o->nstages < FETCH_STAGES_MAX - FETCH_STAGES_CORE
                     ? o->nstages : FETCH_STAGES_MAX - FETCH_STAGES_CORE;
    for (fx->nstages = 0; fx->nstages < n; fx->nstages++) {
        fx->stages[fx->nstages] = o->stages[fx->nstages];
        raw |= o->stages[fx->nstages]->kind == FETCH_STAGE_RAW;
    }
    if (raw)
        fx->stages[fx->nstages++] = &stage_decode;
    if (o->digests || o->dedupe)
        fx->stages[fx->nstages++] = &stage_digest;
    if (o->rules)
        fx->stages[fx->nstages++] = &stage_parse;
}

static void wake_locked(struct crawl *c);
static void lost_locked(struct crawl *c);
static void lost_said(struct crawl *c);
int crawl__init(struct crawl *c, const struct crawl_opts *o)
{
    memset(c, 0, sizeof *c);
    c->opts = o;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        return CRAWL_ENOMEM;
    if (clock_cond_init(&c->cond) != 0) {
        pthread_mutex_destroy(&c->lock);
        return CRAWL_ENOMEM;
    }
    atomic_init(&c->cancel.why, 0);
    pthread_mutex_init(&c->warn_lock, NULL);
    pthread_mutex_init(&c->waker_lock, NULL);
    atomic_init(&c->fx.flight, 0);
    atomic_init(&c->fx.sockets, 0);
    atomic_init(&c->fx.conns, 0);
    c->fx.opts = o;
    c->fx.cancel = &c->cancel;
    c->fx.warn_once = warn_once_text;
    c->fx.warn_data = c;
    c->fx.started = job_started;
    c->fx.started_data = c;
    list_stages(&c->fx, o);
    struct frontier_conf fc = {
        .depth = o->depth, .max_pages = o->max_pages, .max_queue = o->max_queue,
        .span_hosts = o->span_hosts,
        .include = o->include, .ninclude = o->ninclude,
        .exclude = o->exclude, .nexclude = o->nexclude,
        .robots = o->robots, .user_agent = o->user_agent, .robots_agent = o->robots_agent,
        .per_host = o->per_host, .delay = o->delay, .ignore_crawl_delay = o->ignore_crawl_delay,
        .auto_throttle = o->auto_throttle, .sitemaps = o->sitemaps,
        .retry_max_delay = o->retry_max_delay, .max_redirs = o->max_redirs,
        .canonical = o->canonical, .strip = o->strip_query, .nstrip = o->nstrip_query,
        .verdicts = o->links_out != NULL,
    };
    if (!(c->fr = frontier_new(&fc))) {
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        return CRAWL_ENOMEM;
    }
    c->split_listed = frontier_splits_listed(c->fr);
    return 0;
}

void crawl__fini(struct crawl *c)
{
    for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
        if (c->hooks[k].h.free)
            c->hooks[k].h.free(c->hooks[k].data);
    if (c->model_data && c->model_done)
        c->model_done(c->model_data);
    frontier_free(c->fr);
    curl_slist_free_all(c->fx.headers);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->warn_lock);
    hset64_free(&c->warned);
    pthread_mutex_destroy(&c->waker_lock);
    memset(c, 0, sizeof *c);
}

struct crawl *crawl_new(const struct crawl_opts *o)
{
    struct crawl *c = malloc(sizeof *c);
    if (c && crawl__init(c, o) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

void crawl_share_digests(struct crawl *c, const struct crawl *from)
{
    c->fx.seen = from->fx.seen;
}

static void reserve_descriptors(struct crawl *c, const struct crawl_backend *b);

int crawl_prepare(struct crawl *c, const struct crawl_backend *b)
{
    if (!c->hooks_prepared) {
        for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
            if (c->hooks[k].h.prepare)
                c->hooks[k].h.prepare(c->hooks[k].data, c);
        reserve_descriptors(c, b);
        c->hooks_prepared = 1;
    }
    if (!b->prepare || c->prepared == b)
        return 0;
    c->prepared = b;
    return b->prepare(c);
}

void crawl_set_model_data(struct crawl *c, void *data, void (*done)(void *data))
{
    c->model_data = data;
    c->model_done = done;
}

void *crawl_take_model_data(struct crawl *c)
{
    void *d = c->model_data;
    c->model_data = NULL;
    c->model_done = NULL;
    return d;
}

void crawl_free(struct crawl *c)
{
    if (!c)
        return;
    crawl__fini(c);
    free(c);
}

void crawl_on_warn(struct crawl *c, void (*fn)(const char *msg, uint64_t once, void *data),
                   void *data)
{
    c->on_warn = fn;
    c->on_warn_data = data;
}

int crawl_input_error(const struct crawl *c)
{
    return c->input_err;
}

int crawl_limit(const struct crawl *c)
{
    return c->limit;
}

int crawl_reuse(const struct crawl *c)
{
    return c->reuse;
}

int crawl_links_whole(const struct crawl *c)
{
    return frontier_stored(c->fr);
}

int crawl_paced(const struct crawl *c)
{
    return frontier_paced(c->fr);
}

const struct crawl_opts *crawl_options(const struct crawl *c)
{
    return c->opts;
}

void crawl_set_threads(struct crawl *c, int n)
{
    pthread_mutex_lock(&c->lock);
    c->threads_peak = n;
    pthread_mutex_unlock(&c->lock);
}

void crawl_get_summary(struct crawl *c, struct crawl_summary *s)
{
    pthread_mutex_lock(&c->lock);
    s->mode = c->backend ? c->backend->name : "none";
    s->rows = c->nrows;
    s->failed = c->nfailed;
    struct frontier_counts fc;
    frontier_counts(c->fr, &fc);
    s->queued_left = c->left + fc.left;
    s->queue_dropped = fc.dropped;
    s->conns = c->conns + atomic_load(&c->fx.conns);
    s->retries = c->retries;
    s->robots_fetched = fc.robots_fetched;
    s->robots_blocked = fc.robots_blocked;
    s->dns_lookups = c->dns_lookups;
    s->wall = c->wall;
    s->limit = c->limit;
    s->reuse = c->reuse;
    s->threads = c->threads_peak;
    s->rss_peak_kb = c->rss_peak_kb;
    pthread_mutex_unlock(&c->lock);
}

void crawl_set_rss_peak(struct crawl *c, long kb)
{
    pthread_mutex_lock(&c->lock);
    c->rss_peak_kb = kb;
    pthread_mutex_unlock(&c->lock);
}

double crawl_started(const struct crawl *c)
{
    return c->t0;
}

const char *crawl_job_scope(const struct crawl_job *job)
{
    return job->scope;
}

void crawl_waiting(struct crawl *c)
{
    for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
        if (c->hooks[k].h.idle)
            c->hooks[k].h.idle(c->hooks[k].data);
}

void crawl_set_input(struct crawl *c, crawl_input_fn fn, void *data, int streams)
{
    pthread_mutex_lock(&c->lock);
    c->input = fn;
    c->input_data = data;
    c->input_open = fn != NULL;
    c->input_streams = fn && streams;
    pthread_mutex_unlock(&c->lock);
}

/* urllist's taker: a line becomes a listed job, a bad one a job that has
 * already failed. */
static int take_listed(void *data, const char *text, const char *source, long line,
                       const char **why)
{
    struct crawl *c = data;
    if (!*why)
        return crawl_add(c, text, source, line, why);
    int rc = crawl_add_failed(c, text, source, line, *why);
    return rc < 0 ? rc : 1;
}

static int listed_cancelled(void *data)
{
    return crawl_is_cancelled(data);
}

/* crawl_input_fn over a struct urllist. */
static int read_lists(struct crawl *c, size_t want, void *data)
{
    static const struct urllist_taker taker = { take_listed, listed_cancelled };
    return urllist_next(data, want, &taker, c);
}

/* crawl_set_input_waker's fn over a struct urllist. */
static void wake_lists(void *data)
{
    urllist_wake(data);
}

void crawl_set_lists(struct crawl *c, struct urllist *l)
{
    crawl_set_input(c, read_lists, l, urllist_streams(l));
    crawl_set_input_waker(c, wake_lists, l);
}

void crawl_set_input_waker(struct crawl *c, void (*fn)(void *data), void *data)
{
    pthread_mutex_lock(&c->waker_lock);
    c->input_waker = fn;
    c->input_waker_data = data;
    pthread_mutex_unlock(&c->waker_lock);
}

/* Wakes a streamed input's read that blocks (crawl_set_input_waker);
 * the caller holds waker_lock. */
static void wake_input(struct crawl *c)
{
    if (c->input_waker)
        c->input_waker(c->input_waker_data);
}

/* Reads up to want more listed jobs without the lock, unless another
 * thread is reading; the lock is held on entry and on return. Returns 1
 * when this thread read, 0 when nothing could be read now. */
static int read_input(struct crawl *c, size_t want)
{
    if (!c->input_open || c->input_busy)
        return 0;
    c->input_busy = 1;
    pthread_mutex_unlock(&c->lock);
    int rc = c->input(c, want, c->input_data);
    pthread_mutex_lock(&c->lock);
    c->input_busy = 0;
    if (rc <= 0) {
        c->input_open = 0;
        if (rc < 0)
            c->input_err = rc;
    }
    wake_locked(c);
    return 1;
}

int crawl_fill(struct crawl *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->input_open)
        if (!read_input(c, 4096))
            pthread_cond_wait(&c->cond, &c->lock);
    int rc = c->input_err;
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* How many queued jobs the crawl keeps read ahead of the models: enough
 * that no model waits for a line, few enough that a long list costs
 * nothing until its turn. */
static size_t read_ahead(const struct crawl *c)
{
    return c->limit > 0 ? 2 * (size_t)c->limit + 256 : (size_t)-1;
}

/* The reader of streamed lists: keeps the queue read ahead, and waits on
 * the models (or the stream) when it is. */
static void *input_main(void *arg)
{
    struct crawl *c = arg;
    pthread_mutex_lock(&c->lock);
    while (c->input_open && !c->input_stop && !atomic_load(&c->cancel.why)) {
        size_t q = frontier_queued(c->fr), ahead = read_ahead(c);
        if (ahead != (size_t)-1 && q >= ahead / 2)
            pthread_cond_wait(&c->cond, &c->lock);
        else
            read_input(c, ahead == (size_t)-1 ? 4096 : ahead - q);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}
static void set_error(struct crawl_job *j, enum crawl_fail fail, const char *fmt,
                      va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    job_error_set(&j->res, fail, buf);
}


void crawl__publish(struct crawl *c)
{
    struct crawl_live *l = c->live;
    if (!l)
        return;
    atomic_store_explicit(&l->done, c->nrows, memory_order_relaxed);
    atomic_store_explicit(&l->failed, c->nfailed, memory_order_relaxed);
    atomic_store_explicit(&l->queued, frontier_queued(c->fr), memory_order_relaxed);
    atomic_store_explicit(&l->total, !c->input_open && !crawl__finds(c->opts) ? (size_t)c->nseq : 0,
                          memory_order_relaxed);
}

/* Wakes whoever waits for a job, after one was queued; the lock is held
 * on entry and released. */
static void queued(struct crawl *c)
{
    crawl__publish(c);
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
}

int crawl_push_job(struct crawl *c, enum crawl_job_kind kind, const char *url, int depth,
                   uint64_t id, int paced, const char *if_etag, const char *if_modified)
{
    struct crawl_job *j = job_new();
    if (!j || !(j->url = strdup(url)) || (if_etag && !(j->if_etag = strdup(if_etag))) ||
        (if_modified && !(j->if_modified = strdup(if_modified)))) {
        job_free(j);
        return CRAWL_ENOMEM;
    }
    j->kind = kind;
    j->depth = depth;
    j->seq = id;
    j->pace_start = paced;
    pthread_mutex_lock(&c->lock);
    c->fetchable++;
    if (strncasecmp(url, "https:", 6) == 0)
        c->https = 1;
    frontier_push_plain(c->fr, j);
    queued(c);
    return 0;
}

/* Counts listed url, a URL to fetch; the lock is held. */
static void count_fetchable(struct crawl *c, const char *url)
{
    c->fetchable++;
    if (strncasecmp(url, "https:", 6) == 0)
        c->https = 1;
}

/* Adds url as a listed job, or as one that failed when problem is not
 * NULL: it gets its row number now and its row when its turn comes.
 * parts: url split (NULL: not), freed here. */
static int add_job(struct crawl *c, const char *url, const char *source, long line,
                   const char *problem, struct url_parts *parts)
{
    int rc = 0;
    for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
        if (c->hooks[k].h.listed &&
            (rc = c->hooks[k].h.listed(c->hooks[k].data, c, url, source, line, problem, parts)))
            break;
    struct crawl_job *j = NULL;
    if (rc == 0 && (!(j = job_new()) || !(j->url = strdup(url)))) {
        free(j);
        rc = CRAWL_ENOMEM;
    }
    if (rc != 0) {
        /* A hook took it (or it is lost): counted here, not queued. */
        if (parts)
            url_parts_free(parts);
        if (!problem) {
            pthread_mutex_lock(&c->lock);
            count_fetchable(c, url);
            pthread_mutex_unlock(&c->lock);
        }
        return rc < 0 ? rc : problem ? 1 : 0;
    }
    j->line = line;
    j->source = source;
    if (problem)
        job_fail_early(j, CRAWL_FAIL_INPUT, problem);
    else
        for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
            if (c->hooks[k].h.made)
                c->hooks[k].h.made(c->hooks[k].data, j);
    pthread_mutex_lock(&c->lock);
    j->seq = c->nseq++;
    if (!problem)
        count_fetchable(c, url);
    /* A job the frontier cannot place still gets its row. */
    if (problem || frontier_push(c->fr, j, parts) == CRAWL_ENOMEM) {
        if (!problem)
            job_fail_early(j, CRAWL_FAIL_OTHER, "out of memory");
        frontier_push_failed(c->fr, j);
    }
    queued(c);
    if (parts)
        url_parts_free(parts);
    return problem ? 1 : 0;
}

int crawl_add(struct crawl *c, const char *url, const char *source, long line,
              const char **why)
{
    const char *problem;
    struct url_parts parts;
    /* One parse checks the line and splits it, and the frontier's seen-set
     * key for it (its canonical form's with --canonical) is made here too,
     * off the lock. */
    int split = c->split_listed;
    if (url_validate_split(url, &problem, split ? &parts : NULL) == CRAWL_ENOMEM)
        return CRAWL_ENOMEM;
    split = split && !problem;
    if (split && frontier_key_listed(c->fr, &parts) != 0) {
        url_parts_free(&parts);
        return CRAWL_ENOMEM;
    }
    if (why)
        *why = problem;
    return add_job(c, url, source, line, problem, split ? &parts : NULL);
}

int crawl_add_failed(struct crawl *c, const char *text, const char *source,
                     long line, const char *why)
{
    int rc = add_job(c, text, source, line, why, NULL);
    return rc < 0 ? rc : 0;
}

/* Calls the model's waker when a model may be waiting for what just
 * happened (a job queued or back, the input's end); the lock is held. */
static void wake_locked(struct crawl *c)
{
    pthread_cond_broadcast(&c->cond);
    if (c->waiting) {
        c->waiting = 0;
        pthread_mutex_lock(&c->waker_lock);
        if (c->waker)
            c->waker(c->waker_data);
        pthread_mutex_unlock(&c->waker_lock);
    }
}

/* Reads the queue's tail into memory when the frontier wants it, letting
 * the lock go while the store (an LMDB cursor, a Redis lease's round trip)
 * or the spill's files are read and parsed: the other threads go on
 * taking and finishing jobs meanwhile. The lock is held. Returns 1 when
 * another read is due at once (frontier_refill_end): before an empty
 * queue can mean the crawl is over; *read (unless NULL) says whether it
 * read, letting the lock go. */
static int refill(struct crawl *c, int *read)
{
    if (read)
        *read = 0;
    if (!frontier_refill_begin(c->fr))
        return 0;
    if (read)
        *read = 1;
    pthread_mutex_unlock(&c->lock);
    frontier_refill_read(c->fr);
    pthread_mutex_lock(&c->lock);
    size_t had = frontier_queued(c->fr);
    int stale = frontier_refill_end(c->fr);
    /* Whoever found nothing to take while it read may find it now, or,
     * when it placed nothing and the store holds no more, see that the
     * crawl is over. A read that placed nothing and wants another (its
     * pages were all forbidden, or links came in meanwhile) wakes nobody
     * here: its thread reads again, or wakes the others as it takes a job
     * (take_locked). Nor does a shared store's lease that placed nothing
     * while pages are out (other workers', or this one's running: each
     * wakes the takers as it comes back): the crawl goes on, and nobody
     * has anything new to take. */
    int out = frontier_shared(c->fr) && (frontier_elsewhere(c->fr) || c->running > 0);
    if (frontier_queued(c->fr) != had || (!stale && !out))
        wake_locked(c);
    return stale;
}

/* Asks the shared store for the turns of the hosts that wait for one,
 * without the lock (frontier_turns_begin). Returns 1 when it asked. */
static int turns(struct crawl *c)
{
    struct frontier_turns t;
    if (!frontier_turns_begin(c->fr, &t))
        return 0;
    pthread_mutex_unlock(&c->lock);
    frontier_turns_read(c->fr, &t);
    pthread_mutex_lock(&c->lock);
    if (frontier_turns_end(c->fr, &t))
        wake_locked(c);
    return 1;
}

/* When a taker that found nothing may find a job by time alone: wake, the
 * pick's (a host's pace, a retry's time), the deadline, and, with no
 * leasing thread, the next lease while other workers hold pages
 * (elsewhere); 0: only when woken. The leasing thread wakes the takers
 * once a lease placed pages, or the crawl may be over. The lock is held. */
static double take_due(struct crawl *c, double wake, int elsewhere)
{
    double at = !c->lease_on && elsewhere ? frontier_lease_at(c->fr) : 0;
    if (at > 0 && (wake == 0 || wake > at))
        wake = at;
    double end = c->cancel.deadline_at;
    if (end > 0 && (wake == 0 || wake > end))
        wake = end;
    return wake;
}

/* Takes the next job that may start now into *job; the lock is held, and
 * let go only to read the store (refill) or to finish a job that failed
 * before any fetch. Returns 1, 0
 * when the crawl is over, or CRAWL_EAGAIN with *due set to when a job may
 * come due by itself (a host's pace, a retry's time, the deadline; 0: only
 * when something else happens). */
static int take_locked(struct crawl *c, struct crawl_job **job, double *due)
{
    for (;;) {
        if (crawl_is_cancelled(c))
            return 0;
        if (c->input_open && !c->input_streams && frontier_queued(c->fr) < read_ahead(c) / 2 &&
            read_input(c, read_ahead(c) - frontier_queued(c->fr)))
            continue;
        double wake = 0;
        int again = 0, lease = 0;
        if (c->lease_on) {
            if ((lease = frontier_lease_due(c->fr)))
                pthread_cond_signal(&c->lease_cond);
        } else {
            again = refill(c, NULL) | turns(c);
        }
        /* A page starts only while the frontier's home lets it: a shared
         * store that may have lost this worker's lease (its heartbeats
         * unanswered: a stall, a cut cable) holds every start back until a
         * heartbeat renews the lease or latches the failure, and either
         * wakes whoever waits (home_changed). */
        if (!frontier_may_start(c->fr)) {
            if (frontier_store_failed(c->fr)) {
                lost_locked(c);
                continue;
            }
            *due = c->cancel.deadline_at;
            return CRAWL_EAGAIN;
        }
        struct crawl_job *j = frontier_pick(c->fr, &wake);
        if (frontier_store_failed(c->fr))
            lost_locked(c);
        /* The pick may have found hosts to ask the server a turn for. */
        if (c->lease_on && !lease && (lease = frontier_lease_due(c->fr)))
            pthread_cond_signal(&c->lease_cond);
        if (j) {
            /* The store holds more that this read did not place: whoever
             * waits reads it, not this thread, which has a job to run. */
            if (again)
                wake_locked(c);
            c->running++;
            if (j->skip) {
                /* Neither fetched nor numbered: the store takes it. */
                pthread_mutex_unlock(&c->lock);
                crawl_done(c, j);
                pthread_mutex_lock(&c->lock);
                continue;
            }
            /* A retry keeps the row number of its first try. */
            if (j->unnumbered) {
                j->seq = c->nseq++;
                j->unnumbered = 0;
            }
            if (j->failed_early) {
                /* Its row is written in its turn, by the core. */
                pthread_mutex_unlock(&c->lock);
                crawl_done(c, j);
                pthread_mutex_lock(&c->lock);
                continue;
            }
            crawl__publish(c);
            *job = j;
            return 1;
        }
        /* Nothing to take, and the store may hold what memory lacks. */
        if (again)
            continue;
        /* The pick itself may have cancelled the crawl (a lost --frontier
         * server). */
        if (atomic_load(&c->cancel.why))
            continue;
        /* A shared crawl goes on while other workers hold pages: they may
         * find more, or fall silent and have theirs given back. */
        int elsewhere = frontier_elsewhere(c->fr);
        if (c->running == 0 && frontier_queued(c->fr) == 0 && !c->input_open && !elsewhere &&
                !frontier_refilling(c->fr) && !lease) {
            c->lease_stop = 1;      /* over: nothing more is leased */
            return 0;
        }
        *due = take_due(c, wake, elsewhere);
        return CRAWL_EAGAIN;
    }
}

int crawl_take(struct crawl *c, struct crawl_job **job, double *due)
{
    double at = 0;
    pthread_mutex_lock(&c->lock);
    int rc = take_locked(c, job, &at);
    if (rc == CRAWL_EAGAIN)
        c->waiting++;
    pthread_mutex_unlock(&c->lock);
    lost_said(c);
    if (due)
        *due = at;
    return rc;
}

int crawl_take_wait(struct crawl *c, struct crawl_job **job)
{
    int rc, told = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        double due = 0;
        if ((rc = take_locked(c, job, &due)) != CRAWL_EAGAIN)
            break;
        if (!told) {
            /* Once a wait: what a hook holds (a relay's results) goes
             * out before it. */
            told = 1;
            pthread_mutex_unlock(&c->lock);
            crawl_waiting(c);
            pthread_mutex_lock(&c->lock);
            continue;
        }
        /* Woken by a job queued or back, the input's end or the
         * cancellation (each broadcasts), or by the time something is due. */
        if (due > 0) {
            struct timespec ts = clock_timespec(due);
            pthread_cond_timedwait(&c->cond, &c->lock, &ts);
        } else {
            pthread_cond_wait(&c->cond, &c->lock);
        }
    }
    pthread_mutex_unlock(&c->lock);
    lost_said(c);
    return rc;
}

void crawl_set_waker(struct crawl *c, void (*fn)(void *data), void *data)
{
    pthread_mutex_lock(&c->lock);
    pthread_mutex_lock(&c->waker_lock);
    c->waker = fn;
    c->waker_data = data;
    c->waiting = 0;
    pthread_mutex_unlock(&c->waker_lock);
    pthread_mutex_unlock(&c->lock);
}

void crawl__count_row(struct crawl *c, const struct crawl_job *job)
{
    c->nrows++;
    if (job->res.fail != CRAWL_FAIL_NONE)
        c->nfailed++;
    else if (!job->failed_early) {
        hist_add(&c->hist[CRAWL_TIME_TOTAL], job->res.time_total);
        hist_add(&c->hist[CRAWL_TIME_TTFB], job->res.time_ttfb);
    }
}

/* frontier_notes' say: a warning of the frontier's. */
static void say_note(void *data, const char *text)
{
    crawl_warn(data, "%s", text);
}

/* The end of a job no hook took, or of one a hook dropped (row 0): the
 * frontier takes it back (a robots.txt gives its rules, a page its
 * links), a page's row is written, and the job is counted and freed. The
 * row comes after the frontier (a --state crawl's row commits its page,
 * whose links must be in the store by then) and before the job stops
 * counting as running (the crawl may end then, and its row must be out by
 * then, as must the frontier's warnings). */
static void finish(struct crawl *c, struct crawl_job *job, int row)
{
    int page = row && job->kind == JOB_PAGE, full = 0;
    frontier_prepare(c->fr, job);
    /* A plain list's page needs nothing of the frontier: no lock. */
    if (!row || !frontier_done_is_noop(c->fr, job)) {
        pthread_mutex_lock(&c->lock);
        frontier_done(c->fr, job);
        if (frontier_store_failed(c->fr))
            lost_locked(c);
        full = frontier_queue_full(c->fr);
        pthread_mutex_unlock(&c->lock);
        lost_said(c);
    }
    if (page)
        for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
            if (c->hooks[k].h.row)
                c->hooks[k].h.row(c->hooks[k].data, c, job);
    frontier_notes(c->fr, job, full, say_note, c);
    pthread_mutex_lock(&c->lock);
    c->running--;
    if (page)
        crawl__count_row(c, job);
    crawl__publish(c);
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (!frontier_keeps(job))
        job_free(job);
}

/* --deadline cancels what has not finished by then, in every model alike:
 * a page whose result comes in after it gets the row of one abandoned in
 * flight, as coro gives every transfer its loop had not seen end (one
 * loop sees the deadline before the completions it has yet to read).
 * Without this, a blocking transfer that ran on a moment before its
 * progress callback looked (thread, pool, seq), or a worker's result that
 * crossed the cancel on its socket (procs), came in as a page fetched, and
 * a run cut by the deadline could exit 0. */
static void past_deadline(struct crawl *c, struct crawl_job *job)
{
    double at = c->cancel.deadline_at;
    if (at <= 0 || job->kind != JOB_PAGE || job->failed_early || job->unrun ||
        job->res.fail == CRAWL_FAIL_CANCELLED || clock_now() < at)
        return;
    (void)cancel_why(&c->cancel);
    job_error_set(&job->res, CRAWL_FAIL_CANCELLED, crawl_cancel_text(c));
}

void crawl_done(struct crawl *c, struct crawl_job *job)
{
    /* Every try's look-ups count, and robots.txt's, which have no row. */
    if (job->res.dns_lookups > 0) {
        pthread_mutex_lock(&c->lock);
        c->dns_lookups += (size_t)job->res.dns_lookups;
        hist_add(&c->hist[CRAWL_TIME_DNS], job->res.time_dns);
        pthread_mutex_unlock(&c->lock);
    }
    past_deadline(c, job);
    if (job->kind == JOB_PAGE && job->res.fail != CRAWL_FAIL_NONE && !job->res.error)
        job_error_set(&job->res, job->res.fail, job_fail_name(job->res.fail));
    if (!job->failed_early && !job->unrun)
        job->res.attempts++;
    for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
        if (c->hooks[k].h.back && c->hooks[k].h.back(c->hooks[k].data, c, job))
            return;
    finish(c, job, 1);
}

void crawl_retry(struct crawl *c, struct crawl_job *job, double at)
{
    pthread_mutex_lock(&c->lock);
    frontier_observe(c->fr, job);
    job_clear(job);
    c->running--;
    c->retries++;
    frontier_retry(c->fr, job, at);
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
}

void crawl_drop(struct crawl *c, struct crawl_job *job)
{
    finish(c, job, 0);
}

void crawl_release(struct crawl *c, struct crawl_job *job)
{
    pthread_mutex_lock(&c->lock);
    c->running--;
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
    job_free(job);
}

void crawl_hook(struct crawl *c, enum crawl_hook_slot slot, const struct crawl_hook *h,
                void *data)
{
    struct crawl_hook_at *at = &c->hooks[slot];
    if (at->h.free)
        at->h.free(at->data);
    at->h = *h;
    at->data = data;
    if (h->listed)
        c->split_listed = 1;
}

void crawl_fail(struct crawl *c, struct crawl_job *job, enum crawl_fail fail,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(job, fail, fmt, ap);
    va_end(ap);
    job->unrun = 1;
    crawl_done(c, job);
}

void crawl_fail_nomem(struct crawl *c, struct crawl_job *job)
{
    crawl_fail(c, job, CRAWL_FAIL_OTHER, "out of memory");
}

void crawl_cancel(struct crawl *c, enum crawl_cancel_why why)
{
    if (!cancel_set(&c->cancel, why))
        return;
    /* Whoever waits learns of it now: a blocked taker (without the core's
     * lock, which the caller may hold), a model's loop through its waker,
     * the reader of a streamed input waiting on it. */
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_lock(&c->waker_lock);
    if (c->waker)
        c->waker(c->waker_data);
    wake_input(c);
    pthread_mutex_unlock(&c->waker_lock);
}

const char *crawl_cancel_text(struct crawl *c)
{
    return cancel_text(atomic_load(&c->cancel.why));
}

void crawl_on_cookies(struct crawl *c, void (*fn)(const char *line, void *data), void *data)
{
    c->on_cookies = fn;
    c->on_cookies_data = data;
}

void crawl_abandon(struct crawl *c, const char *why)
{
    c->abandoned = why;
}

int crawl_is_cancelled(struct crawl *c)
{
    /* The deadline is the core's own clock: the CLI's SIGALRM only wakes
     * what blocks. */
    return cancel_why(&c->cancel);
}

size_t crawl_queued(struct crawl *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = frontier_queued(c->fr);
    pthread_mutex_unlock(&c->lock);
    return n;
}

void crawl_set_live(struct crawl *c, struct crawl_live *l)
{
    if (l) {
        atomic_store(&l->t0_ns, 0);
        atomic_store(&l->done, 0);
        atomic_store(&l->failed, 0);
        atomic_store(&l->queued, 0);
        atomic_store(&l->total, 0);
        atomic_store(&l->transfers, 0);
        memset(l->mode, 0, sizeof l->mode);
    }
    pthread_mutex_lock(&c->lock);
    c->live = l;
    pthread_mutex_unlock(&c->lock);
}

void crawl_count_transfers(struct crawl *c, long n)
{
    struct crawl_live *l = c->live;
    if (l)
        atomic_fetch_add_explicit(&l->transfers, n, memory_order_relaxed);
}

int crawl_input_over(struct crawl *c)
{
    pthread_mutex_lock(&c->lock);
    int over = !c->input_open;
    pthread_mutex_unlock(&c->lock);
    return over;
}

void crawl_get_progress(struct crawl *c, struct crawl_progress *p)
{
    pthread_mutex_lock(&c->lock);
    p->done = c->nrows;
    p->failed = c->nfailed;
    p->running = c->running;
    p->queued = frontier_queued(c->fr);
    /* Known once the lists are read, unless links add to them. */
    p->total = !c->input_open && !crawl__finds(c->opts) ? (size_t)c->nseq : 0;
    p->elapsed = c->t0 > 0 ? clock_now() - c->t0 : 0;
    pthread_mutex_unlock(&c->lock);
}

void crawl_count_conns(struct crawl *c, long n)
{
    if (n <= 0)
        return;
    pthread_mutex_lock(&c->lock);
    c->conns += (size_t)n;
    pthread_mutex_unlock(&c->lock);
}

/* After the run: a listed job that never ran gets its row,
 * cancelled (or with the failure it already had), and so does a page
 * whose retry was waiting; a discovered link that never started gets none
 * and is counted. The lock is not held. */
static void end_job(struct crawl *c, struct crawl_job *j)
{
    if (j->found && j->res.attempts == 0) {
        pthread_mutex_lock(&c->lock);
        c->left++;
        pthread_mutex_unlock(&c->lock);
        job_free(j);
        return;
    }
    if (j->failed_early)
        ;
    else if (c->abandoned && !atomic_load(&c->cancel.why))
        job_error_set(&j->res, CRAWL_FAIL_OTHER, c->abandoned);
    else
        job_error_set(&j->res, CRAWL_FAIL_CANCELLED, crawl_cancel_text(c));
    j->unrun = 1;
    pthread_mutex_lock(&c->lock);
    c->running++;
    pthread_mutex_unlock(&c->lock);
    crawl_done(c, j);
}

/* Empties the frontier's queues, and ends each job that was in them. */
static void drain(struct crawl *c)
{
    pthread_mutex_lock(&c->lock);
    struct crawl_job *j = frontier_drain(c->fr);
    pthread_mutex_unlock(&c->lock);
    while (j) {
        struct crawl_job *next = j->qnext;
        j->qnext = NULL;
        end_job(c, j);
        j = next;
    }
}

/* After the model: every listed URL that never ran, queued or still unread,
 * gets its one row; the rest of the queue is dropped. When the output is
 * gone there is nobody to read the rows, and the lists are left unread. */
static void cancel_rest(struct crawl *c)
{
    for (;;) {
        drain(c);
        if (atomic_load(&c->cancel.why) == CRAWL_CANCEL_OUTPUT)
            break;
        pthread_mutex_lock(&c->lock);
        int more = read_input(c, 4096);
        pthread_mutex_unlock(&c->lock);
        if (!more)
            break;
    }
    drain(c);
}

/* Builds the run's request headers. A connection that will not be reused
 * is announced with "Connection: close" (RFC 9112, 9.6), unless the caller
 * set a Connection header: the server then closes first, and the TIME_WAIT
 * state that follows an active close stays on the server's side instead of
 * tying up one of the client's ephemeral ports per URL for a minute (28,000
 * on a default Linux), which slows the next run. */
static int run_headers(struct crawl *c)
{
    struct curl_slist *l = NULL, *n;
    int connection = 0;
    curl_slist_free_all(c->fx.headers);
    c->fx.headers = NULL;
    for (const struct curl_slist *h = c->opts->headers; h; h = h->next) {
        if (strncasecmp(h->data, "Connection:", 11) == 0 ||
            strncasecmp(h->data, "Connection;", 11) == 0)
            connection = 1;
        if (!(n = curl_slist_append(l, h->data)))
            goto nomem;
        l = n;
    }
    if (!c->reuse && !connection) {
        if (!(n = curl_slist_append(l, "Connection: close")))
            goto nomem;
        l = n;
    }
    c->fx.headers = l;
    return 0;
nomem:
    curl_slist_free_all(l);
    return CRAWL_ENOMEM;
}

/* Keeps in flight what the open-file limit allows, rather than let the
 * transfers past it fail: 64 descriptors stay for the process itself and
 * 1% for the event loops' own, and each transfer holds what its model says.
 * A list that is not all read, or a crawl that follows links, may be longer
 * than any bound. */
static size_t fds_a_transfer(const struct crawl *c, const struct crawl_backend *b)
{
    size_t per = b->fds_per_transfer > 0 ? (size_t)b->fds_per_transfer : 1;
    /* A transfer's body stages hold files besides: a spooled body (the
     * WARC writer), a file being saved (--save). */
    for (int i = 0; i < c->fx.nstages; i++)
        per += (size_t)c->fx.stages[i]->fds;
    return per;
}

static size_t fds_spare(const struct crawl *c)
{
    return 64 + c->nofile / 100;
}

static void limit_by_descriptors(struct crawl *c, const struct crawl_backend *b)
{
    size_t per = fds_a_transfer(c, b);
    size_t spare = fds_spare(c);
    size_t budget = c->nofile > spare + per ? (c->nofile - spare) / per : 1;
    size_t want = c->input_open || crawl__finds(c->opts) ? (size_t)-1 : c->fetchable;
    if ((c->limit == 0 || (size_t)c->limit > budget) && want > budget) {
        /* A list of unknown length "all at once" is bounded quietly: it
         * may never come near the bound. */
        if (want == (size_t)-1 && c->limit > 0)
            crawl_warn_once(c, "only %zu file descriptors (%zu a transfer): keeping %zu in flight",
                            c->nofile, per, budget);
        else if (want != (size_t)-1)
            crawl_warn_once(c, "%zu URLs but only %zu file descriptors (%zu a transfer): keeping %zu in flight",
                            want, c->nofile, per, budget);
        c->limit = budget > INT_MAX ? INT_MAX : (int)budget;
    }
}

/* The transfers in flight at most that the options and the model ask
 * for, before the list and the open-file limit have their say; 0: all at
 * once. */
static int asked_limit(const struct crawl_opts *o, const struct crawl_backend *b)
{
    int limit = o->concurrency > 0 ? o->concurrency : b->default_concurrency;
    if (b->max_concurrency > 0 && (limit == 0 || limit > b->max_concurrency))
        limit = b->max_concurrency;
    /* "All at once" means the list; a crawl that follows links has no list
     * to bound it, and would put every link it finds in flight. */
    if (o->concurrency <= 0 && crawl__finds(o) && (limit == 0 || limit > CRAWL_LINK_CONCURRENCY))
        limit = CRAWL_LINK_CONCURRENCY;
    return limit;
}

/* The descriptor table grown, while the process has one thread, to what
 * the run may hold (nofile_reserve): its transfers in flight and the
 * spare, or as much as the open-file limit allows when they are all to go
 * at once (the list is not read yet). A coordinator of processes holds
 * its workers' sockets only; they grow their own. */
static void reserve_descriptors(struct crawl *c, const struct crawl_backend *b)
{
    c->nofile = nofile_raise();
    if (b->processes)
        return;
    int limit = asked_limit(c->opts, b);
    size_t want = limit > 0 ? (size_t)limit * fds_a_transfer(c, b) + fds_spare(c) : c->nofile;
    nofile_reserve(want < c->nofile ? want : c->nofile);
}

/* The policies the run starts with, the same for every model: its
 * transfers in flight at most, and whether connections are reused. */
static void run_policies(struct crawl *c, const struct crawl_backend *b)
{
    const struct crawl_opts *o = c->opts;
    c->limit = asked_limit(o, b);
    /* Read ahead of the run what the policies below look at: the whole
     * list when it all goes in flight at once, else enough to see whether
     * it is longer than the limit. */
    pthread_mutex_lock(&c->lock);
    while (c->input_open && !c->input_streams &&
           (c->limit == 0 || c->fetchable <= (size_t)c->limit))
        if (!read_input(c, c->limit == 0 ? 4096 : read_ahead(c)))
            pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
    /* Reuse cannot help when every URL is in flight at once over HTTP/1.1:
     * each needs a connection of its own, and libcurl's connection cache
     * then only costs scans on every connect. Over https the server may
     * offer HTTP/2, and then one connection carries many transfers at once
     * instead of a TLS handshake each. */
    switch (o->reuse) {
    case CRAWL_REUSE_ON:  c->reuse = 1; break;
    case CRAWL_REUSE_OFF: c->reuse = 0; break;
    case CRAWL_REUSE_AUTO:
        /* A link-following crawl finds its pages as it goes: keep reuse. */
        /* A streamed list with no limit goes in flight as it comes. */
        c->reuse = crawl__finds(o) || (c->input_open && c->limit > 0) ||
                   !(c->limit == 0 || (size_t)c->limit >= c->fetchable) || c->https;
        break;
    }
    limit_by_descriptors(c, b);     /* c->nofile: crawl_prepare's */
}

/* The leasing thread of a frontier whose home is shared (frontier_shared:
 * a --frontier server): each lease's round trip (and
 * the robots.txt look-ups it brings) is made here, so that no model's
 * thread waits on the server before it starts a transfer. It leases when
 * a thread that takes jobs finds one due (lease_cond), and when the
 * server is to be asked again for what other workers found or gave back
 * (frontier_lease_at: the server tells nobody of that); it sleeps
 * otherwise. The lock is let go while the server is asked (refill). A
 * store failure its requests met stops the crawl here, as it would in a
 * taker. */
static void *lease_main(void *arg)
{
    struct crawl *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->lease_stop) {
        int read, again = refill(c, &read);
        int asked = turns(c);
        if (frontier_store_failed(c->fr)) {
            /* Latched now; said with the lock let go, as everywhere. */
            lost_locked(c);
            pthread_mutex_unlock(&c->lock);
            lost_said(c);
            pthread_mutex_lock(&c->lock);
        }
        /* What was asked for while the lock was let go (a lease due, the
         * end) is looked at before the wait, which would miss it. */
        if (again || (read | asked))
            continue;
        double at = frontier_lease_at(c->fr);
        if (at > 0) {
            struct timespec ts = clock_timespec(at);
            pthread_cond_timedwait(&c->lease_cond, &c->lock, &ts);
        } else {
            pthread_cond_wait(&c->lease_cond, &c->lock);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* frontier_on_change: a shared store's heartbeat held the lease again
 * after it lapsed, or latched a failure: the takers waiting for either
 * look again. */
static void home_changed(void *data)
{
    struct crawl *c = data;
    pthread_mutex_lock(&c->lock);
    wake_locked(c);
    if (c->lease_on)
        pthread_cond_signal(&c->lease_cond);
    pthread_mutex_unlock(&c->lock);
}

/* Starts the leasing thread when the frontier's home is shared. */
static void lease_start(struct crawl *c)
{
    if (!frontier_shared(c->fr))
        return;
    frontier_on_change(c->fr, home_changed, c);
    if (clock_cond_init(&c->lease_cond) != 0)
        return;
    c->lease_stop = 0;
    pthread_mutex_lock(&c->lock);
    c->lease_on = pthread_create(&c->lease_tid, NULL, lease_main, c) == 0;
    pthread_mutex_unlock(&c->lock);
    if (!c->lease_on)
        pthread_cond_destroy(&c->lease_cond);
}

static void lease_end(struct crawl *c)
{
    frontier_on_change(c->fr, NULL, NULL);      /* without the lock, which it takes */
    if (!c->lease_on)
        return;
    pthread_mutex_lock(&c->lock);
    c->lease_stop = 1;
    pthread_cond_signal(&c->lease_cond);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->lease_tid, NULL);
    c->lease_on = 0;
    pthread_cond_destroy(&c->lease_cond);
}

/* The clock starts: the deadline, the frontier and the fetch context learn
 * what the run is. Returns 1 when a streamed list gets a reader thread. */
static int run_start(struct crawl *c, const struct crawl_backend *b)
{
    pthread_mutex_lock(&c->lock);
    c->t0 = clock_now();
    c->cancel.deadline_at = c->opts->deadline > 0 ? c->t0 + c->opts->deadline : 0;
    frontier_start(c->fr, c->limit, c->cancel.deadline_at, &c->cancel.why);
    c->fx.reuse = c->reuse;
    c->fx.limit = c->limit;
    c->fx.listed = c->fetchable;
    c->fx.finds = crawl__finds(c->opts);
    c->fx.t0 = c->t0;
    c->fx.transfers = c->live ? &c->live->transfers : NULL;
    c->fetchable_at_start = c->fetchable;
    if (c->live) {
        snprintf(c->live->mode, sizeof c->live->mode, "%s", b->name);
        crawl__publish(c);
        atomic_store(&c->live->t0_ns, (long long)(c->t0 * 1e9));
    }
    int reader = c->input_open && c->input_streams;
    if (!reader)
        c->input_streams = 0;       /* crawl_take reads, as for files */
    pthread_mutex_unlock(&c->lock);
    if (reader && pthread_create(&c->input_tid, NULL, input_main, c) != 0) {
        reader = 0;
        pthread_mutex_lock(&c->lock);
        c->input_streams = 0;
        pthread_mutex_unlock(&c->lock);
    }
    return reader;
}

/* The hooks' stop, once the run is over however it ended; returns rc. */
static int run_stop(struct crawl *c, int rc)
{
    for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
        if (c->hooks[k].h.stop)
            c->hooks[k].h.stop(c->hooks[k].data, c, rc);
    return rc;
}

int crawl_run(struct crawl *c, const struct crawl_backend *b)
{
    c->backend = b;
    crawl_prepare(c, b);        /* its failure is the run's to report */
    for (int k = 0; k < CRAWL_HOOK_SLOTS; k++)
        if (c->hooks[k].h.start)
            c->hooks[k].h.start(c->hooks[k].data, c);
    run_policies(c, b);
    if (run_headers(c) != 0 || fetch_cookies_open(&c->fx, !c->on_cookies) != 0) {
        cancel_rest(c);
        return run_stop(c, CRAWL_ENOMEM);
    }
    /* A procs coordinator fetches nothing: its workers run the stages
     * (they write the WARC). */
    int src = b->processes ? 0 : fetch_stages_open(&c->fx);
    if (src != 0) {
        /* Nothing will be fetched: a list is read to its end for its
         * rows, but a stream (a procs worker's, a pipe) may never end. */
        if (c->input_streams)
            crawl_cancel(c, CRAWL_CANCEL_OUTPUT);
        cancel_rest(c);
        (void)fetch_cookies_close(&c->fx, c->on_cookies, c->on_cookies_data);
        /* A stage's run that cannot open is the output's failure (a WARC
         * file); -EINVAL, a chain built wrong, and memory are their own. */
        return run_stop(c, src == CRAWL_ENOMEM || src == -EINVAL ? src : CRAWL_EOUTPUT);
    }
    int reader = run_start(c, b);
    lease_start(c);
    int rc = b->run(c);
    lease_end(c);
    c->wall = clock_now() - c->t0;
    c->took_all = rc == 0 && !atomic_load(&c->cancel.why) && frontier_queued(c->fr) == 0;
    if (reader) {
        pthread_mutex_lock(&c->lock);
        c->input_stop = 1;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_lock(&c->waker_lock);
        wake_input(c);
        pthread_mutex_unlock(&c->waker_lock);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->input_tid, NULL);
        c->input_streams = 0;       /* what is left is read by cancel_rest (joined: no lock) */
    }
    cancel_rest(c);
    if (fetch_cookies_close(&c->fx, c->on_cookies, c->on_cookies_data) != 0 && rc == 0)
        rc = CRAWL_EOUTPUT;
    if (fetch_stages_close(&c->fx) != 0 && rc == 0)
        rc = CRAWL_EOUTPUT;
    return run_stop(c, rc);
}

/* The frontier's home failed (frontier_failure says why): the crawl stops
 * at once, and the warning, which the program writes to stderr, waits for
 * lost_said, once the core's lock is let go. Safe with the lock held. */
static void lost_locked(struct crawl *c)
{
    int why = frontier_failure(c->fr, NULL, 0);
    int none = 0;
    /* The first failure is the crawl's, said once; later ones of the
     * latched store add nothing. */
    if (why && atomic_compare_exchange_strong(&c->lost, &none, why)) {
        atomic_store(&c->lost_unsaid, 1);
        crawl_cancel(c, why == CRAWL_EFRONTIER ? CRAWL_CANCEL_FRONTIER : CRAWL_CANCEL_STORE);
    }
}

/* Says what lost_locked latched, once; without the core's lock. */
static void lost_said(struct crawl *c)
{
    if (atomic_load_explicit(&c->lost_unsaid, memory_order_relaxed) &&
        atomic_exchange(&c->lost_unsaid, 0)) {
        char text[512];
        frontier_failure(c->fr, text, sizeof text);
        crawl_warn_once(c, "%s", text);
    }
}

void crawl_frontier_failed(struct crawl *c)
{
    lost_locked(c);
    lost_said(c);
}

int crawl_frontier_lost(struct crawl *c)
{
    return atomic_load(&c->lost);
}

int crawl_took_all(const struct crawl *c)
{
    return c->took_all;
}

struct frontier *crawl_frontier(struct crawl *c)
{
    return c->fr;
}

void *crawl_hook_data(struct crawl *c, enum crawl_hook_slot slot)
{
    return c->hooks[slot].data;
}

/* Whether the warning keyed key is said now: the first time each. The
 * texts said are kept by their hash, up to CRAWL_WARNED of them (a
 * megabyte at most: the parser's warnings name their page); past that, or
 * short of memory, a text not kept is said each time rather than never. */
static int first_of(struct crawl *c, uint64_t key)
{
    pthread_mutex_lock(&c->warn_lock);
    int first = !hset64_has(&c->warned, key);
    if (first && c->warned.n < CRAWL_WARNED)
        (void)hset64_add(&c->warned, key);
    pthread_mutex_unlock(&c->warn_lock);
    return first;
}

/* A warning said once is keyed by its text as formatted: two messages of
 * one format are two warnings, one text from two places is one. The hash
 * (never 0, which relays "every time") is the same in every process, so a
 * procs worker's warning relayed with it is said once over all of them. */
static uint64_t text_key(const char *msg)
{
    return hset_hash(msg, strlen(msg));
}

/* Says msg unless its text was said before. */
static void say_once(struct crawl *c, const char *msg)
{
    uint64_t key = text_key(msg);
    if (c->on_warn && first_of(c, key))
        c->on_warn(msg, key, c->on_warn_data);
}

void crawl_warn_relayed(struct crawl *c, uint64_t once, const char *msg)
{
    if (c->on_warn && (!once || first_of(c, once)))
        c->on_warn(msg, once, c->on_warn_data);
}

void crawl_warn_once(struct crawl *c, const char *fmt, ...)
{
    if (!c->on_warn)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    say_once(c, buf);
}

/* fetch_ctx's warn_once: fetch's message msg. */
static void warn_once_text(void *data, const char *msg)
{
    say_once(data, msg);
}

void crawl_warn(struct crawl *c, const char *fmt, ...)
{
    if (!c->on_warn)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->on_warn(buf, 0, c->on_warn_data);
}

const char *crawl_describe(const struct crawl *c, char *buf, size_t n)
{
    return fetch_describe(&c->fx, buf, n);
}

struct fetch_ctx *crawl_fetch_ctx(struct crawl *c)
{
    return &c->fx;
}

int crawl_add_cookie(struct crawl *c, const char *line)
{
    return fetch_cookie_add(&c->fx, line);
}

void crawl_job_started(struct crawl *c, struct crawl_job *job)
{
    if (!job->pace_start)
        return;
    pthread_mutex_lock(&c->lock);
    frontier_started(c->fr, job);
    /* The host's next start is due now: a model that took nothing since
     * learns of it. */
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
}

/* fetch_ctx's started: a transfer of job is on its way. */
static void job_started(void *data, struct crawl_job *job)
{
    crawl_job_started(data, job);
}

double crawl_latency_ms(const struct crawl *c, enum crawl_time which, double q)
{
    return hist_quantile_ms(&c->hist[which], q);
}

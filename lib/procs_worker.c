/* procs_worker.c: a worker process of the procs model (mode_procs.c says
 * how the work is shared out). It runs the model the procs entry names as
 * its worker (coro) on a crawl of its own that relays: jobs come in on its
 * socket, each result goes back whole, with the links of the page it has
 * not sent before, in batches. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "fetch.h"
#include "hooks.h"
#include "hset.h"
#include "html.h"
#include "io.h"
#include "parse_pool.h"
#include "procs.h"
#include "strbuf.h"
#include "wire.h"

/* ---- the worker process -------------------------------------------------- */

struct worker {
    struct crawl *w;        /* the worker's own, relaying crawl */
    int fd;                 /* its socket to the coordinator */
    int wake[2];            /* written once the reader is to stop waiting on
                             * fd (crawl_set_input_waker), and never read:
                             * it stays readable */
    int idx;
    struct strbuf in;       /* frames read, not yet whole */
    struct strbuf out;      /* frames not yet sent */
    pthread_mutex_t lock;   /* guards out, scopes and sent */
    size_t conns_sent;      /* connections already reported */
    int depth;              /* --depth: a page this deep gives no links */
    int all_links;          /* --links-out: every link of every page is sent,
                             * for the coordinator to give each its verdict */
    int whole;              /* every page's links go (the coordinator keeps
                             * them in its store), not only the ones not sent */
    uint64_t *scopes;       /* by job id: the hash of the job's scope */
    size_t nscopes;
    struct hset64 sent;     /* links sent, hashed with their page's scope */
    pthread_t main_tid;     /* the thread of the loop */
    pthread_t beat_tid;     /* the heartbeat's */
    pthread_cond_t beat_cond;   /* with lock: wakes the heartbeat to end */
    int beat_stop;
    atomic_int ready;       /* MSG_READY sent (by the core's reader thread) */
};

/* The coordinator admits a link (its seen set, --include, --exclude, the
 * scope) the same way every time it comes from a page of the same scope,
 * so a link this worker has sent once is not sent again: most of a page's
 * links are on the pages before it (a tree's navigation), and each one
 * sent costs the coordinator a parse of the URL. The set is bounded: when
 * full it starts again, and links are sent again. */
#define SENT_MAX (1u << 18)

/* Job ids are the coordinator's slots, fewer than the jobs it has out;
 * one past this bound is never deduplicated. */
#define SCOPES_MAX (1u << 20)

/* Notes the scope hash of job id. The lock is held. */
static void scope_note(struct worker *wk, uint64_t id, uint64_t scope)
{
    if (id >= SCOPES_MAX)
        return;
    if (id >= wk->nscopes) {
        size_t n = wk->nscopes ? wk->nscopes : 64;
        while (n <= id)
            n *= 2;
        uint64_t *v = realloc(wk->scopes, n * sizeof *v);
        if (!v)
            return;
        memset(v + wk->nscopes, 0, (n - wk->nscopes) * sizeof *v);
        wk->scopes = v;
        wk->nscopes = n;
    }
    wk->scopes[id] = scope;
}

/* Returns 1 when link, from page job j, is to be sent: not sent before
 * from a page of the same scope. The lock is held. */
static int link_fresh(struct worker *wk, const struct crawl_job *j, const char *link)
{
    if (j->seq >= wk->nscopes)
        return 1;
    if (wk->sent.n >= SENT_MAX)
        hset64_free(&wk->sent);
    uint64_t h = hset_hash(link, strlen(link)) ^ (wk->scopes[j->seq] * 0x9e3779b97f4a7c15ULL);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    return hset64_add(&wk->sent, h) != 0;       /* short of memory: sent */
}

/* Results go out in batches: when the worker's loop is about to wait (the
 * idle hook), or when this much is held. One write for many
 * results, where a write each cost the coordinator a wake-up each. */
#define WORKER_BATCH (64 * 1024)

/* Sends what wk->out holds; the coordinator gone, the crawl is for
 * nobody. The lock is held. */
static void worker_flush(struct worker *wk)
{
    if (wk->out.len && wire_send_all(wk->fd, &wk->out) != 0)
        crawl_cancel(wk->w, CRAWL_CANCEL_OUTPUT);
    sb_reset(&wk->out);
}

/* Ends the frame that starts at `at`, sending the batch when it is full
 * (or now). The lock is held. */
static void worker_frame(struct worker *wk, size_t at, int now)
{
    if (wire_frame_end(&wk->out, at) != 0) {
        wk->out.len = at;       /* a frame cut short by memory is dropped: */
        wk->out.nomem = 0;      /* the coordinator re-runs its job if need be */
        crawl_cancel(wk->w, CRAWL_CANCEL_OUTPUT);
    }
    if (now || wk->out.len >= WORKER_BATCH)
        worker_flush(wk);
}

/* The idle hook: the loop is about to wait; what is held goes now. */
static void worker_waiting(void *data)
{
    struct worker *wk = data;
    pthread_mutex_lock(&wk->lock);
    worker_flush(wk);
    pthread_mutex_unlock(&wk->lock);
}

/* The relay: every job the worker's crawl hands back goes to the
 * coordinator whole. Times go as monotonic instants: the coordinator's run
 * started at another moment. */
static void worker_relay(struct crawl *w, struct crawl_job *j, void *data)
{
    struct worker *wk = data;
    const struct crawl_result *r = &j->res;
    struct crawl_summary s;
    crawl_get_summary(w, &s);
    double t0 = crawl_started(w);
    pthread_mutex_lock(&wk->lock);
    struct strbuf *b = &wk->out;
    size_t at = wire_frame_begin(b, MSG_RESULT);
    wire_put_u64(b, j->seq);
    /* Handed back unfetched (crawl_fail: out of memory, cancelled): the
     * coordinator counts no attempt for it, as for a job of its own. */
    wire_put_u32(b, j->unrun != 0);
    procs_result_put(b, r, t0);
    /* A page's links, but those the coordinator has: links sent before,
     * and all of a page at --depth (it follows none of them); all of them
     * with --links-out. A sitemap's are all sent: they are admitted at
     * depth 0. */
    size_t count_at = b->len;
    uint32_t nl = 0;
    wire_put_u32(b, 0);
    int all = j->kind != JOB_PAGE || wk->all_links;
    if (all || j->depth < wk->depth)
        for (size_t i = 0; i < j->nlinks; i++)
            if (all || wk->whole || link_fresh(wk, j, j->links[i])) {
                wire_put_str(b, j->links[i]);
                nl++;
            }
    wire_set_u32(b, count_at, nl);
    wire_put_bytes(b, j->body, j->body_len);
    wire_put_u64(b, s.conns - wk->conns_sent);
    wk->conns_sent = s.conns;
    worker_frame(wk, at, 0);
    pthread_mutex_unlock(&wk->lock);
}

/* fetch_ctx's started: a job whose host the coordinator paces is on its
 * way; the coordinator counts the host's next start from now. */
static void worker_started(void *data, struct crawl_job *j)
{
    struct worker *wk = data;
    j->pace_start = 0;
    pthread_mutex_lock(&wk->lock);
    size_t at = wire_frame_begin(&wk->out, MSG_STARTED);
    wire_put_u64(&wk->out, j->seq);
    worker_frame(wk, at, 1);
    pthread_mutex_unlock(&wk->lock);
}

/* The relay's back hook: every job goes to the coordinator, and none to
 * this crawl's frontier or rows. */
static int worker_back(void *data, struct crawl *w, struct crawl_job *j)
{
    worker_relay(w, j, data);
    crawl_release(w, j);
    return 1;
}

/* crawl_on_cookies: the worker's jar goes to the coordinator, which
 * writes the file. */
static void worker_cookie(const char *line, void *data)
{
    struct worker *wk = data;
    pthread_mutex_lock(&wk->lock);
    size_t at = wire_frame_begin(&wk->out, MSG_COOKIE);
    wire_put_str(&wk->out, line);
    worker_frame(wk, at, 0);
    pthread_mutex_unlock(&wk->lock);
}

static void worker_warn(const char *msg, uint64_t once, void *data)
{
    struct worker *wk = data;
    pthread_mutex_lock(&wk->lock);
    size_t at = wire_frame_begin(&wk->out, MSG_WARN);
    wire_put_u64(&wk->out, once);
    wire_put_str(&wk->out, msg);
    worker_frame(wk, at, 1);
    pthread_mutex_unlock(&wk->lock);
}

static void worker_give_up(struct worker *wk, const char *what, int err)
    __attribute__((noreturn));

/* Acts on the whole frames wk->in holds. Returns how many there were, or
 * CRAWL_ENOMEM. */
static int worker_frames(struct crawl *w, struct worker *wk)
{
    size_t at = 0;
    struct wire_rd r;
    char type;
    int n = 0;
    while (wire_frame_next(&wk->in, &at, &r, &type)) {
        n++;
        if (type == MSG_CANCEL) {
            crawl_cancel(w, (enum crawl_cancel_why)wire_get_u32(&r));
        } else if (type == MSG_JOB) {
            uint64_t id = wire_get_u64(&r);
            uint32_t kind = wire_get_u32(&r);
            int depth = (int)wire_get_u32(&r);
            uint64_t scope = wire_get_u64(&r);
            int paced = (int)wire_get_u32(&r);
            char *url = wire_get_bytes(&r, NULL);
            char *etag = wire_get_bytes(&r, NULL);
            char *modified = wire_get_bytes(&r, NULL);
            if (!r.bad) {
                pthread_mutex_lock(&wk->lock);
                scope_note(wk, id, scope);
                pthread_mutex_unlock(&wk->lock);
            }
            enum crawl_job_kind k = kind == JOB_ROBOTS ? JOB_ROBOTS
                                  : kind == JOB_SITEMAP ? JOB_SITEMAP : JOB_PAGE;
            int rc = r.bad ? CRAWL_ENOMEM
                           : crawl_push_job(w, k, url, depth, id, paced, etag, modified);
            free(url);
            free(etag);
            free(modified);
            if (rc != 0)
                return CRAWL_ENOMEM;    /* the coordinator re-runs what is lost */
        }
    }
    wire_frames_taken(&wk->in, at);
    return n;
}

/* The input waker: the core's reader is to stop waiting on the socket
 * (the crawl was cancelled, or the run is over). */
static void worker_input_wake(void *data)
{
    struct worker *wk = data;
    io_wake(wk->wake);
}

/* The worker crawl's input (a streamed one, read by the core's reader
 * thread): jobs and the cancel from the socket. Waits for them with no
 * timeout: the coordinator closes its side at the end and when it
 * cancels, and the input waker ends the wait when the worker's own crawl
 * stops first (its output failed). Returns 1 while more may come, 0 when
 * the coordinator has shut its side. */
static int worker_input(struct crawl *w, size_t want, void *data)
{
    struct worker *wk = data;
    (void)want;
    int reader = !pthread_equal(pthread_self(), wk->main_tid);
    /* Called on the loop's own thread, this input would hold the loop
     * until the coordinator sends: the core could not start its reader
     * thread (out of processes). Better no worker than a worker that
     * crawls. (Once cancelled, the core reads what is left on its own
     * thread, until the coordinator, which cancelled, closes its side.) */
    if (!reader) {
        if (!atomic_load(&wk->ready) && !crawl_is_cancelled(w))
            worker_give_up(wk, "its reader thread", EAGAIN);
    } else if (!atomic_load(&wk->ready)) {
        /* The reader is up: the coordinator may send jobs. */
        atomic_store(&wk->ready, 1);
        pthread_mutex_lock(&wk->lock);
        size_t at = wire_frame_begin(&wk->out, MSG_READY);
        worker_frame(wk, at, 1);
        pthread_mutex_unlock(&wk->lock);
    }
    /* Frames that came with MSG_START are already here. */
    int n = worker_frames(w, wk);
    if (n != 0)
        return n < 0 ? n : 1;
    static const int unwoken[2] = { -1, -1 };
    if (io_wait(wk->fd, reader ? wk->wake : unwoken, -1) <= 0)
        return 1;
    ssize_t got = wire_fill(wk->fd, &wk->in);
    if (got == 0)
        return 0;
    if (got < 0)
        return got == -EINTR || got == -EAGAIN ? 1 : (int)got;
    n = worker_frames(w, wk);
    return n < 0 ? n : 1;
}

/* The heartbeat: a MSG_ALIVE every PROCS_HEARTBEAT until told to stop. A
 * thread of its own, so that nothing the loop does (a transfer that waits
 * minutes for its server, a long parse) keeps it from the coordinator,
 * which gives up a worker it does not hear from. */
static void *beat_main(void *arg)
{
    struct worker *wk = arg;
    pthread_mutex_lock(&wk->lock);
    while (!wk->beat_stop) {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        long ns = at.tv_nsec + (long)(PROCS_HEARTBEAT * 1e9);
        at.tv_sec += ns / 1000000000L;
        at.tv_nsec = ns % 1000000000L;
        if (pthread_cond_timedwait(&wk->beat_cond, &wk->lock, &at) != ETIMEDOUT || wk->beat_stop)
            continue;
        size_t fr = wire_frame_begin(&wk->out, MSG_ALIVE);
        worker_frame(wk, fr, 1);
    }
    pthread_mutex_unlock(&wk->lock);
    return NULL;
}

/* Starts the heartbeat. Returns 0 or a positive errno. */
static int beat_start(struct worker *wk)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return ENOMEM;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&wk->beat_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0)
        return rc;
    pthread_attr_t a;
    if ((rc = pthread_attr_init(&a)) != 0) {
        pthread_cond_destroy(&wk->beat_cond);
        return rc;
    }
    pthread_attr_setstacksize(&a, 64 * 1024);   /* it holds nothing */
    rc = pthread_create(&wk->beat_tid, &a, beat_main, wk);
    pthread_attr_destroy(&a);
    if (rc != 0)
        pthread_cond_destroy(&wk->beat_cond);
    return rc;
}

static void beat_stop(struct worker *wk)
{
    pthread_mutex_lock(&wk->lock);
    wk->beat_stop = 1;
    pthread_cond_signal(&wk->beat_cond);
    pthread_mutex_unlock(&wk->lock);
    pthread_join(wk->beat_tid, NULL);
    pthread_cond_destroy(&wk->beat_cond);
}

/* Says why worker wk cannot work, and ends it: the coordinator gives its
 * jobs to the others. */
static void worker_give_up(struct worker *wk, const char *what, int err)
{
    char msg[160];
    snprintf(msg, sizeof msg, "worker process %d: cannot start %s: %s", wk->idx, what,
             strerror(err));
    struct strbuf b = { 0 };
    size_t at = wire_frame_begin(&b, MSG_WARN);
    wire_put_u64(&b, 0);
    wire_put_str(&b, msg);
    if (wire_frame_end(&b, at) == 0)
        (void)wire_send_all(wk->fd, &b);
    _exit(3);
}

/* Waits for the coordinator's MSG_START, which comes when the run begins
 * (the workers are forked before, see procs_prepare): fills *limit, *reuse
 * and *whole. Returns 0, or -1 when the coordinator went away first. */
static int worker_start(int fd, struct strbuf *in, int *limit, int *reuse, int *whole)
{
    for (;;) {
        size_t at = 0;
        struct wire_rd r;
        char type;
        if (wire_frame_next(in, &at, &r, &type)) {
            if (type != MSG_START)
                return -1;
            *limit = (int)wire_get_u32(&r);
            *reuse = (int)wire_get_u32(&r);
            *whole = (int)wire_get_u32(&r);
            wire_frames_taken(in, at);
            return r.bad ? -1 : 0;
        }
        ssize_t got = wire_fill(fd, in);
        if (got == 0 || (got < 0 && got != -EINTR && got != -EAGAIN))
            return -1;
    }
}

void procs_worker_main(struct crawl *c, const struct crawl_backend *model, int idx, int fd,
                       pid_t coordinator)
{
    /* Signals are the coordinator's to act on: it tells the workers. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != coordinator)
        _exit(1);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);      /* the output is the coordinator's */
        close(null);
    }
    struct worker wk;
    memset(&wk, 0, sizeof wk);
    wk.fd = fd;
    wk.idx = idx;
    int limit, reuse;
    if (worker_start(fd, &wk.in, &limit, &reuse, &wk.whole) != 0)
        _exit(0);
    int e = io_wake_pipe(wk.wake);
    if (e != 0)
        worker_give_up(&wk, "its wake-up pipe", -e);
    struct crawl_opts o;
    procs_worker_opts(crawl_options(c), &o);    /* the frontier's options off */
    o.concurrency = limit;
    o.reuse = reuse ? CRAWL_REUSE_ON : CRAWL_REUSE_OFF;
    o.loops = 1;
    /* The workers share the CPUs they leave free for parse threads. */
    if (o.parse_threads < 0) {
        int nprocs = o.procs > 0 ? o.procs : parse_pool_default(0);
        o.parse_threads = nprocs > 0 ? parse_pool_default(nprocs) / nprocs : 0;
    }
    o.warc_worker = idx;        /* a WARC file of its own */
    wk.depth = o.depth;
    wk.all_links = o.links_out != NULL;
    wk.main_tid = pthread_self();
    pthread_mutex_init(&wk.lock, NULL);
    int rc = CRAWL_ENOMEM;
    if ((wk.w = crawl_new(&o))) {
        crawl_prepare(wk.w, model);     /* before the worker's threads */
        /* Started once the coordinator has its own threads (MSG_START
         * comes after them): out of processes, the coordinator goes first. */
        int berr = beat_start(&wk);
        if (berr != 0)
            worker_give_up(&wk, "its heartbeat thread", berr);
        static const struct crawl_hook relay = { .back = worker_back, .idle = worker_waiting };
        crawl_hook(wk.w, CRAWL_HOOK_RELAY, &relay, &wk);
        /* Paced jobs' starts go to the coordinator, whose frontier paces. */
        crawl_fetch_ctx(wk.w)->started = worker_started;
        crawl_fetch_ctx(wk.w)->started_data = &wk;
        crawl_on_warn(wk.w, worker_warn, &wk);
        crawl_share_digests(wk.w, c);     /* one digest set for the crawl */
        crawl_on_cookies(wk.w, worker_cookie, &wk);
        crawl_set_input(wk.w, worker_input, &wk, 1);
        crawl_set_input_waker(wk.w, worker_input_wake, &wk);
        rc = crawl_run(wk.w, model);
        struct crawl_summary s;
        crawl_get_summary(wk.w, &s);
        beat_stop(&wk);
        pthread_mutex_lock(&wk.lock);
        size_t at = wire_frame_begin(&wk.out, MSG_END);
        /* its loops, the reader and the heartbeat */
        wire_put_u32(&wk.out, (uint32_t)s.threads + 2);
        wire_put_u32(&wk.out, rc == CRAWL_EOUTPUT);         /* its WARC failed */
        worker_frame(&wk, at, 1);
        pthread_mutex_unlock(&wk.lock);
    }
    free(wk.scopes);
    hset64_free(&wk.sent);
    _exit(rc == 0 ? 0 : 3);
}


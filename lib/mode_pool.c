/* mode_pool.c: a thread pool with futures (the article's
 * ThreadPoolExecutor(N).map): every job is submitted as it is taken, each
 * worker fetches on an easy handle of its own, and the futures are
 * gathered as they complete. Unlike executor.map, which submits the whole
 * list at once, a job is taken and submitted only when a worker is free to
 * start it: no job waits in the pool's queue, so that it starts when the
 * frontier said it may (a host's pace), not some jobs later. When no rule
 * can hold a job back (crawl_paced), up to POOL_AHEAD a worker are
 * submitted, so that a worker that is done starts the next at once
 * instead of waiting for the submitting thread to wake. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "crawl.h"
#include "fetch.h"
#include "pool.h"

#define POOL_AHEAD 4

struct pmode {
    struct crawl *c;
    struct fetch_xfer *xfers;   /* one per worker: its handle keeps its connections */
    struct fetch_share *share;  /* the workers' one DNS cache and TLS sessions */
    pthread_mutex_t lock;       /* guards busy */
    pthread_cond_t idle;        /* signalled when a worker is done with a job */
    int busy;                   /* jobs submitted and not yet done */
    int waiting;                /* the submitting thread waits on idle */
};

struct ptask {
    struct pmode *m;
    struct crawl_job *job;
};


/* Frees the completed futures among the n in futs, keeping the pending
 * ones in order. Returns how many are left. */
static size_t gather(struct future **futs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (future_done(futs[i])) {
            free(future_wait(futs[i]));
            future_free(futs[i]);
        } else {
            futs[k++] = futs[i];
        }
    }
    return k;
}

static void *pool_task(void *arg, int worker)
{
    struct ptask *t = arg;
    struct fetch_xfer *x = &t->m->xfers[worker];
    struct pmode *m = t->m;
    if (x->easy) {
        fetch_perform(x, crawl_fetch_ctx(m->c), t->job, worker);
        crawl_done(m->c, t->job);
    } else {
        crawl_fail_nomem(m->c, t->job);
    }
    pthread_mutex_lock(&m->lock);
    m->busy--;
    if (m->waiting)
        pthread_cond_signal(&m->idle);
    pthread_mutex_unlock(&m->lock);
    return t;
}

/* Submits job to the pool. Returns its future, or NULL when it could not
 * be (the job is handed back failed). */
static struct future *submit(struct pmode *m, struct pool *p, struct crawl_job *job)
{
    struct ptask *t = malloc(sizeof *t);
    if (!t) {
        crawl_fail_nomem(m->c, job);
        return NULL;
    }
    t->m = m;
    t->job = job;
    /* From here until a worker starts it, the job waits in the pool's
     * queue (a trace shows the wait). */
    job->res.queued = clock_now() - crawl_started(m->c);
    pthread_mutex_lock(&m->lock);
    m->busy++;
    pthread_mutex_unlock(&m->lock);
    struct future *f = pool_submit(p, pool_task, t);
    if (!f) {
        pthread_mutex_lock(&m->lock);
        m->busy--;
        pthread_mutex_unlock(&m->lock);
        free(t);
        crawl_fail(m->c, job, CRAWL_FAIL_OTHER, "cannot queue the job");
    }
    return f;
}

static int pool_run(struct crawl *c)
{
    struct pmode m = { .c = c };
    pthread_mutex_init(&m.lock, NULL);
    pthread_cond_init(&m.idle, NULL);
    struct pool *p = NULL;
    struct future **futs = NULL;
    size_t nfut = 0, cap = 0;
    struct crawl_job *job;

    int rc, size = crawl_limit(c) > 0 ? crawl_limit(c) : 10;

    if (!(p = pool_new(size, 0))) {
        rc = CRAWL_ETHREAD;
        goto out;
    }
    size = pool_size(p);
    crawl_set_threads(c, size + 1);
    /* A name is looked up once for every worker, as for the threads of
     * the thread model, not once a worker. */
    if (!(m.xfers = calloc((size_t)size, sizeof *m.xfers)) || !(m.share = fetch_share_new())) {
        rc = CRAWL_ENOMEM;
        goto out;
    }
    for (int i = 0; i < size; i++)
        m.xfers[i].easy = fetch_easy_new(crawl_fetch_ctx(c), m.share);
    /* Jobs submitted at most: one a worker, or POOL_AHEAD a worker when
     * nothing paces. */
    int most = crawl_paced(c) ? size : POOL_AHEAD * size;
    /* A future outlives its job by a moment: room for as many again. */
    cap = 2 * (size_t)most + 1;
    if (!(futs = malloc(cap * sizeof *futs))) {
        rc = CRAWL_ENOMEM;
        goto out;
    }

    for (;;) {
        /* A job is taken only once a worker is free to start it (or,
         * unpaced, once the queue has room). */
        pthread_mutex_lock(&m.lock);
        while (m.busy >= most) {
            m.waiting = 1;
            pthread_cond_wait(&m.idle, &m.lock);
            m.waiting = 0;
        }
        pthread_mutex_unlock(&m.lock);
        /* Gathered only when there is no room: at most `most` of the
         * cap's 2 * most + 1 are busy, so more than half are done by then,
         * and a scan costs one look per future, not one per job. */
        if (nfut == cap)
            nfut = gather(futs, nfut);
        if ((rc = crawl_take_wait(c, &job)) != 1)
            break;
        struct future *f = submit(&m, p, job);
        if (f)
            futs[nfut++] = f;
    }
    /* The rest, in submission order. */
    for (size_t i = 0; i < nfut; i++) {
        free(future_wait(futs[i]));
        future_free(futs[i]);
    }
out:
    if (p)
        pool_free(p);
    if (m.xfers) {
        for (int i = 0; i < size; i++)
            if (m.xfers[i].easy)
                curl_easy_cleanup(m.xfers[i].easy);
        free(m.xfers);
    }
    fetch_share_free(m.share);      /* after every handle using it */
    free(futs);
    pthread_cond_destroy(&m.idle);
    pthread_mutex_destroy(&m.lock);
    return rc;
}

const struct crawl_backend crawl_backend_pool = {
    .name = "pool",
    .summary = "a pool of -c worker threads (default 10) fed through futures",
    .manual = "A pool of -c worker threads (default 10) fed through futures, a job "
              "submitted when a worker is free to start it (up to four a worker ahead "
              "when no per-host rule can hold a job back); results are gathered in "
              "submission order.",
    .default_concurrency = 10,
    .fds_per_transfer = 3,      /* a blocking transfer: its socket, its multi's wakeup pair */
    .run = pool_run,
};

/* mode_pool.c: a thread pool with futures (the article's
 * ThreadPoolExecutor(N).map): every job is submitted as it is taken, each
 * worker fetches on an easy handle of its own, and the futures are
 * gathered as they complete. Unlike executor.map, which submits the whole
 * list at once, at most WINDOW futures per worker are outstanding: the
 * pool's queue then holds a few jobs per worker, not the list. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "crawl.h"
#include "fetch.h"
#include "pool.h"

struct pmode {
    struct crawl *c;
    struct fetch_xfer *xfers;   /* one per worker: its handle keeps its connections */
};

struct ptask {
    struct pmode *m;
    struct crawl_job *job;
};

#define WINDOW 4

/* Frees the completed futures among the n in futs, keeping the pending
 * ones in order; waits a little for the oldest when none has completed
 * and block is set. Returns how many are left. */
static size_t gather(struct future **futs, size_t n, int block)
{
    for (;;) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (future_done(futs[i])) {
                free(future_wait(futs[i]));
                future_free(futs[i]);
            } else {
                futs[k++] = futs[i];
            }
        }
        if (k < n || !block || k == 0)
            return k;
        future_wait_for(futs[0], 10, NULL);
    }
}

static void *pool_task(void *arg, int worker)
{
    struct ptask *t = arg;
    struct fetch_xfer *x = &t->m->xfers[worker];
    if (x->easy) {
        fetch_perform(x, crawl_fetch_ctx(t->m->c), t->job, worker);
        crawl_done(t->m->c, t->job);
    } else {
        crawl_fail(t->m->c, t->job, CRAWL_FAIL_OTHER, "out of memory");
    }
    return t;
}

static int pool_run(struct crawl *c)
{
    struct pmode m = { .c = c };
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
    if (!(m.xfers = calloc((size_t)size, sizeof *m.xfers))) {
        rc = CRAWL_ENOMEM;
        goto out;
    }
    for (int i = 0; i < size; i++)
        m.xfers[i].easy = fetch_easy_new(crawl_fetch_ctx(c), NULL);
    cap = (size_t)size * WINDOW;
    if (!(futs = malloc(cap * sizeof *futs))) {
        rc = CRAWL_ENOMEM;
        goto out;
    }

    while ((rc = crawl_next(c, &job, 1)) == 1) {
        if (nfut == cap)
            nfut = gather(futs, nfut, 1);
        struct ptask *t = malloc(sizeof *t);
        if (!t) {
            crawl_fail(c, job, CRAWL_FAIL_OTHER, "out of memory");
            continue;
        }
        t->m = &m;
        t->job = job;
        /* From here until a worker starts it, the job waits in the pool's
         * queue (a trace shows the wait). */
        job->res.queued = clock_now() - crawl_started(c);
        struct future *f = pool_submit(p, pool_task, t);
        if (!f) {
            free(t);
            crawl_fail(c, job, CRAWL_FAIL_OTHER, "cannot queue the job");
            continue;
        }
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
    free(futs);
    return rc;
}

const struct crawl_backend crawl_backend_pool = {
    .name = "pool",
    .summary = "a pool of -c worker threads (default 10) fed through futures",
    .default_concurrency = 10,
    .fds_per_transfer = 3,      /* a blocking transfer: its socket, its multi's wakeup pair */
    .run = pool_run,
};

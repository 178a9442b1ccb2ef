/* mode_thread.c: one thread per URL (the article's spider_thread.py): a
 * thread is started for each job as it is taken and runs one blocking
 * fetch. With -c N, at most N are alive. A thread that ends is joined by
 * the starting thread before it starts the next, so that stacks (and the
 * kernel's memory mappings) follow the threads alive, not those started.
 *
 * Connections are reused the only way libcurl allows across threads: an
 * easy handle keeps its own connections, and a thread that is done puts its
 * handle on a free list for the next thread to take (one thread at a time
 * per handle; a share object must not hold connections used concurrently). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crawl.h"
#include "fetch.h"
#include "vec.h"

struct tmode {
    struct crawl *c;
    struct fetch_share *share;
    pthread_mutex_t lock;
    pthread_cond_t  slot;       /* signalled when a thread ends */
    int alive, peak;
    struct tjob *ended;         /* threads that are over, to be joined */
    int limit;                  /* 0: no limit */
    CURL **idle;                /* easy handles no thread is using */
    size_t nidle, idle_cap;
};

struct tjob {
    struct tmode *m;
    struct crawl_job *job;
    int worker;
    pthread_t tid;
    struct tjob *next;          /* in the list of ended threads */
};

/* Takes an idle handle, or makes one. Called without the lock. */
static CURL *handle_get(struct tmode *m)
{
    CURL *h = NULL;
    pthread_mutex_lock(&m->lock);
    if (m->nidle)
        h = m->idle[--m->nidle];
    pthread_mutex_unlock(&m->lock);
    return h ? h : fetch_easy_new(crawl_fetch_ctx(m->c), m->share);
}

/* Puts h back for another thread, with its connections, when reuse is on. */
static void handle_put(struct tmode *m, CURL *h)
{
    if (crawl_reuse(m->c)) {
        pthread_mutex_lock(&m->lock);
        if (vec_reserve(&m->idle, &m->idle_cap, m->nidle + 1, sizeof *m->idle, 16) == 0) {
            m->idle[m->nidle++] = h;
            h = NULL;
        }
        pthread_mutex_unlock(&m->lock);
    }
    if (h)
        curl_easy_cleanup(h);
}

static void *thread_main(void *arg)
{
    struct tjob *t = arg;
    struct tmode *m = t->m;
    struct fetch_xfer x = {0};

    x.easy = handle_get(m);
    if (x.easy) {
        fetch_perform(&x, crawl_fetch_ctx(m->c), t->job, t->worker);
        crawl_done(m->c, t->job);
        handle_put(m, x.easy);
    } else {
        crawl_fail_nomem(m->c, t->job);
    }
    pthread_mutex_lock(&m->lock);
    m->alive--;
    t->next = m->ended;
    m->ended = t;
    pthread_cond_signal(&m->slot);
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* Joins and frees the threads that are over. */
static void reap(struct tmode *m)
{
    pthread_mutex_lock(&m->lock);
    struct tjob *t = m->ended;
    m->ended = NULL;
    pthread_mutex_unlock(&m->lock);
    while (t) {
        struct tjob *next = t->next;
        pthread_join(t->tid, NULL);
        free(t);
        t = next;
    }
}

static int thread_run(struct crawl *c)
{
    struct tmode m = { .c = c, .limit = crawl_limit(c) };
    struct crawl_job *job;
    pthread_attr_t attr;
    int rc, n = 0;

    pthread_mutex_init(&m.lock, NULL);
    pthread_cond_init(&m.slot, NULL);
    pthread_attr_init(&attr);
    if (!(m.share = fetch_share_new())) {
        rc = CRAWL_ENOMEM;
        goto out;
    }
    for (;;) {
        /* A job is taken only once it can start: a thread may start now. */
        pthread_mutex_lock(&m.lock);
        while (m.limit > 0 && m.alive >= m.limit)
            pthread_cond_wait(&m.slot, &m.lock);
        pthread_mutex_unlock(&m.lock);
        reap(&m);
        if ((rc = crawl_take_wait(c, &job)) != 1)
            break;
        struct tjob *t = calloc(1, sizeof *t);
        if (!t) {
            crawl_fail_nomem(c, job);
            continue;
        }
        t->m = &m;
        t->job = job;
        t->worker = n++;
        pthread_mutex_lock(&m.lock);
        m.alive++;
        if (m.alive > m.peak)
            m.peak = m.alive;
        pthread_mutex_unlock(&m.lock);
        int err = pthread_create(&t->tid, &attr, thread_main, t);
        if (err) {
            pthread_mutex_lock(&m.lock);
            m.alive--;
            pthread_mutex_unlock(&m.lock);
            free(t);
            crawl_fail(c, job, CRAWL_FAIL_THREAD, "cannot start a thread: %s",
                       strerror(err));
            continue;
        }
    }
    pthread_mutex_lock(&m.lock);
    while (m.alive > 0)
        pthread_cond_wait(&m.slot, &m.lock);
    pthread_mutex_unlock(&m.lock);
    reap(&m);
    crawl_set_threads(c, m.peak + 1);
out:
    while (m.nidle)
        curl_easy_cleanup(m.idle[--m.nidle]);
    free(m.idle);
    fetch_share_free(m.share);
    pthread_attr_destroy(&attr);
    pthread_cond_destroy(&m.slot);
    pthread_mutex_destroy(&m.lock);
    return rc;
}

const struct crawl_backend crawl_backend_thread = {
    .name = "thread",
    .summary = "one thread per URL, each a blocking fetch, then join all",
    .manual = "One thread per URL, each a blocking fetch, then all joined; -c N keeps at "
              "most N alive.",
    .default_concurrency = 0,
    /* A blocking transfer holds its socket and the wake-up socket pair of
     * the easy handle's own multi handle. */
    .fds_per_transfer = 3,
    .run = thread_run,
};

/* pool.c: a fixed set of worker threads taking jobs from one FIFO queue.
 * The queue is a growable ring of job records, so a submission allocates
 * only its future (plus, now and then, a doubling of the ring). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"
#include "vec.h"

#define POOL_RING_MIN 64   /* first ring capacity; a power of two */

struct pool_job {
    pool_fn fn;
    void *arg;
    struct future *fut;   /* the pool's own hold, released when the job is over */
};

/* A ring of jobs: head is the oldest, cap is zero or a power of two. */
struct pool_ring {
    struct pool_job *jobs;
    size_t cap;
    size_t head;
    size_t len;
};

struct pool_worker {
    pthread_t thread;
    struct pool *pool;
    int index;            /* passed to every job this worker runs */
};

struct pool {
    pthread_mutex_t lock;   /* guards queue and stopping */
    pthread_cond_t work;    /* signalled when a job is queued or stopping is set */
    struct pool_ring queue;
    int stopping;           /* pool_free has begun: no more submissions */
    int nworkers;           /* how many started; fixed after pool_new */
    struct pool_worker *workers;
};

/* Makes room for one more job, keeping FIFO order across the wrap. */
static int ring_grow(struct pool_ring *r)
{
    size_t old = r->cap, first;

    if (r->len < r->cap)
        return 0;
    /* Doubling keeps the capacity a power of two, which the index mask
     * needs. */
    if (vec_reserve(&r->jobs, &r->cap, r->cap + 1, sizeof *r->jobs, POOL_RING_MIN) != 0)
        return -ENOMEM;
    /* The ring was full: the part from head to the old end stays, and the
     * part that wrapped to the start moves up behind it. */
    first = old - r->head;
    if (r->head != 0)
        memcpy(r->jobs + old, r->jobs, (r->len - first) * sizeof *r->jobs);
    return 0;
}

static void ring_push(struct pool_ring *r, struct pool_job job)
{
    r->jobs[(r->head + r->len) & (r->cap - 1)] = job;
    r->len++;
}

static struct pool_job ring_pop(struct pool_ring *r)
{
    struct pool_job job = r->jobs[r->head];

    r->head = (r->head + 1) & (r->cap - 1);
    r->len--;
    return job;
}

/* Runs one job unless its future was cancelled first, then lets go of the
 * pool's hold on the future. */
static void run_job(struct pool_job job, int worker)
{
    if (future_start(job.fut) == 0)
        future_set(job.fut, job.fn(job.arg, worker));
    future_free(job.fut);
}

static void *worker_main(void *data)
{
    struct pool_worker *w = data;
    struct pool *p = w->pool;
    struct pool_job job;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->queue.len == 0 && !p->stopping)
            pthread_cond_wait(&p->work, &p->lock);
        /* Stopping only ends a worker once the queue is empty: pool_free
         * runs what was queued. */
        if (p->queue.len == 0)
            break;
        job = ring_pop(&p->queue);
        pthread_mutex_unlock(&p->lock);
        run_job(job, w->index);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Sets the stack size in attr, rounded up to what the system accepts:
 * at least PTHREAD_STACK_MIN and a whole number of pages. */
static int set_stack_size(pthread_attr_t *attr, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    if (size < (size_t)PTHREAD_STACK_MIN)
        size = (size_t)PTHREAD_STACK_MIN;
    if (size > SIZE_MAX - page)
        return EINVAL;
    size = (size + page - 1) / page * page;
    return pthread_attr_setstacksize(attr, size);
}

struct pool *pool_new(int nthreads, size_t stack_size)
{
    struct pool *p;
    pthread_attr_t attr;
    int rc, i;

    if (nthreads <= 0) {
        errno = EINVAL;
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->workers = calloc((size_t)nthreads, sizeof(*p->workers));
    if (p->workers == NULL) {
        rc = ENOMEM;
        goto err_pool;
    }
    if ((rc = pthread_mutex_init(&p->lock, NULL)) != 0)
        goto err_workers;
    if ((rc = pthread_cond_init(&p->work, NULL)) != 0)
        goto err_mutex;
    if ((rc = pthread_attr_init(&attr)) != 0)
        goto err_cond;
    if (stack_size != 0 && (rc = set_stack_size(&attr, stack_size)) != 0)
        goto err_attr;

    /* Workers are numbered in start order and the first failure ends the
     * loop, so the indexes that jobs see are exactly 0 .. pool_size-1. A
     * failure after some workers started (EAGAIN: a thread or memory
     * limit) leaves a smaller pool rather than none. */
    for (i = 0; i < nthreads; i++) {
        p->workers[i].pool = p;
        p->workers[i].index = i;
        rc = pthread_create(&p->workers[i].thread, &attr, worker_main,
                            &p->workers[i]);
        if (rc != 0)
            break;
    }
    if (i == 0)
        goto err_attr;
    p->nworkers = i;
    pthread_attr_destroy(&attr);
    return p;

err_attr:
    pthread_attr_destroy(&attr);
err_cond:
    pthread_cond_destroy(&p->work);
err_mutex:
    pthread_mutex_destroy(&p->lock);
err_workers:
    free(p->workers);
err_pool:
    free(p);
    errno = rc;
    return NULL;
}

int pool_size(const struct pool *p)
{
    return p->nworkers;
}

struct future *pool_submit(struct pool *p, pool_fn fn, void *arg)
{
    struct future *f;
    int rc;

    if (fn == NULL) {
        errno = EINVAL;
        return NULL;
    }
    f = future_new();
    if (f == NULL)
        return NULL;
    pthread_mutex_lock(&p->lock);
    if (p->stopping) {
        rc = ESHUTDOWN;
        goto err_unlock;
    }
    if (ring_grow(&p->queue) != 0) {
        rc = ENOMEM;
        goto err_unlock;
    }
    ring_push(&p->queue, (struct pool_job){ fn, arg, future_hold(f) });
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return f;

err_unlock:
    pthread_mutex_unlock(&p->lock);
    future_free(f);
    errno = rc;
    return NULL;
}

size_t pool_cancel(struct pool *p)
{
    struct pool_ring taken;
    size_t n = 0;

    /* Take the whole queue at once and cancel outside the lock, so that
     * waiters woken by the cancellations do not contend with the workers. */
    pthread_mutex_lock(&p->lock);
    taken = p->queue;
    memset(&p->queue, 0, sizeof(p->queue));
    pthread_mutex_unlock(&p->lock);

    while (taken.len > 0) {
        struct pool_job job = ring_pop(&taken);

        /* A future its owner cancelled already does not count twice. */
        if (future_cancel(job.fut) == 0)
            n++;
        future_free(job.fut);
    }
    free(taken.jobs);
    return n;
}

void pool_free(struct pool *p)
{
    int i;

    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);

    for (i = 0; i < p->nworkers; i++)
        pthread_join(p->workers[i].thread, NULL);

    free(p->queue.jobs);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p);
}

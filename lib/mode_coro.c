/* mode_coro.c: coroutines on an event loop (the article's asyncio + aiohttp
 * with asyncio.gather). One libev loop drives libcurl's multi-socket API
 * (multi_ev.c); each URL is a stackful coroutine whose code reads top to
 * bottom: fetch() adds its transfer to the multi handle and suspends the
 * coroutine, and the loop resumes it when the transfer is done. With
 * --loops N, N threads each run a loop of their own over shared jobs. The
 * loop sleeps in ev_run between events: the core wakes it (an ev_async)
 * when jobs come, and a timer when the next one comes due by itself. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ev.h>

#include "coro.h"
#include "crawl.h"
#include "fetch.h"
#include "html.h"
#include "multi_ev.h"
#include "parse_pool.h"

struct loop;

/* Transfers in one multi handle at most (multi_ev.h says why). */
#define SHARD_CAP 512

/* Transfers started per loop iteration at most; each is connected and its
 * request sent as it starts (multi_ev_poke). Started all at once,
 * thousands of URLs keep the loop from polling: the 0 ms timers of all of
 * them run before any socket event, so every connect() comes before the
 * first request. With each transfer started whole, the batch size hardly
 * changes the start-up (4 to 256 alike); it bounds how long timers,
 * completions and cancellation wait behind new transfers. */
#define BATCH 32

/* One coroutine with the easy handle it fetches through. Tasks are kept on
 * a free list and rearmed (coro_reset, same easy handle, no curl_easy_reset)
 * so that a URL costs no mmap and no handle set-up. */
struct task {
    coro *co;
    struct fetch_xfer x;        /* x.easy stays with the task */
    struct loop *L;
    CURLcode rc;                /* the finished transfer's outcome */
    int parsing;                /* its page is with the parse pool */
    struct parse_item item;     /* how it goes there */
    struct task *back_next;     /* on its loop's list of parsed pages */
    struct task *next;          /* free list, or the list of tasks in flight */
    struct task *prev;
};

struct loop {
    struct crawl *c;
    int idx;
    struct ev_loop *ev;
    coro_stack *stack;          /* every task's coroutine runs on it */
    struct fetch_share *share;  /* DNS cache and TLS sessions of every task */
    struct multi_ev *multi;     /* the transfers in flight */
    ev_timer due;               /* the core's next job comes due by itself */
    ev_prepare more;            /* starts the next batch of transfers */
    ev_idle spin;               /* keeps the loop from blocking while it waits */
    ev_async wake;              /* the core's waker: jobs came, or a cancel */
    ev_prepare poll;            /* the loop is about to poll: crawl_waiting */
    struct parse_pool *pool;    /* parses pages off the loop's thread, or NULL */
    struct fetch_defer *defer;  /* the bodies held for it */
    ev_async parsed;            /* a pool thread handed a page back */
    pthread_mutex_t back_lock;  /* guards back */
    struct task *back;          /* pages parsed, for the loop to finish */
    int limit;                  /* transfers in flight at most; 0: no limit */
    int in_flight;
    int over;                   /* the core has no more jobs for this loop */
    int aborted;                /* the cancellation ended the transfers */
    int filling;                /* in fill(), which completions may call again */
    int ntasks;                 /* tasks ever made: worker ids */
    struct task *free_tasks;
    struct task *busy;          /* tasks in flight, for cancellation */
    int err;                    /* first fatal error */
    pthread_t tid;
};

static void busy_unlink(struct loop *L, struct task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        L->busy = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
}

static void fill(struct loop *L);
static void task_free(struct task *t);

/* Switches to t's coroutine; when it has finished its URL, the task goes
 * back on the free list, or is freed now if no job waits for it and the
 * input can bring none: freed one by one they fit between responses, where
 * freeing them all at the end would come after the last one. While a
 * streamed input (a relay's) may still bring jobs, the task is kept: its
 * handle freed and made again for the next job would cost a connection. */
static int task_resume(struct loop *L, struct task *t)
{
    coro_resume(t->co, NULL, NULL);
    if (coro_status(t->co) != CORO_DEAD)
        return 1;
    busy_unlink(L, t);
    L->in_flight--;
    t->x.job = NULL;
    if (crawl_queued(L->c) == 0 && crawl_input_over(L->c)) {
        task_free(t);
        return 0;
    }
    t->next = L->free_tasks;
    L->free_tasks = t;
    return 0;
}

/* multi_ev's done callback: the coroutine of x's task goes on with rc. */
static void on_done(void *data, struct fetch_xfer *x, CURLcode rc)
{
    struct task *t = x->data;
    t->rc = rc;
    task_resume(data, t);
}

/* multi_ev's drained callback: transfers ended, and made room. */
static void on_drained(void *data)
{
    fill(data);
}

/* A cancelled crawl abandons every transfer in flight: each coroutine
 * wakes with CURLE_ABORTED_BY_CALLBACK and records itself as cancelled (a
 * page being parsed comes back by itself). */
static void abort_all(struct loop *L)
{
    L->aborted = 1;
    for (struct task *t = L->busy, *next; t; t = next) {
        next = t->next;
        if (t->parsing || !t->x.multi)
            continue;
        multi_ev_remove(L->multi, &t->x);
        t->rc = CURLE_ABORTED_BY_CALLBACK;
        task_resume(L, t);
    }
}

/* The coroutine's side of a fetch: hand the transfer to the loop and sleep
 * until it is done. Returns libcurl's outcome. */
static CURLcode task_fetch(struct task *t)
{
    if (t->L->aborted)
        return CURLE_ABORTED_BY_CALLBACK;
    if (multi_ev_add(t->L->multi, &t->x) != 0)
        return CURLE_OUT_OF_MEMORY;
    coro_yield(NULL);
    return t->rc;
}

/* On a pool thread: parses t's page and queues t for its loop. */
static void task_parse(struct parse_item *it)
{
    struct task *t = (struct task *)((char *)it - offsetof(struct task, item));
    struct loop *L = t->L;
    fetch_parse(&t->x);
    pthread_mutex_lock(&L->back_lock);
    t->back_next = L->back;
    L->back = t;
    pthread_mutex_unlock(&L->back_lock);
    ev_async_send(L->ev, &L->parsed);
}

/* The coroutine's side of a parse: hand the page to the pool and sleep
 * until it is back (on_parsed). The task stays in flight meanwhile, so
 * that pages waiting to be parsed count against the limit. When the pool
 * has as many pages waiting as threads, the page is parsed here, on the
 * loop: its thread then does the work rather than wait for it, and the
 * pages in waiting stay few. */
static void task_parse_wait(struct task *t)
{
    t->parsing = 1;
    if (parse_pool_offer(t->L->pool, &t->item) != 0) {
        t->parsing = 0;
        fetch_parse(&t->x);
        return;
    }
    coro_yield(NULL);
    t->parsing = 0;
}

/* The body of every coroutine: one URL, top to bottom. */
static void task_main(void *arg)
{
    struct task *t = arg;
    struct loop *L = t->L;
    struct crawl_job *job = t->x.job;
    CURLcode rc;
    fetch_prepare(&t->x, crawl_fetch_ctx(L->c), job, t->x.worker);
    while (fetch_follow(&t->x, rc = task_fetch(t))) {
        if (crawl_is_cancelled(L->c)) {
            rc = CURLE_ABORTED_BY_CALLBACK;     /* between two hops */
            break;
        }
    }
    if (fetch_finish(&t->x, rc))
        task_parse_wait(t);
    crawl_done(L->c, job);
}

/* Pages back from the pool: each coroutine goes on from its parse, then the
 * loop starts what their ends made room for. */
static void on_parsed(struct ev_loop *ev, ev_async *w, int revents)
{
    struct loop *L = (struct loop *)((char *)w - offsetof(struct loop, parsed));
    pthread_mutex_lock(&L->back_lock);
    struct task *t = L->back;
    L->back = NULL;
    pthread_mutex_unlock(&L->back_lock);
    /* The list is newest first: the oldest page is finished first. */
    struct task *rev = NULL;
    while (t) {
        struct task *next = t->back_next;
        t->back_next = rev;
        rev = t;
        t = next;
    }
    while ((t = rev)) {
        rev = t->back_next;
        t->back_next = NULL;
        task_resume(L, t);
    }
    fill(L);
}

static struct task *task_get(struct loop *L)
{
    struct task *t = L->free_tasks;
    if (t) {
        L->free_tasks = t->next;
        t->next = NULL;
        return t;
    }
    if (!(t = calloc(1, sizeof *t)))
        return NULL;
    t->L = L;
    t->x.data = t;
    t->x.defer = L->defer;
    t->item.run = task_parse;
    t->x.worker = L->idx * 1000000 + L->ntasks++;
    if (!(t->x.easy = fetch_easy_new(crawl_fetch_ctx(L->c), L->share)))
        goto err;
    if (!(t->co = coro_new_on(task_main, t, L->stack)))
        goto err;
    return t;
err:
    if (t->x.easy)
        curl_easy_cleanup(t->x.easy);
    free(t);
    return NULL;
}

static void task_free(struct task *t)
{
    if (t->co)
        coro_free(t->co);
    if (t->x.easy)
        curl_easy_cleanup(t->x.easy);
    free(t);
}

/* Starts a coroutine for job. Returns 0, or -1 when none could be made
 * (the job is handed back failed). */
static int start(struct loop *L, struct crawl_job *job)
{
    errno = 0;
    struct task *t = task_get(L);
    if (!t) {
        if (errno == 0 || errno == ENOMEM)
            crawl_fail_nomem(L->c, job);
        else
            crawl_fail(L->c, job, CRAWL_FAIL_OTHER, "cannot start a coroutine: %s",
                       strerror(errno));
        return -1;
    }
    if (coro_status(t->co) == CORO_DEAD)
        coro_reset(t->co, task_main, t);
    t->x.job = job;
    t->next = L->busy;
    t->prev = NULL;
    if (L->busy)
        L->busy->prev = t;
    L->busy = t;
    L->in_flight++;
    /* The new transfer is due at once: let libcurl connect it now, and
     * send its request, before the next one is made, rather than all of
     * the batch's at the next timer. The server then meets most requests
     * with their connections instead of being woken for each. Not from
     * inside the coroutine: a transfer that ends in that call resumes its
     * own coroutine on the same stack. */
    if (task_resume(L, t))
        multi_ev_poke(L->multi);
    return 0;
}

/* Asks the core to come back at due (0: only when woken). */
static void arm_due(struct loop *L, double due)
{
    ev_timer_stop(L->ev, &L->due);
    if (due > 0) {
        double in = due - clock_now();
        ev_timer_set(&L->due, in > 0 ? in : 0, 0.);
        ev_timer_start(L->ev, &L->due);
    }
}

/* Starts coroutines for the jobs that may start now while the limit
 * allows, BATCH at a time: the rest wait for on_more. When nothing may
 * start now, the loop sleeps until the core wakes it, a transfer ends, or
 * the time the core said something comes due. */
static void fill(struct loop *L)
{
    int started = 0;
    if (L->filling)
        return;
    L->filling = 1;
    if (crawl_is_cancelled(L->c) && !L->aborted)
        abort_all(L);
    while (!L->over && (L->limit == 0 || L->in_flight < L->limit)) {
        struct crawl_job *job;
        if (started == BATCH) {
            ev_prepare_start(L->ev, &L->more);
            ev_idle_start(L->ev, &L->spin);
            L->filling = 0;
            return;
        }
        double due = 0;
        int rc = crawl_take(L->c, &job, &due);
        if (rc == CRAWL_EAGAIN) {
            arm_due(L, due);
            break;
        }
        if (rc != 1) {
            L->over = 1;
            break;
        }
        if (start(L, job) == 0)
            started++;
    }
    L->filling = 0;
    ev_prepare_stop(L->ev, &L->more);
    ev_idle_stop(L->ev, &L->spin);
    if (L->over && L->in_flight == 0)
        ev_break(L->ev, EVBREAK_ALL);
}

/* Before the loop polls: the next batch, while jobs and room remain. */
static void on_more(struct ev_loop *ev, ev_prepare *w, int revents)
{
    fill((struct loop *)((char *)w - offsetof(struct loop, more)));
}

/* Active while a batch waits: the loop polls without blocking, since the
 * new transfers leave libcurl no 0 ms timer to say so. */
static void on_spin(struct ev_loop *ev, ev_idle *w, int revents)
{
}

/* The core woke the loop (a job came, a cancel), or something came due. */
static void on_wake(struct ev_loop *ev, ev_async *w, int revents)
{
    fill((struct loop *)((char *)w - offsetof(struct loop, wake)));
}

static void on_due(struct ev_loop *ev, ev_timer *w, int revents)
{
    fill((struct loop *)((char *)w - offsetof(struct loop, due)));
}

struct loops {
    struct loop *v;
    int n;
};

/* The core's waker, from whichever thread: every loop looks again. */
static void wake_loops(void *data)
{
    struct loops *ls = data;
    for (int i = 0; i < ls->n; i++)
        ev_async_send(ls->v[i].ev, &ls->v[i].wake);
}

static void on_poll(struct ev_loop *ev, ev_prepare *w, int revents)
{
    crawl_waiting(((struct loop *)((char *)w - offsetof(struct loop, poll)))->c);
}

static int loop_init(struct loop *L, struct crawl *c, int idx, int limit,
                     struct parse_pool *pool, struct fetch_defer *defer)
{
    memset(L, 0, sizeof *L);
    L->c = c;
    L->idx = idx;
    L->limit = limit;
    L->pool = pool;
    L->defer = pool ? defer : NULL;
    if (!(L->ev = ev_loop_new(EVFLAG_AUTO)))
        return CRAWL_ENOMEM;
    if (!(L->stack = coro_stack_new(crawl_options(c)->stack_size)))
        goto err;
    if (!(L->share = fetch_share_new_local()))
        goto err;
    /* With a limit, as many idle connections as the limit are kept. */
    if (!(L->multi = multi_ev_new(L->ev, SHARD_CAP, limit > 0 ? limit : 0, on_done, on_drained,
                                  L))) {
        fetch_share_free(L->share);
        coro_stack_free(L->stack);
        ev_loop_destroy(L->ev);
        return CRAWL_ECURL;
    }
    ev_timer_init(&L->due, on_due, 0., 0.);
    ev_prepare_init(&L->more, on_more);
    ev_idle_init(&L->spin, on_spin);
    ev_async_init(&L->wake, on_wake);
    ev_async_start(L->ev, &L->wake);
    ev_prepare_init(&L->poll, on_poll);
    ev_prepare_start(L->ev, &L->poll);
    ev_async_init(&L->parsed, on_parsed);
    ev_async_start(L->ev, &L->parsed);
    pthread_mutex_init(&L->back_lock, NULL);
    return 0;
err:
    coro_stack_free(L->stack);
    ev_loop_destroy(L->ev);
    return CRAWL_ENOMEM;
}

static void loop_free(struct loop *L)
{
    struct task *t;
    while ((t = L->free_tasks)) {
        L->free_tasks = t->next;
        task_free(t);
    }
    /* Tasks still busy here were abandoned by a fatal error; their jobs
     * are marked cancelled by the core. */
    while ((t = L->busy)) {
        busy_unlink(L, t);
        multi_ev_remove(L->multi, &t->x);
        task_free(t);
    }
    multi_ev_free(L->multi);
    fetch_share_free(L->share);     /* after every handle using it */
    coro_stack_free(L->stack);
    ev_timer_stop(L->ev, &L->due);
    ev_prepare_stop(L->ev, &L->more);
    ev_idle_stop(L->ev, &L->spin);
    ev_async_stop(L->ev, &L->wake);
    ev_prepare_stop(L->ev, &L->poll);
    ev_async_stop(L->ev, &L->parsed);
    ev_loop_destroy(L->ev);
    pthread_mutex_destroy(&L->back_lock);
}

static void loop_run(struct loop *L)
{
    fill(L);
    if (!(L->over && L->in_flight == 0))
        ev_run(L->ev, 0);
}

static void *loop_thread(void *arg)
{
    loop_run(arg);
    return NULL;
}

/* The parse pool of a crawl that parses pages: --parse-threads, by default
 * the online CPUs the loops leave free. None when no page is parsed, or
 * when its threads cannot start: the loops then parse as pages arrive. */
static struct parse_pool *parse_pool_for(struct crawl *c, int nloops)
{
    const struct crawl_opts *o = crawl_options(c);
    if (!o->rules || (o->depth <= 0 && html_rules_nextract(o->rules) == 0))
        return NULL;
    int n = o->parse_threads >= 0 ? o->parse_threads : parse_pool_default(nloops);
    return n > 0 ? parse_pool_new(n) : NULL;
}

static int coro_run(struct crawl *c)
{
    int nloops = crawl_options(c)->loops > 0 ? crawl_options(c)->loops : 1;
    size_t limit = crawl_limit(c) > 0 ? (size_t)crawl_limit(c) : 0;
    int rc = 0;
    struct loop *loops = calloc((size_t)nloops, sizeof *loops);
    if (!loops)
        return CRAWL_ENOMEM;
    struct fetch_defer defer = { .max = FETCH_DEFER_MAX };
    struct parse_pool *pool = parse_pool_for(c, nloops);
    int per = limit ? (int)((limit + (size_t)nloops - 1) / (size_t)nloops) : 0;
    int made = 0;
    for (; made < nloops; made++)
        if ((rc = loop_init(&loops[made], c, made, per, pool, &defer)) != 0)
            goto out;
    crawl_set_threads(c, nloops + parse_pool_size(pool));
    struct loops all = { loops, made };
    crawl_set_waker(c, wake_loops, &all);
    int started = 1;
    for (int i = 1; i < nloops; i++) {
        if (pthread_create(&loops[i].tid, NULL, loop_thread, &loops[i]) != 0)
            break;
        started++;
    }
    loop_run(&loops[0]);
    for (int i = 1; i < started; i++)
        pthread_join(loops[i].tid, NULL);
    crawl_set_waker(c, NULL, NULL);
out:
    parse_pool_free(pool);      /* every page it has goes back first */
    for (int i = 0; i < made; i++)
        loop_free(&loops[i]);
    free(loops);
    return rc;
}

const struct crawl_backend crawl_backend_coro = {
    .name = "coro",
    .summary = "coroutines on a libev loop driving libcurl's multi-socket API",
    .manual = "Coroutines on a libev loop driving libcurl's multi-socket "
              "interface; each URL is a stackful coroutine suspended until its transfer "
              "is done. --loops N runs N loops on N threads.",
    .default_concurrency = 0,
    .fds_per_transfer = 1,      /* its socket; each multi's wakeup pair is in the core's 1% */
    .options = CRAWL_MODEL_LOOPS | CRAWL_MODEL_STACK | CRAWL_MODEL_PARSE_THREADS,
    .run = coro_run,
};

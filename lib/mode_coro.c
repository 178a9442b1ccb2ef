/* mode_coro.c: coroutines on an event loop (the article's asyncio + aiohttp
 * with asyncio.gather). One libev loop drives libcurl's multi-socket API as
 * curl's evhiperfifo.c example does; each URL is a stackful coroutine whose
 * code reads top to bottom: fetch() adds its transfer to the multi handle and
 * suspends the coroutine, and the loop resumes it when the transfer is done.
 * With --loops N, N threads each run a loop of their own over shared jobs.
 *
 * A loop spreads its transfers over several multi handles ("shards") of at
 * most SHARD_CAP transfers each: libcurl 7.88 keeps every connection to a
 * host in one list that it scans linearly when a connection closes or is
 * looked for, and hashes sockets into a fixed 911 slots, so one multi handle
 * with thousands of transfers to one host spends most of its time in those
 * scans (figures: scripts/results/tuning.txt). Up to SHARD_CAP in flight everything is in one shard, so that with reuse
 * every transfer can find every idle connection. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ev.h>

#include "coro.h"
#include "crawl.h"
#include "fetch.h"
#include "html.h"
#include "parse_pool.h"

struct loop;

#define SHARD_CAP 512

/* Transfers started per loop iteration at most; each is connected and its
 * request sent as it starts (see fill). Started all at once, thousands of
 * URLs keep the loop from polling: the 0 ms timers of all of them run
 * before any socket event, so every connect() comes before the first
 * request. With each transfer started whole, the batch size hardly changes
 * the start-up (4 to 256 alike); it bounds how long timers, completions and
 * cancellation wait behind new transfers. */
#define BATCH 32

/* One multi handle with its timer, driven by the loop's libev loop. */
struct shard {
    struct loop *L;
    CURLM *multi;
    ev_timer timer;             /* CURLMOPT_TIMERFUNCTION's one timer */
    int in_flight;
    struct shard *next;
};

/* One coroutine with the easy handle it fetches through. Tasks are kept on
 * a free list and rearmed (coro_reset, same easy handle, no curl_easy_reset)
 * so that a URL costs no mmap and no handle set-up. */
struct task {
    coro *co;
    struct fetch_xfer x;        /* x.easy stays with the task */
    struct loop *L;
    struct shard *sh;           /* the multi handle it is in, while in_multi */
    CURLcode rc;                /* the finished transfer's outcome */
    int in_multi;               /* added to the multi handle, not yet removed */
    int parsing;                /* its page is with the parse pool */
    struct parse_item item;     /* how it goes there */
    struct task *back_next;     /* on its loop's list of parsed pages */
    struct task *next;          /* free list, or the list of tasks in flight */
    struct task *prev;
};

/* Per-socket state, hung on the socket with curl_multi_assign. */
struct sock {
    ev_io io;
    struct shard *sh;
    struct sock *next_free;
    struct sock *next_fresh;    /* on the loop's list of sockets to try at once */
    unsigned char fresh;        /* on that list */
    unsigned char removed;      /* libcurl is done with it while on that list */
};

struct loop {
    struct crawl *c;
    int idx;
    struct ev_loop *ev;
    coro_stack *stack;          /* every task's coroutine runs on it */
    struct fetch_share *share;  /* DNS cache and TLS sessions of every task */
    struct shard *shards;
    struct shard *open;         /* where the next transfer goes, if not full */
    int shard_cap;
    ev_timer watch;             /* notices a cancelled crawl */
    ev_prepare more;            /* starts the next batch of transfers */
    ev_idle spin;               /* keeps the loop from blocking while it waits */
    ev_async wake;              /* another thread queued a job */
    ev_prepare poll;            /* the loop is about to poll: crawl_waiting */
    struct parse_pool *pool;    /* parses pages off the loop's thread, or NULL */
    struct fetch_defer *defer;  /* the bodies held for it */
    ev_async parsed;            /* a pool thread handed a page back */
    pthread_mutex_t back_lock;  /* guards back */
    struct task *back;          /* pages parsed, for the loop to finish */
    int limit;                  /* transfers in flight at most; 0: no limit */
    int in_flight;
    int over;                   /* the core has no more jobs for this loop */
    int filling;                /* in fill(), which act() may call again */
    int ntasks;                 /* tasks ever made: worker ids */
    struct task *free_tasks;
    struct task *busy;          /* tasks in flight, for cancellation */
    struct sock *free_socks;
    struct sock *fresh;         /* new sockets that wait for connect(), oldest first */
    struct sock **fresh_tail;
    int err;                    /* first fatal error */
    pthread_t tid;
};

/* CURLMOPT_SOCKETFUNCTION: start, change or stop the ev_io of a socket. */
static void on_io(struct ev_loop *ev, ev_io *w, int revents);

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
    struct shard *sh = userp;
    struct loop *L = sh->L;
    struct sock *sk = socketp;

    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            ev_io_stop(L->ev, &sk->io);
            curl_multi_assign(sh->multi, s, NULL);
            if (sk->fresh) {
                sk->removed = 1;    /* act() frees it */
            } else {
                sk->next_free = L->free_socks;
                L->free_socks = sk;
            }
        }
        return 0;
    }
    int kind = ((what & CURL_POLL_IN) ? EV_READ : 0) |
               ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    if (!sk) {
        if ((sk = L->free_socks))
            L->free_socks = sk->next_free;
        else if (!(sk = malloc(sizeof *sk)))
            return -1;      /* libcurl fails the transfer */
        sk->sh = sh;
        sk->fresh = sk->removed = 0;
        ev_io_init(&sk->io, on_io, s, kind);
        curl_multi_assign(sh->multi, s, sk);
        if (what == CURL_POLL_OUT) {
            sk->fresh = 1;
            sk->next_fresh = NULL;
            *L->fresh_tail = sk;
            L->fresh_tail = &sk->next_fresh;
        }
    } else {
        ev_io_stop(L->ev, &sk->io);
        ev_io_set(&sk->io, s, kind);
    }
    ev_io_start(L->ev, &sk->io);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: arm or stop the one timer. A 0 ms timeout arms
 * it to fire on the next loop iteration: calling curl_multi_socket_action
 * from in here would re-enter libcurl. */
static int on_timer_set(CURLM *m, long timeout_ms, void *userp)
{
    struct shard *sh = userp;
    struct ev_loop *ev = sh->L->ev;
    ev_timer_stop(ev, &sh->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&sh->timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(ev, &sh->timer);
    }
    return 0;
}

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

/* Ends the wait of t's coroutine with outcome rc: the transfer leaves the
 * multi handle here, on the loop's stack, and the coroutine goes on. */
static void complete(struct loop *L, struct task *t, CURLcode rc)
{
    if (t->in_multi) {
        curl_multi_remove_handle(t->sh->multi, t->x.easy);
        t->in_multi = 0;
        t->sh->in_flight--;
        if (!L->open || L->open->in_flight >= L->shard_cap)
            L->open = t->sh;
    }
    t->rc = rc;
    task_resume(L, t);
}

/* One drain of curl_multi_info_read after each curl_multi_socket_action.
 * The CURLMsg is read before the handle is removed: it is invalid after. */
static void drain(struct shard *sh)
{
    struct loop *L = sh->L;
    CURLMsg *msg;
    int left, finished = 0;
    while ((msg = curl_multi_info_read(sh->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURLcode rc = msg->data.result;
        struct fetch_xfer *x = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        complete(L, x->data, rc);
        finished++;
    }
    if (finished)
        fill(L);
}

/* One curl_multi_socket_action and its drain; then the same, with
 * CURL_CSELECT_OUT, for every socket that libcurl opened meanwhile and
 * waits to see writable. libcurl checks the socket itself (a poll() with no
 * wait) before it believes the hint, so a connect still in progress only
 * costs that check; one that is done (on loopback, connect() completes
 * before it returns) sends its request now instead of one loop iteration
 * later, and its socket is added to epoll once, for reading. The server
 * then finds the request with the connection instead of being woken twice. */
static void act(struct shard *sh, curl_socket_t fd, int action)
{
    struct loop *L = sh->L;
    int running;
    curl_multi_socket_action(sh->multi, fd, action, &running);
    drain(sh);
    while (L->fresh) {
        struct sock *sk = L->fresh;
        if (!(L->fresh = sk->next_fresh))
            L->fresh_tail = &L->fresh;
        sk->fresh = 0;
        if (sk->removed) {
            sk->next_free = L->free_socks;
            L->free_socks = sk;
            continue;
        }
        curl_multi_socket_action(sk->sh->multi, sk->io.fd, CURL_CSELECT_OUT, &running);
        drain(sk->sh);
    }
}

static void on_io(struct ev_loop *ev, ev_io *w, int revents)
{
    struct sock *sk = (struct sock *)w;
    int action = ((revents & EV_READ) ? CURL_CSELECT_IN : 0) |
                 ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    act(sk->sh, w->fd, action);
}

static void on_timer(struct ev_loop *ev, ev_timer *w, int revents)
{
    struct shard *sh = (struct shard *)((char *)w - offsetof(struct shard, timer));
    act(sh, CURL_SOCKET_TIMEOUT, 0);
}

/* A cancelled crawl abandons every transfer in flight: each coroutine wakes
 * with CURLE_ABORTED_BY_CALLBACK and records itself as cancelled. With
 * --retry, a retry whose time has come while transfers are in flight (no
 * transfer ending to look for it) starts from here, within 100 ms. */
static void on_watch(struct ev_loop *ev, ev_timer *w, int revents)
{
    struct loop *L = (struct loop *)((char *)w - offsetof(struct loop, watch));
    if (!crawl_is_cancelled(L->c)) {
        if (crawl_options(L->c)->retry > 0)
            fill(L);
        return;
    }
    struct task *t = L->busy, *next;
    for (; t; t = next) {
        next = t->next;
        if (!t->parsing)        /* a page being parsed comes back by itself */
            complete(L, t, CURLE_ABORTED_BY_CALLBACK);
    }
    fill(L);
}

static struct shard *shard_new(struct loop *L)
{
    struct shard *sh = calloc(1, sizeof *sh);
    if (!sh)
        return NULL;
    sh->L = L;
    if (!(sh->multi = curl_multi_init())) {
        free(sh);
        return NULL;
    }
    curl_multi_setopt(sh->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(sh->multi, CURLMOPT_SOCKETDATA, sh);
    curl_multi_setopt(sh->multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
    curl_multi_setopt(sh->multi, CURLMOPT_TIMERDATA, sh);
    /* libcurl keeps 4 idle connections per transfer in the multi handle,
     * counted when one is returned: when the transfers in flight dip (a
     * relay's jobs come as the coordinator sends them), it closes the
     * connections the next ones will want. With a limit, as many as the
     * limit are kept. */
    if (L->limit > 0)
        curl_multi_setopt(sh->multi, CURLMOPT_MAXCONNECTS, (long)L->limit);
    ev_timer_init(&sh->timer, on_timer, 0., 0.);
    sh->next = L->shards;
    L->shards = sh;
    return sh;
}

/* Returns a shard with room for one more transfer, made if need be. */
static struct shard *shard_pick(struct loop *L)
{
    if (L->open && L->open->in_flight < L->shard_cap)
        return L->open;
    for (struct shard *sh = L->shards; sh; sh = sh->next)
        if (sh->in_flight < L->shard_cap)
            return L->open = sh;
    return L->open = shard_new(L);
}

/* The coroutine's side of a fetch: hand the transfer to the loop and sleep
 * until it is done. Returns libcurl's outcome. */
static CURLcode task_fetch(struct task *t)
{
    struct shard *sh = shard_pick(t->L);
    if (!sh)
        return CURLE_OUT_OF_MEMORY;
    CURLMcode mc = curl_multi_add_handle(sh->multi, t->x.easy);
    if (mc != CURLM_OK)
        return CURLE_OUT_OF_MEMORY;
    t->sh = sh;
    sh->in_flight++;
    t->in_multi = 1;
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

/* Starts coroutines for queued jobs while the limit allows, BATCH at a
 * time: the rest wait for on_more. A loop with nothing in flight may wait
 * for jobs that other loops' transfers add. */
static void fill(struct loop *L)
{
    int started = 0;
    if (L->filling)
        return;
    L->filling = 1;
    while (!L->over && (L->limit == 0 || L->in_flight < L->limit)) {
        struct crawl_job *job;
        if (started == BATCH) {
            ev_prepare_start(L->ev, &L->more);
            ev_idle_start(L->ev, &L->spin);
            L->filling = 0;
            return;
        }
        int rc = crawl_next(L->c, &job, L->in_flight == 0);
        if (rc == CRAWL_EAGAIN)
            break;
        if (rc != 1) {
            L->over = 1;
            break;
        }
        struct task *t = task_get(L);
        if (!t) {
            crawl_fail(L->c, job, CRAWL_FAIL_OTHER,
                       "cannot start a coroutine: %s", strerror(errno ? errno : ENOMEM));
            continue;
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
        started++;
        /* The new transfer is due at once: let libcurl connect it now, and
         * send its request (see act), before the next one is made, rather
         * than all of the batch's at the next timer. The server then meets
         * most requests with their connections instead of being woken for
         * each. Not from inside the coroutine: a transfer that ends in that
         * call resumes its own coroutine on the same stack. */
        if (task_resume(L, t) && t->in_multi)
            act(t->sh, CURL_SOCKET_TIMEOUT, 0);
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

/* A job came from another thread (a streamed list, a relay): start it now
 * rather than when a transfer in flight ends. */
static void on_wake(struct ev_loop *ev, ev_async *w, int revents)
{
    fill((struct loop *)((char *)w - offsetof(struct loop, wake)));
}

struct loops {
    struct loop *v;
    int n;
};

/* crawl_on_queue's callback, from whichever thread queued the job. */
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
    L->shard_cap = SHARD_CAP;
    if (!(L->ev = ev_loop_new(EVFLAG_AUTO)))
        return CRAWL_ENOMEM;
    if (!(L->stack = coro_stack_new(crawl_options(c)->stack_size)))
        goto err;
    if (!(L->share = fetch_share_new_local()))
        goto err;
    if (!shard_new(L)) {
        fetch_share_free(L->share);
        coro_stack_free(L->stack);
        ev_loop_destroy(L->ev);
        return CRAWL_ECURL;
    }
    L->fresh_tail = &L->fresh;
    ev_prepare_init(&L->more, on_more);
    ev_idle_init(&L->spin, on_spin);
    ev_timer_init(&L->watch, on_watch, 0.1, 0.1);
    ev_timer_start(L->ev, &L->watch);
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
        if (t->in_multi)
            curl_multi_remove_handle(t->sh->multi, t->x.easy);
        task_free(t);
    }
    struct shard *sh;
    while ((sh = L->shards)) {
        L->shards = sh->next;
        ev_timer_stop(L->ev, &sh->timer);
        curl_multi_cleanup(sh->multi);
        free(sh);
    }
    struct sock *sk;
    while ((sk = L->fresh)) {       /* left only by an abandoned loop */
        L->fresh = sk->next_fresh;
        free(sk);
    }
    while ((sk = L->free_socks)) {
        L->free_socks = sk->next_free;
        free(sk);
    }
    fetch_share_free(L->share);     /* after every handle using it */
    coro_stack_free(L->stack);
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
    crawl_on_queue(c, wake_loops, &all);
    int started = 1;
    for (int i = 1; i < nloops; i++) {
        if (pthread_create(&loops[i].tid, NULL, loop_thread, &loops[i]) != 0)
            break;
        started++;
    }
    loop_run(&loops[0]);
    for (int i = 1; i < started; i++)
        pthread_join(loops[i].tid, NULL);
    crawl_on_queue(c, NULL, NULL);
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
    .default_concurrency = 0,
    .fds_per_transfer = 1,      /* its socket; each multi's wakeup pair is in the core's 1% */
    .run = coro_run,
};

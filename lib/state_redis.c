/* state_redis.c: the store of a crawl shared by many processes
 * (--frontier redis://HOST:PORT/NAME), in a Redis server, through hiredis.
 * Every key of crawl NAME starts with "crawl:NAME:":
 *   id            the crawl's marker, made with it: every script checks it
 *   meta          hash: the options, the seeding's progress, counters
 *                 (queued, leased, seen_n: what q, rq, p and seen must
 *                 hold; gen: the changes made, which never go back)
 *   seen          set of the URL hashes seen (8 bytes each)
 *   p             hash: page id -> record (depth, line, the URL's hash in hex,
 *                 url, scope, source, why, parent)
 *   listed        list: the records of the listed pages, for a recrawl
 *   v, vl         hashes: URL hash (hex) -> what a recrawl needs of its page:
 *                 when fetched, its validators; its links
 *   q, rq         lists of page ids: queued; given back by a silent worker
 *   wl:W          set of the ids worker W holds under its lease
 *   workers       sorted set: worker -> its last heartbeat (ms, server time)
 *   wsess         hash: worker -> its session, which reaping ends ('0':
 *                 ended; the hash is gone only when the server lost it)
 *   wreq, woff    hashes: worker -> its last request id; bytes of its output
 *                 that hold committed rows
 *   wfile         hash: output file (host:device:inode) -> its worker
 *   robots        hash: host -> its robots.txt as fetched
 *   seedlock      the worker reading the list in
 *   ho            hash: host -> the worker that holds it whole, or '-' and
 *                 the time its last holder let it go (ms, server time)
 *   hq:HOST       list of the ids parked for HOST's holder ('r' first: given
 *                 back by a silent worker)
 *   wh:W, whn:W   set of the hosts worker W holds; hash: host -> its pages
 *                 W holds under its lease
 *   h:HOST:run    hash: worker -> its transfers in flight to HOST, when
 *                 hosts are not leased whole
 *   h:HOST:next   the earliest start of HOST's next request (ms), likewise
 * Each change is one Lua script, atomic on the server, which first checks
 * that the crawl is there and whole (state_redis_lua.c). A worker that
 * falls silent for longer than its lease (killed, cut off) is reaped by
 * the next script any worker runs: its pages go back to the queue (rq,
 * taken first), its hosts are let go, its session ends and every later
 * script of it is refused, its commits first: its rows for pages others
 * now hold are never committed, and it cuts them off.
 *
 * A worker that keeps per-host rules leases hosts whole: the first page
 * of a host it leases makes the host its own (ho), the pages of the host
 * found or given back meanwhile are parked for it (hq:HOST) and leased by
 * it first, and it lets the host go at the commit that leaves it none,
 * so that its pacing, kept in memory, holds over all workers. A lease
 * that hands a host over says how long ago its last holder let it go,
 * which the new holder's delay counts from. A worker without per-host
 * rules takes pages of hosts nobody holds page by page: a host is then
 * shared by them all. Requests that change something
 * carry an id that grows, so that a request sent again after a lost
 * connection is not applied twice (a lease sent again returns the same
 * pages). Pages found are sent in batches, pipelined: a page's links reach
 * the server before the commit that marks the page done. Every request
 * has --frontier-retry seconds, connecting again included, and gives up
 * at once (after REDIS_GRACE) when the crawl is cancelled. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <hiredis/hiredis.h>

#include "clock.h"
#include "state_redis_internal.h"
#include "strbuf.h"

/* Entries of a batch of pages found, sent in one script. */
#define BATCH_MAX 512

/* A command's arguments, owned. req_at: the index of its request id,
 * given as it joins the commands to send (0: it carries none). */
struct cmd {
    int argc;
    int req_at;
    char **argv;
    size_t *len;
};

/* Commands in the order they go to the server. */
struct cmds {
    struct cmd *v;
    size_t n, cap;
};

/* A connection, with the digests of the scripts it loaded. */
struct conn {
    redisContext *ctx;
    char sha[NSCRIPTS][41];
};

struct rs {
    struct state base;
    struct redis_addr a;        /* the server, the crawl's prefix */
    char *worker;
    long lease_ms;
    double retry;
    long max_pages;
    char mark[40];              /* the crawl's marker, from hello */
    char sess[24];              /* this worker's session */
    long long gen;              /* the last change of the crawl seen (atomic) */
    char sha[NSCRIPTS][41];     /* the scripts' digests, the same on every connection */
    struct conn main, beat;     /* the crawl's; the heartbeat thread's */
    struct redis_wait w, bw;    /* their requests' time */
    /* Two locks, taken in this order: lock orders the requests that wait
     * for a reply (it is held while the server is asked; recursive: a
     * loader's callback may look robots.txt up); qlock guards what a
     * thread adds to be sent without waiting (the batch of pages found,
     * the pending commands, the request ids) and is never held while the
     * server is asked, so that finding a link never waits on a lease. */
    pthread_mutex_t lock, qlock;
    pthread_mutex_t errlock;    /* fail's first setting and err */
    uint64_t req;               /* the last request id given */
    struct cmds pend;           /* to send, in order, before the next request */
    struct cmd batch;           /* pages found, not yet a command */
    long elsewhere;             /* atomic */
    int seeding;                /* holds the seeding lock */
    atomic_int fail;            /* 0, or the first failure (STATE_E...): every
                                 * request fails from then on */
    int want_types;             /* a key of another type: name it */
    char wrongtype[300];        /* the server's WRONGTYPE reply, until named */
    int worker_ok;              /* registered: it says goodbye at the end */
    atomic_llong held_us;       /* until when (clock_now's microseconds) the
                                 * server holds this worker's lease for sure */
    double beat_ok;             /* when the last heartbeat the server took was
                                 * sent (the heartbeat thread's) */
    uint64_t back_off;          /* STATE_EBACK: the bytes of the output the
                                 * server's older copy holds committed */
    void (*warn)(const char *msg, void *data);
    void *warn_data;
    pthread_t beat_tid;
    int beating;
    pthread_mutex_t beat_lock;
    pthread_cond_t beat_cond;
    int beat_kick;              /* robots.txt files to send (beat_lock) */
    struct cmds robots_q;       /* robots.txt files fetched, to be sent at once
                                 * on the heartbeat's connection (qlock) */
    atomic_int stop;
    pthread_mutex_t change_lock;    /* guards change: taken around its calls */
    void (*change)(void *data);     /* state_on_change's */
    void *change_data;
    char err[512];
};

static void cmd_free(struct cmd *c)
{
    for (int i = 0; i < c->argc; i++)
        free(c->argv[i]);
    free(c->argv);
    free(c->len);
    memset(c, 0, sizeof *c);
}

/* Appends an argument of n bytes. Returns 0 or -1. */
static int cmd_arg(struct cmd *c, const void *s, size_t n)
{
    if ((c->argc & (c->argc - 1)) == 0 || c->argc == 0) {
        size_t cap = c->argc ? 2 * (size_t)c->argc : 8;
        char **a = realloc(c->argv, cap * sizeof *a);
        if (!a)
            return -1;
        c->argv = a;
        size_t *l = realloc(c->len, cap * sizeof *l);
        if (!l)
            return -1;
        c->len = l;
    }
    char *d = malloc(n + 1);
    if (!d)
        return -1;
    memcpy(d, s, n);
    d[n] = '\0';
    c->argv[c->argc] = d;
    c->len[c->argc++] = n;
    return 0;
}

static int cmd_str(struct cmd *c, const char *s)
{
    return cmd_arg(c, s, strlen(s));
}

static int cmd_num(struct cmd *c, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    return cmd_str(c, b);
}

/* Starts an EVALSHA of script s with the crawl's prefix, the worker, the
 * crawl's marker, the worker's session and the last change it saw: what
 * every script but hello checks first. */
static int cmd_eval(struct rs *r, struct cmd *c, int s)
{
    return cmd_str(c, "EVALSHA") || cmd_str(c, r->sha[s]) || cmd_str(c, "1") ||
           cmd_str(c, r->a.prefix) || cmd_str(c, r->worker) || cmd_str(c, r->mark) ||
           cmd_str(c, r->sess) || cmd_num(c, __atomic_load_n(&r->gen, __ATOMIC_RELAXED));
}

/* Appends the place of c's request id, given when c is sent (run). */
static int cmd_req(struct cmd *c)
{
    c->req_at = c->argc;
    return cmd_str(c, "0");
}

/* Says what failed (a request that could not be made), when nothing
 * failed before; returns -1. */
static int failf(struct rs *r, const char *fmt, const char *what)
{
    pthread_mutex_lock(&r->errlock);
    if (!r->fail)
        snprintf(r->err, sizeof r->err, fmt, what);
    pthread_mutex_unlock(&r->errlock);
    return -1;
}

/* Records the first failure: why (STATE_E...) and its text. */
static void latch(struct rs *r, int why, const char *fmt, const char *what)
{
    pthread_mutex_lock(&r->errlock);
    if (!r->fail) {
        snprintf(r->err, sizeof r->err, fmt, what);
        atomic_store(&r->fail, why);
    }
    pthread_mutex_unlock(&r->errlock);
}

static void cmds_free(struct cmds *l)
{
    for (size_t i = 0; i < l->n; i++)
        cmd_free(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Appends c (taken over) to l. Returns 0 or -1. */
static int cmds_add(struct cmds *l, struct cmd *c)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        struct cmd *p = realloc(l->v, cap * sizeof *p);
        if (!p)
            return -1;
        l->v = p, l->cap = cap;
    }
    l->v[l->n++] = *c;
    memset(c, 0, sizeof *c);
    return 0;
}

/* Moves the batch of pages found into the pending commands; qlock held. */
static int batch_close(struct rs *r)
{
    if (r->batch.argc == 0)
        return 0;
    return cmds_add(&r->pend, &r->batch) ? failf(r, "%s", "out of memory") : 0;
}

/* Queues command c (taken over) after the pending ones; qlock held. */
static int pend_add(struct rs *r, struct cmd *c)
{
    if (batch_close(r) != 0)
        return -1;
    r->batch = *c;
    memset(c, 0, sizeof *c);
    return batch_close(r);
}

/* Connects cn within w's time and loads the scripts. Returns 0 or an RW_
 * code with the reason in err (size n). */
static int conn_open(struct rs *r, struct conn *cn, struct redis_wait *w, char *err,
                     size_t n)
{
    if (cn->ctx)
        redisFree(cn->ctx);
    cn->ctx = NULL;
    redisContext *x;
    int rc = redis_connect(&r->a, w, &x, err, n);
    if (rc != 0)
        return rc;
    for (int i = 0; i < NSCRIPTS && rc == 0; i++)
        if (redisAppendCommand(x, "SCRIPT LOAD %s", redis_scripts[i]) != REDIS_OK)
            rc = RW_IO;
    for (int i = 0; i < NSCRIPTS && rc == 0; i++) {
        redisReply *y = NULL;
        rc = redis_read(x, &y, w);
        if (rc != 0) {
            redis_wait_text(rc, w, x, &r->a, err, n);
            break;
        }
        if (y->type == REDIS_REPLY_STRING && y->len == 40) {
            memcpy(cn->sha[i], y->str, 41);
            if (!r->sha[i][0])
                memcpy(r->sha[i], y->str, 41);
        } else {
            snprintf(err, n, "redis at %s:%d: %s", r->a.host, r->a.port,
                     y->type == REDIS_REPLY_ERROR ? y->str : "cannot load the scripts");
            rc = RW_IO;
        }
        freeReplyObject(y);
    }
    if (rc != 0) {
        redisFree(x);
        return rc;
    }
    cn->ctx = x;
    return 0;
}

/* Takes what the error reply s says. A server busy for now (loading its
 * data, running a long script) returns 1: the request goes again. Else
 * the failure is latched and -1 returned: the crawl's data lost, keys not
 * the crawl's (a WRONGTYPE is named afterwards, want_types), this worker
 * reaped, the server full or any other refusal. */
static int classify(struct rs *r, const char *s)
{
    static const char *const later[] = { "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN" };
    for (size_t i = 0; i < sizeof later / sizeof *later; i++)
        if (strncmp(s, later[i], strlen(later[i])) == 0)
            return 1;
    const char *p;
    char lapsed[300];
    if ((p = strstr(s, REDIS_LOST))) {
        latch(r, STATE_ELOST, "the server lost this crawl's data (%s)", p + strlen(REDIS_LOST));
    } else if ((p = strstr(s, REDIS_FOREIGN))) {
        latch(r, STATE_ELOST, "the server does not hold this crawl (%s)",
              p + strlen(REDIS_FOREIGN));
    } else if ((p = strstr(s, REDIS_BACK))) {
        char what[300];
        unsigned long long off = 0;
        long long gen = 0, seen = 0;
        if (sscanf(p + strlen(REDIS_BACK), "%llu %lld %lld", &off, &gen, &seen) != 3) {
            latch(r, STATE_ELOST, "redis: %s", s);
            return -1;
        }
        snprintf(what, sizeof what, "the server went back to an older copy of this crawl "
                 "(at change %lld, after this worker saw change %lld: a restart that lost its "
                 "last writes); the same command goes on from it, fetching the pages done since "
                 "again",
                 gen, seen);
        pthread_mutex_lock(&r->errlock);
        if (!r->fail)
            r->back_off = off;
        pthread_mutex_unlock(&r->errlock);
        latch(r, STATE_EBACK, "%s", what);
    } else if (strstr(s, REDIS_REAPED)) {
        snprintf(lapsed, sizeof lapsed, "this worker's lease lapsed (the server heard nothing "
                 "from it for --lease %g s): its pages went to the other workers",
                 (double)r->lease_ms / 1000);
        latch(r, STATE_ELAPSED, "%s", lapsed);
    } else if (strstr(s, "WRONGTYPE")) {
        /* Latched once the key is named (name_wrong_key), so that the
         * text is written once, before anyone reads it. */
        snprintf(r->wrongtype, sizeof r->wrongtype, "%s", s);
        r->want_types = 1;
    } else if (strncmp(s, "OOM", 3) == 0) {
        latch(r, STATE_ELOST, "the server's memory is full (%s)", s);
    } else {
        latch(r, STATE_ELOST, "redis: %s", s);
    }
    return -1;
}

/* What exchange found. */
enum { X_DONE, X_AGAIN, X_FAIL };

/* Drops the main connection (its replies can no longer be matched). */
static void conn_drop(struct conn *cn)
{
    if (cn->ctx)
        redisFree(cn->ctx);
    cn->ctx = NULL;
}

/* Sends the commands of l and then c (NULL: none) on the main connection
 * and reads their replies; the answered ones leave l. Returns X_DONE with
 * c's reply in *last (NULL without c), X_AGAIN when the connection must
 * be made again (lost; a restarted server without the scripts; a server
 * busy for now) and what is unanswered sent again, or X_FAIL with the
 * failure latched. lock is held, qlock not. */
static int exchange(struct rs *r, struct cmds *l, struct cmd *c, redisReply **last)
{
    redisContext *x = r->main.ctx;
    size_t want = l->n + (c ? 1 : 0), done = 0;
    int rc = X_DONE;
    for (size_t i = 0; rc == X_DONE && i < l->n; i++)
        if (redisAppendCommandArgv(x, l->v[i].argc, (const char **)l->v[i].argv,
                                   l->v[i].len) != REDIS_OK)
            rc = X_AGAIN;
    if (rc == X_DONE && c &&
        redisAppendCommandArgv(x, c->argc, (const char **)c->argv, c->len) != REDIS_OK)
        rc = X_AGAIN;
    while (rc == X_DONE && done < want) {
        redisReply *y = NULL;
        int wrc = redis_read(x, &y, &r->w);
        if (wrc == RW_IO) {
            rc = X_AGAIN;
        } else if (wrc != 0) {
            char why[512];
            redis_wait_text(wrc, &r->w, x, &r->a, why, sizeof why);
            latch(r, STATE_EUNREACHABLE, "%s", why);
            rc = X_FAIL;
        } else if (y->type == REDIS_REPLY_ERROR) {
            rc = strncmp(y->str, "NOSCRIPT", 8) == 0 || classify(r, y->str) > 0 ? X_AGAIN
                                                                                 : X_FAIL;
            freeReplyObject(y);
        } else if (done < l->n) {
            freeReplyObject(y);
            cmd_free(&l->v[done++]);
        } else {
            *last = y;
            done++;
        }
    }
    size_t gone = done < l->n ? done : l->n;
    if (gone) {
        memmove(l->v, l->v + gone, (l->n - gone) * sizeof *l->v);
        l->n -= gone;
    }
    if (rc != X_DONE)
        conn_drop(&r->main);
    return rc;
}

/* Makes the main connection again, with a growing pause between tries,
 * within the request's time. Returns 0, or -1 with the failure latched
 * (the last attempt's reason: refused, no reply, interrupted). */
static int reconnect(struct rs *r)
{
    double pause = 0.05;
    char err[512];
    for (;;) {
        int rc = conn_open(r, &r->main, &r->w, err, sizeof err);
        if (rc == 0)
            return 0;
        if (rc == RW_IO)
            rc = redis_nap(&r->w, pause);
        if (rc == RW_CANCELLED)
            redis_wait_text(rc, &r->w, NULL, &r->a, err, sizeof err);
        if (rc != 0) {
            latch(r, STATE_EUNREACHABLE, "%s", err);
            return -1;
        }
        pause = pause * 2 > 2 ? 2 : pause * 2;
    }
}

/* Runs script (with arg, if not NULL) on a connection of its own, made
 * and closed here within w's time: the main one may be the lost one, and
 * every request on it fails once a failure is latched. Returns the reply
 * (the caller's, to freeReplyObject), or NULL. */
static redisReply *side_eval(struct rs *r, struct redis_wait *w, int script, const char *arg)
{
    redisContext *x;
    char err[300];
    if (redis_connect(&r->a, w, &x, err, sizeof err) != 0)
        return NULL;
    const char *argv[] = { "EVAL", redis_scripts[script], "1", r->a.prefix, r->worker,
                           r->mark, r->sess, "0", arg };
    int rc;
    redisReply *y = redis_call(x, arg ? 9 : 8, argv, NULL, w, &rc);
    redisFree(x);
    return y;
}

/* After a WRONGTYPE: names the key of another type (the types script),
 * on a connection of its own, if the server answers in a second, and
 * latches the failure with it (or with the server's reply). */
static void name_wrong_key(struct rs *r)
{
    struct redis_wait w = r->w;
    redis_wait_begin(&w, 1);
    r->want_types = 0;
    redisReply *y = side_eval(r, &w, S_TYPES, NULL);
    const char *p = y && y->type == REDIS_REPLY_ERROR ? strstr(y->str, REDIS_FOREIGN) : NULL;
    latch(r, STATE_ELOST, "the server does not hold this crawl (%s)",
          p ? p + strlen(REDIS_FOREIGN) : r->wrongtype);
    if (y)
        freeReplyObject(y);
}

/* Takes the pending commands into l, c's request id given after theirs;
 * qlock is taken here. Returns 0 or -1. */
static int take_pending(struct rs *r, struct cmd *c, struct cmds *l)
{
    pthread_mutex_lock(&r->qlock);
    int rc = batch_close(r);
    memset(l, 0, sizeof *l);
    if (rc == 0 && c && c->req_at > 0) {
        char b[32];
        int n = snprintf(b, sizeof b, "%llu", (unsigned long long)++r->req);
        char *d = strdup(b);
        if (d) {
            free(c->argv[c->req_at]);
            c->argv[c->req_at] = d;
            c->len[c->req_at] = (size_t)n;
        } else {
            rc = failf(r, "%s", "out of memory");
        }
    }
    /* Out of memory: what is pending stays, for the next request. */
    if (rc == 0) {
        *l = r->pend;
        memset(&r->pend, 0, sizeof r->pend);
    }
    pthread_mutex_unlock(&r->qlock);
    return rc;
}

/* Sends the commands of l and then c (NULL: none), reads their replies,
 * and returns c's (the caller's; never an error reply), or NULL with the
 * failure latched and r->err saying why. A lost connection is made again
 * and everything not answered sent again, all within r->retry seconds of
 * the start. lock is held. */
static redisReply *run_list(struct rs *r, struct cmds *l, struct cmd *c)
{
    redis_wait_begin(&r->w, r->retry);
    double pause = 0;
    for (;;) {
        redisReply *last = NULL;
        int rc = r->main.ctx ? exchange(r, l, c, &last) : X_AGAIN;
        if (rc == X_DONE)
            return last;
        if (rc == X_FAIL) {
            if (r->want_types)
                name_wrong_key(r);
            return NULL;
        }
        /* The first try again at once (a server restarted); then with a
         * pause, for a server that says it is busy. */
        int nrc = pause > 0 ? redis_nap(&r->w, pause) : 0;
        if (nrc != 0) {
            char why[200];
            redis_wait_text(nrc, &r->w, NULL, &r->a, why, sizeof why);
            latch(r, STATE_EUNREACHABLE, "%s", why);
            return NULL;
        }
        pause = pause == 0 ? 0.05 : pause * 2 > 2 ? 2 : pause * 2;
        if (reconnect(r) != 0)
            return NULL;
    }
}

/* Sends the pending commands and then c (NULL: none): run_list's, with
 * lock held, which orders the requests: a thread that adds to the pending
 * ones meanwhile (qlock) does not wait for the reply. */
static redisReply *run(struct rs *r, struct cmd *c)
{
    if (r->fail)
        return NULL;
    struct cmds l;
    redisReply *rep = take_pending(r, c, &l) == 0 ? run_list(r, &l, c) : NULL;
    cmds_free(&l);
    return rep;
}

/* Runs c and frees it; returns its reply (NULL: r->err says why). */
static redisReply *run_cmd(struct rs *r, struct cmd *c)
{
    redisReply *rep = run(r, c);
    cmd_free(c);
    return rep;
}

static const char *rs_error(struct state *st)
{
    return ((struct rs *)st)->err;
}

static int rs_failure(struct state *st)
{
    return atomic_load(&((struct rs *)st)->fail);
}

static uint64_t rs_back_offset(struct state *st)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->errlock);
    uint64_t off = r->back_off;
    pthread_mutex_unlock(&r->errlock);
    return off;
}

/* The worker's offset as the server holds it (the get script's
 * "offset"), asked on a connection of its own. */
static int rs_lapsed_offset(struct state *st, uint64_t *offset)
{
    struct rs *r = (struct rs *)st;
    struct redis_wait w = { 0 };
    redis_wait_begin(&w, 2);
    redisReply *y = side_eval(r, &w, S_GET, "offset");
    int got = -1;
    char *end;
    if (y && y->type == REDIS_REPLY_STRING) {
        errno = 0;
        unsigned long long v = strtoull(y->str, &end, 10);
        if (errno == 0 && end != y->str && !*end) {
            *offset = v;
            got = 0;
        }
    }
    if (y)
        freeReplyObject(y);
    return got;
}

/* The next request id; qlock held. */
static long long next_req(struct rs *r)
{
    return (long long)++r->req;
}

/* Notes a change of the crawl the server reported (a lease's, a
 * commit's): no later script may find the crawl at an older one. */
static void saw_change(struct rs *r, long long gen)
{
    if (gen > __atomic_load_n(&r->gen, __ATOMIC_RELAXED))
        __atomic_store_n(&r->gen, gen, __ATOMIC_RELAXED);
}

/* A URL hash as the keys of v and vl (and records) name it: its 8 bytes,
 * as the seen set holds them, in hex. out has room for 17 bytes. */
static void hash_hex(uint64_t h, char *out)
{
    unsigned char b[8];
    memcpy(b, &h, sizeof b);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* A page's record: depth, line, its URL's hash in hex (empty for none),
 * url, scope, source, why, parent and its host's key, each ended by a NUL
 * (an absent one is empty). A record that ends after why has no parent;
 * one that ends after parent, no host key (the scripts then read the
 * host from the URL). */
static int rec_make(struct cmd *c, const struct state_page *p)
{
    char head[96], hex[17] = "";
    if (p->hash)
        hash_hex(p->hash, hex);
    int k = snprintf(head, sizeof head, "%d%c%ld%c%s%c", p->depth, 0, p->line, 0, hex, 0);
    struct strbuf b = { 0 };
    const char *s[6] = { p->url, p->scope, p->source, p->why, p->parent, p->host };
    sb_add(&b, head, (size_t)k);
    for (int i = 0; i < 6; i++)
        sb_add(&b, s[i] ? s[i] : "", s[i] ? strlen(s[i]) + 1 : 1);
    int rc = b.nomem ? -1 : cmd_arg(c, b.data, b.len);
    sb_free(&b);
    return rc;
}

/* Reads a URL hash in hex (hash_hex's) into *h: 0, or -1. */
static int hex_hash(const char *s, uint64_t *h)
{
    unsigned char b[8];
    if (strlen(s) != 16)
        return -1;
    for (int i = 0; i < 8; i++)
        if (sscanf(s + 2 * i, "%2hhx", &b[i]) != 1)
            return -1;
    memcpy(h, b, sizeof b);
    return 0;
}

/* Reads record s (n bytes) into p, whose strings point into s. */
static int rec_read(const char *s, size_t n, struct state_page *p)
{
    const char *f[8] = { 0 }, *end = s + n;
    for (int i = 0; i < 8; i++) {
        const char *z = memchr(s, '\0', (size_t)(end - s));
        if (!z && i < 7)
            return -1;
        if (!z)
            break;
        f[i] = s;
        s = z + 1;
    }
    *p = (struct state_page){
        .depth = atoi(f[0]), .line = atol(f[1]), .url = f[3],
        .scope = *f[4] ? f[4] : NULL, .source = *f[5] ? f[5] : NULL, .why = *f[6] ? f[6] : NULL,
        .parent = f[7] && *f[7] ? f[7] : NULL,
    };
    return *f[2] && hex_hash(f[2], &p->hash) != 0 ? -1 : 0;
}

/* Reads the head of a recrawl's record of a page (fetched at, flags,
 * ETag, Last-Modified, each ended by a NUL), s of n bytes, into v, whose
 * strings point into s; its links are links[0..ln). 0, or -1. */
static int valid_read(const char *s, size_t n, const char *links, size_t ln,
                      struct state_valid *v)
{
    const char *f[4], *end = s + n;
    for (int i = 0; i < 4; i++) {
        const char *z = memchr(s, '\0', (size_t)(end - s));
        if (!z)
            return -1;
        f[i] = s;
        s = z + 1;
    }
    int has = atoi(f[1]);
    *v = (struct state_valid){
        .fetched_at = strtoll(f[0], NULL, 10), .etag = has & 1 ? f[2] : NULL,
        .modified = has & 2 ? f[3] : NULL, .has_links = (has & 4) != 0, .links = links,
        .links_len = ln,
    };
    return 0;
}

/* Adds an entry to the batch of pages found: kind (S, L or F), the hash
 * (none when 0 and kind is L) and the record (NULL for S). */
static int batch_add(struct rs *r, char kind, uint64_t hash, const struct state_page *p)
{
    char h[9] = { kind };
    size_t hn = 1;
    if (hash || kind != 'L') {
        memcpy(h + 1, &hash, 8);
        hn = 9;
    }
    if (r->batch.argc == 0 &&
        (cmd_eval(r, &r->batch, S_ADMIT) || cmd_num(&r->batch, next_req(r))))
        return failf(r, "%s", "out of memory");
    if (cmd_arg(&r->batch, h, hn) != 0 ||
        (p ? rec_make(&r->batch, p) : cmd_arg(&r->batch, "", 0)) != 0)
        return failf(r, "%s", "out of memory");
    if (r->batch.argc >= 2 * BATCH_MAX + 9 && batch_close(r) != 0)
        return -1;
    return 0;
}

static int rs_seen_add(struct state *st, uint64_t hash)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : batch_add(r, 'S', hash, NULL);
    pthread_mutex_unlock(&r->qlock);
    return rc < 0 ? -1 : 1;
}

static int rs_queue_add(struct state *st, const struct state_page *p, uint64_t *id)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : batch_add(r, 'L', 0, p);
    pthread_mutex_unlock(&r->qlock);
    *id = 0;
    return rc;
}

/* A page found joins the shared queue; it is not placed in this process's
 * memory (0), whoever leases it will fetch it. */
static int rs_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : batch_add(r, 'F', hash, p);
    pthread_mutex_unlock(&r->qlock);
    *id = 0;
    return rc;
}

/* Reads a leased page's idle field x (ms; empty: its host was not handed
 * over) into p. Returns 0, or -1 when it is not a time. */
static int idle_read(const redisReply *x, struct state_page *p)
{
    char *end;
    p->host_handed = x->len > 0;
    if (!x->len)
        return 0;
    p->host_idle = strtod(x->str, &end) / 1000;
    return end == x->str + x->len && p->host_idle >= 0 ? 0 : -1;
}

/* A lease's reply: {change, queued, leased elsewhere, id, record, kept,
 * idle...}; its pages go to fn, each with what the crawl kept of it (a
 * recrawl's) and, when the lease took its host from another worker, the
 * time since that one let it go. Returns how many, or -1. */
static int lease_read(struct rs *r, const redisReply *rep,
                      void (*fn)(uint64_t id, const struct state_page *p, void *data),
                      void *data)
{
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 || (rep->elements - 3) % 4 != 0 ||
        rep->element[0]->type != REDIS_REPLY_INTEGER ||
        rep->element[1]->type != REDIS_REPLY_INTEGER ||
        rep->element[2]->type != REDIS_REPLY_INTEGER) {
        latch(r, STATE_ELOST, "%s", "redis: an unexpected reply to a lease");
        return -1;
    }
    saw_change(r, rep->element[0]->integer);
    __atomic_store_n(&r->elsewhere, (long)(rep->element[1]->integer + rep->element[2]->integer),
                     __ATOMIC_RELAXED);
    int n = 0;
    for (size_t i = 3; i + 4 <= rep->elements; i += 4) {
        redisReply *k = rep->element[i], *v = rep->element[i + 1], *w = rep->element[i + 2],
                   *x = rep->element[i + 3];
        struct state_page p;
        struct state_valid kept;
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
            w->type != REDIS_REPLY_STRING || x->type != REDIS_REPLY_STRING ||
            rec_read(v->str, v->len, &p) != 0 ||
            (w->len && valid_read(w->str, w->len, NULL, 0, &kept) != 0) ||
            idle_read(x, &p) != 0) {
            latch(r, STATE_ELOST, "the server lost this crawl's data (%s)",
                  "a leased page's record is damaged");
            return -1;
        }
        p.valid = w->len ? &kept : NULL;
        fn(strtoull(k->str, NULL, 10), &p, data);
        n++;
    }
    return n;
}

static int rs_queue_load(struct state *st, uint64_t after, size_t max,
                         void (*fn)(uint64_t id, const struct state_page *p, void *data),
                         void *data)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    (void)after;
    pthread_mutex_lock(&r->lock);
    if (cmd_eval(r, &c, S_LEASE) || cmd_req(&c) || cmd_num(&c, (long long)max) ||
        cmd_num(&c, r->lease_ms) || cmd_num(&c, r->max_pages) || cmd_num(&c, r->base.whole)) {
        cmd_free(&c);
        pthread_mutex_unlock(&r->lock);
        return failf(r, "%s", "out of memory");
    }
    redisReply *rep = run_cmd(r, &c);
    int n = rep ? lease_read(r, rep, fn, data) : -1;
    if (rep)
        freeReplyObject(rep);
    pthread_mutex_unlock(&r->lock);
    return n;
}

static long rs_elsewhere(struct state *st)
{
    return __atomic_load_n(&((struct rs *)st)->elsewhere, __ATOMIC_RELAXED);
}

/* A named value of the crawl (the get script) as a number; *v is left
 * alone when there is none. Returns 0 or -1. */
static int get_num(struct rs *r, const char *name, int64_t *v)
{
    struct cmd c = { 0 };
    if (cmd_eval(r, &c, S_GET) || cmd_str(&c, name)) {
        cmd_free(&c);
        return failf(r, "%s", "out of memory");
    }
    redisReply *rep = run_cmd(r, &c);
    if (!rep)
        return -1;
    if (rep->type == REDIS_REPLY_STRING)
        *v = strtoll(rep->str, NULL, 10);
    freeReplyObject(rep);
    return 0;
}

static int rs_get(struct state *st, const char *key, int64_t *v)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->lock);
    int rc = get_num(r, key, v);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_set(struct state *st, const char *key, int64_t v)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : 0;
    if (rc == 0 && (cmd_eval(r, &c, S_SET) || cmd_str(&c, key) || cmd_num(&c, v) ||
                    pend_add(r, &c) != 0))
        rc = failf(r, "%s", "out of memory");
    /* The seeding is over (the script lets go of the lock). */
    if (rc == 0 && strcmp(key, "seed_done") == 0 && v)
        r->seeding = 0;
    cmd_free(&c);
    pthread_mutex_unlock(&r->qlock);
    return rc;
}

/* A script with no argument of its own whose reply is an integer:
 * returns it, or -1. */
static long long run_int(struct rs *r, int script)
{
    struct cmd c = { 0 };
    if (cmd_eval(r, &c, script)) {
        cmd_free(&c);
        return failf(r, "%s", "out of memory");
    }
    redisReply *rep = run_cmd(r, &c);
    long long n = rep && rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    if (rep && rep->type != REDIS_REPLY_INTEGER)
        latch(r, STATE_ELOST, "%s", "redis: an unexpected reply");
    if (rep)
        freeReplyObject(rep);
    return n;
}

static long rs_queue_left(struct state *st)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->lock);
    long n = (long)run_int(r, S_LEFT);
    pthread_mutex_unlock(&r->lock);
    return n;
}

static long rs_fetched(struct state *st)
{
    struct rs *r = (struct rs *)st;
    int64_t v = 0;
    pthread_mutex_lock(&r->lock);
    int rc = get_num(r, "fetched", &v);
    pthread_mutex_unlock(&r->lock);
    return rc ? -1 : (long)v;
}

/* A commit's marks (and offset, when off is not NULL) as a command. */
static int commit_cmd(struct rs *r, struct cmd *c, const uint64_t *marks, size_t n,
                      const char *off, char how)
{
    if (cmd_eval(r, c, S_COMMIT) || (off ? cmd_req(c) : cmd_num(c, next_req(r))) ||
        cmd_str(c, off ? off : ""))
        return -1;
    for (size_t i = 0; i < n; i++) {
        char b[40];
        uint64_t m = marks[i];
        char h = how ? how : (m & STATE_FAILED) ? 'x' : (m & STATE_FETCHED) ? 'f' : 0;
        snprintf(b, sizeof b, "%llu%s", (unsigned long long)(m & STATE_ID), h ? (char[]){ h, 0 } : "");
        if (cmd_str(c, b))
            return -1;
    }
    return 0;
}

static int rs_drop(struct state *st, uint64_t id)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : 0;
    if (rc == 0 && (commit_cmd(r, &c, &id, 1, NULL, 'd') || pend_add(r, &c)))
        rc = failf(r, "%s", "out of memory");
    cmd_free(&c);
    pthread_mutex_unlock(&r->qlock);
    return rc;
}

static int rs_commit(struct state *st, const uint64_t *marks, size_t n, uint64_t offset)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char off[32];
    snprintf(off, sizeof off, "%llu", (unsigned long long)offset);
    pthread_mutex_lock(&r->lock);
    int rc = -1;
    if (commit_cmd(r, &c, marks, n, off, 0) != 0) {
        cmd_free(&c);
        failf(r, "%s", "out of memory");
    } else {
        redisReply *rep = run_cmd(r, &c);
        if (rep && rep->type == REDIS_REPLY_INTEGER) {
            saw_change(r, rep->integer);
            rc = 0;
        } else if (rep) {
            latch(r, STATE_ELOST, "%s", "redis: an unexpected reply to a commit");
        }
        if (rep)
            freeReplyObject(rep);
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_robots_put(struct state *st, const char *host, long status, int fail,
                         const char *body, size_t len)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char head[48];
    int hn = snprintf(head, sizeof head, "%ld %d\n", status, fail);
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : 0;
    struct strbuf b = { 0 };
    sb_add(&b, head, (size_t)hn);
    if (len)
        sb_add(&b, body, len);
    /* Sent at once by the heartbeat's thread, not with the next request:
     * a worker killed meanwhile would take the only copy along, and the
     * host's next holder would ask for it again. */
    if (rc == 0 && (b.nomem || cmd_eval(r, &c, S_ROBOTS_PUT) || cmd_str(&c, host) ||
                    cmd_arg(&c, b.data, b.len) ||
                    (r->beating ? cmds_add(&r->robots_q, &c) : pend_add(r, &c))))
        rc = failf(r, "%s", "out of memory");
    int kick = rc == 0 && r->beating;
    sb_free(&b);
    cmd_free(&c);
    pthread_mutex_unlock(&r->qlock);
    if (kick) {
        pthread_mutex_lock(&r->beat_lock);
        r->beat_kick = 1;
        pthread_cond_signal(&r->beat_cond);
        pthread_mutex_unlock(&r->beat_lock);
    }
    return rc;
}

static int rs_robots_get(struct state *st, const char *host, long *status, int *fail,
                         char **body, size_t *len)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    pthread_mutex_lock(&r->lock);
    int rc = -1;
    if (cmd_eval(r, &c, S_ROBOTS_GET) || cmd_str(&c, host)) {
        cmd_free(&c);
        failf(r, "%s", "out of memory");
        goto out;
    }
    redisReply *rep = run_cmd(r, &c);
    if (!rep)
        goto out;
    rc = 0;
    const char *nl = rep->type == REDIS_REPLY_STRING ? memchr(rep->str, '\n', rep->len) : NULL;
    if (nl && sscanf(rep->str, "%ld %d", status, fail) == 2) {
        size_t n = rep->len - (size_t)(nl + 1 - rep->str);
        if ((*body = malloc(n + 1))) {
            memcpy(*body, nl + 1, n);
            (*body)[n] = '\0';
            *len = n;
            rc = 1;
        } else {
            rc = failf(r, "%s", "out of memory");
        }
    }
    freeReplyObject(rep);
out:
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_host_take(struct state *st, const char *host, int per_host, double delay,
                        double *wait)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    int rc = -1;
    pthread_mutex_lock(&r->lock);
    if (cmd_eval(r, &c, S_HOST) || cmd_str(&c, host) || cmd_num(&c, per_host) ||
        cmd_num(&c, (long long)(delay * 1000 + 0.5))) {
        cmd_free(&c);
        failf(r, "%s", "out of memory");
    } else {
        redisReply *rep = run_cmd(r, &c);
        if (rep && rep->type == REDIS_REPLY_INTEGER) {
            rc = rep->integer == 0;
            *wait = rep->integer < 0 ? 0.02 : (double)rep->integer / 1000;
        } else if (rep) {
            latch(r, STATE_ELOST, "%s", "redis: an unexpected reply to a host's turn");
        }
        if (rep)
            freeReplyObject(rep);
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static void rs_host_give(struct state *st, const char *host)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    pthread_mutex_lock(&r->qlock);
    if (!r->fail && (cmd_eval(r, &c, S_GIVE) || cmd_str(&c, host) || pend_add(r, &c) != 0))
        failf(r, "%s", "out of memory");
    cmd_free(&c);
    pthread_mutex_unlock(&r->qlock);
}

/* A script of this worker the server took, sent at sent (clock_now),
 * renewed its lease: the server reaps it no sooner than --lease after
 * that on its own clock. A tenth of the lease is left for the two clocks'
 * rates to differ. */
static void held_from(struct rs *r, double sent)
{
    long long until = (long long)((sent + 0.9 * (double)r->lease_ms / 1000) * 1e6);
    long long was = atomic_load(&r->held_us);
    while (until > was && !atomic_compare_exchange_weak(&r->held_us, &was, until))
        ;
}

static double rs_held_until(struct state *st)
{
    struct rs *r = (struct rs *)st;
    return r->worker_ok ? (double)atomic_load(&r->held_us) / 1e6 : 0;
}

/* No heartbeat taken for --frontier-retry seconds: the server is as lost
 * as one that gives a request no reply in that time, and the worker,
 * which may start no page meanwhile, stops the same way. */
static void beat_failed(struct rs *r)
{
    if (clock_now() - r->beat_ok < r->retry)
        return;
    char why[64];
    snprintf(why, sizeof why, "no reply in %g s", r->retry);
    latch(r, STATE_EUNREACHABLE, "%s", why);
}

/* Whether a heartbeat's error reply s means the end: this worker reaped,
 * the crawl lost or not the crawl's. */
static int beat_over(const char *s)
{
    return strstr(s, REDIS_LOST) || strstr(s, REDIS_FOREIGN) || strstr(s, REDIS_REAPED) ||
           strstr(s, REDIS_BACK) ||
           strstr(s, "WRONGTYPE");
}

/* The heartbeat thread's wait ends as soon as the store closes. */
static int beat_stopping(void *data)
{
    return atomic_load(&((struct rs *)data)->stop);
}

/* One heartbeat, on the beat thread's own connection (made again when
 * lost). Returns 1 when the server says the worker is gone or the crawl
 * is: no more beats then (the main connection learns of it on its next
 * request). */
static int beat_once(struct rs *r)
{
    char err[512], lease[32];
    double budget = (double)r->lease_ms / 4000;
    redis_wait_begin(&r->bw, budget > 0.5 ? budget : 0.5);
    double sent = clock_now();
    if (!r->beat.ctx && conn_open(r, &r->beat, &r->bw, err, sizeof err) != 0) {
        beat_failed(r);
        return 0;
    }
    snprintf(lease, sizeof lease, "%ld", r->lease_ms);
    /* The last change seen, so that a server gone back to an older copy
     * is known as such before the copy's sessions are looked at. */
    char seen[24];
    snprintf(seen, sizeof seen, "%lld", __atomic_load_n(&r->gen, __ATOMIC_RELAXED));
    const char *argv[] = { "EVALSHA", r->beat.sha[S_BEAT], "1", r->a.prefix, r->worker,
                           r->mark, r->sess, seen, lease };
    int rc, over = 0;
    redisReply *rep = redis_call(r->beat.ctx, 9, argv, NULL, &r->bw, &rc);
    if (rep && rep->type == REDIS_REPLY_ERROR)
        over = beat_over(rep->str);
    /* The end is latched here, for a worker that starts no page before a
     * heartbeat renews its lease. */
    if (over && strstr(rep->str, "WRONGTYPE"))
        latch(r, STATE_ELOST, "the server does not hold this crawl (%s)", rep->str);
    else if (over)
        classify(r, rep->str);
    if (rep && rep->type != REDIS_REPLY_ERROR) {
        held_from(r, sent);
        r->beat_ok = sent;
    } else if (!over) {
        beat_failed(r);
    }
    if (!rep || rep->type == REDIS_REPLY_ERROR)
        conn_drop(&r->beat);
    if (rep)
        freeReplyObject(rep);
    return over;
}

/* Sends the robots.txt files queued, pipelined, on the heartbeat's
 * connection (each one's own: no request id, and sending it twice does
 * no harm). What is not answered goes back to the queue, for the next
 * try or for the goodbye; a refusal is the main connection's to learn. */
static void robots_send(struct rs *r)
{
    struct cmds l;
    pthread_mutex_lock(&r->qlock);
    l = r->robots_q;
    memset(&r->robots_q, 0, sizeof r->robots_q);
    pthread_mutex_unlock(&r->qlock);
    if (l.n == 0)
        return;
    char err[512];
    double budget = (double)r->lease_ms / 4000;
    redis_wait_begin(&r->bw, budget > 0.5 ? budget : 0.5);
    size_t done = 0;
    if (r->beat.ctx || conn_open(r, &r->beat, &r->bw, err, sizeof err) == 0) {
        int ok = 1;
        for (size_t i = 0; ok && i < l.n; i++)
            ok = redisAppendCommandArgv(r->beat.ctx, l.v[i].argc, (const char **)l.v[i].argv,
                                        l.v[i].len) == REDIS_OK;
        while (ok && done < l.n) {
            redisReply *y = NULL;
            if (redis_read(r->beat.ctx, &y, &r->bw) != 0) {
                ok = 0;
                break;
            }
            /* A server started again lacks the scripts: the connection is
             * made again (which loads them) and the rest sent again. */
            int again = y->type == REDIS_REPLY_ERROR && strncmp(y->str, "NOSCRIPT", 8) == 0;
            freeReplyObject(y);
            if (again) {
                ok = 0;
                break;
            }
            done++;
        }
        if (!ok)
            conn_drop(&r->beat);
    }
    pthread_mutex_lock(&r->qlock);
    for (size_t i = done; i < l.n; i++)
        if (cmds_add(&r->robots_q, &l.v[i]) != 0)
            cmd_free(&l.v[i]);
    pthread_mutex_unlock(&r->qlock);
    for (size_t i = 0; i < done; i++)
        cmd_free(&l.v[i]);
    free(l.v);
}

static void rs_on_change(struct state *st, void (*fn)(void *data), void *data)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->change_lock);
    r->change = fn;
    r->change_data = data;
    pthread_mutex_unlock(&r->change_lock);
}

/* After a heartbeat, which alone renews the lease (held_from): tells
 * state_on_change's fn when it renewed a lease that had lapsed by then
 * (was: held_us before it), which a caller may have seen, or a failure
 * was latched (failed: the failure before it). No other lock of the
 * store is held. */
static void beat_told(struct rs *r, long long was, int failed)
{
    long long until = atomic_load(&r->held_us);
    int renewed = until > was && (double)was / 1e6 <= clock_now();
    if (!renewed && atomic_load(&r->fail) == failed)
        return;
    pthread_mutex_lock(&r->change_lock);
    if (r->change)
        r->change(r->change_data);
    pthread_mutex_unlock(&r->change_lock);
}

static void *beat_main(void *arg)
{
    struct rs *r = arg;
    double every = (double)r->lease_ms / 4000, next = clock_now() + every;
    pthread_mutex_lock(&r->beat_lock);
    while (!atomic_load(&r->stop)) {
        struct timespec ts = clock_timespec(next);
        if (!r->beat_kick && clock_now() < next)
            pthread_cond_timedwait(&r->beat_cond, &r->beat_lock, &ts);
        if (atomic_load(&r->stop))
            break;
        int kick = r->beat_kick;
        r->beat_kick = 0;
        pthread_mutex_unlock(&r->beat_lock);
        if (kick)
            robots_send(r);
        int over = 0;
        if (clock_now() >= next) {
            long long was = atomic_load(&r->held_us);
            int failed = atomic_load(&r->fail);
            over = beat_once(r);
            beat_told(r, was, failed);
            next = clock_now() + every;
        }
        pthread_mutex_lock(&r->beat_lock);
        if (over)
            break;
    }
    pthread_mutex_unlock(&r->beat_lock);
    return NULL;
}

static void rs_close(struct state *st)
{
    struct rs *r = (struct rs *)st;
    if (r->beating) {
        pthread_mutex_lock(&r->beat_lock);
        atomic_store(&r->stop, 1);
        pthread_cond_signal(&r->beat_cond);
        pthread_mutex_unlock(&r->beat_lock);
        pthread_join(r->beat_tid, NULL);
        r->beating = 0;
    }
    /* The robots.txt files not sent yet go with the goodbye. */
    for (size_t i = 0; i < r->robots_q.n; i++)
        if (cmds_add(&r->pend, &r->robots_q.v[i]) != 0)
            cmd_free(&r->robots_q.v[i]);
    free(r->robots_q.v);
    memset(&r->robots_q, 0, sizeof r->robots_q);
    /* A worker that ends gives back what it holds, at once; so does one
     * whose server went back to an older copy, what it holds in that copy
     * (nothing it had sent since goes: its pages are the copy's to give
     * out again), so that the same command joins it at once. */
    int back = atomic_load(&r->fail) == STATE_EBACK;
    if (r->worker_ok && (!r->fail || back)) {
        r->retry = r->retry < 2 ? r->retry : 2;
        struct cmd c = { 0 };
        struct cmds none = { 0 };
        redisReply *rep = NULL;
        if (back) {
            cmds_free(&r->pend);
            cmd_free(&r->batch);
            __atomic_store_n(&r->gen, 0, __ATOMIC_RELAXED);
            if (!cmd_eval(r, &c, S_BYE))
                rep = run_list(r, &none, &c);
        } else if (!cmd_eval(r, &c, S_BYE)) {
            rep = run(r, &c);
        }
        if (rep)
            freeReplyObject(rep);
        cmd_free(&c);
    }
    cmds_free(&r->pend);
    cmd_free(&r->batch);
    conn_drop(&r->main);
    conn_drop(&r->beat);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->qlock);
    pthread_mutex_destroy(&r->errlock);
    pthread_mutex_destroy(&r->beat_lock);
    pthread_mutex_destroy(&r->change_lock);
    pthread_cond_destroy(&r->beat_cond);
    free(r->worker);
    free(r);
}

static int rs_valid_put(struct state *st, uint64_t hash, const struct state_valid *v)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char hex[17];
    struct strbuf head = { 0 };
    hash_hex(hash, hex);
    if (v) {
        sb_printf(&head, "%lld", (long long)v->fetched_at);
        sb_addc(&head, '\0');
        sb_printf(&head, "%d", (v->etag ? 1 : 0) | (v->modified ? 2 : 0) | (v->has_links ? 4 : 0));
        sb_addc(&head, '\0');
        sb_add(&head, v->etag ? v->etag : "", v->etag ? strlen(v->etag) + 1 : 1);
        sb_add(&head, v->modified ? v->modified : "", v->modified ? strlen(v->modified) + 1 : 1);
    }
    pthread_mutex_lock(&r->qlock);
    int rc = r->fail ? -1 : 0;
    if (rc == 0 && (head.nomem || cmd_eval(r, &c, S_VPUT) || cmd_str(&c, hex) ||
                    cmd_arg(&c, head.data ? head.data : "", head.len) ||
                    cmd_arg(&c, v && v->links ? v->links : "", v ? v->links_len : 0) ||
                    pend_add(r, &c)))
        rc = failf(r, "%s", "out of memory");
    cmd_free(&c);
    sb_free(&head);
    pthread_mutex_unlock(&r->qlock);
    return rc;
}

static int rs_valid_get(struct state *st, uint64_t hash, struct state_valid *v, char **buf)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char hex[17];
    hash_hex(hash, hex);
    pthread_mutex_lock(&r->lock);
    int rc = -1;
    redisReply *rep = cmd_eval(r, &c, S_VGET) || cmd_str(&c, hex) ? NULL : run(r, &c);
    cmd_free(&c);
    if (rep && (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
                rep->element[0]->type != REDIS_REPLY_STRING ||
                rep->element[1]->type != REDIS_REPLY_STRING)) {
        latch(r, STATE_ELOST, "%s", "redis: an unexpected reply to a page's record");
    } else if (rep && rep->element[0]->len == 0) {
        rc = 0;
    } else if (rep) {
        const redisReply *h = rep->element[0], *l = rep->element[1];
        if (!(*buf = malloc(h->len + l->len + 1)))
            rc = failf(r, "%s", "out of memory");
        else {
            memcpy(*buf, h->str, h->len);
            memcpy(*buf + h->len, l->str, l->len);
            rc = valid_read(*buf, h->len, *buf + h->len, l->len, v) == 0 ? 1 : -1;
            if (rc < 0) {
                free(*buf);
                latch(r, STATE_ELOST, "the server lost this crawl's data (%s)",
                      "a page's record is damaged");
            }
        }
    }
    if (rep)
        freeReplyObject(rep);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_recrawl(struct state *st, double older, long *n)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    *n = 0;
    pthread_mutex_lock(&r->lock);
    int rc = -1;
    redisReply *rep = cmd_eval(r, &c, S_RECRAWL) || cmd_num(&c, (long long)time(NULL)) ||
                      cmd_num(&c, (long long)(older * 1000)) ? NULL : run(r, &c);
    cmd_free(&c);
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
        rep->element[0]->type == REDIS_REPLY_INTEGER) {
        rc = (int)rep->element[0]->integer;
        if (rc == 1 && rep->elements == 3 && rep->element[2]->type == REDIS_REPLY_INTEGER)
            *n = (long)rep->element[2]->integer;
    } else if (rep) {
        latch(r, STATE_ELOST, "%s", "redis: an unexpected reply to a recrawl");
    }
    if (rep)
        freeReplyObject(rep);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static const struct state_ops rs_ops = {
    .error = rs_error,
    .close = rs_close,
    .get = rs_get,
    .set = rs_set,
    .seen_add = rs_seen_add,
    .queue_add = rs_queue_add,
    .admit = rs_admit,
    .queue_load = rs_queue_load,
    .queue_left = rs_queue_left,
    .fetched = rs_fetched,
    .drop = rs_drop,
    .commit = rs_commit,
    .robots_put = rs_robots_put,
    .robots_get = rs_robots_get,
    .failure = rs_failure,
    .back_offset = rs_back_offset,
    .lapsed_offset = rs_lapsed_offset,
    .held_until = rs_held_until,
    .on_change = rs_on_change,
    .elsewhere = rs_elsewhere,
    .host_take = rs_host_take,
    .host_give = rs_host_give,
    .valid_put = rs_valid_put,
    .valid_get = rs_valid_get,
    .recrawl = rs_recrawl,
};

/* The first line where options a and b differ, as "name=x, not name=y". */
static void first_difference(const char *had, const char *now, char *why, size_t n)
{
    while (*had || *now) {
        size_t a = strcspn(had, "\n"), b = strcspn(now, "\n");
        if (a != b || memcmp(had, now, a) != 0) {
            if (!*had)      /* an option the crawl's version did not have */
                snprintf(why, n, "started by an earlier crawl without %.*s", (int)b, now);
            else
                snprintf(why, n, "started with %.*s, not %.*s", (int)a, had, (int)b, now);
            return;
        }
        had += a + (had[a] == '\n');
        now += b + (now[b] == '\n');
    }
    snprintf(why, n, "started with other options");
}

/* A new crawl's marker: 16 random bytes in hex (the clock and the process
 * when there is no randomness to be had). */
static void new_marker(char *out, size_t n)
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t v[2] = { (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                          (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL };
        memcpy(b, v, sizeof b);
    }
    for (size_t i = 0; i < sizeof b && 2 * i + 2 < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The hello script's reply, {"ok", last request, marker, session, change,
 * made}, read into r. Returns 1 when this worker made the crawl, 0, or
 * -1 for a reply of another shape. */
static int hello_read(struct rs *r, const redisReply *y)
{
    for (size_t i = 1; i < 6; i++)
        if (y->element[i]->type != REDIS_REPLY_STRING)
            return -1;
    if (y->element[2]->len >= sizeof r->mark || y->element[3]->len >= sizeof r->sess)
        return -1;
    r->req = strtoull(y->element[1]->str, NULL, 10);
    memcpy(r->mark, y->element[2]->str, y->element[2]->len + 1);
    memcpy(r->sess, y->element[3]->str, y->element[3]->len + 1);
    r->gen = strtoll(y->element[4]->str, NULL, 10);
    return strcmp(y->element[5]->str, "1") == 0;
}

/* Registers this worker with the crawl (making it when the server holds
 * none): options opts, output output_id. Returns 1 when it made the
 * crawl, 0, or a STATE_E... code with why (size n). A crawl refused
 * because its keys are not whole or not the crawl's is left as it was. */
static int hello(struct rs *r, const char *opts, const char *output_id, char *why, size_t n)
{
    char mark[40] = "", lease[32];
    new_marker(mark, sizeof mark);
    snprintf(lease, sizeof lease, "%ld", r->lease_ms);
    struct cmd c = { 0 };
    const char *argv[] = { "EVALSHA", r->main.sha[S_HELLO], "1", r->a.prefix, r->worker, mark,
                           opts, lease, output_id ? output_id : r->worker };
    for (size_t i = 0; i < sizeof argv / sizeof *argv; i++)
        if (cmd_str(&c, argv[i])) {
            cmd_free(&c);
            snprintf(why, n, "out of memory");
            return STATE_EREFUSED;
        }
    redisReply *y = run_cmd(r, &c);
    if (!y) {
        snprintf(why, n, "%s%s", r->err, r->fail == STATE_ELOST ? "; left as it was" : "");
        return r->fail == STATE_ELOST ? STATE_ELOST : STATE_EUNREACHABLE;
    }
    int rc = STATE_ELOST;
    const char *st = y->type == REDIS_REPLY_ARRAY && y->elements >= 2 &&
                     y->element[0]->type == REDIS_REPLY_STRING ? y->element[0]->str : "";
    const char *v = *st && y->element[1]->type == REDIS_REPLY_STRING ? y->element[1]->str : "";
    if (strcmp(st, "opts") == 0) {
        first_difference(v, opts, why, n);
        rc = STATE_EREFUSED;
    } else if (strcmp(st, "busy") == 0) {
        snprintf(why, n, "another worker writing %s is running (or was killed less than "
                 "--lease seconds ago)", v);
        rc = STATE_EREFUSED;
    } else if (strcmp(st, "ok") == 0 && y->elements == 6 && (rc = hello_read(r, y)) >= 0) {
        r->worker_ok = 1;
    } else {
        snprintf(why, n, "redis at %s:%d: an unexpected reply", r->a.host, r->a.port);
        rc = STATE_ELOST;
    }
    freeReplyObject(y);
    return rc;
}

/* Warns of the server's settings that put a shared crawl at risk
 * (state_redis_settings.c). */
static void check_settings(struct rs *r, int made)
{
    if (!r->warn || !r->main.ctx)
        return;
    redis_wait_begin(&r->w, r->retry < 2 ? r->retry : 2);
    if (redis_check_settings(r->main.ctx, &r->w, made, r->warn, r->warn_data) != 0)
        conn_drop(&r->main);        /* made again by the next request */
}

/* Whether the crawl was cancelled (the store's conf says). */
static int cancelled(struct rs *r)
{
    return r->w.cancelled && r->w.cancelled(r->w.data);
}

/* Takes the seeding lock, or waits until whoever holds it has seeded.
 * Returns 1 when this worker seeds, 0 when the seeding is done, -1 (the
 * lock not a worker's, the server lost, interrupted). */
static int seed_turn(struct rs *r)
{
    double pause = 0.01;
    for (;;) {
        struct cmd c = { 0 };
        if (cmd_eval(r, &c, S_SEED) || cmd_num(&c, r->lease_ms)) {
            cmd_free(&c);
            return failf(r, "%s", "out of memory");
        }
        redisReply *rep = run_cmd(r, &c);
        if (!rep)
            return -1;
        long long v = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -2;
        freeReplyObject(rep);
        if (v >= 0)
            return (int)v;
        if (v != -1) {
            latch(r, STATE_ELOST, "%s", "redis: an unexpected reply to the seeding's turn");
            return -1;
        }
        /* Another worker reads the list in. */
        struct redis_wait w = r->w;
        redis_wait_begin(&w, pause + 1);
        if (cancelled(r) || redis_nap(&w, pause) != 0) {
            latch(r, STATE_EUNREACHABLE, "%s", "interrupted while another worker read the "
                  "list in");
            return -1;
        }
        pause = pause * 2 > 0.2 ? 0.2 : pause * 2;
    }
}

/* What state_redis_open returns for the failure latched in r. */
static int open_failed(struct rs *r, char *why, size_t n)
{
    snprintf(why, n, "%s", r->err);
    return r->fail == STATE_ELOST ? STATE_ELOST : STATE_EUNREACHABLE;
}

/* Where the crawl stands for this worker: finished, or to seed (the
 * lock taken) or to join. Returns 0 with *phase set, or -1. */
static int find_phase(struct rs *r, enum state_phase *phase)
{
    int64_t finished = 0, seeded = 0;
    if (get_num(r, "finished", &finished) != 0)
        return -1;
    if (finished) {
        *phase = STATE_FINISHED;
        return 0;
    }
    int s = seed_turn(r);
    if (s < 0)
        return -1;
    r->seeding = s;
    if (get_num(r, "seed_n", &seeded) != 0)
        return -1;
    *phase = s && !seeded ? STATE_NEW : STATE_RESUMED;
    return 0;
}

int state_redis_open(struct state **out, const char *url, const char *opts,
                     const struct state_conf *conf, enum state_phase *phase, char *why,
                     size_t n)
{
    struct rs *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, n, "out of memory");
        return STATE_EREFUSED;
    }
    r->base.ops = &rs_ops;
    r->base.shared = 1;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&r->lock, &a);
    pthread_mutexattr_destroy(&a);
    pthread_mutex_init(&r->qlock, NULL);
    pthread_mutex_init(&r->errlock, NULL);
    pthread_mutex_init(&r->beat_lock, NULL);
    pthread_mutex_init(&r->change_lock, NULL);
    clock_cond_init(&r->beat_cond);
    atomic_init(&r->stop, 0);
    int rc = STATE_EREFUSED;
    r->lease_ms = conf && conf->lease > 0 ? (long)(conf->lease * 1000) : 15000;
    r->retry = conf && conf->retry > 0 ? conf->retry : 30;
    r->max_pages = conf ? conf->max_pages : 0;
    r->base.whole = conf ? conf->whole_hosts != 0 : 0;
    r->w = (struct redis_wait){ .grace = REDIS_GRACE, .cancelled = conf ? conf->cancelled : NULL,
                                .data = conf ? conf->cancel_data : NULL };
    r->bw = (struct redis_wait){ .grace = 0, .cancelled = beat_stopping, .data = r };
    r->warn = conf ? conf->warn : NULL;
    r->warn_data = conf ? conf->warn_data : NULL;
    if (redis_parse_url(&r->a, url, why, n) != 0)
        goto fail;
    if (!(r->worker = strdup(conf && conf->worker ? conf->worker : "-"))) {
        snprintf(why, n, "out of memory");
        goto fail;
    }
    /* One try: a server that cannot be reached at the start is said so. */
    redis_wait_begin(&r->w, r->retry);
    if (conn_open(r, &r->main, &r->w, why, n) != 0) {
        rc = STATE_EUNREACHABLE;
        goto fail;
    }
    double sent = clock_now();
    int made = hello(r, opts, conf ? conf->output_id : NULL, why, n);
    if (made < 0) {
        rc = made;
        goto fail;
    }
    held_from(r, sent);
    r->beat_ok = sent;
    check_settings(r, made);
    int e = pthread_create(&r->beat_tid, NULL, beat_main, r);
    if (e != 0) {
        snprintf(why, n, "cannot start the heartbeat thread: %s", strerror(e));
        rc = STATE_EUNREACHABLE;
        goto fail;
    }
    r->beating = 1;
    if (find_phase(r, phase) != 0) {
        rc = open_failed(r, why, n);
        goto fail;
    }
    *out = &r->base;
    return 0;
fail:
    rs_close(&r->base);
    return rc;
}

/* state_redis.c: the store of a crawl shared by many processes
 * (--frontier redis://HOST:PORT/NAME), in a Redis server, through hiredis.
 * Every key of crawl NAME starts with "crawl:NAME:":
 *   meta          hash: the options, the seeding's progress, counters
 *   seen          set of the URL hashes seen (8 bytes each)
 *   p             hash: page id -> record (depth, line, url, scope, source, why)
 *   q, rq         lists of page ids: queued; given back by a silent worker
 *   wl:W          set of the ids worker W holds under its lease
 *   workers       sorted set: worker -> its last heartbeat (ms, server time)
 *   wreq, woff    hashes: worker -> its last request id; bytes of its output
 *                 that hold committed rows
 *   robots        hash: host -> its robots.txt as fetched
 *   h:HOST:run    hash: worker -> its transfers in flight to HOST
 *   h:HOST:next   the earliest start of HOST's next request (ms)
 * Each change is one Lua script, atomic on the server. A worker that falls
 * silent for longer than its lease (killed, cut off) is reaped by the next
 * script any worker runs: its pages go back to the queue (rq, taken first)
 * and its per-host slots are freed. Requests that change something carry
 * an id that grows, so that a request sent again after a lost connection
 * is not applied twice (a lease sent again returns the same pages).
 * Pages found are sent in batches, pipelined: a page's links reach the
 * server before the commit that marks the page done. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <hiredis/hiredis.h>

#include "state_redis_internal.h"
#include "strbuf.h"

/* Entries of a batch of pages found, sent in one script. */
#define BATCH_MAX 512

/* A command's arguments, owned. */
struct cmd {
    int argc;
    char **argv;
    size_t *len;
};

/* A connection, with what it needs to reconnect. */
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
    struct conn main, beat;     /* the crawl's; the heartbeat thread's */
    pthread_mutex_t lock;       /* recursive: a loader's callback may look robots.txt up */
    uint64_t req;               /* the last request id sent */
    struct cmd *pend;           /* sent or to send, replies not read yet */
    size_t npend, cap;
    struct cmd batch;           /* pages found, not yet a command */
    long elsewhere;
    int seeding;                /* holds the seeding lock */
    int lost;                   /* the server could not be reached again */
    int worker_ok;              /* registered: it says goodbye at the end */
    pthread_t beat_tid;
    int beating;
    pthread_mutex_t beat_lock;
    pthread_cond_t beat_cond;
    int stop;
    char err[512];
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

/* Starts an EVALSHA of script s with the crawl's prefix and the worker. */
static int cmd_eval(struct rs *r, struct cmd *c, int s)
{
    return cmd_str(c, "EVALSHA") || cmd_str(c, r->main.sha[s]) || cmd_str(c, "1") ||
           cmd_str(c, r->a.prefix) || cmd_str(c, r->worker);
}

static int failf(struct rs *r, const char *fmt, const char *what)
{
    snprintf(r->err, sizeof r->err, fmt, what);
    return -1;
}

/* Connects cn and loads the scripts. Returns 0 or -1 with the reason in
 * err (size n). */
static int conn_open(const struct rs *r, struct conn *cn, char *err, size_t n)
{
    if (cn->ctx)
        redisFree(cn->ctx);
    if (!(cn->ctx = redis_connect(&r->a, err, n)))
        return -1;
    for (int i = 0; i < NSCRIPTS; i++) {
        redisReply *rep = redisCommand(cn->ctx, "SCRIPT LOAD %s", redis_scripts[i]);
        int ok = rep && rep->type == REDIS_REPLY_STRING && rep->len == 40;
        if (ok)
            memcpy(cn->sha[i], rep->str, 41);
        else
            snprintf(err, n, "redis at %s:%d: %s", r->a.host, r->a.port,
                     rep && rep->type == REDIS_REPLY_ERROR ? rep->str
                     : cn->ctx->err ? cn->ctx->errstr : "cannot load the scripts");
        if (rep)
            freeReplyObject(rep);
        if (!ok) {
            redisFree(cn->ctx);
            cn->ctx = NULL;
            return -1;
        }
    }
    return 0;
}

/* Reconnects cn, trying for r->retry seconds with a backoff. */
static int conn_again(struct rs *r, struct conn *cn)
{
    double until = mono() + r->retry, wait = 0.05;
    for (;;) {
        if (conn_open(r, cn, r->err, sizeof r->err) == 0)
            return 0;
        if (mono() + wait > until)
            return -1;
        struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
        nanosleep(&ts, NULL);
        wait = wait * 2 > 2 ? 2 : wait * 2;
    }
}

/* Moves the batch of pages found into the pending commands. */
static int batch_close(struct rs *r)
{
    if (r->batch.argc == 0)
        return 0;
    if (r->npend == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        struct cmd *p = realloc(r->pend, cap * sizeof *p);
        if (!p)
            return failf(r, "%s", "out of memory");
        r->pend = p, r->cap = cap;
    }
    r->pend[r->npend++] = r->batch;
    memset(&r->batch, 0, sizeof r->batch);
    return 0;
}

/* Queues command c (taken over) after the pending ones. */
static int pend_add(struct rs *r, struct cmd *c)
{
    if (batch_close(r) != 0)
        return -1;
    r->batch = *c;
    memset(c, 0, sizeof *c);
    return batch_close(r);
}

/* Sends the pending commands and then c (NULL: none), reads their
 * replies, and returns c's (the caller's), or NULL with r->err set. A
 * lost connection is made again and everything not answered sent again. */
static redisReply *run(struct rs *r, struct cmd *c)
{
    if (r->lost || batch_close(r) != 0)
        return NULL;
    for (;;) {
        redisContext *x = r->main.ctx;
        int bad = !x;
        redisReply *last = NULL;
        size_t done = 0;
        for (size_t i = 0; !bad && i < r->npend; i++)
            bad = redisAppendCommandArgv(x, r->pend[i].argc, (const char **)r->pend[i].argv,
                                         r->pend[i].len) != REDIS_OK;
        if (!bad && c)
            bad = redisAppendCommandArgv(x, c->argc, (const char **)c->argv, c->len) != REDIS_OK;
        size_t want = r->npend + (c ? 1 : 0);
        while (!bad && done < want) {
            void *rep;
            if (redisGetReply(x, &rep) != REDIS_OK) {
                bad = 1;
                break;
            }
            redisReply *y = rep;
            if (y->type == REDIS_REPLY_ERROR && strncmp(y->str, "NOSCRIPT", 8) == 0) {
                freeReplyObject(y);
                bad = 1;            /* a restarted server: load them again */
                break;
            }
            if (y->type == REDIS_REPLY_ERROR)
                snprintf(r->err, sizeof r->err, "redis: %s", y->str);
            if (done < r->npend) {
                freeReplyObject(y);
                cmd_free(&r->pend[done]);
            } else {
                last = y;
            }
            done++;
        }
        /* Answered ones are gone from the list. */
        size_t gone = done < r->npend ? done : r->npend;
        if (gone) {
            memmove(r->pend, r->pend + gone, (r->npend - gone) * sizeof *r->pend);
            r->npend -= gone;
        }
        if (!bad)
            return last;
        if (last)
            freeReplyObject(last);
        if (conn_again(r, &r->main) != 0) {
            r->lost = 1;
            return NULL;
        }
        /* The scripts' digests do not change; a command built before
         * names them already. */
    }
}

/* Runs c and frees it; returns its reply (NULL: r->err says why). */
static redisReply *run_cmd(struct rs *r, struct cmd *c)
{
    redisReply *rep = run(r, c);
    cmd_free(c);
    if (rep && rep->type == REDIS_REPLY_ERROR) {
        snprintf(r->err, sizeof r->err, "redis: %s", rep->str);
        freeReplyObject(rep);
        return NULL;
    }
    return rep;
}

static const char *rs_error(struct state *st)
{
    return ((struct rs *)st)->err;
}

/* The next request id. */
static long long next_req(struct rs *r)
{
    return (long long)++r->req;
}

/* A page's record: depth, line, url, scope, source and why, each ended by
 * a NUL (an absent one is empty). */
static int rec_make(struct cmd *c, const struct state_page *p)
{
    char head[64];
    int k = snprintf(head, sizeof head, "%d%c%ld%c", p->depth, 0, p->line, 0);
    struct strbuf b = { 0 };
    const char *s[4] = { p->url, p->scope, p->source, p->why };
    sb_add(&b, head, (size_t)k);
    for (int i = 0; i < 4; i++)
        sb_add(&b, s[i] ? s[i] : "", s[i] ? strlen(s[i]) + 1 : 1);
    int rc = b.nomem ? -1 : cmd_arg(c, b.data, b.len);
    sb_free(&b);
    return rc;
}

/* Reads record s (n bytes) into p, whose strings point into s. */
static int rec_read(const char *s, size_t n, struct state_page *p)
{
    const char *f[6], *end = s + n;
    for (int i = 0; i < 6; i++) {
        const char *z = memchr(s, '\0', (size_t)(end - s));
        if (!z)
            return -1;
        f[i] = s;
        s = z + 1;
    }
    *p = (struct state_page){
        .depth = atoi(f[0]), .line = atol(f[1]), .url = f[2],
        .scope = *f[3] ? f[3] : NULL, .source = *f[4] ? f[4] : NULL, .why = *f[5] ? f[5] : NULL,
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
    if (r->batch.argc >= 2 * BATCH_MAX + 6 && batch_close(r) != 0)
        return -1;
    return 0;
}

static int rs_seen_add(struct state *st, uint64_t hash)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->lock);
    int rc = batch_add(r, 'S', hash, NULL);
    pthread_mutex_unlock(&r->lock);
    return rc < 0 ? -1 : 1;
}

static int rs_queue_add(struct state *st, const struct state_page *p, uint64_t *id)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->lock);
    int rc = batch_add(r, 'L', 0, p);
    pthread_mutex_unlock(&r->lock);
    *id = 0;
    return rc;
}

/* A page found joins the shared queue; it is not placed in this process's
 * memory (0), whoever leases it will fetch it. */
static int rs_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->lock);
    int rc = batch_add(r, 'F', hash, p);
    pthread_mutex_unlock(&r->lock);
    *id = 0;
    return rc;
}

static int rs_queue_load(struct state *st, uint64_t after, size_t max,
                         void (*fn)(uint64_t id, const struct state_page *p, void *data),
                         void *data)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    (void)after;
    pthread_mutex_lock(&r->lock);
    if (cmd_eval(r, &c, S_LEASE) || cmd_num(&c, next_req(r)) || cmd_num(&c, (long long)max) ||
        cmd_num(&c, r->lease_ms) || cmd_num(&c, r->max_pages)) {
        cmd_free(&c);
        pthread_mutex_unlock(&r->lock);
        return failf(r, "%s", "out of memory");
    }
    redisReply *rep = run_cmd(r, &c);
    int n = -1;
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2 &&
        rep->element[0]->type == REDIS_REPLY_INTEGER &&
        rep->element[1]->type == REDIS_REPLY_INTEGER) {
        r->elsewhere = (long)(rep->element[0]->integer + rep->element[1]->integer);
        n = 0;
        for (size_t i = 2; i + 1 < rep->elements; i += 2) {
            redisReply *k = rep->element[i], *v = rep->element[i + 1];
            struct state_page p;
            if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
                rec_read(v->str, v->len, &p) != 0)
                continue;
            fn(strtoull(k->str, NULL, 10), &p, data);
            n++;
        }
    } else if (rep) {
        failf(r, "%s", "redis: an unexpected reply to a lease");
    }
    if (rep)
        freeReplyObject(rep);
    pthread_mutex_unlock(&r->lock);
    return n;
}

static long rs_elsewhere(struct state *st)
{
    struct rs *r = (struct rs *)st;
    pthread_mutex_lock(&r->lock);
    long n = r->elsewhere;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* HGET of the crawl's key k (under the prefix) field f, as a number; *v
 * is left alone when there is none. Returns 0 or -1. */
static int hget_num(struct rs *r, const char *k, const char *f, int64_t *v)
{
    struct cmd c = { 0 };
    char key[400];
    snprintf(key, sizeof key, "%s%s", r->a.prefix, k);
    if (cmd_str(&c, "HGET") || cmd_str(&c, key) || cmd_str(&c, f)) {
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
    int rc = strcmp(key, "offset") == 0 ? hget_num(r, "woff", r->worker, v)
                                        : hget_num(r, "meta", key, v);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_set(struct state *st, const char *key, int64_t v)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char k[400];
    int rc = 0;
    pthread_mutex_lock(&r->lock);
    snprintf(k, sizeof k, "%smeta", r->a.prefix);
    if (cmd_str(&c, "HSET") || cmd_str(&c, k) || cmd_str(&c, key) || cmd_num(&c, v) ||
        pend_add(r, &c) != 0)
        rc = failf(r, "%s", "out of memory");
    /* The seeding is over: the next worker need not wait for it. */
    if (rc == 0 && strcmp(key, "seed_done") == 0 && v && r->seeding) {
        snprintf(k, sizeof k, "%sseedlock", r->a.prefix);
        if (cmd_str(&c, "DEL") || cmd_str(&c, k) || pend_add(r, &c) != 0)
            rc = failf(r, "%s", "out of memory");
        r->seeding = 0;
    }
    cmd_free(&c);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static long rs_queue_left(struct state *st)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    long n = -1;
    pthread_mutex_lock(&r->lock);
    if (!(cmd_str(&c, "EVAL") || cmd_str(&c, redis_lua_left) || cmd_str(&c, "1") ||
          cmd_str(&c, r->a.prefix))) {
        redisReply *rep = run_cmd(r, &c);
        if (rep && rep->type == REDIS_REPLY_INTEGER)
            n = (long)rep->integer;
        if (rep)
            freeReplyObject(rep);
    }
    cmd_free(&c);
    pthread_mutex_unlock(&r->lock);
    return n;
}

static long rs_fetched(struct state *st)
{
    struct rs *r = (struct rs *)st;
    int64_t v = 0;
    pthread_mutex_lock(&r->lock);
    int rc = hget_num(r, "meta", "fetched", &v);
    pthread_mutex_unlock(&r->lock);
    return rc ? -1 : (long)v;
}

/* A commit's marks (and offset, when off is not NULL) as a command. */
static int commit_cmd(struct rs *r, struct cmd *c, const uint64_t *marks, size_t n,
                      const char *off, char how)
{
    if (cmd_eval(r, c, S_COMMIT) || cmd_num(c, next_req(r)) || cmd_str(c, off ? off : ""))
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
    pthread_mutex_lock(&r->lock);
    int rc = commit_cmd(r, &c, &id, 1, NULL, 'd') || pend_add(r, &c);
    cmd_free(&c);
    pthread_mutex_unlock(&r->lock);
    return rc ? failf(r, "%s", "out of memory") : 0;
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
        if (rep) {
            freeReplyObject(rep);
            rc = 0;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_robots_put(struct state *st, const char *host, long status, int fail,
                         const char *body, size_t len)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char k[400], head[48];
    int hn = snprintf(head, sizeof head, "%ld %d\n", status, fail);
    snprintf(k, sizeof k, "%srobots", r->a.prefix);
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    struct strbuf b = { 0 };
    sb_add(&b, head, (size_t)hn);
    if (len)
        sb_add(&b, body, len);
    if (b.nomem || cmd_str(&c, "HSET") || cmd_str(&c, k) || cmd_str(&c, host) ||
        cmd_arg(&c, b.data, b.len) || pend_add(r, &c))
        rc = failf(r, "%s", "out of memory");
    sb_free(&b);
    cmd_free(&c);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int rs_robots_get(struct state *st, const char *host, long *status, int *fail,
                         char **body, size_t *len)
{
    struct rs *r = (struct rs *)st;
    struct cmd c = { 0 };
    char k[400];
    snprintf(k, sizeof k, "%srobots", r->a.prefix);
    pthread_mutex_lock(&r->lock);
    int rc = -1;
    if (cmd_str(&c, "HGET") || cmd_str(&c, k) || cmd_str(&c, host)) {
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
    pthread_mutex_lock(&r->lock);
    if (cmd_eval(r, &c, S_GIVE) || cmd_str(&c, host) || pend_add(r, &c) != 0)
        failf(r, "%s", "out of memory");
    cmd_free(&c);
    pthread_mutex_unlock(&r->lock);
}

static void *beat_main(void *arg)
{
    struct rs *r = arg;
    double every = (double)r->lease_ms / 4000;
    pthread_mutex_lock(&r->beat_lock);
    while (!r->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + every;
        ts.tv_sec = (time_t)at;
        ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&r->beat_cond, &r->beat_lock, &ts);
        if (r->stop)
            break;
        pthread_mutex_unlock(&r->beat_lock);
        char err[512];
        if (r->beat.ctx || conn_open(r, &r->beat, err, sizeof err) == 0) {
            char lease[32];
            snprintf(lease, sizeof lease, "%ld", r->lease_ms);
            const char *argv[] = { "EVALSHA", r->beat.sha[S_BEAT], "1", r->a.prefix, r->worker,
                                   lease };
            redisReply *rep = redisCommandArgv(r->beat.ctx, 6, argv, NULL);
            if (rep)
                freeReplyObject(rep);
            if (!rep || r->beat.ctx->err) {
                redisFree(r->beat.ctx);
                r->beat.ctx = NULL;
            }
        }
        pthread_mutex_lock(&r->beat_lock);
    }
    pthread_mutex_unlock(&r->beat_lock);
    return NULL;
}

static void rs_close(struct state *st)
{
    struct rs *r = (struct rs *)st;
    if (r->beating) {
        pthread_mutex_lock(&r->beat_lock);
        r->stop = 1;
        pthread_cond_signal(&r->beat_cond);
        pthread_mutex_unlock(&r->beat_lock);
        pthread_join(r->beat_tid, NULL);
    }
    if (r->main.ctx && !r->lost && r->worker_ok) {
        struct cmd c = { 0 };
        if (!(cmd_str(&c, "EVAL") || cmd_str(&c, redis_lua_bye) || cmd_str(&c, "1") ||
              cmd_str(&c, r->a.prefix) || cmd_str(&c, r->worker))) {
            r->retry = r->retry < 2 ? r->retry : 2;
            redisReply *rep = run_cmd(r, &c);
            if (rep)
                freeReplyObject(rep);
        }
        cmd_free(&c);
    }
    for (size_t i = 0; i < r->npend; i++)
        cmd_free(&r->pend[i]);
    free(r->pend);
    cmd_free(&r->batch);
    if (r->main.ctx)
        redisFree(r->main.ctx);
    if (r->beat.ctx)
        redisFree(r->beat.ctx);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->beat_lock);
    pthread_cond_destroy(&r->beat_cond);
    free(r->worker);
    free(r);
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
    .elsewhere = rs_elsewhere,
    .host_take = rs_host_take,
    .host_give = rs_host_give,
};

/* The first line where options a and b differ, as "name=x, not name=y". */
static void first_difference(const char *had, const char *now, char *why, size_t n)
{
    while (*had || *now) {
        size_t a = strcspn(had, "\n"), b = strcspn(now, "\n");
        if (a != b || memcmp(had, now, a) != 0) {
            snprintf(why, n, "started with %.*s, not %.*s", (int)a, had, (int)b, now);
            return;
        }
        had += a + (had[a] == '\n');
        now += b + (now[b] == '\n');
    }
    snprintf(why, n, "started with other options");
}

/* Takes the seeding lock, or waits until whoever holds it has seeded.
 * Returns 1 when this worker seeds, 0 when the seeding is done, -1. */
static int seed_turn(struct rs *r)
{
    char lease[32], key[400];
    snprintf(lease, sizeof lease, "%ld", r->lease_ms);
    snprintf(key, sizeof key, "%sseedlock", r->a.prefix);
    for (;;) {
        int64_t done = 0;
        if (hget_num(r, "meta", "seed_done", &done) != 0)
            return -1;
        if (done)
            return 0;
        struct cmd c = { 0 };
        if (cmd_str(&c, "SET") || cmd_str(&c, key) || cmd_str(&c, r->worker) ||
            cmd_str(&c, "NX") || cmd_str(&c, "PX") || cmd_str(&c, lease)) {
            cmd_free(&c);
            return failf(r, "%s", "out of memory");
        }
        redisReply *rep = run_cmd(r, &c);
        if (!rep)
            return -1;
        int got = rep->type == REDIS_REPLY_STATUS;
        freeReplyObject(rep);
        if (got)
            return 1;
        nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
    }
}

int state_redis_open(struct state **out, const char *url, const char *opts,
                     const struct state_conf *conf, enum state_phase *phase, char *why,
                     size_t n)
{
    struct rs *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    r->base.ops = &rs_ops;
    r->base.shared = 1;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&r->lock, &a);
    pthread_mutexattr_destroy(&a);
    pthread_mutex_init(&r->beat_lock, NULL);
    pthread_cond_init(&r->beat_cond, NULL);
    int rc = -1;
    r->lease_ms = conf && conf->lease > 0 ? (long)(conf->lease * 1000) : 15000;
    r->retry = conf ? conf->retry : 0;
    r->max_pages = conf ? conf->max_pages : 0;
    if (redis_parse_url(&r->a, url, why, n) != 0)
        goto fail;
    if (!(r->worker = strdup(conf && conf->worker ? conf->worker : "-"))) {
        snprintf(why, n, "out of memory");
        goto fail;
    }
    if (conn_open(r, &r->main, r->err, sizeof r->err) != 0) {
        snprintf(why, n, "%s", r->err);
        rc = -2;
        goto fail;
    }
    char lease[32];
    snprintf(lease, sizeof lease, "%ld", r->lease_ms);
    const char *argv[] = { "EVALSHA", r->main.sha[S_HELLO], "1", r->a.prefix, r->worker, opts,
                           lease };
    redisReply *rep = redisCommandArgv(r->main.ctx, 7, argv, NULL);
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING) {
        snprintf(why, n, "redis at %s:%d: %s", r->a.host, r->a.port,
                 rep && rep->type == REDIS_REPLY_ERROR ? rep->str : "no answer");
        if (rep)
            freeReplyObject(rep);
        rc = rep ? -1 : -2;
        goto fail;
    }
    const char *st = rep->element[0]->str, *v = rep->element[1]->str;
    if (strcmp(st, "opts") == 0)
        first_difference(v ? v : "", opts, why, n);
    else if (strcmp(st, "busy") == 0)
        snprintf(why, n, "another worker writing %s is running (or was killed less than "
                 "--lease seconds ago)", r->worker);
    else
        r->req = strtoull(v ? v : "0", NULL, 10);
    int ok = strcmp(st, "ok") == 0;
    freeReplyObject(rep);
    if (!ok)
        goto fail;
    r->worker_ok = 1;
    if (pthread_create(&r->beat_tid, NULL, beat_main, r) == 0)
        r->beating = 1;
    int64_t finished = 0;
    if (hget_num(r, "meta", "finished", &finished) != 0)
        goto lost;
    if (finished) {
        *phase = STATE_FINISHED;
    } else {
        int s = seed_turn(r);
        if (s < 0)
            goto lost;
        r->seeding = s;
        int64_t seeded = 0;
        if (hget_num(r, "meta", "seed_n", &seeded) != 0)
            goto lost;
        *phase = s && !seeded ? STATE_NEW : STATE_RESUMED;
    }
    *out = &r->base;
    return 0;
lost:
    snprintf(why, n, "%s", r->err);
    rc = -2;
fail:
    rs_close(&r->base);
    return rc;
}


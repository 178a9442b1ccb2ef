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

#include "state_internal.h"
#include "strbuf.h"

/* Entries of a batch of pages found, sent in one script. */
#define BATCH_MAX 512

/* Seconds to wait for one reply before the connection counts as lost. */
#define REPLY_TIMEOUT 10

/* The scripts' common part: the server's clock, and the reaping of
 * silent workers. */
#define LUA_PRELUDE                                                                     \
    "local K = KEYS[1]\n"                                                               \
    "local function now() local t = redis.call('TIME')\n"                               \
    "  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end\n"          \
    "local function reap(t, lease)\n"                                                   \
    "  local dead = redis.call('ZRANGEBYSCORE', K..'workers', '-inf', t - lease)\n"     \
    "  for _, w in ipairs(dead) do\n"                                                   \
    "    local ids = redis.call('SMEMBERS', K..'wl:'..w)\n"                             \
    "    for _, id in ipairs(ids) do redis.call('RPUSH', K..'rq', id) end\n"            \
    "    if #ids > 0 then redis.call('HINCRBY', K..'meta', 'leased', -#ids)\n"          \
    "      redis.call('HINCRBY', K..'meta', 'returned', #ids) end\n"                    \
    "    redis.call('DEL', K..'wl:'..w, K..'wlast:'..w)\n"                              \
    "    redis.call('ZREM', K..'workers', w)\n"                                         \
    "  end\n"                                                                           \
    "end\n"                                                                             \
    "local function fresh(w, req)\n"                                                    \
    "  local last = tonumber(redis.call('HGET', K..'wreq', w) or '0')\n"                \
    "  if req <= last then return false end\n"                                          \
    "  redis.call('HSET', K..'wreq', w, req)\n"                                         \
    "  return true\n"                                                                   \
    "end\n"

/* hello: ARGV worker, options, lease ms. Registers the worker unless a
 * live one has its name. Returns {status, text}: "ok" with the last
 * request id, "opts" with the options the crawl was made with, "busy". */
static const char LUA_HELLO[] = LUA_PRELUDE
    "local w, opts, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
    "local t = now()\n"
    "reap(t, lease)\n"
    "local had = redis.call('HGET', K..'meta', 'opts')\n"
    "if not had then redis.call('HSET', K..'meta', 'opts', opts, 'version', '1')\n"
    "elseif had ~= opts then return {'opts', had} end\n"
    "if redis.call('ZSCORE', K..'workers', w) then return {'busy', ''} end\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "return {'ok', redis.call('HGET', K..'wreq', w) or '0'}\n";

/* beat: ARGV worker, lease ms. The worker's heartbeat; it keeps the
 * seeding lock while it holds it. Returns 0, or 1 when the worker had
 * been reaped (its pages given back). */
static const char LUA_BEAT[] = LUA_PRELUDE
    "local w, lease = ARGV[1], tonumber(ARGV[2])\n"
    "local t = now()\n"
    "local known = redis.call('ZSCORE', K..'workers', w)\n"
    "reap(t, lease)\n"
    "known = known and redis.call('ZSCORE', K..'workers', w)\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "if redis.call('GET', K..'seedlock') == w then\n"
    "  redis.call('PEXPIRE', K..'seedlock', lease) end\n"
    "if known then return 0 end\n"
    "return 1\n";

/* admit: ARGV worker, request id, then pairs (kind..hash, record):
 * kind S adds the hash to the seen set; L queues the record (and adds
 * its hash when there is one); F queues it when its hash is new. */
static const char LUA_ADMIT[] = LUA_PRELUDE
    "local w, req = ARGV[1], tonumber(ARGV[2])\n"
    "if not fresh(w, req) then return 0 end\n"
    "local n = 0\n"
    "for i = 3, #ARGV, 2 do\n"
    "  local kind, hash = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 2)\n"
    "  local new = 1\n"
    "  if hash ~= '' then new = redis.call('SADD', K..'seen', hash) end\n"
    "  if kind == 'L' or (kind == 'F' and new == 1) then\n"
    "    local id = redis.call('HINCRBY', K..'meta', 'next_id', 1)\n"
    "    redis.call('HSET', K..'p', id, ARGV[i + 1])\n"
    "    redis.call('RPUSH', K..'q', id)\n"
    "    n = n + 1\n"
    "  end\n"
    "end\n"
    "return n\n";

/* lease: ARGV worker, request id, pages wanted, lease ms, --max-pages.
 * Takes pages for the worker, the given-back ones first; a page found
 * past --max-pages is dropped. Returns {queued, leased elsewhere, id,
 * record, id, record...}. */
static const char LUA_LEASE[] = LUA_PRELUDE
    "local w, req, want, lease, max = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]),\n"
    "  tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    "local t = now()\n"
    "reap(t, lease)\n"
    "redis.call('ZADD', K..'workers', t, w)\n"
    "local ids = {}\n"
    "if fresh(w, req) then\n"
    "  redis.call('DEL', K..'wlast:'..w)\n"
    "  while #ids < want do\n"
    "    local again, id = true, redis.call('LPOP', K..'rq')\n"
    "    if not id then again, id = false, redis.call('LPOP', K..'q') end\n"
    "    if not id then break end\n"
    "    local rec = redis.call('HGET', K..'p', id)\n"
    "    if rec then\n"
    "      local depth = tonumber(string.match(rec, '^(%d+)'))\n"
    "      local started = tonumber(redis.call('HGET', K..'meta', 'started') or '0')\n"
    "      if not again and max > 0 and depth > 0 and started >= max then\n"
    "        redis.call('HDEL', K..'p', id)\n"
    "        redis.call('HINCRBY', K..'meta', 'dropped', 1)\n"
    "      else\n"
    "        if not again then redis.call('HINCRBY', K..'meta', 'started', 1) end\n"
    "        redis.call('SADD', K..'wl:'..w, id)\n"
    "        redis.call('HINCRBY', K..'meta', 'leased', 1)\n"
    "        redis.call('RPUSH', K..'wlast:'..w, id)\n"
    "        ids[#ids + 1] = id\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "else\n"
    "  ids = redis.call('LRANGE', K..'wlast:'..w, 0, -1)\n"
    "end\n"
    "local out = {redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq'),\n"
    "  tonumber(redis.call('HGET', K..'meta', 'leased') or '0') -\n"
    "  redis.call('SCARD', K..'wl:'..w)}\n"
    "for _, id in ipairs(ids) do\n"
    "  if redis.call('SISMEMBER', K..'wl:'..w, id) == 1 then\n"
    "    out[#out + 1] = id\n"
    "    out[#out + 1] = redis.call('HGET', K..'p', id) or ''\n"
    "  end\n"
    "end\n"
    "return out\n";

/* commit: ARGV worker, request id, output offset ('' to keep it), then
 * marks: id with a suffix, f fetched, x fetched and failed, d dropped,
 * nothing done. The first commit of a page wins; a later one (a page its
 * worker held past its lease, fetched again elsewhere) counts as twice. */
static const char LUA_COMMIT[] = LUA_PRELUDE
    "local w, req, off = ARGV[1], tonumber(ARGV[2]), ARGV[3]\n"
    "if not fresh(w, req) then return 0 end\n"
    "for i = 4, #ARGV do\n"
    "  local id, how = string.match(ARGV[i], '^(%d+)(%a?)$')\n"
    "  if id then\n"
    "    local mine = redis.call('SREM', K..'wl:'..w, id)\n"
    "    if mine == 1 then redis.call('HINCRBY', K..'meta', 'leased', -1) end\n"
    "    if redis.call('HDEL', K..'p', id) == 1 then\n"
    "      if mine == 0 then redis.call('LREM', K..'rq', 0, id) end\n"
    "      if how == 'd' then redis.call('HINCRBY', K..'meta', 'dropped', 1)\n"
    "      else redis.call('HINCRBY', K..'meta', 'done', 1) end\n"
    "      if how == 'f' or how == 'x' then redis.call('HINCRBY', K..'meta', 'fetched', 1) end\n"
    "      if how == 'x' then redis.call('HINCRBY', K..'meta', 'failed', 1) end\n"
    "    elseif how ~= 'd' then redis.call('HINCRBY', K..'meta', 'twice', 1) end\n"
    "  end\n"
    "end\n"
    "if off ~= '' then redis.call('HSET', K..'woff', w, off) end\n"
    "redis.call('ZADD', K..'workers', now(), w)\n"
    "return 1\n";

/* host: ARGV worker, host, per-host bound, delay ms. Takes a slot of the
 * host (the counts of reaped workers are freed) and its next start.
 * Returns 0 when taken, -1 when its slots are full, else the ms to wait. */
static const char LUA_HOST[] = LUA_PRELUDE
    "local w, host, per, delay = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "local hk = K..'h:'..host\n"
    "if per > 0 then\n"
    "  local run, sum = redis.call('HGETALL', hk..':run'), 0\n"
    "  for i = 1, #run, 2 do\n"
    "    if redis.call('ZSCORE', K..'workers', run[i]) then sum = sum + tonumber(run[i + 1])\n"
    "    else redis.call('HDEL', hk..':run', run[i]) end\n"
    "  end\n"
    "  if sum >= per then return -1 end\n"
    "end\n"
    "if delay > 0 then\n"
    "  local t, nx = now(), tonumber(redis.call('GET', hk..':next') or '0')\n"
    "  if t < nx then return nx - t end\n"
    "  redis.call('SET', hk..':next', t + delay, 'PX', delay + 60000)\n"
    "end\n"
    "if per > 0 then redis.call('HINCRBY', hk..':run', w, 1) end\n"
    "return 0\n";

/* give: ARGV worker, host. Gives a slot back. */
static const char LUA_GIVE[] =
    "local hk = KEYS[1]..'h:'..ARGV[2]..':run'\n"
    "if redis.call('HINCRBY', hk, ARGV[1], -1) <= 0 then redis.call('HDEL', hk, ARGV[1]) end\n"
    "return 0\n";

enum { S_HELLO, S_BEAT, S_ADMIT, S_LEASE, S_COMMIT, S_HOST, S_GIVE, NSCRIPTS };

static const char *const scripts[NSCRIPTS] = {
    LUA_HELLO, LUA_BEAT, LUA_ADMIT, LUA_LEASE, LUA_COMMIT, LUA_HOST, LUA_GIVE,
};

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
    char host[128];
    int port;
    char user[128], pass[256];  /* AUTH's, from the URL; empty: none */
    char prefix[300];           /* crawl:NAME: */
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
           cmd_str(c, r->prefix) || cmd_str(c, r->worker);
}

static int failf(struct rs *r, const char *fmt, const char *what)
{
    snprintf(r->err, sizeof r->err, fmt, what);
    return -1;
}

/* Connects to r's server, logged in when its URL has a password. Returns
 * the connection, or NULL with the reason in err (size n). */
static redisContext *connect_to(const struct rs *r, char *err, size_t n)
{
    struct timeval tv = { 2, 0 };
    redisContext *x = redisConnectWithTimeout(r->host, r->port, tv);
    if (!x || x->err) {
        snprintf(err, n, "cannot reach redis at %s:%d: %s", r->host, r->port,
                 x ? x->errstr : "out of memory");
        if (x)
            redisFree(x);
        return NULL;
    }
    tv.tv_sec = REPLY_TIMEOUT;
    redisSetTimeout(x, tv);
    if (*r->pass) {
        const char *argv[3] = { "AUTH" };
        int argc = 1;
        if (*r->user)
            argv[argc++] = r->user;
        argv[argc++] = r->pass;
        redisReply *y = redisCommandArgv(x, argc, argv, NULL);
        int ok = y && y->type == REDIS_REPLY_STATUS;
        if (!ok)
            snprintf(err, n, "redis at %s:%d refused the password: %s", r->host, r->port,
                     y && y->type == REDIS_REPLY_ERROR ? y->str : x->errstr);
        if (y)
            freeReplyObject(y);
        if (!ok) {
            redisFree(x);
            return NULL;
        }
    }
    return x;
}

/* Connects cn and loads the scripts. Returns 0 or -1 with r->err set. */
static int conn_open(struct rs *r, struct conn *cn)
{
    if (cn->ctx)
        redisFree(cn->ctx);
    if (!(cn->ctx = connect_to(r, r->err, sizeof r->err)))
        return -1;
    for (int i = 0; i < NSCRIPTS; i++) {
        redisReply *rep = redisCommand(cn->ctx, "SCRIPT LOAD %s", scripts[i]);
        int ok = rep && rep->type == REDIS_REPLY_STRING && rep->len == 40;
        if (ok)
            memcpy(cn->sha[i], rep->str, 41);
        else
            snprintf(r->err, sizeof r->err, "redis at %s:%d: %s", r->host, r->port,
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
        if (conn_open(r, cn) == 0)
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
        memmove(r->pend, r->pend + gone, (r->npend - gone) * sizeof *r->pend);
        r->npend -= gone;
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
    snprintf(key, sizeof key, "%s%s", r->prefix, k);
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
    snprintf(k, sizeof k, "%smeta", r->prefix);
    if (cmd_str(&c, "HSET") || cmd_str(&c, k) || cmd_str(&c, key) || cmd_num(&c, v) ||
        pend_add(r, &c) != 0)
        rc = failf(r, "%s", "out of memory");
    /* The seeding is over: the next worker need not wait for it. */
    if (rc == 0 && strcmp(key, "seed_done") == 0 && v && r->seeding) {
        snprintf(k, sizeof k, "%sseedlock", r->prefix);
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
    char q[400], rq[400], meta[400];
    snprintf(q, sizeof q, "%sq", r->prefix);
    snprintf(rq, sizeof rq, "%srq", r->prefix);
    snprintf(meta, sizeof meta, "%smeta", r->prefix);
    if (!(cmd_str(&c, "EVAL") ||
          cmd_str(&c, "return redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + "
                      "tonumber(redis.call('HGET', KEYS[3], 'leased') or '0')") ||
          cmd_str(&c, "3") || cmd_str(&c, q) || cmd_str(&c, rq) || cmd_str(&c, meta))) {
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
    snprintf(k, sizeof k, "%srobots", r->prefix);
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
    snprintf(k, sizeof k, "%srobots", r->prefix);
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
    if (cmd_str(&c, "EVALSHA") || cmd_str(&c, r->main.sha[S_GIVE]) || cmd_str(&c, "1") ||
        cmd_str(&c, r->prefix) || cmd_str(&c, r->worker) || cmd_str(&c, host) ||
        pend_add(r, &c) != 0)
        failf(r, "%s", "out of memory");
    cmd_free(&c);
    pthread_mutex_unlock(&r->lock);
}

/* bye: ARGV worker. A worker that ends gives back what it still holds. */
static const char LUA_BYE_TEXT[] =
    "local K, w = KEYS[1], ARGV[1]\n"
    "local ids = redis.call('SMEMBERS', K..'wl:'..w)\n"
    "for _, id in ipairs(ids) do redis.call('RPUSH', K..'rq', id) end\n"
    "if #ids > 0 then redis.call('HINCRBY', K..'meta', 'leased', -#ids) end\n"
    "redis.call('DEL', K..'wl:'..w, K..'wlast:'..w)\n"
    "redis.call('ZREM', K..'workers', w)\n"
    "return #ids\n";

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
        if (r->beat.ctx || conn_open(r, &r->beat) == 0) {
            char lease[32];
            snprintf(lease, sizeof lease, "%ld", r->lease_ms);
            const char *argv[] = { "EVALSHA", r->beat.sha[S_BEAT], "1", r->prefix, r->worker,
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
        if (!(cmd_str(&c, "EVAL") || cmd_str(&c, LUA_BYE_TEXT) || cmd_str(&c, "1") ||
              cmd_str(&c, r->prefix) || cmd_str(&c, r->worker))) {
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

/* Reads redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME into r. Returns 0 or
 * -1 with why. */
static int parse_url(struct rs *r, const char *url, char *why, size_t n)
{
    const char *h = url + 8, *slash = strchr(h, '/'), *colon;
    const char *at = memchr(h, '@', slash ? (size_t)(slash - h) : strlen(h));
    if (at) {
        const char *c = memchr(h, ':', (size_t)(at - h));
        size_t ul = c ? (size_t)(c - h) : 0;
        const char *p = c ? c + 1 : h;
        size_t pl = (size_t)(at - p);
        if (ul >= sizeof r->user || pl >= sizeof r->pass || pl == 0)
            goto bad;
        memcpy(r->user, h, ul);
        r->user[ul] = '\0';
        memcpy(r->pass, p, pl);
        r->pass[pl] = '\0';
        h = at + 1;
    }
    const char *name = slash ? slash + 1 : "";
    size_t hl;
    r->port = 6379;
    if (*h == '[') {
        const char *rb = strchr(h, ']');
        if (!rb || (slash && rb > slash))
            goto bad;
        hl = (size_t)(rb - h - 1);
        h++;
        colon = rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = memchr(h, ':', slash ? (size_t)(slash - h) : strlen(h));
        hl = colon ? (size_t)(colon - h) : slash ? (size_t)(slash - h) : strlen(h);
    }
    if (hl == 0 || hl >= sizeof r->host)
        goto bad;
    memcpy(r->host, h, hl);
    r->host[hl] = '\0';
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || p < 1 || p > 65535 || (slash ? end != slash : *end != '\0'))
            goto bad;
        r->port = (int)p;
    }
    if (!*name || strlen(name) > 200 || name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
                                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                    "0123456789._-")] != '\0')
        goto bad;
    snprintf(r->prefix, sizeof r->prefix, "crawl:%s:", name);
    return 0;
bad:
    snprintf(why, n, "not redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME (NAME: letters, digits, "
             "'.', '_', '-')");
    return -1;
}

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
    snprintf(key, sizeof key, "%sseedlock", r->prefix);
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
    if (parse_url(r, url, why, n) != 0)
        goto fail;
    if (!(r->worker = strdup(conf && conf->worker ? conf->worker : "-"))) {
        snprintf(why, n, "out of memory");
        goto fail;
    }
    if (conn_open(r, &r->main) != 0) {
        snprintf(why, n, "%s", r->err);
        rc = -2;
        goto fail;
    }
    char lease[32];
    snprintf(lease, sizeof lease, "%ld", r->lease_ms);
    const char *argv[] = { "EVALSHA", r->main.sha[S_HELLO], "1", r->prefix, r->worker, opts,
                           lease };
    redisReply *rep = redisCommandArgv(r->main.ctx, 7, argv, NULL);
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING) {
        snprintf(why, n, "redis at %s:%d: %s", r->host, r->port,
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
        snprintf(why, n, "another worker writing %s is running", r->worker);
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

/* A reply's integer, from an integer or a number as text (0 otherwise). */
static long long num(const redisReply *y)
{
    if (!y)
        return 0;
    if (y->type == REDIS_REPLY_INTEGER)
        return y->integer;
    return y->type == REDIS_REPLY_STRING ? strtoll(y->str, NULL, 10) : 0;
}

/* status: the crawl's counters, the server's time, the workers with their
 * last heartbeat and committed bytes. */
static const char LUA_STATUS[] =
    "local K = KEYS[1]\n"
    "local m = redis.call('HGETALL', K..'meta')\n"
    "local t = redis.call('TIME')\n"
    "local out = {redis.call('LLEN', K..'q') + redis.call('LLEN', K..'rq'),\n"
    "  tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), #m}\n"
    "for _, v in ipairs(m) do out[#out + 1] = v end\n"
    "local ws = redis.call('ZRANGE', K..'workers', 0, -1, 'WITHSCORES')\n"
    "for i = 1, #ws, 2 do\n"
    "  out[#out + 1] = ws[i]\n"
    "  out[#out + 1] = ws[i + 1]\n"
    "  out[#out + 1] = redis.call('HGET', K..'woff', ws[i]) or '0'\n"
    "  out[#out + 1] = redis.call('SCARD', K..'wl:'..ws[i])\n"
    "end\n"
    "return out\n";

int state_status(const char *url, int fd, char *why, size_t n)
{
    struct rs r = { 0 };
    if (parse_url(&r, url, why, n) != 0)
        return -1;
    redisContext *x = connect_to(&r, why, n);
    if (!x)
        return -2;
    const char *argv[] = { "EVAL", LUA_STATUS, "1", r.prefix };
    redisReply *y = redisCommandArgv(x, 4, argv, NULL);
    if (!y || y->type != REDIS_REPLY_ARRAY || y->elements < 3) {
        snprintf(why, n, "redis at %s:%d: %s", r.host, r.port,
                 y && y->type == REDIS_REPLY_ERROR ? y->str : x->err ? x->errstr : "no answer");
        if (y)
            freeReplyObject(y);
        redisFree(x);
        return -2;
    }
    long long queued = num(y->element[0]), t = num(y->element[1]);
    size_t nm = (size_t)num(y->element[2]), at = 3;
    long long leased = 0, done = 0, fetched = 0, failed = 0, dropped = 0, twice = 0;
    long long returned = 0, finished = 0, seeded = 0, seed_done = 0;
    int known = nm > 0;
    for (size_t i = 0; i + 1 < nm && at + i + 1 < y->elements; i += 2) {
        const char *k = y->element[at + i]->str;
        long long v = num(y->element[at + i + 1]);
        if (!k)
            continue;
        if (!strcmp(k, "leased")) leased = v;
        else if (!strcmp(k, "done")) done = v;
        else if (!strcmp(k, "fetched")) fetched = v;
        else if (!strcmp(k, "failed")) failed = v;
        else if (!strcmp(k, "dropped")) dropped = v;
        else if (!strcmp(k, "twice")) twice = v;
        else if (!strcmp(k, "returned")) returned = v;
        else if (!strcmp(k, "finished")) finished = v;
        else if (!strcmp(k, "seed_n")) seeded = v;
        else if (!strcmp(k, "seed_done")) seed_done = v;
    }
    at += nm;
    FILE *f = fdopen(dup(fd), "w");
    if (!f) {
        snprintf(why, n, "%s", strerror(errno));
        freeReplyObject(y);
        redisFree(x);
        return -1;
    }
    fprintf(f, "crawl %.*s at %s:%d: %s\n", (int)strlen(r.prefix) - 7, r.prefix + 6, r.host,
            r.port, !known ? "no such crawl" : finished ? "finished"
            : !seed_done ? "seeding" : queued + leased ? "running" : "idle");
    fprintf(f, "  listed    %lld%s\n", seeded, seed_done || !known ? "" : " so far");
    fprintf(f, "  queued    %lld\n", queued);
    fprintf(f, "  leased    %lld\n", leased);
    fprintf(f, "  done      %lld (fetched %lld, failed %lld)\n", done, fetched, failed);
    fprintf(f, "  dropped   %lld (robots.txt, --max-pages)\n", dropped);
    fprintf(f, "  given back %lld (by workers that fell silent)\n", returned);
    fprintf(f, "  fetched twice %lld\n", twice);
    size_t nw = (y->elements - at) / 4;
    fprintf(f, "  workers   %zu\n", nw);
    for (size_t i = 0; i < nw; i++, at += 4) {
        redisReply *w = y->element[at];
        fprintf(f, "    %.*s  seen %.1f s ago, %lld pages held, %lld bytes of rows committed\n",
                w->str ? (int)w->len : 1, w->str ? w->str : "?",
                (double)(t - num(y->element[at + 1])) / 1000, num(y->element[at + 3]),
                num(y->element[at + 2]));
    }
    int rc = fclose(f) == 0 ? 0 : -1;
    if (rc)
        snprintf(why, n, "%s", strerror(errno));
    freeReplyObject(y);
    redisFree(x);
    return rc;
}

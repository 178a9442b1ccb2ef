/* state_lmdb.c: the --state store on LMDB. Four databases in one file: pages by
 * id (their place in the queue), the seen set (64-bit hashes as integer
 * keys), robots.txt by host, and the crawl's named values. One write
 * transaction is always open; state_commit commits it and opens the next.
 * MDB_NOSYNC: a commit is written to the file without an fsync, so it
 * survives the process being killed (SIGKILL, OOM) but not a power loss.
 * MDB_NOLOCK: the store's own lock serialises the threads (a transaction
 * moves between them, which LMDB's writer mutex would not allow), and an
 * flock on the file refuses a second crawl. Nothing here knows what a
 * crawl does with the pages.
 *
 * A file is checked (state_lmdb_check.c) before LMDB may write a byte of
 * it: one that is not LMDB, or shorter than its meta pages say, is left
 * as it was. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lmdb.h>

#include "state_internal.h"
#include "state_lmdb.h"

static const struct state_ops lm_ops;
static void lm_close(struct state *st_);

/* The address space the file may grow into; only what is written takes
 * disk. */
#define STATE_MAP_SIZE ((size_t)1 << 36)

/* Page states. */
enum { QUEUED = 0, DONE = 1, FETCHED = 2 };

/* A page record: this header, then url, scope, source and why, each
 * NUL-terminated (an absent one is empty, with its bit in has). */
struct rec {
    uint8_t state;
    uint8_t has;                /* 1 scope, 2 source, 4 why */
    int32_t depth;
    int64_t line;
};

struct lm {
    struct state base;
    MDB_env *env;
    MDB_txn *txn;               /* the open write transaction */
    MDB_dbi page, seen, robots, meta;
    int fd;                     /* the file, flocked */
    uint32_t psize;             /* LMDB's page size */
    uint64_t next;              /* the next page id */
    int64_t queued, fetched;    /* pages queued; done and fetched */
    pthread_mutex_t lock;       /* recursive: a loader's callback may look up robots.txt */
    char err[160];
};

static const char *lm_error(struct state *st_)
{
    struct lm *st = (struct lm *)st_;
    return st ? st->err : "out of memory";
}

/* Records LMDB's error rc in st; returns -1. */
static int fail(struct lm *st, const char *what, int rc)
{
    snprintf(st->err, sizeof st->err, "%s: %s", what, mdb_strerror(rc));
    return -1;
}

static MDB_val val(const void *p, size_t n)
{
    return (MDB_val){ .mv_size = n, .mv_data = (void *)p };
}

static int meta_get(struct lm *st, const char *key, MDB_val *v)
{
    MDB_val k = val(key, strlen(key));
    return mdb_get(st->txn, st->meta, &k, v);
}

static int meta_put(struct lm *st, const char *key, const void *p, size_t n)
{
    MDB_val k = val(key, strlen(key)), v = val(p, n);
    int rc = mdb_put(st->txn, st->meta, &k, &v, 0);
    return rc ? fail(st, "meta", rc) : 0;
}

static int lm_get(struct state *st_, const char *key, int64_t *v)
{
    struct lm *st = (struct lm *)st_;
    MDB_val d;
    pthread_mutex_lock(&st->lock);
    int rc = meta_get(st, key, &d);
    if (rc == 0 && d.mv_size == sizeof *v)
        memcpy(v, d.mv_data, sizeof *v);
    pthread_mutex_unlock(&st->lock);
    return rc == 0 || rc == MDB_NOTFOUND ? 0 : fail(st, key, rc);
}

static int lm_set(struct state *st_, const char *key, int64_t v)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    int rc = meta_put(st, key, &v, sizeof v);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* Compares the options of this run (name=value lines) with the ones the
 * store was made with, or records them in a new store. Returns 0, or -1
 * with the first difference in why. */
static int check_opts(struct lm *st, const char *opts, int fresh, char *why, size_t n)
{
    char line[1024], key[1100], had[1024];
    for (const char *p = opts; *p;) {
        size_t len = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        p += len + (p[len] == '\n');
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        snprintf(key, sizeof key, "opt:%s", line);
        MDB_val d;
        if (fresh) {
            if (meta_put(st, key, eq + 1, strlen(eq + 1)) != 0) {
                snprintf(why, n, "%s", st->err);
                return -1;
            }
            continue;
        }
        int found = meta_get(st, key, &d) == 0;
        snprintf(had, sizeof had, "%.*s", found ? (int)d.mv_size : 0,
                 found ? (const char *)d.mv_data : "");
        if (!found || strcmp(had, eq + 1) != 0) {
            snprintf(why, n, "started with %s=%s, not %s=%s", line, found ? had : "(none)", line,
                     eq + 1);
            return -1;
        }
    }
    return 0;
}

static int64_t meta_int(struct lm *st, const char *key)
{
    MDB_val d;
    int64_t v = 0;
    if (meta_get(st, key, &d) == 0 && d.mv_size == sizeof v)
        memcpy(&v, d.mv_data, sizeof v);
    return v;
}

/* Opens the databases and reads the counters, in the open transaction. */
static int open_dbs(struct lm *st)
{
    int rc;
    if ((rc = mdb_dbi_open(st->txn, "page", MDB_CREATE | MDB_INTEGERKEY, &st->page)) ||
        (rc = mdb_dbi_open(st->txn, "seen", MDB_CREATE | MDB_INTEGERKEY, &st->seen)) ||
        (rc = mdb_dbi_open(st->txn, "robots", MDB_CREATE, &st->robots)) ||
        (rc = mdb_dbi_open(st->txn, "meta", MDB_CREATE, &st->meta)))
        return fail(st, "open", rc);
    MDB_cursor *cur;
    MDB_val k, v;
    st->next = 1;
    if ((rc = mdb_cursor_open(st->txn, st->page, &cur)))
        return fail(st, "open", rc);
    size_t last;
    if (mdb_cursor_get(cur, &k, &v, MDB_LAST) == 0 && k.mv_size == sizeof last) {
        memcpy(&last, k.mv_data, sizeof last);
        st->next = (uint64_t)last + 1;
    }
    mdb_cursor_close(cur);
    st->queued = meta_int(st, "queued");
    st->fetched = meta_int(st, "fetched");
    return 0;
}

/* After a commit: a commit's last pages may be freed before they were ever
 * written (LMDB returns "loose" pages to its free list unwritten), which
 * leaves the file shorter than the meta page says; the check refuses such
 * a file as truncated, so it is made as long as it says, sparsely. 0, or
 * an errno. */
static int keep_length(struct lm *st)
{
    MDB_envinfo info;
    struct stat sb;
    off_t want;
    if (mdb_env_info(st->env, &info) == 0 && fstat(st->fd, &sb) == 0 &&
        sb.st_size < (want = (off_t)(info.me_last_pgno + 1) * (off_t)st->psize) &&
        ftruncate(st->fd, want) != 0)
        return errno;
    return 0;
}

/* Decides whether the file open at fd may be opened for writing: a new or
 * empty file, or an LMDB file as long as its meta pages say. Returns 0
 * with *fresh set (no store in it yet), or STATE_ELOST with the reason in
 * why. */
static int vet(int fd, int *fresh, char *why, size_t n)
{
    struct state_lmdb_meta m;
    char r[256];
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(why, n, "%s", strerror(errno));
        return STATE_ELOST;
    }
    *fresh = sb.st_size == 0;
    if (*fresh)
        return 0;
    switch (state_lmdb_read_meta(fd, &m, r, sizeof r)) {
    case STATE_LMDB_OK:
        return 0;
    case STATE_LMDB_FOREIGN:
        snprintf(why, n, "not a crawl state file (%s); left as it was", r);
        break;
    case STATE_LMDB_BROKEN:
        snprintf(why, n, "not a usable state file (%s)", r);
        break;
    }
    return STATE_ELOST;
}

int state_lmdb_open(struct state **out, const char *path, const char *opts,
               enum state_phase *phase, char *why, size_t n)
{
    struct lm *st = calloc(1, sizeof *st);
    pthread_mutexattr_t a;
    int rc, fresh, ret = STATE_ELOST;
    if (!st) {
        snprintf(why, n, "out of memory");
        return STATE_EREFUSED;
    }
    st->base.ops = &lm_ops;
    st->fd = -1;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&st->lock, &a);
    pthread_mutexattr_destroy(&a);
    if ((st->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0) {
        snprintf(why, n, "%s", strerror(errno));
        ret = STATE_EREFUSED;
        goto fail;
    }
    if (flock(st->fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(why, n, errno == EWOULDBLOCK ? "in use by another crawl" : "%s",
                 strerror(errno));
        ret = STATE_EREFUSED;
        goto fail;
    }
    /* Checked before LMDB opens it for writing, which writes (its meta
     * pages, when it finds none) even before a commit. */
    if (vet(st->fd, &fresh, why, n) != 0)
        goto fail;
    MDB_stat es;
    if ((rc = mdb_env_create(&st->env)) || (rc = mdb_env_set_maxdbs(st->env, 4)) ||
        (rc = mdb_env_set_mapsize(st->env, STATE_MAP_SIZE)) ||
        (rc = mdb_env_open(st->env, path, MDB_NOSUBDIR | MDB_NOSYNC | MDB_NOLOCK | MDB_NOTLS,
                           0666)) ||
        (rc = mdb_env_stat(st->env, &es)) || (rc = mdb_txn_begin(st->env, NULL, 0, &st->txn))) {
        snprintf(why, n, "%s", mdb_strerror(rc));
        goto fail;
    }
    st->psize = es.ms_psize;
    if (open_dbs(st) != 0) {
        snprintf(why, n, "%s", st->err);
        goto fail;
    }
    MDB_val d;
    fresh = meta_get(st, "version", &d) != 0;
    if (!fresh && (d.mv_size != 1 || *(const char *)d.mv_data != '2')) {
        snprintf(why, n, "made by another version of crawl");
        goto fail;
    }
    if ((fresh && meta_put(st, "version", "2", 1) != 0) ||
        (rc = check_opts(st, opts, fresh, why, n)) != 0) {
        ret = STATE_EREFUSED;
        goto fail;
    }
    rc = mdb_txn_commit(st->txn);
    st->txn = NULL;     /* freed by the commit, whatever it returned */
    if (rc || (rc = keep_length(st)) || (rc = mdb_txn_begin(st->env, NULL, 0, &st->txn))) {
        snprintf(why, n, "%s", mdb_strerror(rc));
        goto fail;
    }
    *phase = fresh ? STATE_NEW : meta_int(st, "finished") ? STATE_FINISHED : STATE_RESUMED;
    *out = &st->base;
    return 0;
fail:
    lm_close(&st->base);
    return ret;
}

static void lm_close(struct state *st_)
{
    struct lm *st = (struct lm *)st_;
    if (!st)
        return;
    if (st->txn)
        mdb_txn_abort(st->txn);
    if (st->env)
        mdb_env_close(st->env);
    if (st->fd >= 0)
        close(st->fd);      /* and its flock */
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static int lm_seen_add(struct state *st_, uint64_t hash)
{
    struct lm *st = (struct lm *)st_;
    size_t h = (size_t)hash;
    MDB_val k = val(&h, sizeof h), v = val("", 0);
    pthread_mutex_lock(&st->lock);
    int rc = mdb_put(st->txn, st->seen, &k, &v, MDB_NOOVERWRITE);
    pthread_mutex_unlock(&st->lock);
    return rc == 0 ? 1 : rc == MDB_KEYEXIST ? 0 : fail(st, "seen", rc);
}

static int lm_queue_add(struct state *st_, const struct state_page *p, uint64_t *id)
{
    struct lm *st = (struct lm *)st_;
    const char *s[4] = { p->url, p->scope, p->source, p->why };
    size_t len[4], total = sizeof(struct rec);
    struct rec r = { .state = QUEUED, .depth = p->depth, .line = p->line };
    for (int i = 0; i < 4; i++) {
        if (i > 0 && s[i])
            r.has |= (uint8_t)(1 << (i - 1));
        len[i] = s[i] ? strlen(s[i]) : 0;
        total += len[i] + 1;
    }
    pthread_mutex_lock(&st->lock);
    size_t key = (size_t)st->next;
    MDB_val k = val(&key, sizeof key), v = val(NULL, total);
    int rc = mdb_put(st->txn, st->page, &k, &v, MDB_APPEND | MDB_RESERVE);
    if (rc == 0) {
        char *d = v.mv_data;
        memcpy(d, &r, sizeof r);
        d += sizeof r;
        for (int i = 0; i < 4; i++) {
            if (len[i])
                memcpy(d, s[i], len[i]);
            d[len[i]] = '\0';
            d += len[i] + 1;
        }
        *id = st->next++;
        st->queued++;
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? fail(st, "queue", rc) : 0;
}

static int lm_admit(struct state *st_, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    int rc = lm_seen_add(&st->base, hash);
    if (rc == 1 && lm_queue_add(&st->base, p, id) != 0)
        rc = -1;
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* Reads record v into p (its strings point into v). */
static void unpack(const MDB_val *v, struct rec *r, struct state_page *p)
{
    const char *d = (const char *)v->mv_data + sizeof *r;
    const char *s[4];
    memcpy(r, v->mv_data, sizeof *r);
    for (int i = 0; i < 4; i++) {
        s[i] = d;
        d += strlen(d) + 1;
    }
    *p = (struct state_page){
        .url = s[0], .scope = r->has & 1 ? s[1] : NULL, .source = r->has & 2 ? s[2] : NULL,
        .why = r->has & 4 ? s[3] : NULL, .depth = r->depth, .line = (long)r->line,
    };
}

static int lm_queue_load(struct state *st_, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data),
                     void *data)
{
    struct lm *st = (struct lm *)st_;
    /* The records are copied out first: fn may write (state_drop), and a
     * write may move what the cursor points into. */
    char *buf = NULL;
    size_t used = 0, cap = 0, n = 0;
    size_t key = (size_t)after + 1;
    MDB_val k = val(&key, sizeof key), v;
    MDB_cursor *cur;
    pthread_mutex_lock(&st->lock);
    int rc = mdb_cursor_open(st->txn, st->page, &cur);
    if (rc == 0) {
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0 && n < max;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            /* LMDB aligns records to 2 bytes only: bytes are read, not a
             * struct rec in place. */
            if (*(const uint8_t *)v.mv_data != QUEUED)
                continue;
            size_t need = sizeof(uint64_t) + sizeof(size_t) + v.mv_size;
            if (used + need > cap) {
                size_t c = cap ? 2 * cap : 65536;
                while (c < used + need)
                    c *= 2;
                char *nb = realloc(buf, c);
                if (!nb) {
                    rc = ENOMEM;
                    break;
                }
                buf = nb, cap = c;
            }
            size_t key_id;
            memcpy(&key_id, k.mv_data, sizeof key_id);
            uint64_t id = key_id;
            memcpy(buf + used, &id, sizeof id);
            memcpy(buf + used + sizeof id, &v.mv_size, sizeof v.mv_size);
            memcpy(buf + used + sizeof id + sizeof v.mv_size, v.mv_data, v.mv_size);
            used += need;
            n++;
        }
        mdb_cursor_close(cur);
    }
    if (rc == MDB_NOTFOUND)
        rc = 0;
    for (size_t at = 0; rc == 0 && at < used;) {
        uint64_t id;
        MDB_val rv;
        struct rec r;
        struct state_page p;
        memcpy(&id, buf + at, sizeof id);
        memcpy(&rv.mv_size, buf + at + sizeof id, sizeof rv.mv_size);
        rv.mv_data = buf + at + sizeof id + sizeof rv.mv_size;
        unpack(&rv, &r, &p);
        fn(id, &p, data);
        at += sizeof id + sizeof rv.mv_size + rv.mv_size;
    }
    pthread_mutex_unlock(&st->lock);
    free(buf);
    return rc ? fail(st, "load", rc) : (int)n;
}

static long lm_queue_left(struct state *st_)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    long n = (long)st->queued;
    pthread_mutex_unlock(&st->lock);
    return n;
}

static long lm_fetched(struct state *st_)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    long n = (long)st->fetched;
    pthread_mutex_unlock(&st->lock);
    return n;
}

/* Sets page id's state to to, when it is queued; the lock is held. */
static int set_state(struct lm *st, uint64_t id, uint8_t to)
{
    size_t key = (size_t)id;
    MDB_val k = val(&key, sizeof key), v;
    int rc = mdb_get(st->txn, st->page, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return fail(st, "mark", rc);
    if (*(const uint8_t *)v.mv_data != QUEUED)
        return 0;
    /* A page changes in place: the copy put back is the record with its
     * first byte changed. */
    char small[512], *copy = v.mv_size <= sizeof small ? small : malloc(v.mv_size);
    if (!copy)
        return fail(st, "mark", ENOMEM);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[0] = (char)to;
    MDB_val nv = val(copy, v.mv_size);
    rc = mdb_put(st->txn, st->page, &k, &nv, 0);
    if (copy != small)
        free(copy);
    if (rc)
        return fail(st, "mark", rc);
    st->queued--;
    if (to == FETCHED)
        st->fetched++;
    return 0;
}

static int lm_drop(struct state *st_, uint64_t id)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    int rc = set_state(st, id & STATE_ID, DONE);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static int lm_commit(struct state *st_, const uint64_t *marks, size_t n, uint64_t offset)
{
    struct lm *st = (struct lm *)st_;
    int rc = 0;
    int64_t off = (int64_t)offset;
    pthread_mutex_lock(&st->lock);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = set_state(st, marks[i] & STATE_ID, marks[i] & STATE_FETCHED ? FETCHED : DONE);
    if (rc == 0)
        rc = meta_put(st, "offset", &off, sizeof off);
    if (rc == 0)
        rc = meta_put(st, "queued", &st->queued, sizeof st->queued);
    if (rc == 0)
        rc = meta_put(st, "fetched", &st->fetched, sizeof st->fetched);
    if (rc == 0) {
        int e = mdb_txn_commit(st->txn);
        st->txn = NULL;
        if (e || (e = keep_length(st)) || (e = mdb_txn_begin(st->env, NULL, 0, &st->txn)))
            rc = fail(st, "commit", e);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static int lm_robots_put(struct state *st_, const char *host, long status, int fail_class,
                     const char *body, size_t len)
{
    struct lm *st = (struct lm *)st_;
    int64_t head[2] = { status, fail_class };
    MDB_val k = val(host, strlen(host)), v = val(NULL, sizeof head + len);
    pthread_mutex_lock(&st->lock);
    int rc = mdb_put(st->txn, st->robots, &k, &v, MDB_RESERVE);
    if (rc == 0) {
        memcpy(v.mv_data, head, sizeof head);
        if (len)
            memcpy((char *)v.mv_data + sizeof head, body, len);
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? fail(st, "robots", rc) : 0;
}

static int lm_robots_get(struct state *st_, const char *host, long *status, int *fail_class,
                     char **body, size_t *len)
{
    struct lm *st = (struct lm *)st_;
    MDB_val k = val(host, strlen(host)), v;
    int64_t head[2];
    pthread_mutex_lock(&st->lock);
    int rc = mdb_get(st->txn, st->robots, &k, &v);
    if (rc == 0 && v.mv_size >= sizeof head) {
        size_t n = v.mv_size - sizeof head;
        memcpy(head, v.mv_data, sizeof head);
        *status = (long)head[0];
        *fail_class = (int)head[1];
        *len = n;
        if ((*body = malloc(n + 1))) {
            memcpy(*body, (const char *)v.mv_data + sizeof head, n);
            (*body)[n] = '\0';
            rc = 1;
        } else {
            rc = fail(st, "robots", ENOMEM);
        }
    } else {
        rc = rc == MDB_NOTFOUND ? 0 : fail(st, "robots", rc ? rc : MDB_CORRUPTED);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static const struct state_ops lm_ops = {
    .error = lm_error,
    .close = lm_close,
    .get = lm_get,
    .set = lm_set,
    .seen_add = lm_seen_add,
    .queue_add = lm_queue_add,
    .admit = lm_admit,
    .queue_load = lm_queue_load,
    .queue_left = lm_queue_left,
    .fetched = lm_fetched,
    .drop = lm_drop,
    .commit = lm_commit,
    .robots_put = lm_robots_put,
    .robots_get = lm_robots_get,
};

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
 * Nothing read is trusted (the format is in state_lmdb.h): a file is
 * checked (state_lmdb_check.c) before LMDB may write a byte to it, and one
 * that is not crawl's is left as it was; every record ends with a CRC that
 * every read checks; and once a write fails, every call fails with it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <lmdb.h>

#include "state_internal.h"
#include "state_lmdb.h"

static const struct state_ops lm_ops;
static void lm_close(struct state *st_);

enum { QUEUED = STATE_LMDB_QUEUED, DONE = STATE_LMDB_DONE, FETCHED = STATE_LMDB_FETCHED };

struct lm {
    struct state base;
    MDB_env *env;
    MDB_txn *txn;               /* the open write transaction (NULL once a
                                 * commit failed) */
    int lost;                   /* a call failed: no more are made */
    MDB_dbi page, seen, robots, meta;
    int fd;                     /* the file, flocked */
    uint32_t psize;             /* LMDB's page size */
    uint64_t next;              /* the next page id */
    int64_t queued, fetched;    /* pages queued; done and fetched */
    int64_t nseen, nrobots;     /* records of the seen set and of robots.txt */
    pthread_mutex_t lock;       /* recursive: a loader's callback may look up robots.txt */
    char err[200];
};

static const char *lm_error(struct state *st_)
{
    struct lm *st = (struct lm *)st_;
    return st ? st->err : "out of memory";
}

/* Records LMDB's error rc in st, unless an earlier one is there; returns
 * -1. After a failure the transaction holds part of a change (LMDB may
 * have marked it failed too): the store is not used again. */
static int fail(struct lm *st, const char *what, int rc)
{
    if (!st->lost)
        snprintf(st->err, sizeof st->err, "%s: %s", what, mdb_strerror(rc));
    st->lost = 1;
    return -1;
}

/* Records that a record of database db failed its check; returns -1. The
 * file lost what the crawl wrote there: nothing more is read from it. */
static int damaged(struct lm *st, const char *db)
{
    if (!st->lost)
        snprintf(st->err, sizeof st->err, "not a usable state file (a record of database %s "
                 "fails its CRC)", db);
    st->lost = 1;
    return -1;
}

/* -1 when the store can no longer be used (a call failed), with the error
 * that said so left in st->err; 0 otherwise. */
static int gone(struct lm *st)
{
    return st->txn && !st->lost ? 0 : -1;
}

static MDB_val val(const void *p, size_t n)
{
    return (MDB_val){ .mv_size = n, .mv_data = (void *)p };
}

/* Looks up key in the meta database: 0 with *v its value, the CRC left
 * out; MDB_NOTFOUND; -1 with st->err set (a damaged record); or LMDB's
 * error. */
static int meta_get(struct lm *st, const char *key, MDB_val *v)
{
    MDB_val k = val(key, strlen(key));
    int rc = mdb_get(st->txn, st->meta, &k, v);
    if (rc)
        return rc;
    if (!state_lmdb_sealed(k.mv_data, k.mv_size, v->mv_data, v->mv_size))
        return damaged(st, "meta");
    v->mv_size -= STATE_LMDB_CRC;
    return 0;
}

static int meta_put(struct lm *st, const char *key, const void *p, size_t n)
{
    MDB_val k = val(key, strlen(key)), v = val(NULL, n + STATE_LMDB_CRC);
    int rc = mdb_put(st->txn, st->meta, &k, &v, MDB_RESERVE);
    if (rc)
        return fail(st, "meta", rc);
    if (n)
        memcpy(v.mv_data, p, n);
    state_lmdb_seal(k.mv_data, k.mv_size, v.mv_data, v.mv_size);
    return 0;
}

/* A named integer into *v (left alone when there is none). 0 or -1. */
static int meta_int(struct lm *st, const char *key, int64_t *v)
{
    MDB_val d;
    int rc = meta_get(st, key, &d);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc == -1)
        return -1;
    if (rc)
        return fail(st, key, rc);
    if (d.mv_size != sizeof *v)
        return damaged(st, "meta");
    memcpy(v, d.mv_data, sizeof *v);
    return 0;
}

static int lm_get(struct state *st_, const char *key, int64_t *v)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : meta_int(st, key, v);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static int lm_set(struct state *st_, const char *key, int64_t v)
{
    struct lm *st = (struct lm *)st_;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : meta_put(st, key, &v, sizeof v);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* Compares the options of this run (name=value lines) with the ones the
 * store was made with, or records them in a new store. Returns 0, -1 with
 * the first difference in why, or -3 with the store's error in why. */
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
                return STATE_ELOST;
            }
            continue;
        }
        int rc = meta_get(st, key, &d);
        if (rc && rc != MDB_NOTFOUND) {
            if (rc != -1)
                fail(st, "meta", rc);
            snprintf(why, n, "%s", st->err);
            return STATE_ELOST;
        }
        int found = rc == 0;
        snprintf(had, sizeof had, "%.*s", found ? (int)d.mv_size : 0,
                 found ? (const char *)d.mv_data : "");
        if (!found || strcmp(had, eq + 1) != 0) {
            snprintf(why, n, "started with %s=%s, not %s=%s", line, found ? had : "(none)", line,
                     eq + 1);
            return STATE_EREFUSED;
        }
    }
    return 0;
}

/* Opens the databases and reads the counters, in the open transaction. A
 * new store (fresh) gets its databases made, crawl's marker and zero
 * counts. */
static int open_dbs(struct lm *st, int fresh)
{
    unsigned mk = fresh ? MDB_CREATE : 0;
    int rc;
    if ((rc = mdb_dbi_open(st->txn, "page", mk | MDB_INTEGERKEY, &st->page)) ||
        (rc = mdb_dbi_open(st->txn, "seen", mk | MDB_INTEGERKEY, &st->seen)) ||
        (rc = mdb_dbi_open(st->txn, "robots", mk, &st->robots)) ||
        (rc = mdb_dbi_open(st->txn, "meta", mk, &st->meta)))
        return fail(st, "open", rc);
    if (fresh) {
        char m[STATE_LMDB_MAGIC_LEN + 4];
        uint32_t format = STATE_LMDB_FORMAT;
        memcpy(m, STATE_LMDB_MAGIC, STATE_LMDB_MAGIC_LEN);
        memcpy(m + STATE_LMDB_MAGIC_LEN, &format, sizeof format);
        if (meta_put(st, STATE_LMDB_MARKER, m, sizeof m) != 0)
            return -1;
    }
    MDB_cursor *cur;
    MDB_val k, v;
    st->next = 1;
    if ((rc = mdb_cursor_open(st->txn, st->page, &cur)))
        return fail(st, "open", rc);
    size_t last;
    rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    if (rc == 0 && (k.mv_size != sizeof last ||
                    !state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size)))
        rc = -1;
    if (rc == 0) {
        memcpy(&last, k.mv_data, sizeof last);
        st->next = (uint64_t)last + 1;
    }
    mdb_cursor_close(cur);
    if (rc == -1)
        return damaged(st, "page");
    if (rc && rc != MDB_NOTFOUND)
        return fail(st, "open", rc);
    if (meta_int(st, "queued", &st->queued) || meta_int(st, "fetched", &st->fetched) ||
        meta_int(st, "count:seen", &st->nseen) || meta_int(st, "count:robots", &st->nrobots))
        return -1;
    return 0;
}

/* Writes the counts the check holds the databases to (state_lmdb_check.c),
 * in the open transaction. 0 or -1. */
static int put_counts(struct lm *st)
{
    int64_t pages = (int64_t)st->next - 1;
    return meta_put(st, "queued", &st->queued, sizeof st->queued) ||
           meta_put(st, "fetched", &st->fetched, sizeof st->fetched) ||
           meta_put(st, "count:pages", &pages, sizeof pages) ||
           meta_put(st, "count:seen", &st->nseen, sizeof st->nseen) ||
           meta_put(st, "count:robots", &st->nrobots, sizeof st->nrobots) ? -1 : 0;
}

/* Commits the open transaction and opens the next. On failure the store
 * is lost (st->txn stays NULL) and st->err says why. 0 or -1. */
static int commit(struct lm *st)
{
    int e = mdb_txn_commit(st->txn);
    st->txn = NULL;     /* freed by the commit, whatever it returned */
    if (e == EIO) {
        /* LMDB reports a short write as EIO (mdb_page_flush's "which
         * error code?"), and a full disk is what gives one: say so. */
        struct statvfs vfs;
        if (fstatvfs(st->fd, &vfs) == 0 && vfs.f_bavail == 0)
            e = ENOSPC;
    }
    if (e)
        return fail(st, "commit", e);
    /* A commit's last pages may be freed before they were ever written (LMDB
     * returns "loose" pages to its free list unwritten), which leaves the
     * file shorter than the meta page says; the check refuses such a file
     * as truncated, so it is made as long as it says, sparsely. */
    MDB_envinfo info;
    struct stat sb;
    off_t want;
    if (mdb_env_info(st->env, &info) == 0 && fstat(st->fd, &sb) == 0 &&
        sb.st_size < (want = (off_t)(info.me_last_pgno + 1) * (off_t)st->psize) &&
        ftruncate(st->fd, want) != 0)
        return fail(st, "commit", errno);
    if ((e = mdb_txn_begin(st->env, NULL, 0, &st->txn)))
        return fail(st, "commit", e);
    return 0;
}

/* Decides whether the file open at fd may be opened for writing: a new or
 * empty file, or crawl's store of this format, whole. Returns 0 with
 * *fresh set (no store in it yet), or STATE_ELOST with the reason in why. */
static int vet(const char *path, int fd, int *fresh, char *why, size_t n)
{
    struct state_lmdb_meta m;
    char r[256];
    unsigned format = 0;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(why, n, "%s", strerror(errno));
        return STATE_ELOST;
    }
    *fresh = sb.st_size == 0;
    if (*fresh)
        return 0;
    enum state_lmdb_verdict v = state_lmdb_read_meta(fd, &m, r, sizeof r);
    /* An LMDB file no commit was made to holds nothing: a crawl killed
     * between LMDB's making the file and its first commit leaves one. */
    if (v == STATE_LMDB_OK && m.empty) {
        *fresh = 1;
        return 0;
    }
    if (v == STATE_LMDB_OK)
        v = state_lmdb_walk(path, fd, &m, &format, r, sizeof r);
    switch (v) {
    case STATE_LMDB_OK:
        return 0;
    case STATE_LMDB_FOREIGN:
        snprintf(why, n, "not a crawl state file (%s); left as it was", r);
        break;
    case STATE_LMDB_VERSION:
        snprintf(why, n, "a crawl state file of format %u, made by %s crawl; this crawl reads "
                 "format %u only; left as it was", format,
                 format < STATE_LMDB_FORMAT ? "an older" : "a newer", STATE_LMDB_FORMAT);
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
    int rc, fresh = 0, ret = STATE_ELOST;
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
    if (vet(path, st->fd, &fresh, why, n) != 0)
        goto fail;
    MDB_stat es;
    if ((rc = mdb_env_create(&st->env)) || (rc = mdb_env_set_maxdbs(st->env, STATE_LMDB_DBS)) ||
        (rc = mdb_env_set_mapsize(st->env, STATE_LMDB_MAP_SIZE)) ||
        (rc = mdb_env_open(st->env, path, MDB_NOSUBDIR | MDB_NOSYNC | MDB_NOLOCK | MDB_NOTLS,
                           0666)) ||
        (rc = mdb_env_stat(st->env, &es)) || (rc = mdb_txn_begin(st->env, NULL, 0, &st->txn))) {
        snprintf(why, n, "%s", mdb_strerror(rc));
        goto fail;
    }
    st->psize = es.ms_psize;
    if (open_dbs(st, fresh) != 0 || (fresh && put_counts(st) != 0)) {
        snprintf(why, n, "%s", st->err);
        goto fail;
    }
    if ((rc = check_opts(st, opts, fresh, why, n)) != 0) {
        ret = rc;
        goto fail;
    }
    int64_t finished = 0;
    if (meta_int(st, "finished", &finished) != 0 || commit(st) != 0) {
        snprintf(why, n, "%s", st->err);
        goto fail;
    }
    *phase = fresh ? STATE_NEW : finished ? STATE_FINISHED : STATE_RESUMED;
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
    char crc[STATE_LMDB_CRC];
    state_lmdb_seal(&h, sizeof h, crc, sizeof crc);
    MDB_val k = val(&h, sizeof h), v = val(crc, sizeof crc);
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : mdb_put(st->txn, st->seen, &k, &v, MDB_NOOVERWRITE);
    /* Seen before: LMDB gives the record there, which is checked too. */
    if (rc == MDB_KEYEXIST && !state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size))
        rc = damaged(st, "seen");
    if (rc == 0)
        st->nseen++;
    pthread_mutex_unlock(&st->lock);
    return rc == 0 ? 1 : rc == MDB_KEYEXIST ? 0 : rc == -1 ? -1 : fail(st, "seen", rc);
}

static int lm_queue_add(struct state *st_, const struct state_page *p, uint64_t *id)
{
    struct lm *st = (struct lm *)st_;
    const char *s[STATE_LMDB_STRINGS] = { p->url, p->scope, p->source, p->why, p->parent };
    size_t len[STATE_LMDB_STRINGS], total = sizeof(struct state_lmdb_rec) + STATE_LMDB_CRC;
    struct state_lmdb_rec r;
    memset(&r, 0, sizeof r);
    r.state = QUEUED;
    r.depth = p->depth;
    r.line = p->line;
    for (int i = 0; i < STATE_LMDB_STRINGS; i++) {
        if (i > 0 && s[i])
            r.has |= (uint8_t)(1 << (i - 1));
        len[i] = s[i] ? strlen(s[i]) : 0;
        total += len[i] + 1;
    }
    pthread_mutex_lock(&st->lock);
    if (gone(st)) {
        pthread_mutex_unlock(&st->lock);
        return -1;
    }
    size_t key = (size_t)st->next;
    MDB_val k = val(&key, sizeof key), v = val(NULL, total);
    int rc = mdb_put(st->txn, st->page, &k, &v, MDB_APPEND | MDB_RESERVE);
    if (rc == 0) {
        char *d = v.mv_data;
        memcpy(d, &r, sizeof r);
        d += sizeof r;
        for (int i = 0; i < STATE_LMDB_STRINGS; i++) {
            if (len[i])
                memcpy(d, s[i], len[i]);
            d[len[i]] = '\0';
            d += len[i] + 1;
        }
        state_lmdb_seal(k.mv_data, k.mv_size, v.mv_data, v.mv_size);
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

/* Reads record v (checked: state_lmdb_page_ok) into p (its strings point
 * into v). */
static void unpack(const MDB_val *v, struct state_lmdb_rec *r, struct state_page *p)
{
    const char *d = (const char *)v->mv_data + sizeof *r;
    const char *s[STATE_LMDB_STRINGS];
    memcpy(r, v->mv_data, sizeof *r);
    for (int i = 0; i < STATE_LMDB_STRINGS; i++) {
        s[i] = d;
        d += strlen(d) + 1;
    }
    *p = (struct state_page){
        .url = s[0], .scope = r->has & 1 ? s[1] : NULL, .source = r->has & 2 ? s[2] : NULL,
        .why = r->has & 4 ? s[3] : NULL, .parent = r->has & 8 ? s[4] : NULL,
        .depth = r->depth, .line = (long)r->line,
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
    if (gone(st)) {
        pthread_mutex_unlock(&st->lock);
        return -1;
    }
    int rc = mdb_cursor_open(st->txn, st->page, &cur);
    if (rc == 0) {
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0 && n < max;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            /* LMDB aligns records to 2 bytes only: bytes are read, not a
             * struct in place. */
            uint8_t state;
            if (k.mv_size != sizeof key ||
                !state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size) ||
                !state_lmdb_page_ok(v.mv_data, v.mv_size - STATE_LMDB_CRC, &state)) {
                rc = -1;
                break;
            }
            if (state != QUEUED)
                continue;
            size_t vlen = v.mv_size - STATE_LMDB_CRC;
            size_t need = sizeof(uint64_t) + sizeof(size_t) + vlen;
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
            memcpy(buf + used + sizeof id, &vlen, sizeof vlen);
            memcpy(buf + used + sizeof id + sizeof vlen, v.mv_data, vlen);
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
        struct state_lmdb_rec r;
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
    return rc == -1 ? damaged(st, "page") : rc ? fail(st, "load", rc) : (int)n;
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
    uint8_t state;
    int rc = mdb_get(st->txn, st->page, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return fail(st, "mark", rc);
    if (!state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size) ||
        !state_lmdb_page_ok(v.mv_data, v.mv_size - STATE_LMDB_CRC, &state))
        return damaged(st, "page");
    if (state != QUEUED)
        return 0;
    /* A page changes in place: the copy put back is the record with its
     * first byte changed, sealed again. */
    char small[512], *copy = v.mv_size <= sizeof small ? small : malloc(v.mv_size);
    if (!copy)
        return fail(st, "mark", ENOMEM);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[0] = (char)to;
    state_lmdb_seal(k.mv_data, k.mv_size, copy, v.mv_size);
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
    int rc = gone(st) ? -1 : set_state(st, id & STATE_ID, DONE);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static int lm_commit(struct state *st_, const uint64_t *marks, size_t n, uint64_t offset)
{
    struct lm *st = (struct lm *)st_;
    int64_t off = (int64_t)offset;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = set_state(st, marks[i] & STATE_ID, marks[i] & STATE_FETCHED ? FETCHED : DONE);
    if (rc == 0)
        rc = meta_put(st, "offset", &off, sizeof off);
    if (rc == 0)
        rc = put_counts(st);
    if (rc == 0)
        rc = commit(st);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static int lm_robots_put(struct state *st_, const char *host, long status, int fail_class,
                     const char *body, size_t len)
{
    struct lm *st = (struct lm *)st_;
    int64_t head[2] = { status, fail_class };
    MDB_val k = val(host, strlen(host)), v, had;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : mdb_get(st->txn, st->robots, &k, &had);
    int fresh = rc == MDB_NOTFOUND;
    if (rc == 0 || rc == MDB_NOTFOUND) {
        v = val(NULL, sizeof head + len + STATE_LMDB_CRC);
        rc = mdb_put(st->txn, st->robots, &k, &v, MDB_RESERVE);
    }
    if (rc == 0) {
        memcpy(v.mv_data, head, sizeof head);
        if (len)
            memcpy((char *)v.mv_data + sizeof head, body, len);
        state_lmdb_seal(k.mv_data, k.mv_size, v.mv_data, v.mv_size);
        st->nrobots += fresh;
    }
    pthread_mutex_unlock(&st->lock);
    return rc == 0 ? 0 : rc == -1 ? -1 : fail(st, "robots", rc);
}

static int lm_robots_get(struct state *st_, const char *host, long *status, int *fail_class,
                     char **body, size_t *len)
{
    struct lm *st = (struct lm *)st_;
    MDB_val k = val(host, strlen(host)), v;
    int64_t head[2];
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : mdb_get(st->txn, st->robots, &k, &v);
    if (rc == 0 && (v.mv_size < sizeof head + STATE_LMDB_CRC ||
                    !state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size))) {
        rc = damaged(st, "robots");
    } else if (rc == 0) {
        size_t n = v.mv_size - sizeof head - STATE_LMDB_CRC;
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
    } else if (rc != -1) {
        rc = rc == MDB_NOTFOUND ? 0 : fail(st, "robots", rc);
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

/* state_lmdb.c: the --state store on LMDB. Five databases in one file: pages by
 * id (their place in the queue), the seen set (64-bit hashes as integer
 * keys), robots.txt by host, what a recrawl needs of each page fetched (by
 * its URL's hash), and the crawl's named values. One write
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
#include <time.h>
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
    MDB_dbi page, seen, robots, valid, meta;
    int fd;                     /* the file, flocked */
    uint32_t psize;             /* LMDB's page size */
    uint64_t next;              /* the next page id */
    int64_t queued, fetched;    /* pages queued; done and fetched */
    int64_t nseen, nrobots;     /* records of the seen set and of robots.txt */
    int64_t nvalid;             /* ... and of the "valid" database */
    int64_t pass;               /* the pass the crawl is in: 1, or the recrawls + 1 */
    int64_t pass_fetched;       /* pages fetched in the passes before it */
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
        (rc = mdb_dbi_open(st->txn, "valid", mk | MDB_INTEGERKEY, &st->valid)) ||
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
    st->pass = 1;
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
        meta_int(st, "count:seen", &st->nseen) || meta_int(st, "count:robots", &st->nrobots) ||
        meta_int(st, "count:valid", &st->nvalid) || meta_int(st, "pass", &st->pass) ||
        meta_int(st, "pass_fetched", &st->pass_fetched))
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
           meta_put(st, "count:robots", &st->nrobots, sizeof st->nrobots) ||
           meta_put(st, "count:valid", &st->nvalid, sizeof st->nvalid) ? -1 : 0;
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
    r.hash = p->hash;
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
        .depth = r->depth, .line = (long)r->line, .hash = r->hash,
    };
}

/* Reads "valid" record d (n bytes, checked: state_lmdb_valid_ok) into v,
 * whose strings point into d; its links too when there are any in d. */
static void valid_unpack(const char *d, size_t n, struct state_valid *v)
{
    struct state_lmdb_valid r;
    memcpy(&r, d, sizeof r);
    const char *etag = d + sizeof r, *lm = etag + strlen(etag) + 1, *links = lm + strlen(lm) + 1;
    *v = (struct state_valid){
        .fetched_at = r.fetched_at, .etag = r.has & 1 ? etag : NULL,
        .modified = r.has & 2 ? lm : NULL, .has_links = (r.has & 4) != 0,
        .links = links, .links_len = (size_t)(d + n - links),
    };
}

/* Looks page hash h up in the "valid" database: 1 with *v its record (the
 * CRC left out), 0 when there is none, -1 (st->err set). The lock is held. */
static int valid_find(struct lm *st, uint64_t h, MDB_val *v)
{
    size_t key = (size_t)h;
    MDB_val k = val(&key, sizeof key);
    int rc = mdb_get(st->txn, st->valid, &k, v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return fail(st, "valid", rc);
    if (!state_lmdb_sealed(k.mv_data, k.mv_size, v->mv_data, v->mv_size) ||
        !state_lmdb_valid_ok(v->mv_data, v->mv_size - STATE_LMDB_CRC))
        return damaged(st, "valid");
    v->mv_size -= STATE_LMDB_CRC;
    return 1;
}

/* Bytes of a "valid" record before its links: what a page's request needs. */
static size_t valid_head(const MDB_val *v)
{
    const char *d = v->mv_data, *etag = d + sizeof(struct state_lmdb_valid);
    const char *lm = etag + strlen(etag) + 1;
    return (size_t)(lm + strlen(lm) + 1 - d);
}

/* A buffer the queued pages are copied into, before the callback sees them. */
struct copies {
    char *buf;
    size_t used, cap;
};

/* Appends n bytes of each of the parts to c. Returns 0 or ENOMEM. */
static int copy_add(struct copies *c, const void *const *parts, const size_t *len, int nparts)
{
    size_t need = 0;
    for (int i = 0; i < nparts; i++)
        need += len[i];
    if (c->used + need > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 65536;
        while (cap < c->used + need)
            cap *= 2;
        char *nb = realloc(c->buf, cap);
        if (!nb)
            return ENOMEM;
        c->buf = nb, c->cap = cap;
    }
    for (int i = 0; i < nparts; i++) {
        memcpy(c->buf + c->used, parts[i], len[i]);
        c->used += len[i];
    }
    return 0;
}

/* Copies queued page k, v (checked) into c: its id, its record and, in a
 * recrawl pass, the head of its "valid" record (none: empty). Returns 0,
 * -1 (a damaged record) or an LMDB error. */
static int copy_page(struct lm *st, struct copies *c, const MDB_val *k, const MDB_val *v)
{
    size_t key_id, vlen = v->mv_size - STATE_LMDB_CRC, wlen = 0;
    struct state_lmdb_rec r;
    MDB_val w = { 0, NULL };
    memcpy(&key_id, k->mv_data, sizeof key_id);
    memcpy(&r, v->mv_data, sizeof r);
    uint64_t id = key_id;
    if (st->pass > 1 && r.hash) {
        int rc = valid_find(st, r.hash, &w);
        if (rc < 0)
            return -1;
        wlen = rc ? valid_head(&w) : 0;
    }
    const void *parts[] = { &id, &vlen, v->mv_data, &wlen, w.mv_data };
    const size_t len[] = { sizeof id, sizeof vlen, vlen, sizeof wlen, wlen };
    return copy_add(c, parts, len, wlen ? 5 : 4);
}

/* Calls fn for each page copied into c. */
static void copies_give(const struct copies *c,
                        void (*fn)(uint64_t id, const struct state_page *p, void *data),
                        void *data)
{
    for (size_t at = 0; at < c->used;) {
        uint64_t id;
        size_t wlen;
        MDB_val rv;
        struct state_lmdb_rec r;
        struct state_page p;
        struct state_valid v;
        memcpy(&id, c->buf + at, sizeof id);
        memcpy(&rv.mv_size, c->buf + at + sizeof id, sizeof rv.mv_size);
        rv.mv_data = c->buf + at + sizeof id + sizeof rv.mv_size;
        at += sizeof id + sizeof rv.mv_size + rv.mv_size;
        memcpy(&wlen, c->buf + at, sizeof wlen);
        at += sizeof wlen;
        unpack(&rv, &r, &p);
        if (wlen) {
            valid_unpack(c->buf + at, wlen, &v);
            v.links = NULL;
            v.links_len = 0;
            p.valid = &v;
            at += wlen;
        }
        fn(id, &p, data);
    }
}

static int lm_queue_load(struct state *st_, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data),
                     void *data)
{
    struct lm *st = (struct lm *)st_;
    /* The records are copied out first: fn may write (state_drop), and a
     * write may move what the cursor points into. */
    struct copies c = { 0 };
    size_t n = 0;
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
            if ((rc = copy_page(st, &c, &k, &v)) != 0)
                break;
            n++;
        }
        mdb_cursor_close(cur);
    }
    if (rc == MDB_NOTFOUND)
        rc = 0;
    if (rc == 0)
        copies_give(&c, fn, data);
    pthread_mutex_unlock(&st->lock);
    free(c.buf);
    return rc == -1 ? (st->lost ? -1 : damaged(st, "page")) : rc ? fail(st, "load", rc) : (int)n;
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
    long n = (long)(st->fetched - st->pass_fetched);
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

static int lm_valid_put(struct state *st_, uint64_t hash, const struct state_valid *v)
{
    struct lm *st = (struct lm *)st_;
    size_t key = (size_t)hash;
    MDB_val k = val(&key, sizeof key), d;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : 0;
    if (rc == 0 && !v) {
        rc = mdb_del(st->txn, st->valid, &k, NULL);
        st->nvalid -= rc == 0;
        rc = rc == MDB_NOTFOUND ? 0 : rc ? fail(st, "valid", rc) : 0;
    } else if (rc == 0) {
        struct state_lmdb_valid r;
        memset(&r, 0, sizeof r);
        r.fetched_at = v->fetched_at;
        r.has = (uint8_t)((v->etag ? 1 : 0) | (v->modified ? 2 : 0) | (v->has_links ? 4 : 0));
        size_t el = v->etag ? strlen(v->etag) : 0, ml = v->modified ? strlen(v->modified) : 0;
        size_t total = sizeof r + el + 1 + ml + 1 + v->links_len + STATE_LMDB_CRC;
        int fresh = mdb_get(st->txn, st->valid, &k, &d) == MDB_NOTFOUND;
        d = val(NULL, total);
        if ((rc = mdb_put(st->txn, st->valid, &k, &d, MDB_RESERVE)) != 0) {
            rc = fail(st, "valid", rc);
        } else {
            char *p = d.mv_data;
            memcpy(p, &r, sizeof r);
            p += sizeof r;
            memcpy(p, v->etag ? v->etag : "", el + 1);
            p += el + 1;
            memcpy(p, v->modified ? v->modified : "", ml + 1);
            p += ml + 1;
            if (v->links_len)
                memcpy(p, v->links, v->links_len);
            state_lmdb_seal(k.mv_data, k.mv_size, d.mv_data, d.mv_size);
            st->nvalid += fresh;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static int lm_valid_get(struct state *st_, uint64_t hash, struct state_valid *v, char **buf)
{
    struct lm *st = (struct lm *)st_;
    MDB_val d;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) ? -1 : valid_find(st, hash, &d);
    if (rc == 1 && !(*buf = malloc(d.mv_size)))
        rc = fail(st, "valid", ENOMEM);
    if (rc == 1) {
        memcpy(*buf, d.mv_data, d.mv_size);
        valid_unpack(*buf, d.mv_size, v);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* Queues a copy of page record v (checked) as a page of the new pass,
 * its hash in the seen set. The lock is held. 0 or -1. */
static int requeue(struct lm *st, const char *v, size_t n)
{
    struct state_lmdb_rec r;
    memcpy(&r, v, sizeof r);
    size_t key = (size_t)st->next;
    MDB_val k = val(&key, sizeof key), d = val(NULL, n + STATE_LMDB_CRC);
    int rc = mdb_put(st->txn, st->page, &k, &d, MDB_APPEND | MDB_RESERVE);
    if (rc)
        return fail(st, "recrawl", rc);
    memcpy(d.mv_data, v, n);
    *(char *)d.mv_data = (char)QUEUED;
    state_lmdb_seal(k.mv_data, k.mv_size, d.mv_data, d.mv_size);
    st->next++;
    st->queued++;
    if (r.hash && lm_seen_add(&st->base, r.hash) < 0)
        return -1;
    return 0;
}

/* Copies the listed pages (depth 0) of the pass whose first page is first
 * into c: each record's length, then the record. The lock is held. 0 or
 * -1. */
static int listed_copy(struct lm *st, int64_t first, struct copies *c)
{
    size_t key = (size_t)first, last = (size_t)st->next;
    MDB_val k = val(&key, sizeof key), v;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(st->txn, st->page, &cur);
    if (rc)
        return fail(st, "recrawl", rc);
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        struct state_lmdb_rec r;
        uint8_t state;
        size_t id, vlen = v.mv_size - STATE_LMDB_CRC;
        memcpy(&id, k.mv_data, sizeof id);
        if (id >= last)
            break;
        if (k.mv_size != sizeof id ||
            !state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size) ||
            !state_lmdb_page_ok(v.mv_data, vlen, &state)) {
            rc = -1;
            break;
        }
        memcpy(&r, v.mv_data, sizeof r);
        const void *parts[] = { &vlen, v.mv_data };
        const size_t len[] = { sizeof vlen, vlen };
        if (r.depth == 0 && (rc = copy_add(c, parts, len, 2)) != 0)
            break;
    }
    mdb_cursor_close(cur);
    return rc == 0 || rc == MDB_NOTFOUND ? 0 : rc == -1 ? damaged(st, "page")
                                                        : fail(st, "recrawl", rc);
}

static int lm_recrawl(struct state *st_, double older, long *n)
{
    struct lm *st = (struct lm *)st_;
    int64_t finished = 0, first = 1, now = (int64_t)time(NULL), ms = (int64_t)(older * 1000);
    struct copies c = { 0 };
    *n = 0;
    pthread_mutex_lock(&st->lock);
    int rc = gone(st) || meta_int(st, "finished", &finished) || meta_int(st, "pass_first", &first)
             ? -1 : 0;
    if (rc == 0 && !finished) {
        pthread_mutex_unlock(&st->lock);
        return 0;
    }
    /* The new pass: the last one's listed pages queued again, a seen set
     * of their own, every count of the pass from 0. */
    int64_t pass = st->pass + 1, pfirst = (int64_t)st->next, zero = 0;
    if (rc == 0)
        rc = listed_copy(st, first, &c);
    int mrc = rc ? 0 : mdb_drop(st->txn, st->seen, 0);
    if (mrc)
        rc = fail(st, "recrawl", mrc);
    if (rc == 0)
        st->nseen = 0;
    for (size_t at = 0; rc == 0 && at < c.used; (*n)++) {
        size_t vlen;
        memcpy(&vlen, c.buf + at, sizeof vlen);
        rc = requeue(st, c.buf + at + sizeof vlen, vlen);
        at += sizeof vlen + vlen;
    }
    if (rc == 0 && (meta_put(st, "pass", &pass, sizeof pass) ||
                    meta_put(st, "pass_first", &pfirst, sizeof pfirst) ||
                    meta_put(st, "pass_fetched", &st->fetched, sizeof st->fetched) ||
                    meta_put(st, "pass_started", &now, sizeof now) ||
                    meta_put(st, "pass_older", &ms, sizeof ms) ||
                    meta_put(st, "finished", &zero, sizeof zero) || put_counts(st)))
        rc = -1;
    if (rc == 0) {
        st->pass = pass;
        st->pass_fetched = st->fetched;
    }
    pthread_mutex_unlock(&st->lock);
    free(c.buf);
    return rc == 0 ? 1 : -1;
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
    .valid_put = lm_valid_put,
    .valid_get = lm_valid_get,
    .recrawl = lm_recrawl,
};

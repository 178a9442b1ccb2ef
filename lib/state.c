/* state.c: the --state store on SQLite. Pages are rows of one table whose
 * integer key is their place in the queue; the seen set is a table of
 * 64-bit hashes (the rowid itself, so that a lookup is one B-tree probe);
 * robots.txt and the crawl's named integers have tables of their own.
 * The file is in WAL mode with synchronous=NORMAL: a commit survives the
 * process being killed (SIGKILL, OOM) without an fsync per commit. Nothing
 * here knows what a crawl does with the rows. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "state.h"

enum {
    Q_SEEN, Q_ADD, Q_LOAD, Q_DONE, Q_ROBOTS_PUT, Q_ROBOTS_GET, Q_GET, Q_SET,
    Q_FETCHED, Q_LEFT, Q_DROP, Q_COUNT
};

static const char *const sql[Q_COUNT] = {
    [Q_SEEN] = "INSERT OR IGNORE INTO seen(h) VALUES (?)",
    [Q_ADD] = "INSERT INTO page(url, scope, depth, line, source, why) VALUES (?, ?, ?, ?, ?, ?)",
    [Q_LOAD] = "SELECT id, url, scope, depth, line, source, why FROM page "
               "WHERE state = 0 AND id > ? ORDER BY id LIMIT ?",
    [Q_DONE] = "UPDATE page SET state = ? WHERE id = ?",
    [Q_ROBOTS_PUT] = "INSERT OR REPLACE INTO robots(host, status, fail, body) VALUES (?, ?, ?, ?)",
    [Q_ROBOTS_GET] = "SELECT status, fail, body FROM robots WHERE host = ?",
    [Q_GET] = "SELECT value FROM meta WHERE key = ?",
    [Q_SET] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
    [Q_FETCHED] = "SELECT count(*) FROM page WHERE state = 2",
    [Q_LEFT] = "SELECT count(*) FROM page WHERE state = 0",
    [Q_DROP] = "UPDATE page SET state = 1 WHERE id = ? AND state = 0",
};

/* Page states: 0 queued, 1 done without a fetch, 2 done and fetched.
 * The queue is read in id order from a cursor that only moves forward, so
 * a run walks the pages done before it once, and no index is needed. */
static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);"
    "CREATE TABLE IF NOT EXISTS page(id INTEGER PRIMARY KEY, url TEXT NOT NULL, scope TEXT,"
    " depth INTEGER NOT NULL, line INTEGER NOT NULL, source TEXT, why TEXT,"
    " state INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS seen(h INTEGER PRIMARY KEY);"
    "CREATE TABLE IF NOT EXISTS robots(host TEXT PRIMARY KEY, status INTEGER, fail INTEGER,"
    " body BLOB);";

struct state {
    sqlite3 *db;
    sqlite3_stmt *q[Q_COUNT];
    pthread_mutex_t lock;       /* recursive: a loader's callback may look up robots.txt */
};

const char *state_error(struct state *st)
{
    return st && st->db ? sqlite3_errmsg(st->db) : "out of memory";
}

static int exec(struct state *st, const char *s)
{
    return sqlite3_exec(st->db, s, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* Runs statement k to its end after binding nothing more; resets it. */
static int run(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

static int get_text(struct state *st, const char *key, char *buf, size_t n)
{
    sqlite3_stmt *s = st->q[Q_GET];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    int found = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(s, 0);
        snprintf(buf, n, "%s", v ? (const char *)v : "");
        found = 1;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return found;
}

static int set_text(struct state *st, const char *key, const char *v)
{
    sqlite3_stmt *s = st->q[Q_SET];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, v, -1, SQLITE_STATIC);
    return run(s);
}

/* Compares the options of this run (name=value lines) with the ones the
 * store was made with, or records them in a new store. Returns 0, or -1
 * with the first difference in why. */
static int check_opts(struct state *st, const char *opts, int fresh, char *why, size_t n)
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
        if (fresh) {
            if (set_text(st, key, eq + 1) != 0)
                goto err;
        } else if (!get_text(st, key, had, sizeof had) || strcmp(had, eq + 1) != 0) {
            snprintf(why, n, "started with %s=%s, not %s=%s", line, get_text(st, key, had,
                     sizeof had) ? had : "(none)", line, eq + 1);
            return -1;
        }
    }
    return 0;
err:
    snprintf(why, n, "%s", sqlite3_errmsg(st->db));
    return -1;
}

int state_open(struct state **out, const char *path, const char *opts,
               enum state_phase *phase, char *why, size_t n)
{
    struct state *st = calloc(1, sizeof *st);
    pthread_mutexattr_t a;
    if (!st) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&st->lock, &a);
    pthread_mutexattr_destroy(&a);
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                        SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        goto err;
    /* Exclusive locking: a second crawl on the same file is refused at
     * once (SQLITE_BUSY) instead of both writing it. */
    if (exec(st, "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL;"
                 "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-8192") != 0)
        goto err;
    if (exec(st, "BEGIN IMMEDIATE") != 0)
        goto err;
    if (exec(st, schema) != 0)
        goto err;
    for (int i = 0; i < Q_COUNT; i++)
        if (sqlite3_prepare_v3(st->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &st->q[i],
                               NULL) != SQLITE_OK)
            goto err;
    char v[64];
    int fresh = !get_text(st, "version", v, sizeof v);
    if (!fresh && strcmp(v, "1") != 0) {
        snprintf(why, n, "made by another version of crawl (%s)", v);
        goto fail;
    }
    if ((fresh && set_text(st, "version", "1") != 0) || check_opts(st, opts, fresh, why, n) != 0)
        goto fail;
    if (exec(st, "COMMIT; BEGIN") != 0)
        goto err;
    int64_t done = 0;
    state_get(st, "finished", &done);
    *phase = fresh ? STATE_NEW : done ? STATE_FINISHED : STATE_RESUMED;
    *out = st;
    return 0;
err:
    if (st->db && (sqlite3_errcode(st->db) & 0xff) == SQLITE_BUSY)
        snprintf(why, n, "in use by another crawl");
    else
        snprintf(why, n, "%s", st->db ? sqlite3_errmsg(st->db) : "out of memory");
fail:
    state_close(st);
    return -1;
}

void state_close(struct state *st)
{
    if (!st)
        return;
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(st->q[i]);
    if (st->db && !sqlite3_get_autocommit(st->db))
        exec(st, "ROLLBACK");
    sqlite3_close(st->db);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

int state_seen_add(struct state *st, uint64_t hash)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_SEEN];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)hash);
    int rc = run(s);
    if (rc == 0)
        rc = sqlite3_changes(st->db) > 0;
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static void bind_opt_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

int state_queue_add(struct state *st, const struct state_page *p, uint64_t *id)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_ADD];
    sqlite3_bind_text(s, 1, p->url, -1, SQLITE_STATIC);
    bind_opt_text(s, 2, p->scope);
    sqlite3_bind_int(s, 3, p->depth);
    sqlite3_bind_int64(s, 4, p->line);
    bind_opt_text(s, 5, p->source);
    bind_opt_text(s, 6, p->why);
    int rc = run(s);
    if (rc == 0)
        *id = (uint64_t)sqlite3_last_insert_rowid(st->db);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int state_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    pthread_mutex_lock(&st->lock);
    int rc = state_seen_add(st, hash);
    if (rc == 1 && state_queue_add(st, p, id) != 0)
        rc = -1;
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
    return (const char *)sqlite3_column_text(s, i);
}

int state_queue_load(struct state *st, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data),
                     void *data)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_LOAD];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)after);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
    int n = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct state_page p = {
            .url = col_text(s, 1), .scope = col_text(s, 2),
            .depth = sqlite3_column_int(s, 3), .line = (long)sqlite3_column_int64(s, 4),
            .source = col_text(s, 5), .why = col_text(s, 6),
        };
        fn((uint64_t)sqlite3_column_int64(s, 0), &p, data);
        n++;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    pthread_mutex_unlock(&st->lock);
    return rc == SQLITE_DONE ? n : -1;
}

static long count(struct state *st, int q)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[q];
    long n = sqlite3_step(s) == SQLITE_ROW ? (long)sqlite3_column_int64(s, 0) : -1;
    sqlite3_reset(s);
    pthread_mutex_unlock(&st->lock);
    return n;
}

long state_queue_left(struct state *st)
{
    return count(st, Q_LEFT);
}

long state_fetched(struct state *st)
{
    return count(st, Q_FETCHED);
}

int state_commit(struct state *st, const uint64_t *marks, size_t n, uint64_t offset)
{
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_DONE];
    for (size_t i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int(s, 1, marks[i] & STATE_FETCHED ? 2 : 1);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)(marks[i] & ~STATE_FETCHED));
        rc = run(s);
    }
    if (rc == 0)
        rc = state_set(st, "offset", (int64_t)offset);
    if (rc == 0)
        rc = exec(st, "COMMIT");
    if (rc == 0)
        rc = exec(st, "BEGIN");
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int state_drop(struct state *st, uint64_t id)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_DROP];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)(id & ~STATE_FETCHED));
    int rc = run(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int state_robots_put(struct state *st, const char *host, long status, int fail,
                     const char *body, size_t len)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_ROBOTS_PUT];
    sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, status);
    sqlite3_bind_int(s, 3, fail);
    sqlite3_bind_blob(s, 4, body ? body : "", (int)len, SQLITE_STATIC);
    int rc = run(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int state_robots_get(struct state *st, const char *host, long *status, int *fail,
                     char **body, size_t *len)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_ROBOTS_GET];
    sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(s, 2);
        const void *b = sqlite3_column_blob(s, 2);
        *status = (long)sqlite3_column_int64(s, 0);
        *fail = sqlite3_column_int(s, 1);
        *len = n;
        if ((*body = malloc(n + 1))) {
            if (n)
                memcpy(*body, b, n);
            (*body)[n] = '\0';
            rc = 1;
        } else {
            rc = -1;
        }
    } else {
        rc = rc == SQLITE_DONE ? 0 : -1;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int state_get(struct state *st, const char *key, int64_t *v)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_GET];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *v = (int64_t)sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    pthread_mutex_unlock(&st->lock);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int state_set(struct state *st, const char *key, int64_t v)
{
    pthread_mutex_lock(&st->lock);
    sqlite3_stmt *s = st->q[Q_SET];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)v);
    int rc = run(s);
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* store_bench.c: the --state store's work for a crawl of PAGES pages, done
 * by lib/state_lmdb.c (LMDB, what --state uses) and by the same operations on
 * SQLite, for scripts/bench-store.sh. Per page: LINKS seen-set probes of
 * which the first FANOUT are new links (queued while the site has pages
 * left), its done mark committed with BATCH others; the queue is read back
 * from a cursor 8,192 pages at a time. Both are durable against a killed
 * process and not against power loss (LMDB: MDB_NOSYNC; SQLite: WAL,
 * synchronous=NORMAL). Prints "store seconds" lines. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "state.h"

#define FANOUT 4
#define LINKS 7         /* children, the parent, the page itself, a relative duplicate */
static long BATCH = 30;        /* rows a commit carries (argv[3]): 50 ms of a 600-page/s crawl */
#define LOAD 8192

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x ? x : 1;
}

/* The links of page i: the hash of each link's page, children first. */
static int links_of(long i, long pages, uint64_t *h)
{
    int n = 0;
    for (long k = 1; k <= FANOUT; k++)
        h[n++] = mix((uint64_t)(i * FANOUT + k < pages ? i * FANOUT + k : 0));
    h[n++] = mix((uint64_t)(i > 0 ? (i - 1) / FANOUT : 0));
    h[n++] = mix((uint64_t)i);
    h[n++] = h[0];
    return n;
}

static void loaded(uint64_t id, const struct state_page *p, void *data)
{
    (*(long *)data)++;
}

static double run_state(const char *path, long pages)
{
    struct state *st;
    enum state_phase ph;
    char why[256], url[64];
    double t0 = now();
    if (state_open(&st, path, "x=1\n", NULL, &ph, why, sizeof why) != 0) {
        fprintf(stderr, "lmdb: %s\n", why);
        exit(1);
    }
    uint64_t *marks = malloc((size_t)BATCH * sizeof *marks), id, h[LINKS];
    size_t nm = 0;
    long queued = 1, done = 0, got = 0;
    struct state_page p = { .url = url, .scope = "127.0.0.1", .depth = 1 };
    snprintf(url, sizeof url, "http://127.0.0.1/graph/%ld/4/0", pages);
    state_admit(st, mix(0), &p, &id);
    for (long i = 0; i < pages; i++) {
        if (i % LOAD == 0)
            state_queue_load(st, (uint64_t)i, LOAD, loaded, &got);
        int n = links_of(i, pages, h);
        for (int k = 0; k < n; k++) {
            snprintf(url, sizeof url, "http://127.0.0.1/graph/%ld/4/%llu", pages,
                     (unsigned long long)h[k]);
            if (state_admit(st, h[k], &p, &id) == 1)
                queued++;
        }
        marks[nm++] = (uint64_t)(i + 1) | STATE_FETCHED;
        if ((long)nm == BATCH || i == pages - 1) {
            state_commit(st, marks, nm, (uint64_t)(i * 300));
            done += (long)nm;
            nm = 0;
        }
    }
    state_close(st);
    free(marks);
    if (queued != pages || done != pages)
        fprintf(stderr, "lmdb: %ld queued, %ld done\n", queued, done);
    return now() - t0;
}

/* The same work on SQLite: WAL, synchronous=NORMAL, an exclusive lock,
 * prepared statements, one transaction per batch. */
#define SQL(db, x) do { if ((x) != SQLITE_OK && sqlite3_errcode(db) != SQLITE_DONE) { \
                       fprintf(stderr, "sqlite: %s: %s\n", #x, sqlite3_errmsg(db)); exit(1); } } while (0)

static void step(sqlite3_stmt *q)
{
    sqlite3_step(q);
    sqlite3_reset(q);
}

static double run_sqlite(const char *path, long pages)
{
    sqlite3 *db;
    sqlite3_stmt *seen, *add, *done, *load, *meta;
    double t0 = now();
    SQL(db, sqlite3_open(path, &db));
    SQL(db, sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL;"
                         "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-8192;"
                         "CREATE TABLE meta(key TEXT PRIMARY KEY, value);"
                         "CREATE TABLE page(id INTEGER PRIMARY KEY, url TEXT, scope TEXT,"
                         " depth INTEGER, line INTEGER, source TEXT, why TEXT,"
                         " state INTEGER NOT NULL DEFAULT 0);"
                         "CREATE TABLE seen(h INTEGER PRIMARY KEY); BEGIN", NULL, NULL, NULL));
    SQL(db, sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO seen(h) VALUES (?)", -1, &seen, NULL));
    SQL(db, sqlite3_prepare_v2(db, "INSERT INTO page(url, scope, depth, line) VALUES (?, ?, 1, 0)",
                               -1, &add, NULL));
    SQL(db, sqlite3_prepare_v2(db, "UPDATE page SET state = 2 WHERE id = ?", -1, &done, NULL));
    SQL(db, sqlite3_prepare_v2(db, "SELECT id, url, scope, depth, line, source, why FROM page "
                               "WHERE state = 0 AND id > ? ORDER BY id LIMIT ?", -1, &load, NULL));
    SQL(db, sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('offset', ?)",
                               -1, &meta, NULL));
    uint64_t h[LINKS], *marks = malloc((size_t)BATCH * sizeof *marks);
    size_t nm = 0;
    long queued = 0, done_n = 0;
    char url[64];
    for (long i = -1; i < pages; i++) {
        if (i >= 0 && i % LOAD == 0) {
            sqlite3_bind_int64(load, 1, i);
            sqlite3_bind_int64(load, 2, LOAD);
            while (sqlite3_step(load) == SQLITE_ROW)
                ;
            sqlite3_reset(load);
        }
        int n = i < 0 ? 1 : links_of(i, pages, h);
        if (i < 0)
            h[0] = mix(0);
        for (int k = 0; k < n; k++) {
            sqlite3_bind_int64(seen, 1, (sqlite3_int64)h[k]);
            step(seen);
            if (sqlite3_changes(db) == 0)
                continue;
            snprintf(url, sizeof url, "http://127.0.0.1/graph/%ld/4/%llu", pages,
                     (unsigned long long)h[k]);
            sqlite3_bind_text(add, 1, url, -1, SQLITE_STATIC);
            sqlite3_bind_text(add, 2, "127.0.0.1", -1, SQLITE_STATIC);
            step(add);
            queued++;
        }
        if (i < 0)
            continue;
        marks[nm++] = (uint64_t)i + 1;
        if ((long)nm == BATCH || i == pages - 1) {
            for (size_t m = 0; m < nm; m++) {
                sqlite3_bind_int64(done, 1, (sqlite3_int64)marks[m]);
                step(done);
            }
            sqlite3_bind_int64(meta, 1, i * 300);
            step(meta);
            SQL(db, sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL));
            done_n += (long)nm;
            nm = 0;
        }
    }
    sqlite3_finalize(seen);
    sqlite3_finalize(add);
    sqlite3_finalize(done);
    sqlite3_finalize(load);
    sqlite3_finalize(meta);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    free(marks);
    if (queued != pages || done_n != pages)
        fprintf(stderr, "sqlite: %ld queued, %ld done\n", queued, done_n);
    return now() - t0;
}

int main(int argc, char **argv)
{
    long pages = argc > 1 ? atol(argv[1]) : 10000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    if (argc > 3)
        BATCH = atol(argv[3]) > 0 ? atol(argv[3]) : 1;
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/store-bench.sqlite", dir);
    snprintf(b, sizeof b, "%s/store-bench.lmdb", dir);
    unlink(a);
    unlink(b);
    printf("lmdb %.4f\n", run_state(b, pages));
    printf("sqlite %.4f\n", run_sqlite(a, pages));
    unlink(a);
    unlink(b);
    snprintf(a, sizeof a, "%s/store-bench.sqlite-wal", dir);
    unlink(a);
    return 0;
}

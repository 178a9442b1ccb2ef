/* Unit tests for the --state store (lib/state_lmdb.c), its checks
 * (lib/state_lmdb_check.c) and the sink's commits (lib/sink.c): what is
 * committed survives, what is not is gone, a store made with other options
 * or in use is refused, a record that fails its CRC, a file shorter than
 * its meta pages say and a file that is not crawl's are refused, and a
 * row's mark reaches the commit only once the row is in the file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lmdb.h>

#include "sink.h"
#include "state.h"
#include "state_lmdb.h"

static const char opts[] = "depth=2\nmax-pages=0\n";

struct dir {
    char path[64];
    char db[96];
};

static int dir_setup(void **st)
{
    struct dir *d = calloc(1, sizeof *d);
    snprintf(d->path, sizeof d->path, "/tmp/test_state.XXXXXX");
    assert_non_null(mkdtemp(d->path));
    snprintf(d->db, sizeof d->db, "%s/s.db", d->path);
    *st = d;
    return 0;
}

static int dir_teardown(void **st)
{
    struct dir *d = *st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d->path);
    assert_int_equal(system(cmd), 0);
    free(d);
    return 0;
}

static struct state *open_ok(const char *db, enum state_phase want)
{
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, db, opts, NULL, &ph, why, sizeof why), 0);
    assert_int_equal(ph, want);
    return s;
}

static uint64_t add(struct state *s, const char *url, int depth)
{
    struct state_page p = { .url = url, .scope = "h", .depth = depth };
    uint64_t id = 0;
    assert_int_equal(state_queue_add(s, &p, &id), 0);
    return id;
}

struct loaded {
    uint64_t id[16];
    char url[16][64];
    int depth[16];
    int valid[16];              /* what the store kept came with it: its ETag */
    int n;
};

static void collect(uint64_t id, const struct state_page *p, void *data)
{
    struct loaded *l = data;
    l->id[l->n] = id;
    snprintf(l->url[l->n], sizeof l->url[0], "%s", p->url);
    l->valid[l->n] = p->valid && p->valid->etag && !strcmp(p->valid->etag, "\"a-0\"") &&
                     !p->valid->links;
    l->depth[l->n++] = p->depth;
}

static void test_a_new_store_is_new_and_a_reopened_one_resumes(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    add(s, "http://h/a", 0);
    assert_int_equal(state_commit(s, NULL, 0, 10), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);
    int64_t off = -1;
    assert_int_equal(state_get(s, "offset", &off), 0);
    assert_int_equal(off, 10);
    assert_int_equal(state_queue_left(s), 1);
    state_close(s);
}

static void test_what_was_not_committed_is_gone(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    add(s, "http://h/kept", 0);
    assert_int_equal(state_seen_add(s, 7), 1);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    add(s, "http://h/lost", 1);
    assert_int_equal(state_seen_add(s, 8), 1);
    state_close(s);     /* as a kill would: no commit */
    s = open_ok(d->db, STATE_RESUMED);
    struct loaded l = {0};
    assert_int_equal(state_queue_load(s, 0, 16, collect, &l), 1);
    assert_string_equal(l.url[0], "http://h/kept");
    assert_int_equal(state_seen_add(s, 7), 0);
    assert_int_equal(state_seen_add(s, 8), 1);
    state_close(s);
}

struct page_copy {
    char s[5][64];
    int set[5];
    int depth;
    long line;
};

static void copy_page(uint64_t id, const struct state_page *p, void *data)
{
    struct page_copy *c = (struct page_copy *)data + (id - 1);
    const char *v[5] = { p->url, p->scope, p->source, p->why, p->parent };
    for (int i = 0; i < 5; i++)
        if ((c->set[i] = v[i] != NULL))
            snprintf(c->s[i], sizeof c->s[i], "%s", v[i]);
    c->depth = p->depth;
    c->line = p->line;
}

static void test_a_page_keeps_its_parent_and_every_string_across_a_reopen(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    struct state_page listed = { .url = "http://h/", .source = "list.txt", .line = 3 };
    struct state_page found = { .url = "http://h/a?b=1", .scope = "h", .parent = "http://h/x",
                                .depth = 2 };
    struct state_page bad = { .url = "ftp://h/", .source = "-", .why = "not http", .line = 4 };
    uint64_t id;
    assert_int_equal(state_queue_add(s, &listed, &id), 0);
    assert_int_equal(state_queue_add(s, &found, &id), 0);
    assert_int_equal(state_queue_add(s, &bad, &id), 0);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);
    struct page_copy c[3];
    memset(c, 0, sizeof c);
    assert_int_equal(state_queue_load(s, 0, 16, copy_page, c), 3);
    state_close(s);
    /* What is absent stays absent: a listed page has no parent. */
    assert_string_equal(c[0].s[0], "http://h/");
    assert_false(c[0].set[1]);
    assert_string_equal(c[0].s[2], "list.txt");
    assert_false(c[0].set[3]);
    assert_false(c[0].set[4]);
    assert_int_equal(c[0].line, 3);
    assert_string_equal(c[1].s[0], "http://h/a?b=1");
    assert_string_equal(c[1].s[1], "h");
    assert_false(c[1].set[2]);
    assert_string_equal(c[1].s[4], "http://h/x");
    assert_int_equal(c[1].depth, 2);
    assert_string_equal(c[2].s[3], "not http");
    assert_false(c[2].set[4]);
}

static void test_the_queue_loads_in_order_past_a_cursor_without_the_pages_done(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    uint64_t a = add(s, "http://h/a", 0), b = add(s, "http://h/b", 1),
             c = add(s, "http://h/c", 1), e = add(s, "http://h/e", 2);
    assert_true(a < b && b < c && c < e);
    uint64_t marks[] = { b | STATE_FETCHED };
    assert_int_equal(state_commit(s, marks, 1, 5), 0);
    assert_int_equal(state_drop(s, c), 0);
    struct loaded l = {0};
    assert_int_equal(state_queue_load(s, 0, 16, collect, &l), 2);
    assert_string_equal(l.url[0], "http://h/a");
    assert_string_equal(l.url[1], "http://h/e");
    assert_int_equal(l.depth[1], 2);
    memset(&l, 0, sizeof l);
    assert_int_equal(state_queue_load(s, a, 1, collect, &l), 1);
    assert_int_equal(l.id[0], e);
    assert_int_equal(state_queue_left(s), 2);
    assert_int_equal(state_fetched(s), 1);
    state_close(s);
}

static void test_a_page_done_without_a_fetch_does_not_count_as_fetched(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    uint64_t a = add(s, "http://h/a", 0), b = add(s, "http://h/b", 0);
    uint64_t marks[] = { a, b | STATE_FETCHED };
    assert_int_equal(state_commit(s, marks, 2, 0), 0);
    assert_int_equal(state_fetched(s), 1);
    assert_int_equal(state_queue_left(s), 0);
    state_close(s);
}

static void test_other_options_are_refused_with_the_difference(void **st)
{
    struct dir *d = *st;
    state_close(open_ok(d->db, STATE_NEW));
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, d->db, "depth=3\nmax-pages=0\n", NULL, &ph, why, sizeof why), -1);
    assert_null(s);
    assert_string_equal(why, "started with depth=2, not depth=3");
}

static void test_a_store_in_use_is_refused(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW), *t = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&t, d->db, opts, NULL, &ph, why, sizeof why), -1);
    assert_string_equal(why, "in use by another crawl");
    state_close(s);
    state_close(open_ok(d->db, STATE_RESUMED));
}

static void test_a_file_that_is_no_store_is_refused(void **st)
{
    struct dir *d = *st;
    FILE *f = fopen(d->db, "w");
    fputs("not a database, but long enough to be read as a header of one ............"
          "................................................................", f);
    fclose(f);
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, d->db, opts, NULL, &ph, why, sizeof why), STATE_ELOST);
    assert_null(s);
    assert_string_equal(why, "not a crawl state file (not an LMDB file); left as it was");
}

/* ---- what is read is checked ---- */

static void test_a_record_is_sealed_by_its_crc_over_key_and_value(void **st)
{
    char v[16] = "queued page";
    state_lmdb_seal("k1", 2, v, sizeof v);
    assert_int_equal(state_lmdb_sealed("k1", 2, v, sizeof v), 1);
    /* The CRC of "k1" then "queued page\0" (zlib's crc32), little-endian
     * in the last four bytes. */
    uint32_t c;
    memcpy(&c, v + 12, 4);
    assert_int_equal(c, state_lmdb_crc("k1", 2, "queued page", 12));
    /* Any byte changed, of the value or of the CRC, and it fails. */
    for (size_t i = 0; i < sizeof v; i++) {
        v[i] ^= 0x10;
        assert_int_equal(state_lmdb_sealed("k1", 2, v, sizeof v), 0);
        v[i] ^= 0x10;
    }
    /* The same bytes under another key fail: a record cannot move. */
    assert_int_equal(state_lmdb_sealed("k2", 2, v, sizeof v), 0);
    /* Shorter than a CRC: nothing can be sealed in it. */
    assert_int_equal(state_lmdb_sealed("k1", 2, v, 3), 0);
}

static void test_a_page_record_is_a_header_a_known_state_and_five_strings(void **st)
{
    struct state_lmdb_rec r = { .state = STATE_LMDB_FETCHED, .has = 1 | 8, .depth = 2 };
    char v[sizeof r + 32];
    memcpy(v, &r, sizeof r);
    /* url, scope, an empty source and why, a parent. */
    memcpy(v + sizeof r, "http://h/\0s\0\0\0http://p/\0", 24);
    uint8_t state = 9;
    assert_int_equal(state_lmdb_page_ok(v, sizeof r + 24, &state), 1);
    assert_int_equal(state, STATE_LMDB_FETCHED);
    /* Four strings only (format 3's record), a byte past the fifth, a
     * bit past parent's, an unknown state. */
    assert_int_equal(state_lmdb_page_ok(v, sizeof r + 14, &state), 0);
    v[sizeof r + 24] = 'x';
    assert_int_equal(state_lmdb_page_ok(v, sizeof r + 25, &state), 0);
    v[1] = 16;
    assert_int_equal(state_lmdb_page_ok(v, sizeof r + 24, &state), 0);
    v[1] = 15;
    assert_int_equal(state_lmdb_page_ok(v, sizeof r + 24, &state), 1);
    v[0] = 7;
    assert_int_equal(state_lmdb_page_ok(v, sizeof r + 24, &state), 0);
}

/* A store of a few pages, committed and closed; returns the file's size. */
static off_t small_store(const char *db)
{
    struct state *s = open_ok(db, STATE_NEW);
    add(s, "http://h/a-page-to-find", 0);
    add(s, "http://h/b", 1);
    assert_int_equal(state_seen_add(s, 42), 1);
    assert_int_equal(state_commit(s, NULL, 0, 10), 0);
    state_close(s);
    struct stat sb;
    assert_int_equal(stat(db, &sb), 0);
    return sb.st_size;
}

/* state_lmdb_read_meta on the file at path: the verdict, the reason in why. */
static int read_meta(const char *path, struct state_lmdb_meta *m, char *why, size_t n)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    int v = state_lmdb_read_meta(fd, m, why, n);
    close(fd);
    return v;
}

/* Overwrites n bytes of the file at path at offset at with p. */
static void patch(const char *path, off_t at, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, p, n, at), (ssize_t)n);
    close(fd);
}

static void test_the_meta_pages_say_how_long_the_file_must_be(void **st)
{
    struct dir *d = *st;
    off_t size = small_store(d->db);
    struct state_lmdb_meta m;
    char why[256] = "";
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_OK);
    assert_int_equal(m.psize, 4096);
    assert_int_equal(m.size, size);
    /* crawl keeps the file as long as its last commit's pages. */
    assert_int_equal((m.last_pg + 1) * m.psize, size);
    assert_int_equal(m.empty, 0);
    assert_true(m.txnid >= 2);
    char want[160];
    assert_int_equal(truncate(d->db, size - 4096), 0);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    snprintf(want, sizeof want, "truncated: it holds %lld bytes, its last commit needs %lld",
             (long long)size - 4096, (long long)size);
    assert_string_equal(why, want);
    assert_int_equal(truncate(d->db, 4096), 0);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    assert_string_equal(why, "truncated: it holds 4096 bytes, less than LMDB's two meta pages (8192)");
    /* And the store refuses it before LMDB maps a byte of it. */
    struct state *s = NULL;
    enum state_phase ph;
    assert_int_equal(state_open(&s, d->db, opts, NULL, &ph, why, sizeof why), STATE_ELOST);
    assert_string_equal(why, "not a usable state file (truncated: it holds 4096 bytes, less "
                        "than LMDB's two meta pages (8192))");
}

/* Where LMDB 0.9 keeps a meta page's fields on a 64-bit machine: after
 * the 16-byte page header, MDB_meta's magic (0), version (4), address
 * (8), map size (16), two 48-byte database records (24, 72: the page size
 * is the first one's first field), last page (120), transaction id (128). */
#define META_AT(page, field) ((off_t)(page) * 4096 + 16 + (field))

static void test_damaged_meta_pages_are_refused_with_what_is_wrong(void **st)
{
    struct dir *d = *st;
    small_store(d->db);
    struct state_lmdb_meta m;
    char why[256] = "", want[200];
    size_t t[2];
    int fd = open(d->db, O_RDONLY);
    assert_int_equal(pread(fd, &t[0], sizeof t[0], META_AT(0, 128)), sizeof t[0]);
    assert_int_equal(pread(fd, &t[1], sizeof t[1], META_AT(1, 128)), sizeof t[1]);
    close(fd);
    /* Two commits in a row, the even one in page 0. */
    assert_int_equal(t[0] % 2, 0);
    assert_int_equal(t[1] % 2, 1);
    assert_true(t[0] == t[1] + 1 || t[1] == t[0] + 1);
    size_t far = t[1] + 1000;
    patch(d->db, META_AT(1, 128), &far, sizeof far);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    snprintf(want, sizeof want, "its meta pages disagree (commits %zu and %zu)", t[0], far);
    assert_string_equal(why, want);
    patch(d->db, META_AT(1, 128), &t[1], sizeof t[1]);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_OK);
    /* The later commit's last page far past the file's end: what LMDB
     * would read there is no page (SIGBUS). The earlier commit's past the
     * later's: the file never shrinks. */
    int later = t[1] > t[0];
    size_t last = (size_t)1 << 30, was;
    fd = open(d->db, O_RDONLY);
    assert_int_equal(pread(fd, &was, sizeof was, META_AT(later, 120)), sizeof was);
    close(fd);
    patch(d->db, META_AT(later, 120), &last, sizeof last);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    snprintf(want, sizeof want, "truncated: it holds %llu bytes, its last commit needs %llu",
             (unsigned long long)m.size, (unsigned long long)(last + 1) * 4096);
    assert_string_equal(why, want);
    patch(d->db, META_AT(later, 120), &was, sizeof was);
    patch(d->db, META_AT(!later, 120), &last, sizeof last);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    snprintf(want, sizeof want, "its meta pages disagree (commit %zu uses pages up to %zu, "
             "the later %zu only up to %zu)", t[!later], last, t[later], was);
    assert_string_equal(why, want);
    patch(d->db, META_AT(!later, 120), &was, sizeof was);
    /* A page size that is none. */
    uint32_t psize = 1000;
    patch(d->db, META_AT(0, 24), &psize, sizeof psize);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    assert_string_equal(why, "its first meta page is damaged");
    /* The first page's magic gone, the second's there: LMDB's, damaged. */
    uint32_t magic = 0;
    patch(d->db, META_AT(0, 0), &magic, sizeof magic);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_BROKEN);
    assert_string_equal(why, "its first meta page is damaged");
    patch(d->db, META_AT(1, 0), &magic, sizeof magic);
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_FOREIGN);
    assert_string_equal(why, "not an LMDB file");
}

static void test_an_lmdb_file_never_committed_to_is_a_new_store(void **st)
{
    struct dir *d = *st;
    /* What a crawl killed between LMDB's making the file and its first
     * commit leaves: two meta pages, no commit. */
    MDB_env *env;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_open(env, d->db, MDB_NOSUBDIR | MDB_NOLOCK, 0644), 0);
    mdb_env_close(env);
    struct state_lmdb_meta m;
    char why[256] = "";
    assert_int_equal(read_meta(d->db, &m, why, sizeof why), STATE_LMDB_OK);
    assert_int_equal(m.empty, 1);
    assert_int_equal(m.txnid, 0);
    state_close(open_ok(d->db, STATE_NEW));
    state_close(open_ok(d->db, STATE_RESUMED));
}

/* Overwrites, in every copy of text (n bytes) in the file at path (LMDB
 * keeps old copies of a page in its free pages), the bytes from skip on
 * with p (len bytes). */
static void patch_all(const char *path, const char *text, size_t n, size_t skip, const void *p,
                      size_t len)
{
    static char buf[1 << 20];
    int fd = open(path, O_RDONLY), copies = 0;
    ssize_t got = read(fd, buf, sizeof buf);
    close(fd);
    for (ssize_t i = 0; got > 0 && i + (ssize_t)n <= got; i++)
        if (memcmp(buf + i, text, n) == 0) {
            patch(path, i + (off_t)skip, p, len);
            copies++;
        }
    assert_true(copies > 0);
}

static void test_a_record_that_fails_its_crc_makes_the_store_unusable(void **st)
{
    struct dir *d = *st;
    small_store(d->db);
    patch_all(d->db, "a-page-to-find", 14, 0, "A", 1);
    struct stat before, after;
    assert_int_equal(stat(d->db, &before), 0);
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, d->db, opts, NULL, &ph, why, sizeof why), STATE_ELOST);
    assert_null(s);
    assert_string_equal(why, "not a usable state file (a record of database page fails its CRC)");
    assert_int_equal(stat(d->db, &after), 0);
    assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    assert_int_equal(after.st_size, before.st_size);
}

static void test_a_marker_of_another_format_is_refused_naming_both(void **st)
{
    struct dir *d = *st;
    small_store(d->db);
    static const struct { uint32_t format; const char *why; } cases[] = {
        { 3, "a crawl state file of format 3, made by an older crawl; this crawl reads format 5 "
             "only; left as it was" },
        { 4, "a crawl state file of format 4, made by an older crawl; this crawl reads format 5 "
             "only; left as it was" },
        { 6, "a crawl state file of format 6, made by a newer crawl; this crawl reads format 5 "
             "only; left as it was" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        patch_all(d->db, STATE_LMDB_MAGIC, STATE_LMDB_MAGIC_LEN, STATE_LMDB_MAGIC_LEN,
                  &cases[i].format, sizeof cases[i].format);
        struct state *s = NULL;
        enum state_phase ph;
        char why[256] = "";
        assert_int_equal(state_open(&s, d->db, opts, NULL, &ph, why, sizeof why), STATE_ELOST);
        assert_string_equal(why, cases[i].why);
    }
}

/* Queues a listed page with its URL's hash (its record's key), as the
 * core does. */
static uint64_t add_listed(struct state *s, const char *url, uint64_t hash)
{
    struct state_page p = { .url = url, .source = "list", .line = 1, .hash = hash };
    uint64_t id = 0;
    assert_int_equal(state_queue_add(s, &p, &id), 0);
    return id;
}

static struct state_valid kept_links(const char *etag, const char *links, size_t n)
{
    return (struct state_valid){ .fetched_at = 1700000000, .etag = etag,
                                 .modified = "Mon, 01 Jan 2024 00:00:00 GMT", .has_links = 1,
                                 .links = links, .links_len = n };
}

static void test_what_a_recrawl_needs_of_a_page_is_kept_by_its_hash_and_checked(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    struct state_valid v = kept_links("\"a-0\"", "http://h/b\0http://h/c\0", 22), got;
    char *buf = NULL;
    assert_int_equal(state_valid_get(s, 42, &got, &buf), 0);
    assert_int_equal(state_valid_put(s, 42, &v), 0);
    v = (struct state_valid){ .fetched_at = 5 };     /* no validator, no links kept */
    assert_int_equal(state_valid_put(s, 43, &v), 0);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);      /* the check walked the records */
    assert_int_equal(state_valid_get(s, 42, &got, &buf), 1);
    assert_true(got.fetched_at == 1700000000);
    assert_string_equal(got.etag, "\"a-0\"");
    assert_string_equal(got.modified, "Mon, 01 Jan 2024 00:00:00 GMT");
    assert_int_equal(got.has_links, 1);
    assert_int_equal(got.links_len, 22);
    assert_memory_equal(got.links, "http://h/b\0http://h/c\0", 22);
    free(buf);
    assert_int_equal(state_valid_get(s, 43, &got, &buf), 1);
    assert_null(got.etag);
    assert_null(got.modified);
    assert_int_equal(got.has_links, 0);
    assert_int_equal(got.links_len, 0);
    free(buf);
    assert_int_equal(state_valid_put(s, 42, NULL), 0);
    assert_int_equal(state_valid_put(s, 44, NULL), 0);      /* none to forget */
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);
    assert_int_equal(state_valid_get(s, 42, &got, &buf), 0);
    state_close(s);
}

static void test_a_recrawl_queues_the_listed_pages_again_with_what_was_kept_of_them(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    long n = -1;
    uint64_t a = add_listed(s, "http://h/a", 11), b = add_listed(s, "http://h/b", 12);
    struct state_page f = { .url = "http://h/f", .scope = "h", .depth = 1, .hash = 13 };
    uint64_t fid;
    assert_int_equal(state_seen_add(s, 11), 1);
    assert_int_equal(state_admit(s, 13, &f, &fid), 1);
    /* Not finished: no new pass. */
    assert_int_equal(state_recrawl(s, 0, &n), 0);
    struct state_valid v = kept_links("\"a-0\"", "http://h/f\0", 11);
    assert_int_equal(state_valid_put(s, 11, &v), 0);
    uint64_t marks[] = { a | STATE_FETCHED, b | STATE_FETCHED, fid | STATE_FETCHED };
    assert_int_equal(state_commit(s, marks, 3, 100), 0);
    assert_int_equal(state_set(s, "finished", 1), 0);
    assert_int_equal(state_commit(s, NULL, 0, 100), 0);
    assert_int_equal(state_fetched(s), 3);
    state_close(s);
    s = open_ok(d->db, STATE_FINISHED);
    assert_int_equal(state_recrawl(s, 60, &n), 1);
    assert_int_equal(n, 2);
    assert_int_equal(state_commit(s, NULL, 0, 100), 0);
    state_close(s);
    /* The new pass: resumed, its pages counted from 0, the listed ones
     * queued after the last pass's, the one with a record carrying it,
     * and a seen set of their own. */
    s = open_ok(d->db, STATE_RESUMED);
    int64_t pass = 0, first = 0, older = 0, finished = 1;
    assert_int_equal(state_get(s, "pass", &pass), 0);
    assert_int_equal(state_get(s, "pass_first", &first), 0);
    assert_int_equal(state_get(s, "pass_older", &older), 0);
    assert_int_equal(state_get(s, "finished", &finished), 0);
    assert_true(pass == 2 && first == (int64_t)fid + 1 && older == 60000 && finished == 0);
    assert_int_equal(state_fetched(s), 0);
    assert_int_equal(state_queue_left(s), 2);
    struct loaded l = {0};
    assert_int_equal(state_queue_load(s, (uint64_t)first - 1, 16, collect, &l), 2);
    assert_string_equal(l.url[0], "http://h/a");
    assert_string_equal(l.url[1], "http://h/b");
    assert_int_equal(l.valid[0], 1);
    assert_int_equal(l.valid[1], 0);
    assert_int_equal(state_seen_add(s, 11), 0);     /* listed: seen again */
    assert_int_equal(state_seen_add(s, 13), 1);     /* found: to be found again */
    state_close(s);
}

static void test_a_finished_crawl_says_so(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    assert_int_equal(state_set(s, "finished", 1), 0);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    state_close(open_ok(d->db, STATE_FINISHED));
}

static void test_robots_txt_is_kept_per_host(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    assert_int_equal(state_robots_put(s, "http://h:80", 200, 0, "User-agent: *\n", 14), 0);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);
    long status = 0;
    int fail = -1;
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(state_robots_get(s, "http://h:80", &status, &fail, &body, &len), 1);
    assert_int_equal(status, 200);
    assert_int_equal(fail, 0);
    assert_int_equal(len, 14);
    assert_string_equal(body, "User-agent: *\n");
    free(body);
    assert_int_equal(state_robots_get(s, "http://other:80", &status, &fail, &body, &len), 0);
    state_close(s);
}

/* ---- the sink's commits ---- */

struct commits {
    uint64_t marks[16];
    size_t nmarks;
    uint64_t offset;
    int calls;
    int fd;
    off_t size_at_commit;       /* the file's size when the marks came */
};

static int on_commit(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    struct commits *c = data;
    struct stat sb;
    for (size_t i = 0; i < n; i++)
        c->marks[c->nmarks++] = marks[i];
    c->offset = offset;
    c->calls++;
    fstat(c->fd, &sb);
    c->size_at_commit = sb.st_size;
    return 0;
}

static void test_a_rows_mark_is_committed_once_the_row_is_in_the_file(void **st)
{
    struct dir *d = *st;
    char path[128];
    snprintf(path, sizeof path, "%s/out", d->path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "old\n", 4), 4);
    struct commits c = { .fd = fd };
    struct sink *s;
    assert_int_equal(sink_new(&s, fd, 0, NULL, NULL), 0);
    sink_set_commit(s, 4, on_commit, &c);
    assert_int_equal(sink_put_mark(s, "row1\n", 5, 11), 0);
    assert_int_equal(sink_put_mark(s, "row2\n", 5, 12), 0);
    assert_int_equal(c.calls, 0);       /* buffered: nothing is in the file yet */
    assert_int_equal(sink_flush(s), 0);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.nmarks, 2);
    assert_int_equal(c.marks[0], 11);
    assert_int_equal(c.marks[1], 12);
    assert_int_equal(c.offset, 14);
    assert_int_equal(c.size_at_commit, 14);
    assert_int_equal(sink_put(s, "tail\n", 5), 0);
    assert_int_equal(sink_free(s), 0);
    assert_int_equal(c.nmarks, 2);
    assert_int_equal(c.offset, 19);
    close(fd);
}

static int refuse(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    return -EIO;
}

static void note_error(int err, void *data)
{
    *(int *)data = err;
}

static void test_a_failed_commit_fails_the_sink(void **st)
{
    struct dir *d = *st;
    char path[128];
    snprintf(path, sizeof path, "%s/out", d->path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int told = 0;
    struct sink *s;
    assert_int_equal(sink_new(&s, fd, 0, note_error, &told), 0);
    sink_set_commit(s, 0, refuse, NULL);
    assert_int_equal(sink_put_mark(s, "r\n", 2, 1), 0);
    assert_int_equal(sink_flush(s), -EIO);
    assert_int_equal(told, -EIO);
    assert_int_equal(sink_put_mark(s, "s\n", 2, 2), -EIO);
    assert_int_equal(sink_free(s), -EIO);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_new_store_is_new_and_a_reopened_one_resumes,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_what_was_not_committed_is_gone,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_the_queue_loads_in_order_past_a_cursor_without_the_pages_done,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_page_done_without_a_fetch_does_not_count_as_fetched,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_other_options_are_refused_with_the_difference,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_store_in_use_is_refused,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_page_keeps_its_parent_and_every_string_across_a_reopen, dir_setup,
            dir_teardown),
        cmocka_unit_test(test_a_record_is_sealed_by_its_crc_over_key_and_value),
        cmocka_unit_test(test_a_page_record_is_a_header_a_known_state_and_five_strings),
        cmocka_unit_test_setup_teardown(test_the_meta_pages_say_how_long_the_file_must_be,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_meta_pages_are_refused_with_what_is_wrong,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_an_lmdb_file_never_committed_to_is_a_new_store,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_record_that_fails_its_crc_makes_the_store_unusable,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_marker_of_another_format_is_refused_naming_both,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_file_that_is_no_store_is_refused,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_what_a_recrawl_needs_of_a_page_is_kept_by_its_hash_and_checked,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_recrawl_queues_the_listed_pages_again_with_what_was_kept_of_them,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_finished_crawl_says_so,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_robots_txt_is_kept_per_host,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_rows_mark_is_committed_once_the_row_is_in_the_file,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_commit_fails_the_sink,
                                        dir_setup, dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

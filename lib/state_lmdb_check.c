/* state_lmdb_check.c: whether a --state file can be trusted, decided
 * before the store (state_lmdb.c) maps a byte of it for writing. LMDB has
 * no checksums and trusts its own pages: a truncated file crashes it with
 * SIGBUS, a damaged page with SIGSEGV or, worse, reads as records that
 * were never written. So the two meta pages are read here with pread(2)
 * and held to the file's size, and then every page and every record of
 * every database is walked, CRCs and counts checked, in a child process
 * whose crash is only a verdict. Also the record CRCs both sides use. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <lmdb.h>
#include <zlib.h>

#include "state_lmdb.h"

uint32_t state_lmdb_crc(const void *key, size_t klen, const void *val, size_t vlen)
{
    /* crc32_z, not crc32, whose length is a uInt: no length is cut short
     * to 32 bits, however long a robots.txt body grows. */
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32_z(c, key, klen);
    return (uint32_t)crc32_z(c, val, vlen);
}

void state_lmdb_seal(const void *key, size_t klen, void *val, size_t n)
{
    uint32_t c = state_lmdb_crc(key, klen, val, n - STATE_LMDB_CRC);
    memcpy((char *)val + n - STATE_LMDB_CRC, &c, sizeof c);
}

int state_lmdb_sealed(const void *key, size_t klen, const void *val, size_t n)
{
    uint32_t c;
    if (n < STATE_LMDB_CRC)
        return 0;
    memcpy(&c, (const char *)val + n - STATE_LMDB_CRC, sizeof c);
    return c == state_lmdb_crc(key, klen, val, n - STATE_LMDB_CRC);
}

/* LMDB 0.9's file head, as its mdb.c documents it: every page starts with
 * a header (MDB_page up to mp_ptrs), and pages 0 and 1 are meta pages, the
 * header followed by an MDB_meta. Page numbers and transaction ids are
 * size_t; the file is in the machine's byte order. These are this file's
 * own declarations of that layout, for reading it without LMDB. */
struct lm_head {
    size_t pgno;
    uint16_t pad, flags, lower, upper;
};

struct lm_db {
    uint32_t pad;               /* in the free database's: the page size */
    uint16_t flags, depth;
    size_t branch_pages, leaf_pages, overflow_pages, entries, root;
};

struct lm_meta {
    uint32_t magic, version;
    void *address;
    size_t mapsize;
    struct lm_db dbs[2];        /* the free pages', the main database's */
    size_t last_pg, txnid;
};

/* A node of a branch or leaf page (MDB_node): in a branch page lo, hi and
 * flags are the child's page number (low, middle, top 16 bits); in a leaf
 * page lo and hi are the value's size, then come the key and the value
 * (F_BIGDATA: the page number of the overflow pages that hold it;
 * F_SUBDATA: a named database's record, a struct lm_db). */
struct lm_node {
    uint16_t lo, hi, flags, ksize;
};

#define LM_MAGIC 0xBEEFC0DEu
#define LM_DATA_VERSION 1
#define LM_P_BRANCH 0x01
#define LM_P_LEAF 0x02
#define LM_P_OVERFLOW 0x04
#define LM_P_META 0x08
#define LM_P_LEAF2 0x20
#define LM_F_BIGDATA 0x01
#define LM_F_SUBDATA 0x02
#define LM_F_DUPDATA 0x04
#define LM_NO_PAGE ((size_t)-1)     /* P_INVALID: an empty tree's root */
#define LM_MAX_DEPTH 32             /* CURSOR_STACK: no tree is deeper */
#define LM_METAS 2

/* One meta page read at off: 0, -1 when the file ends first. */
static int read_meta_at(int fd, off_t off, struct lm_head *h, struct lm_meta *mm)
{
    unsigned char buf[sizeof *h + sizeof *mm];
    ssize_t r = pread(fd, buf, sizeof buf, off);
    if (r != (ssize_t)sizeof buf)
        return -1;
    memcpy(h, buf, sizeof *h);
    memcpy(mm, buf + sizeof *h, sizeof *mm);
    return 0;
}

static int psize_ok(uint32_t p)
{
    return p >= 512 && p <= 65536 && (p & (p - 1)) == 0;
}

/* 1 when the meta record of page i is what LMDB writes. */
static int meta_sane(const struct lm_head *h, const struct lm_meta *mm, size_t i,
                     uint32_t psize)
{
    if (!(h->flags & LM_P_META) || h->pgno != i || mm->magic != LM_MAGIC ||
        mm->version != LM_DATA_VERSION || mm->dbs[0].pad != psize ||
        mm->last_pg < LM_METAS - 1 || mm->last_pg > SIZE_MAX / psize - 1)
        return 0;
    for (int d = 0; d < 2; d++) {
        const struct lm_db *db = &mm->dbs[d];
        if (db->root == LM_NO_PAGE ? db->entries || db->depth
                                   : db->root < LM_METAS || db->root > mm->last_pg ||
                                     db->depth == 0 || db->depth > LM_MAX_DEPTH)
            return 0;
    }
    return 1;
}

enum state_lmdb_verdict state_lmdb_read_meta(int fd, struct state_lmdb_meta *m, char *why,
                                             size_t n)
{
    struct stat st;
    struct lm_head h[LM_METAS];
    struct lm_meta mm[LM_METAS];
    memset(m, 0, sizeof *m);
    if (fstat(fd, &st) != 0) {
        snprintf(why, n, "%s", strerror(errno));
        return STATE_LMDB_BROKEN;
    }
    m->size = (uint64_t)st.st_size;
    if (read_meta_at(fd, 0, &h[0], &mm[0]) != 0 || mm[0].magic != LM_MAGIC) {
        /* The first meta page gone, the second there: LMDB's file, damaged.
         * The second sits one page on; the usual page sizes are tried. */
        for (uint32_t p = 512; p <= 65536; p *= 2)
            if (read_meta_at(fd, p, &h[1], &mm[1]) == 0 && mm[1].magic == LM_MAGIC &&
                mm[1].dbs[0].pad == p) {
                snprintf(why, n, "its first meta page is damaged");
                return STATE_LMDB_BROKEN;
            }
        snprintf(why, n, "not an LMDB file");
        return STATE_LMDB_FOREIGN;
    }
    if (mm[0].version != LM_DATA_VERSION) {
        snprintf(why, n, "an LMDB file of data version %u, not %u", mm[0].version,
                 LM_DATA_VERSION);
        return STATE_LMDB_FOREIGN;
    }
    uint32_t psize = mm[0].dbs[0].pad;
    if (!psize_ok(psize) || !meta_sane(&h[0], &mm[0], 0, psize)) {
        snprintf(why, n, "its first meta page is damaged");
        return STATE_LMDB_BROKEN;
    }
    if (read_meta_at(fd, psize, &h[1], &mm[1]) != 0) {
        snprintf(why, n, "truncated: it holds %llu bytes, less than LMDB's two meta pages (%u)",
                 (unsigned long long)m->size, 2 * psize);
        return STATE_LMDB_BROKEN;
    }
    if (!meta_sane(&h[1], &mm[1], 1, psize)) {
        snprintf(why, n, "its second meta page is damaged");
        return STATE_LMDB_BROKEN;
    }
    /* LMDB writes commit t's meta to page t & 1, and a commit follows the
     * last one: the pages hold two commits in a row (or none yet, 0 and
     * 0). Anything else is a damaged one, which LMDB might pick. */
    size_t t0 = mm[0].txnid, t1 = mm[1].txnid;
    if (!(t0 == 0 && t1 == 0) && !(t0 % 2 == 0 && t1 % 2 == 1 && (t0 == t1 + 1 || t1 == t0 + 1))) {
        snprintf(why, n, "its meta pages disagree (commits %zu and %zu)", t0, t1);
        return STATE_LMDB_BROKEN;
    }
    const struct lm_meta *use = &mm[t1 > t0], *old = &mm[t1 <= t0];
    if (old->last_pg > use->last_pg) {
        snprintf(why, n, "its meta pages disagree (commit %zu uses pages up to %zu, the later %zu "
                 "only up to %zu)", old->txnid, old->last_pg, use->txnid, use->last_pg);
        return STATE_LMDB_BROKEN;
    }
    m->psize = psize;
    m->last_pg = use->last_pg;
    m->txnid = use->txnid;
    m->mapsize = use->mapsize;
    m->empty = t0 == 0 && t1 == 0 && use->dbs[0].root == LM_NO_PAGE &&
               use->dbs[1].root == LM_NO_PAGE;
    for (int d = 0; d < 2; d++) {
        m->tree[d].root = use->dbs[d].root == LM_NO_PAGE ? UINT64_MAX : use->dbs[d].root;
        m->tree[d].pages = use->dbs[d].branch_pages + use->dbs[d].leaf_pages +
                           use->dbs[d].overflow_pages;
        m->tree[d].depth = use->dbs[d].depth;
    }
    uint64_t need = (m->last_pg + 1) * (uint64_t)psize;
    if (m->size < need) {
        snprintf(why, n, "truncated: it holds %llu bytes, its last commit needs %llu",
                 (unsigned long long)m->size, (unsigned long long)need);
        return STATE_LMDB_BROKEN;
    }
    return STATE_LMDB_OK;
}

/* The walk, in the child. */

struct walk {
    MDB_txn *txn;
    const struct state_lmdb_meta *m;
    unsigned format;
    int fd;                     /* the file, for the page walk */
    uint64_t dupsort;           /* a page holding MDB_DUPSORT data, which crawl
                                 * never writes (another program's file may) */
    unsigned char *used;        /* a bit a page: in a tree, or free */
    char why[256];
};

static enum state_lmdb_verdict say(struct walk *w, enum state_lmdb_verdict v,
                                   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum state_lmdb_verdict say(struct walk *w, enum state_lmdb_verdict v,
                                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
    return v;
}

/* Marks page pg in use; 0, or -1 when it already was (or is past the
 * last page): two trees, or a tree and the free list, would then write
 * over each other. */
static int mark(struct walk *w, uint64_t pg)
{
    if (pg > w->m->last_pg || (w->used[pg / 8] & (1u << (pg % 8))))
        return -1;
    w->used[pg / 8] |= (unsigned char)(1u << (pg % 8));
    return 0;
}

static enum state_lmdb_verdict damaged_page(struct walk *w, uint64_t pg)
{
    return say(w, STATE_LMDB_BROKEN, "page %llu is damaged", (unsigned long long)pg);
}

/* A leaf node's value on overflow pages: at (in leaf page pg, read into
 * p) holds the first page's number, whose header's lower and upper are
 * their count, then the value's dsize bytes. Marks and counts the pages
 * into *pages. Returns OK or BROKEN. */
static enum state_lmdb_verdict walk_overflow(struct walk *w, uint64_t pg, const unsigned char *p,
                                             size_t at, size_t dsize, uint64_t *pages)
{
    uint32_t psize = w->m->psize;
    size_t first;
    struct lm_head oh;
    uint32_t count;
    if (at + sizeof first > psize)
        return damaged_page(w, pg);
    memcpy(&first, p + at, sizeof first);
    if (first > w->m->last_pg ||
        pread(w->fd, &oh, sizeof oh, (off_t)(first * psize)) != (ssize_t)sizeof oh)
        return damaged_page(w, pg);
    memcpy(&count, (const unsigned char *)&oh + offsetof(struct lm_head, lower), sizeof count);
    if (oh.pgno != first || !(oh.flags & LM_P_OVERFLOW) ||
        count < (sizeof oh - 1 + dsize) / psize + 1 || count > w->m->last_pg - first + 1)
        return damaged_page(w, first);
    for (size_t k = 0; k < count; k++)
        if (mark(w, first + k) != 0)
            return say(w, STATE_LMDB_BROKEN, "page %zu is used twice", first + k);
    *pages += count;
    return STATE_LMDB_OK;
}

/* Walks the tree whose root is pg and whose leaves are depth levels down
 * (1: pg is a leaf), at the page level: every page is read with pread(2)
 * into a buffer of its own and bounds-checked here before a byte of it is
 * believed, so that a damaged one is found rather than followed. Counts
 * its pages (overflow pages included) into *pages; named (the main tree):
 * its leaves name databases, walked too, each held to its own count.
 * Returns OK or BROKEN. */
static enum state_lmdb_verdict walk_tree(struct walk *w, uint64_t pg, unsigned depth,
                                         int named, uint64_t *pages)
{
    uint32_t psize = w->m->psize;
    struct lm_head h;
    if (depth == 0 || depth > LM_MAX_DEPTH || mark(w, pg) != 0)
        return say(w, STATE_LMDB_BROKEN, "page %llu is used twice", (unsigned long long)pg);
    unsigned char *p = malloc(psize);
    if (!p)
        return say(w, STATE_LMDB_BROKEN, "out of memory");
    enum state_lmdb_verdict v = STATE_LMDB_OK;
    if (pread(w->fd, p, psize, (off_t)(pg * psize)) != (ssize_t)psize) {
        v = damaged_page(w, pg);
        goto out;
    }
    memcpy(&h, p, sizeof h);
    size_t nkeys = h.lower >= sizeof h ? (h.lower - sizeof h) / 2 : 0;
    int leaf = h.flags & LM_P_LEAF, branch = h.flags & LM_P_BRANCH;
    if (h.pgno != pg || !leaf == !branch || (h.flags & (LM_P_LEAF2 | LM_P_OVERFLOW)) ||
        (branch && depth == 1) || (leaf && depth != 1) || h.lower > h.upper ||
        h.upper > psize || nkeys == 0) {
        v = damaged_page(w, pg);
        goto out;
    }
    ++*pages;
    for (size_t i = 0; i < nkeys && v == STATE_LMDB_OK; i++) {
        uint16_t off;
        struct lm_node nd;
        memcpy(&off, p + sizeof h + 2 * i, sizeof off);
        if (off < h.upper || (size_t)off + sizeof nd > psize) {
            v = damaged_page(w, pg);
            break;
        }
        memcpy(&nd, p + off, sizeof nd);
        size_t at = (size_t)off + sizeof nd + nd.ksize;
        if (at > psize) {
            v = damaged_page(w, pg);
            break;
        }
        if (branch) {
            uint64_t child = nd.lo | (uint64_t)nd.hi << 16 |
                             (sizeof(size_t) > 4 ? (uint64_t)nd.flags << 32 : 0);
            v = walk_tree(w, child, depth - 1, named, pages);
            continue;
        }
        size_t dsize = nd.lo | (size_t)nd.hi << 16;
        if (nd.flags & LM_F_DUPDATA) {
            /* Duplicates (MDB_DUPSORT), which crawl never makes: another
             * program's file, told by its marker, or a damaged one. Their
             * pages are not walked. */
            w->dupsort = pg;
            continue;
        }
        if (nd.flags & LM_F_BIGDATA) {
            v = walk_overflow(w, pg, p, at, dsize, pages);
            continue;
        }
        if (at + ((nd.flags & LM_F_SUBDATA) ? sizeof(struct lm_db) : dsize) > psize) {
            v = damaged_page(w, pg);
            break;
        }
        if (!(nd.flags & LM_F_SUBDATA))
            continue;
        struct lm_db db;
        uint64_t sub = 0;
        memcpy(&db, p + at, sizeof db);
        if (!named || dsize != sizeof db ||
            (db.root == LM_NO_PAGE && (db.entries || db.depth))) {
            v = damaged_page(w, pg);
            break;
        }
        if (db.root == LM_NO_PAGE)
            continue;
        v = walk_tree(w, db.root, db.depth, 0, &sub);
        if (v == STATE_LMDB_OK && !w->dupsort &&
            sub != db.branch_pages + db.leaf_pages + db.overflow_pages)
            v = say(w, STATE_LMDB_BROKEN, "a database's pages are not the ones it counts");
    }
out:
    free(p);
    return v;
}

/* Walks the main tree (and the named databases in it) and the free pages'
 * tree, marking their pages; the free pages are marked by the free list's
 * walk (walk_db), and then every page must be marked. */
static enum state_lmdb_verdict walk_pages(struct walk *w)
{
    mark(w, 0);     /* the meta pages */
    mark(w, 1);
    for (int t = 0; t < 2; t++) {
        uint64_t pages = 0;
        if (w->m->tree[t].root == UINT64_MAX)
            continue;
        enum state_lmdb_verdict v =
            walk_tree(w, w->m->tree[t].root, w->m->tree[t].depth, t == 1, &pages);
        if (v != STATE_LMDB_OK)
            return v;
        if (!w->dupsort && pages != w->m->tree[t].pages)
            return say(w, STATE_LMDB_BROKEN, "a database's pages are not the ones it counts");
    }
    return STATE_LMDB_OK;
}

/* The counts the meta database keeps, which the walk must find. */
struct counts {
    int64_t pages, queued, fetched, seen, robots, valid;
};

/* Reads the meta integer key (0 when absent) into *v. 0, or -1. */
static int meta_int(struct walk *w, MDB_dbi meta, const char *key, int64_t *v)
{
    MDB_val k = { strlen(key), (void *)key }, d;
    *v = 0;
    int rc = mdb_get(w->txn, meta, &k, &d);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc || d.mv_size != sizeof *v + STATE_LMDB_CRC ||
        !state_lmdb_sealed(k.mv_data, k.mv_size, d.mv_data, d.mv_size))
        return -1;
    memcpy(v, d.mv_data, sizeof *v);
    return 0;
}

/* Checks the marker: OK, FOREIGN (none), VERSION (another format's). */
static enum state_lmdb_verdict marker(struct walk *w, MDB_dbi meta)
{
    MDB_val k = { strlen(STATE_LMDB_MARKER), STATE_LMDB_MARKER }, d;
    int rc = mdb_get(w->txn, meta, &k, &d);
    if (rc == MDB_NOTFOUND) {
        /* Format 2 had no marker: its meta value "version" was "2". */
        MDB_val vk = { 7, "version" }, vd;
        if (mdb_get(w->txn, meta, &vk, &vd) == 0 && vd.mv_size == 1 &&
            *(const char *)vd.mv_data == '2') {
            w->format = 2;
            return STATE_LMDB_VERSION;
        }
        return say(w, STATE_LMDB_FOREIGN, "an LMDB file without crawl's marker");
    }
    if (rc)
        return say(w, STATE_LMDB_BROKEN, "LMDB: %s", mdb_strerror(rc));
    if (d.mv_size < STATE_LMDB_MAGIC_LEN + 4 ||
        memcmp(d.mv_data, STATE_LMDB_MAGIC, STATE_LMDB_MAGIC_LEN) != 0)
        return say(w, STATE_LMDB_FOREIGN, "an LMDB file without crawl's marker");
    uint32_t format;
    memcpy(&format, (const char *)d.mv_data + STATE_LMDB_MAGIC_LEN, sizeof format);
    if (format != STATE_LMDB_FORMAT) {
        w->format = format;
        return STATE_LMDB_VERSION;
    }
    if (d.mv_size != STATE_LMDB_MARKER_LEN ||
        !state_lmdb_sealed(k.mv_data, k.mv_size, d.mv_data, d.mv_size))
        return say(w, STATE_LMDB_BROKEN, "crawl's marker fails its CRC");
    return STATE_LMDB_OK;
}

int state_lmdb_page_ok(const void *val, size_t n, uint8_t *state)
{
    const unsigned char *v = val;
    struct state_lmdb_rec r;
    if (n < sizeof r + STATE_LMDB_STRINGS)
        return 0;
    memcpy(&r, v, sizeof r);
    if (r.state > STATE_LMDB_FETCHED || r.has >= 1u << (STATE_LMDB_STRINGS - 1))
        return 0;
    size_t at = sizeof r;
    for (int i = 0; i < STATE_LMDB_STRINGS; i++) {
        const unsigned char *z = memchr(v + at, '\0', n - at);
        if (!z)
            return 0;
        at = (size_t)(z - v) + 1;
    }
    *state = r.state;
    return at == n;
}

int state_lmdb_valid_ok(const void *val, size_t n)
{
    const unsigned char *v = val;
    struct state_lmdb_valid r;
    if (n < sizeof r + 2)
        return 0;
    memcpy(&r, v, sizeof r);
    if (r.has > 7)
        return 0;
    size_t at = sizeof r;
    for (int i = 0; i < 2; i++) {
        const unsigned char *z = memchr(v + at, '\0', n - at);
        if (!z)
            return 0;
        at = (size_t)(z - v) + 1;
    }
    /* The links: none, or NUL-terminated ones to the end. */
    return at == n || v[n - 1] == '\0';
}

/* Walks database dbi named name: every record's CRC, keys in order, and
 * what kind checks (a page record, a seen hash, robots.txt, a recrawl's
 * record of a page, a named value), counting into c. */
enum kind { PAGES, SEEN, ROBOTS, VALID, META, FREE };

/* A record of the free pages' tree, as LMDB keeps them (an ID list: a
 * count, then page numbers, falling), under the commit that freed them:
 * its pages are marked. LMDB copies as many as the count says. */
static enum state_lmdb_verdict free_list(struct walk *w, const MDB_val *k, const MDB_val *v)
{
    size_t id, cnt, pg, last = SIZE_MAX;
    if (k->mv_size != sizeof id || v->mv_size < sizeof cnt || v->mv_size % sizeof cnt)
        return say(w, STATE_LMDB_BROKEN, "its free-page list is damaged");
    memcpy(&id, k->mv_data, sizeof id);
    memcpy(&cnt, v->mv_data, sizeof cnt);
    if (id > w->m->txnid || cnt > v->mv_size / sizeof cnt - 1)
        return say(w, STATE_LMDB_BROKEN, "its free-page list is damaged");
    for (size_t i = 1; i <= cnt; i++) {
        memcpy(&pg, (const char *)v->mv_data + i * sizeof pg, sizeof pg);
        if (pg < LM_METAS || pg >= last)
            return say(w, STATE_LMDB_BROKEN, "its free-page list is damaged");
        if (mark(w, pg) != 0)
            return say(w, STATE_LMDB_BROKEN, "page %zu is both free and used", pg);
        last = pg;
    }
    return STATE_LMDB_OK;
}

/* Whether record k, v (body bytes before its CRC) of a database of kind
 * holds what crawl writes there; a page's state goes to *state. */
static int record_ok(enum kind kind, const MDB_val *k, const MDB_val *v, size_t body,
                     uint8_t *state)
{
    switch (kind) {
    case PAGES:
        return k->mv_size == sizeof(size_t) && state_lmdb_page_ok(v->mv_data, body, state);
    case SEEN:
        return k->mv_size == sizeof(size_t) && body == 0;
    case ROBOTS:
        return k->mv_size > 0 && body >= 2 * sizeof(int64_t);
    case VALID:
        return k->mv_size == sizeof(size_t) && state_lmdb_valid_ok(v->mv_data, body);
    default:
        return 1;
    }
}

static enum state_lmdb_verdict walk_db(struct walk *w, MDB_dbi dbi, const char *name,
                                       enum kind kind, struct counts *c)
{
    MDB_cursor *cur;
    MDB_val k, v, prev = { 0, NULL };
    MDB_stat ms;
    enum state_lmdb_verdict vd;
    int rc = mdb_cursor_open(w->txn, dbi, &cur);
    if (rc)
        return say(w, STATE_LMDB_BROKEN, "database %s: LMDB: %s", name, mdb_strerror(rc));
    size_t seen = 0, next_id = 1;
    int64_t counted = 0;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        /* A damaged branch page sends the cursor to another subtree: keys
         * come again or out of order, and the walk stops at once. */
        if (prev.mv_data && mdb_cmp(w->txn, dbi, &prev, &k) >= 0)
            return say(w, STATE_LMDB_BROKEN, "database %s: its keys are out of order", name);
        prev = k;
        seen++;
        if (kind == FREE) {
            if ((vd = free_list(w, &k, &v)) != STATE_LMDB_OK)
                return vd;
            continue;
        }
        if (!state_lmdb_sealed(k.mv_data, k.mv_size, v.mv_data, v.mv_size))
            return say(w, STATE_LMDB_BROKEN, "a record of database %s fails its CRC", name);
        uint8_t state = 0;
        if (!record_ok(kind, &k, &v, v.mv_size - STATE_LMDB_CRC, &state))
            return say(w, STATE_LMDB_BROKEN, "a record of database %s is damaged", name);
        if (kind == PAGES) {
            size_t id;
            memcpy(&id, k.mv_data, sizeof id);
            /* Page ids are given in order and never taken back. */
            if (id != next_id++)
                return say(w, STATE_LMDB_BROKEN, "database %s lacks page %zu", name, id - 1);
            c->queued -= state == STATE_LMDB_QUEUED;
            c->fetched -= state == STATE_LMDB_FETCHED;
        }
        counted += kind != META;
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND)
        return say(w, STATE_LMDB_BROKEN, "database %s: LMDB: %s", name, mdb_strerror(rc));
    /* LMDB's own count of the tree, and crawl's, against what is in it. */
    if ((rc = mdb_stat(w->txn, dbi, &ms)) != 0 || ms.ms_entries != seen)
        return say(w, STATE_LMDB_BROKEN, "database %s holds %zu records, not the %zu it says",
                   name, seen, rc ? 0 : ms.ms_entries);
    int64_t want = kind == PAGES ? c->pages : kind == SEEN ? c->seen
                   : kind == ROBOTS ? c->robots : c->valid;
    if (kind != META && kind != FREE && counted != want)
        return say(w, STATE_LMDB_BROKEN, "database %s holds %lld records, not the %lld counted",
                   name, (long long)counted, (long long)want);
    if (kind == PAGES && (c->queued || c->fetched))
        return say(w, STATE_LMDB_BROKEN, "database %s: its pages' states are not the ones "
                   "counted", name);
    return STATE_LMDB_OK;
}

static enum state_lmdb_verdict walk_all(const char *path, struct walk *w)
{
    static const struct {
        const char *name;
        unsigned flags;
        enum kind kind;
    } dbs[STATE_LMDB_DBS] = {
        { "meta", 0, META }, { "page", MDB_INTEGERKEY, PAGES },
        { "robots", 0, ROBOTS }, { "seen", MDB_INTEGERKEY, SEEN },
        { "valid", MDB_INTEGERKEY, VALID },
    };
    MDB_env *env;
    MDB_dbi dbi[STATE_LMDB_DBS], main_db;
    int rc;
    /* The pages first, read here, so that LMDB reads none that is not
     * whole. A damaged page found now is a damaged file, whoever's. */
    size_t bytes = (size_t)(w->m->last_pg / 8 + 1);
    if (!(w->used = calloc(bytes, 1)))
        return say(w, STATE_LMDB_BROKEN, "out of memory");
    enum state_lmdb_verdict v = walk_pages(w);
    if (v != STATE_LMDB_OK)
        return v;
    /* Mapped no further than the last commit's pages: read-only, and the
     * meta pages' map size is one more number a damaged file may get
     * wrong. The process ends after: nothing here is closed. */
    size_t need = (size_t)((w->m->last_pg + 1) * w->m->psize);
    if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_maxdbs(env, STATE_LMDB_DBS)) ||
        (rc = mdb_env_set_mapsize(env, need)) ||
        (rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS, 0)) ||
        (rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &w->txn)) ||
        (rc = mdb_dbi_open(w->txn, NULL, 0, &main_db)))
        return say(w, STATE_LMDB_BROKEN, "LMDB cannot open it: %s", mdb_strerror(rc));
    rc = mdb_dbi_open(w->txn, "meta", 0, &dbi[0]);
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE)
        return say(w, STATE_LMDB_FOREIGN, "an LMDB file without crawl's marker");
    if (rc)
        return say(w, STATE_LMDB_BROKEN, "database meta: LMDB: %s", mdb_strerror(rc));
    if ((v = marker(w, dbi[0])) != STATE_LMDB_OK)
        return v;
    if (w->dupsort)
        return say(w, STATE_LMDB_BROKEN, "page %llu holds what crawl never writes",
                   (unsigned long long)w->dupsort);
    /* The main database names the five, and nothing else. */
    MDB_cursor *cur;
    MDB_val k, d;
    if ((rc = mdb_cursor_open(w->txn, main_db, &cur)))
        return say(w, STATE_LMDB_BROKEN, "LMDB: %s", mdb_strerror(rc));
    for (rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT)) {
        int known = 0;
        for (int i = 0; i < STATE_LMDB_DBS; i++)
            known |= k.mv_size == strlen(dbs[i].name) &&
                     memcmp(k.mv_data, dbs[i].name, k.mv_size) == 0;
        if (!known)
            return say(w, STATE_LMDB_BROKEN, "it holds a database crawl does not make");
    }
    mdb_cursor_close(cur);
    if (rc != MDB_NOTFOUND)
        return say(w, STATE_LMDB_BROKEN, "LMDB: %s", mdb_strerror(rc));
    for (int i = 1; i < STATE_LMDB_DBS; i++) {
        unsigned fl = 0;
        if ((rc = mdb_dbi_open(w->txn, dbs[i].name, dbs[i].flags, &dbi[i])) ||
            (rc = mdb_dbi_flags(w->txn, dbi[i], &fl)) || fl != dbs[i].flags)
            return say(w, STATE_LMDB_BROKEN, "database %s: %s", dbs[i].name,
                       rc ? mdb_strerror(rc) : "not as crawl makes it");
    }
    struct counts c;
    if (meta_int(w, dbi[0], "count:pages", &c.pages) || meta_int(w, dbi[0], "queued", &c.queued) ||
        meta_int(w, dbi[0], "fetched", &c.fetched) || meta_int(w, dbi[0], "count:seen", &c.seen) ||
        meta_int(w, dbi[0], "count:robots", &c.robots) ||
        meta_int(w, dbi[0], "count:valid", &c.valid))
        return say(w, STATE_LMDB_BROKEN, "a record of database meta fails its CRC");
    for (int i = 0; i < STATE_LMDB_DBS; i++)
        if ((v = walk_db(w, dbi[i], dbs[i].name, dbs[i].kind, &c)) != STATE_LMDB_OK)
            return v;
    if ((v = walk_db(w, 0, "of free pages", FREE, &c)) != STATE_LMDB_OK)
        return v;
    /* Each page is in use by one tree, or free (LMDB's own rule: every
     * page up to the last is reachable exactly once): a page that is
     * neither was lost, one that is both would be written over. */
    for (uint64_t pg = 0; pg <= w->m->last_pg; pg++)
        if (!(w->used[pg / 8] & (1u << (pg % 8))))
            return say(w, STATE_LMDB_BROKEN, "page %llu is neither used nor free",
                       (unsigned long long)pg);
    return STATE_LMDB_OK;
}

/* What the child sends back: the verdict, the format, the reason. */
struct report {
    int verdict;
    unsigned format;
    char why[256];
};

enum state_lmdb_verdict state_lmdb_walk(const char *path, int fd,
                                        const struct state_lmdb_meta *m, unsigned *format,
                                        char *why, size_t n)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(why, n, "cannot check it: %s", strerror(errno));
        return STATE_LMDB_BROKEN;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "cannot check it: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return STATE_LMDB_BROKEN;
    }
    if (pid == 0) {
        /* A crash is the verdict: the signals that tell of one kill the
         * child as they would any process (a sanitizer's handler would
         * print a report and exit with a status instead); the ones the
         * user sends are the parent's to act on, and the walk finishes. */
        static const int crashes[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        for (size_t i = 0; i < sizeof crashes / sizeof *crashes; i++)
            sigaction(crashes[i], &sa, NULL);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGALRM, SIG_IGN);
        close(p[0]);
        struct walk w = { .m = m, .fd = fd };
        struct report r;
        memset(&r, 0, sizeof r);
        r.verdict = (int)walk_all(path, &w);
        r.format = w.format;
        memcpy(r.why, w.why, sizeof r.why);
        ssize_t wr = write(p[1], &r, sizeof r);
        _exit(wr == (ssize_t)sizeof r ? 0 : 1);
    }
    close(p[1]);
    struct report r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = read(p[0], (char *)&r + got, sizeof r - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(p[0]);
    int status = 0;
    pid_t done;
    while ((done = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (done < 0) {
        snprintf(why, n, "cannot check it: %s", strerror(errno));
        return STATE_LMDB_BROKEN;
    }
    if (WIFSIGNALED(status)) {
        snprintf(why, n, "LMDB crashed reading it: %s", strsignal(WTERMSIG(status)));
        return STATE_LMDB_BROKEN;
    }
    if (got != sizeof r || r.verdict < STATE_LMDB_OK || r.verdict > STATE_LMDB_BROKEN) {
        snprintf(why, n, "its check ended without a verdict");
        return STATE_LMDB_BROKEN;
    }
    r.why[sizeof r.why - 1] = '\0';
    snprintf(why, n, "%s", r.why);
    *format = r.format;
    return (enum state_lmdb_verdict)r.verdict;
}

/* state_lmdb_check.c: whether a --state file can be trusted, decided
 * before the store (state_lmdb.c) maps a byte of it for writing. LMDB
 * trusts its own pages: a truncated file crashes it with SIGBUS the
 * moment it reads a page past the end. So the two meta pages are read here
 * with pread(2), held to each other and to the file's size. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state_lmdb.h"

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

#define LM_MAGIC 0xBEEFC0DEu
#define LM_DATA_VERSION 1
#define LM_P_META 0x08
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
    uint64_t need = (m->last_pg + 1) * (uint64_t)psize;
    if (m->size < need) {
        snprintf(why, n, "truncated: it holds %llu bytes, its last commit needs %llu",
                 (unsigned long long)m->size, (unsigned long long)need);
        return STATE_LMDB_BROKEN;
    }
    return STATE_LMDB_OK;
}

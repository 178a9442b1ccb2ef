/* frontier_spill.c: the links admitted while memory's queue is full, kept
 * in the order found as records in chunks of about SPILL_CHUNK bytes. The
 * newest chunks wait in memory; the older ones are written to temporary
 * files of about FRONTIER_SPILL_SEGMENT bytes, and read back as the queue
 * drains, a file dropped once every chunk in it is read. The files are
 * written and read, and the links parsed, in a claimed refill
 * (frontier_refill_begin .. frontier_refill_end): the claim is taken, and
 * what it read placed, under the core's lock; the I/O and the parsing run
 * without it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontier_internal.h"
#include "spool.h"
#include "url.h"
#include "vec.h"

/* A link's record: this header, then the scope, the URL and its parent,
 * unless parent_len is SAME_PARENT: then its parent is the record's
 * before it in the same chunk (a page's links are spilled in a row), which
 * costs no bytes. A chunk's first record always writes its parent out, so
 * a chunk is read without the one before it. */
struct record {
    int32_t depth, hops;
    uint32_t scope_len, url_len, parent_len;
};
#define SAME_PARENT UINT32_MAX

/* A chunk is closed once it holds this many bytes, and written or read in
 * one call: a link a write and three reads held the core's lock for some 2
 * microseconds each, when they were made one at a time under it. */
#define SPILL_CHUNK (64 * 1024)

/* Full chunks kept in memory before a claim writes them out. */
#define SPILL_MEM_CHUNKS 4

/* Links a claim reads back, unless the queues are empty: they are placed
 * under the core's lock, which every transfer that ends waits for. */
#define SPILL_READ 2048

struct spill_chunk {
    struct spill_chunk *next;
    char *buf;
    size_t len, cap;
    size_t nrec;
};

struct spill_seg {              /* a temporary file of chunks */
    struct spool *sp;
    size_t refs;                /* its chunks not yet read */
};

struct spill_extent {           /* a chunk in a file */
    struct spill_extent *next;
    struct spill_seg *seg;
    uint64_t off;
    size_t len, nrec;
};

struct held_link {              /* a link read back, parsed, to be placed */
    struct held_link *next;
    struct url_parts u;
    int depth, hops;
    const char *parent;         /* into s, or NULL */
    char s[];                   /* its scope, then its parent */
};

static void chunk_free(struct spill_chunk *c)
{
    if (c) {
        free(c->buf);
        free(c);
    }
}

static void chunks_free(struct spill_chunk *c)
{
    for (struct spill_chunk *n; c; c = n) {
        n = c->next;
        chunk_free(c);
    }
}

/* Drops segment s when nothing in it is left to read and no chunk goes
 * to it any more. Returns the bytes it held on disk. */
static uint64_t seg_release(struct frontier_spill *sp, struct spill_seg *s)
{
    if (!s || s->refs || s == sp->seg_w)
        return 0;
    uint64_t n = spool_size(s->sp);
    spool_free(s->sp);
    free(s);
    return n;
}

/* Frees the files, and the claim's chunks and links: what nothing under
 * the lock touches. */
static void files_free(struct frontier_spill *sp)
{
    struct spill_seg *w = sp->seg_w;
    sp->seg_w = NULL;
    if (w && !w->refs)
        seg_release(sp, w);
    struct spill_extent *lists[] = { sp->fhead, sp->rhead };
    for (size_t i = 0; i < 2; i++)
        for (struct spill_extent *e = lists[i], *n; e; e = n) {
            n = e->next;
            e->seg->refs--;
            seg_release(sp, e->seg);
            free(e);
        }
    sp->fhead = sp->ftail = sp->rhead = NULL;
    sp->nfile = 0;
    chunks_free(sp->rchunks);
    chunks_free(sp->wchunks);
    sp->rchunks = sp->wchunks = NULL;
    for (struct held_link *h = sp->held, *n; h; h = n) {
        n = h->next;
        url_parts_free(&h->u);
        free(h);
    }
    sp->held = sp->held_tail = NULL;
}

/* Appends chunk c to the list (head, tail). */
static void chunk_append(struct spill_chunk **head, struct spill_chunk **tail,
                         struct spill_chunk *c)
{
    c->next = NULL;
    if (*tail)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
}

int frontier__spill_push(struct frontier *f, const char *url, const char *scope,
                         const char *parent, int depth, int hops)
{
    struct frontier_spill *sp = &f->sp;
    struct spill_chunk *c = sp->w;
    if (!c) {
        if (!(c = calloc(1, sizeof *c)))
            return CRAWL_ENOMEM;
        sp->w = c;
        free(sp->w_parent);
        sp->w_parent = NULL;
    }
    int same = parent && sp->w_parent && strcmp(parent, sp->w_parent) == 0;
    struct record r = { depth, hops, (uint32_t)strlen(scope), (uint32_t)strlen(url),
                        same ? SAME_PARENT : parent ? (uint32_t)strlen(parent) : 0 };
    size_t plen = same ? 0 : r.parent_len;
    size_t n = sizeof r + r.scope_len + r.url_len + plen;
    if (vec_reserve(&c->buf, &c->cap, c->len + n, 1, SPILL_CHUNK) != 0)
        return CRAWL_ENOMEM;
    if (!same) {
        free(sp->w_parent);
        /* NULL, out of memory: the next link writes its parent out. */
        sp->w_parent = parent ? strdup(parent) : NULL;
    }
    char *w = c->buf + c->len;
    memcpy(w, &r, sizeof r);
    memcpy(w + sizeof r, scope, r.scope_len);
    memcpy(w + sizeof r + r.scope_len, url, r.url_len);
    if (plen)
        memcpy(w + sizeof r + r.scope_len + r.url_len, parent, plen);
    c->len += n;
    c->nrec++;
    sp->bytes += n;
    f->spilled++;
    if (c->len >= SPILL_CHUNK) {
        chunk_append(&sp->mhead, &sp->mtail, c);
        sp->nmem++;
        sp->w = NULL;
    }
    return 0;
}

int frontier__spill_begin(struct frontier *f)
{
    struct frontier_spill *sp = &f->sp;
    if (!f->spilled)
        return 0;
    size_t inq = f->queued + f->pending;
    size_t want = inq >= FRONTIER_MEM_JOBS / 2 ? 0 : inq == 0 ? FRONTIER_MEM_JOBS / 4 : SPILL_READ;
    sp->took = 0;
    sp->lost = 0;
    sp->dbytes = 0;
    /* Oldest first: the chunks in files, then those in memory, then the
     * one being filled. */
    struct spill_extent **et = &sp->rhead;
    while (sp->took < want && sp->fhead) {
        struct spill_extent *e = sp->fhead;
        if (!(sp->fhead = e->next))
            sp->ftail = NULL;
        sp->nfile -= e->nrec;
        sp->took += e->nrec;
        e->next = NULL;
        *et = e;
        et = &e->next;
    }
    struct spill_chunk *rtail = NULL;
    while (sp->took < want && (sp->mhead || sp->w)) {
        struct spill_chunk *c = sp->mhead;
        if (c) {
            if (!(sp->mhead = c->next))
                sp->mtail = NULL;
            sp->nmem--;
        } else {
            c = sp->w;
            sp->w = NULL;
        }
        sp->took += c->nrec;
        sp->dbytes -= (int64_t)c->len;
        chunk_append(&sp->rchunks, &rtail, c);
    }
    /* Too many chunks in memory: they go to a file, after those there. */
    if (sp->nmem > SPILL_MEM_CHUNKS) {
        sp->wchunks = sp->mhead;
        sp->mhead = sp->mtail = NULL;
        sp->nmem = 0;
    }
    return sp->rhead || sp->rchunks || sp->wchunks;
}

/* Parses the n records of chunk buf (len bytes) into held links; a record
 * that cannot be read is counted lost. */
static void parse_chunk(struct frontier_spill *sp, const char *buf, size_t len, size_t n)
{
    const char *p = buf, *end = buf + len;
    const char *parent = NULL;
    size_t parent_len = 0;
    char *url = NULL;
    size_t url_cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct record r;
        if ((size_t)(end - p) < sizeof r) {
            sp->lost += n - i;
            break;
        }
        memcpy(&r, p, sizeof r);
        int same = r.parent_len == SAME_PARENT;
        size_t plen = same ? 0 : r.parent_len;
        size_t body = (size_t)r.scope_len + r.url_len + plen;
        if ((size_t)(end - p) - sizeof r < body) {
            sp->lost += n - i;
            break;
        }
        const char *scope = p + sizeof r, *u = scope + r.scope_len;
        if (!same) {
            parent = plen ? u + r.url_len : NULL;
            parent_len = plen;
        }
        p += sizeof r + body;
        struct held_link *h = NULL;
        if (vec_reserve(&url, &url_cap, (size_t)r.url_len + 1, 1, 256) != 0 ||
            !(h = malloc(sizeof *h + r.scope_len + 1 + (parent ? parent_len + 1 : 0)))) {
            sp->lost++;
            continue;
        }
        memcpy(url, u, r.url_len);
        url[r.url_len] = '\0';
        if (url_split(url, &h->u) != 0) {
            free(h);
            sp->lost++;
            continue;
        }
        h->next = NULL;
        h->depth = r.depth;
        h->hops = r.hops;
        memcpy(h->s, scope, r.scope_len);
        h->s[r.scope_len] = '\0';
        h->parent = NULL;
        if (parent) {
            char *q = h->s + r.scope_len + 1;
            memcpy(q, parent, parent_len);
            q[parent_len] = '\0';
            h->parent = q;
        }
        if (sp->held_tail)
            sp->held_tail->next = h;
        else
            sp->held = h;
        sp->held_tail = h;
    }
    free(url);
}

/* Writes chunk c after the files' last one. 0, or -1 (its links are
 * lost). */
static int write_chunk(struct frontier_spill *sp, struct spill_chunk *c)
{
    struct spill_extent *e = malloc(sizeof *e);
    if (!e)
        return -1;
    struct spill_seg *s = sp->seg_w;
    if (!s || spool_size(s->sp) >= FRONTIER_SPILL_SEGMENT) {
        struct spill_seg *ns = calloc(1, sizeof *ns);
        if (!ns || !(ns->sp = spool_new(0))) {
            free(ns);
            free(e);
            return -1;
        }
        sp->seg_w = ns;
        sp->dbytes -= (int64_t)seg_release(sp, s);
        s = ns;
    }
    uint64_t off;
    if (spool_add(s->sp, c->buf, c->len, &off) != 0) {
        free(e);
        return -1;
    }
    *e = (struct spill_extent){ NULL, s, off, c->len, c->nrec };
    s->refs++;
    if (sp->ftail)
        sp->ftail->next = e;
    else
        sp->fhead = e;
    sp->ftail = e;
    sp->nfile += c->nrec;
    return 0;
}

void frontier__spill_read(struct frontier *f)
{
    struct frontier_spill *sp = &f->sp;
    char *buf = NULL;
    size_t cap = 0;
    for (struct spill_extent *e = sp->rhead, *n; e; e = n) {
        n = e->next;
        if (vec_reserve(&buf, &cap, e->len ? e->len : 1, 1, SPILL_CHUNK) == 0 &&
            spool_get(e->seg->sp, e->off, buf, e->len) == 0)
            parse_chunk(sp, buf, e->len, e->nrec);
        else
            sp->lost += e->nrec;   /* the file cannot be read back */
        e->seg->refs--;
        sp->dbytes -= (int64_t)seg_release(sp, e->seg);
        free(e);
    }
    sp->rhead = NULL;
    free(buf);
    for (struct spill_chunk *c = sp->rchunks, *n; c; c = n) {
        n = c->next;
        parse_chunk(sp, c->buf, c->len, c->nrec);
        chunk_free(c);
    }
    sp->rchunks = NULL;
    /* Every chunk written is read: the file being written starts again. */
    if (!sp->fhead && sp->seg_w && spool_size(sp->seg_w->sp)) {
        sp->dbytes -= (int64_t)spool_size(sp->seg_w->sp);
        spool_reset(sp->seg_w->sp);
    }
    for (struct spill_chunk *c = sp->wchunks, *n; c; c = n) {
        n = c->next;
        if (write_chunk(sp, c) != 0) {
            sp->lost += c->nrec;
            sp->took += c->nrec;
            sp->dbytes -= (int64_t)c->len;
        }
        chunk_free(c);
    }
    sp->wchunks = NULL;
}

int frontier__spill_end(struct frontier *f)
{
    struct frontier_spill *sp = &f->sp;
    if (sp->dropped) {
        /* Drained meanwhile: every link was counted left then. */
        sp->dropped = 0;
        files_free(sp);
        return 0;
    }
    struct held_link *h = sp->held, *next;
    sp->held = sp->held_tail = NULL;
    for (; h; h = next) {
        next = h->next;
        if (frontier__place(f, &h->u, h->s, h->parent, h->depth, 0, h->hops, NULL) ==
                JOB_LINK_NOMEM)
            f->left++;
        url_parts_free(&h->u);
        free(h);
    }
    f->spilled -= sp->took;
    f->left += sp->lost;
    sp->bytes += sp->dbytes;
    sp->took = sp->lost = 0;
    sp->dbytes = 0;
    return f->spilled && f->queued + f->pending < FRONTIER_MEM_JOBS / 2;
}

void frontier__spill_drop(struct frontier *f)
{
    struct frontier_spill *sp = &f->sp;
    f->left += f->spilled;
    f->spilled = 0;
    chunk_free(sp->w);
    sp->w = NULL;
    chunks_free(sp->mhead);
    sp->mhead = sp->mtail = NULL;
    sp->nmem = 0;
    free(sp->w_parent);
    sp->w_parent = NULL;
    if (f->rf.on && !f->st) {
        sp->dropped = 1;        /* the claim's holder frees its files */
        sp->bytes = 0;
        return;
    }
    files_free(sp);
    sp->bytes = 0;
}

void frontier__spill_free(struct frontier *f)
{
    struct frontier_spill *sp = &f->sp;
    chunk_free(sp->w);
    chunks_free(sp->mhead);
    free(sp->w_parent);
    files_free(sp);
    memset(sp, 0, sizeof *sp);
}

/* reorder.c: a min-heap of held rows keyed by sequence number; the row
 * bytes live in a spool, so that a slow row at the head of the line costs
 * an index entry per row behind it, not the rows themselves in memory. */
#include <errno.h>
#include <stdlib.h>

#include "reorder.h"
#include "spool.h"
#include "strbuf.h"
#include "vec.h"

struct held {
    uint64_t seq;
    uint64_t off;       /* in the spool */
    size_t   len;
};

struct reorder {
    uint64_t next;      /* the number whose row goes next */
    struct held *heap;
    size_t n, cap;
    struct spool *sp;
    struct strbuf row;  /* a held row read back */
    reorder_emit_fn emit;
    void *data;
};

struct reorder *reorder_new(size_t mem_bound, reorder_emit_fn emit, void *data)
{
    struct reorder *r = calloc(1, sizeof *r);
    if (!r || !(r->sp = spool_new(mem_bound))) {
        free(r);
        return NULL;
    }
    r->emit = emit;
    r->data = data;
    return r;
}

static void swap(struct held *a, struct held *b)
{
    struct held t = *a;
    *a = *b;
    *b = t;
}

static int heap_push(struct reorder *r, struct held h)
{
    if (vec_reserve(&r->heap, &r->cap, r->n + 1, sizeof *r->heap, 64) != 0)
        return -ENOMEM;
    size_t i = r->n++;
    r->heap[i] = h;
    while (i && r->heap[(i - 1) / 2].seq > r->heap[i].seq) {
        swap(&r->heap[(i - 1) / 2], &r->heap[i]);
        i = (i - 1) / 2;
    }
    return 0;
}

static struct held heap_pop(struct reorder *r)
{
    struct held top = r->heap[0];
    r->heap[0] = r->heap[--r->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->n && r->heap[l].seq < r->heap[m].seq)
            m = l;
        if (l + 1 < r->n && r->heap[l + 1].seq < r->heap[m].seq)
            m = l + 1;
        if (m == i)
            break;
        swap(&r->heap[i], &r->heap[m]);
        i = m;
    }
    return top;
}

int reorder_put(struct reorder *r, uint64_t seq, const char *row, size_t n)
{
    int rc;
    if (seq != r->next) {
        struct held h = { .seq = seq, .len = n };
        if ((rc = spool_add(r->sp, row, n, &h.off)) != 0)
            return rc;
        return heap_push(r, h);
    }
    if ((rc = r->emit(row, n, r->data)) != 0)
        return rc;
    r->next++;
    while (r->n && r->heap[0].seq == r->next) {
        struct held h = heap_pop(r);
        sb_reset(&r->row);
        if (sb_reserve(&r->row, h.len) != 0)
            return -ENOMEM;
        if ((rc = spool_get(r->sp, h.off, r->row.data, h.len)) != 0)
            return rc;
        if ((rc = r->emit(r->row.data, h.len, r->data)) != 0)
            return rc;
        r->next++;
    }
    if (r->n == 0 && spool_size(r->sp))
        spool_reset(r->sp);
    return 0;
}

size_t reorder_held(const struct reorder *r)
{
    return r->n;
}

void reorder_free(struct reorder *r)
{
    if (!r)
        return;
    spool_free(r->sp);
    sb_free(&r->row);
    free(r->heap);
    free(r);
}

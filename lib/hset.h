/* hset.h: the hash sets here: open addressing over 64-bit hashes. struct
 * hset keeps an item pointer with each hash; the caller hashes (hset_hash
 * is FNV-1a) and says when two items are the same. struct hset64 keeps the
 * hashes alone, 8 bytes a slot, for a seen set that does not keep what it
 * saw. Header-only, for the crawler and the fixture server alike. */
#ifndef CRAWL_HSET_H
#define CRAWL_HSET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct hset_slot {
    uint64_t h;                 /* 0: empty (hset_hash never gives 0) */
    void *item;
};

struct hset {
    struct hset_slot *slot;
    size_t cap, n;              /* cap: a power of two, or 0 */
};

/* Returns the FNV-1a hash of the n bytes at p, never 0. */
static inline uint64_t hset_hash(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ULL;
    return h ? h : 1;
}

/* Says whether item is what key names. */
typedef int (*hset_eq_fn)(const void *item, const void *key);

/* Returns the slot that holds the item with hash h that eq says is key
 * (eq NULL: the hash alone decides), or the empty slot where it would go;
 * NULL when the set has no slots yet. */
static inline struct hset_slot *hset_slot(const struct hset *s, uint64_t h, hset_eq_fn eq,
                                          const void *key)
{
    if (!s->cap)
        return NULL;
    size_t mask = s->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct hset_slot *x = &s->slot[i];
        if (!x->h || (x->h == h && (!eq || eq(x->item, key))))
            return x;
    }
}

/* Returns the item with hash h that eq says is key, or NULL. With eq NULL
 * and items NULL, use hset_has. */
static inline void *hset_find(const struct hset *s, uint64_t h, hset_eq_fn eq, const void *key)
{
    struct hset_slot *x = hset_slot(s, h, eq, key);
    return x && x->h ? x->item : NULL;
}

/* Returns 1 when an item with hash h that eq says is key is in s. */
static inline int hset_has(const struct hset *s, uint64_t h, hset_eq_fn eq, const void *key)
{
    struct hset_slot *x = hset_slot(s, h, eq, key);
    return x && x->h;
}

/* Adds item under hash h; the caller knows it is not there yet. Grows at
 * half full. Returns 0, or -1 when memory is short (nothing added). */
static inline int hset_add(struct hset *s, uint64_t h, void *item)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct hset_slot *v = calloc(cap, sizeof *v);
        if (!v)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slot[i].h)
                continue;
            size_t k = s->slot[i].h & (cap - 1);
            while (v[k].h)
                k = (k + 1) & (cap - 1);
            v[k] = s->slot[i];
        }
        free(s->slot);
        s->slot = v;
        s->cap = cap;
    }
    size_t k = h & (s->cap - 1);
    while (s->slot[k].h)
        k = (k + 1) & (s->cap - 1);
    s->slot[k].h = h;
    s->slot[k].item = item;
    s->n++;
    return 0;
}

/* Frees the slots (not the items) and empties s. */
static inline void hset_free(struct hset *s)
{
    free(s->slot);
    s->slot = NULL;
    s->cap = s->n = 0;
}

/* A set of 64-bit hashes alone (0 is never stored). */
struct hset64 {
    uint64_t *h;
    size_t cap, n;              /* cap: a power of two, or 0 */
};

/* Adds h to s unless it is there; grows at three quarters full, so that a
 * hash costs 11 to 21 bytes. Returns 1 when h was new, 0 when it was there,
 * -1 when memory is short. */
static inline int hset64_add(struct hset64 *s, uint64_t h)
{
    h = h ? h : 1;
    if (4 * (s->n + 1) > 3 * s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        uint64_t *v = calloc(cap, sizeof *v);
        if (!v)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->h[i])
                continue;
            size_t k = s->h[i] & (cap - 1);
            while (v[k])
                k = (k + 1) & (cap - 1);
            v[k] = s->h[i];
        }
        free(s->h);
        s->h = v;
        s->cap = cap;
    }
    size_t k = h & (s->cap - 1);
    for (; s->h[k]; k = (k + 1) & (s->cap - 1))
        if (s->h[k] == h)
            return 0;
    s->h[k] = h;
    s->n++;
    return 1;
}

/* Returns 1 when h is in s, else 0. */
static inline int hset64_has(const struct hset64 *s, uint64_t h)
{
    h = h ? h : 1;
    if (!s->cap)
        return 0;
    for (size_t k = h & (s->cap - 1); s->h[k]; k = (k + 1) & (s->cap - 1))
        if (s->h[k] == h)
            return 1;
    return 0;
}

static inline void hset64_free(struct hset64 *s)
{
    free(s->h);
    s->h = NULL;
    s->cap = s->n = 0;
}

#endif

/* dedupe.c: the crawl's digest set. Under --mode=procs the workers are
 * forked processes, each fetching and writing its own WARC file, and a
 * duplicate found by one must be known to all at once: a worker decides
 * between a response and a revisit record as the transfer ends, on its
 * event loop, where a round trip to the coordinator would stall every
 * transfer of the loop. So the set is one anonymous shared mapping the
 * core makes before the fork, and a claim is a compare-and-swap on a
 * 64-bit slot (open addressing, linear probing, nothing ever removed):
 * the process whose swap wins is the first, and writes the first
 * capture's texts beside it, published by one release store. A claim
 * that finds the slot of its key still being written waits, a bounded
 * time, for it. The same code serves the models of one process.
 *
 * Memory: one table of 16-byte slots, twice the digests it holds (so
 * probes stay short), and an arena the texts are bump-allocated from.
 * Both are bounded: past either bound a new digest is not kept, and is
 * answered DEDUPE_UNKNOWN, never taken for another (a key that matches
 * is compared in full, kind and 20 bytes, before it counts). */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "dedupe.h"

/* The processes share these only through lock-free atomics. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "the digest set needs lock-free 64-bit atomics");

/* A slot's at: its texts' place in the arena, in 8-byte units plus 1. */
#define AT_WRITING 0u           /* claimed, texts not published yet */
#define AT_NONE    UINT32_MAX   /* claimed, texts not kept (no room; abandoned) */

/* How long a claim waits for a slot being written: its writer copies a
 * few hundred bytes, so only a writer stopped in between takes longer:
 * killed (the wait is then paid once, by the first claim that gives the
 * slot up), or descheduled on a loaded machine, which a second outlasts
 * (a slot given up too early is published all the same, and claims from
 * then on find it). */
#define WAIT_NS (1000 * 1000 * 1000)

struct head {                   /* the mapping's first bytes, shared */
    _Atomic uint64_t held;      /* digests claimed */
    _Atomic uint64_t used;      /* bytes of the arena given out */
    _Atomic uint64_t refused;   /* digests turned away for want of room */
};

struct slot {
    _Atomic uint64_t key;       /* the digest's first 8 bytes, kind mixed in; 0: empty */
    _Atomic uint32_t at;        /* AT_WRITING, AT_NONE, or where its texts are */
    uint32_t spare;
};

/* A first capture's texts in the arena: kind and digest, then the URI,
 * the date and the id, each ending in a NUL. */
struct rec {
    unsigned char kind;
    unsigned char md[DIGEST_LEN];
    char text[];
};

struct dedupe {                 /* each process's own copy (fork copies it) */
    void  *map;
    size_t map_len;
    struct head *head;
    struct slot *slot;
    size_t mask;                /* slots - 1 */
    size_t max;                 /* digests held at most */
    char  *arena;
    size_t bytes;
};

struct dedupe *dedupe_new(size_t max, size_t bytes)
{
    struct dedupe *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t slots = 16;
    while (slots < 2 * max)
        slots *= 2;
    size_t table = slots * sizeof(struct slot);
    s->map_len = 64 + table + bytes;
    /* Shared so that the workers procs forks next see every claim;
     * untouched pages cost nothing. */
    s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s->map == MAP_FAILED) {
        free(s);
        return NULL;
    }
    s->head = s->map;
    s->slot = (struct slot *)((char *)s->map + 64);
    s->mask = slots - 1;
    s->max = max;
    s->arena = (char *)s->map + 64 + table;
    s->bytes = bytes;
    return s;
}

void dedupe_free(struct dedupe *s)
{
    if (!s)
        return;
    munmap(s->map, s->map_len);
    free(s);
}

static uint64_t key_of(enum dedupe_kind kind, const unsigned char md[DIGEST_LEN])
{
    uint64_t k;
    memcpy(&k, md, sizeof k);
    k ^= (uint64_t)kind * 0x9e3779b97f4a7c15ull;
    return k ? k : 1;
}

static size_t text_len(const char *s)
{
    return s ? strlen(s) + 1 : 1;
}

/* Copies the texts of first into the arena and publishes them in sl. */
static void publish(struct dedupe *s, struct slot *sl, enum dedupe_kind kind,
                    const unsigned char md[DIGEST_LEN], const struct dedupe_first *first)
{
    size_t lu = text_len(first->uri), ld = text_len(first->date), li = text_len(first->id);
    size_t need = (sizeof(struct rec) + lu + ld + li + 7) & ~(size_t)7;
    uint64_t off = atomic_fetch_add(&s->head->used, need);
    if (off + need > s->bytes || off / 8 + 1 >= AT_NONE) {
        atomic_fetch_add(&s->head->refused, 1);
        atomic_store_explicit(&sl->at, AT_NONE, memory_order_release);
        return;
    }
    struct rec *r = (struct rec *)(s->arena + off);
    r->kind = (unsigned char)kind;
    memcpy(r->md, md, DIGEST_LEN);
    memcpy(r->text, first->uri ? first->uri : "", lu);
    memcpy(r->text + lu, first->date ? first->date : "", ld);
    memcpy(r->text + lu + ld, first->id ? first->id : "", li);
    atomic_store_explicit(&sl->at, (uint32_t)(off / 8 + 1), memory_order_release);
}

/* Waits for sl's texts to be published; returns its at, AT_NONE when
 * they never were (the slot is then marked so, for the claims after). */
static uint32_t wait_published(struct slot *sl)
{
    uint32_t at = atomic_load_explicit(&sl->at, memory_order_acquire);
    struct timespec t0, now, nap = { 0, 50 * 1000 };
    if (at != AT_WRITING)
        return at;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0;; i++) {
        if (i < 64)
            sched_yield();
        else
            nanosleep(&nap, NULL);
        if ((at = atomic_load_explicit(&sl->at, memory_order_acquire)) != AT_WRITING)
            return at;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000000000LL + (now.tv_nsec - t0.tv_nsec) > WAIT_NS)
            break;
    }
    uint32_t writing = AT_WRITING;
    if (atomic_compare_exchange_strong(&sl->at, &writing, AT_NONE))
        return AT_NONE;
    return writing;             /* published at the last moment */
}

/* Reserves room for one more digest. Returns 1, or 0 when the set holds
 * its most. */
static int take_room(struct dedupe *s)
{
    if (atomic_fetch_add(&s->head->held, 1) < s->max)
        return 1;
    atomic_fetch_sub(&s->head->held, 1);
    return 0;
}

int dedupe_claim(struct dedupe *s, enum dedupe_kind kind, const unsigned char md[DIGEST_LEN],
                 const struct dedupe_first *first, struct dedupe_first *out)
{
    uint64_t key = key_of(kind, md);
    size_t i = (size_t)key & s->mask;
    for (size_t probes = 0; probes <= s->mask; probes++, i = (i + 1) & s->mask) {
        struct slot *sl = &s->slot[i];
        uint64_t k = atomic_load_explicit(&sl->key, memory_order_acquire);
        if (k == 0) {
            /* An empty slot ends the probe: the digest is not in the set. */
            if (!take_room(s)) {
                atomic_fetch_add(&s->head->refused, 1);
                return DEDUPE_UNKNOWN;
            }
            if (atomic_compare_exchange_strong(&sl->key, &k, key)) {
                publish(s, sl, kind, md, first);
                return DEDUPE_FIRST;
            }
            atomic_fetch_sub(&s->head->held, 1);   /* another took it: k is its key */
        }
        if (k != key)
            continue;
        uint32_t at = wait_published(sl);
        if (at == AT_NONE)
            return DEDUPE_UNKNOWN;
        const struct rec *r = (const struct rec *)(s->arena + (size_t)(at - 1) * 8);
        if (r->kind != kind || memcmp(r->md, md, DIGEST_LEN) != 0)
            continue;           /* another digest with the same first 8 bytes */
        out->uri = r->text;
        out->date = r->text + strlen(r->text) + 1;
        out->id = out->date + strlen(out->date) + 1;
        return DEDUPE_SEEN;
    }
    atomic_fetch_add(&s->head->refused, 1);
    return DEDUPE_UNKNOWN;
}

size_t dedupe_held(const struct dedupe *s)
{
    uint64_t n = atomic_load(&s->head->held);
    return n > s->max ? s->max : (size_t)n;
}

size_t dedupe_refused(const struct dedupe *s)
{
    return (size_t)atomic_load(&s->head->refused);
}

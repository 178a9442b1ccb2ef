/* reorder.h: puts rows that finish in any order back into the order of
 * their sequence numbers. A row whose turn has come is passed on at once,
 * with every held row that follows it; the others wait in a spool (memory
 * up to a bound, then a temporary file) with a 24-byte index entry each. */
#ifndef CRAWL_REORDER_H
#define CRAWL_REORDER_H

#include <stddef.h>
#include <stdint.h>

struct reorder;

/* Where rows go, in order; returns 0 or a negative code, which stops the
 * reorder and is returned by the call that passed the row on. */
typedef int (*reorder_emit_fn)(const char *row, size_t n, void *data);

/* Makes a reorder whose first row is number 0, holding up to mem_bound
 * bytes of rows in memory. Returns NULL when out of memory. */
struct reorder *reorder_new(size_t mem_bound, reorder_emit_fn emit, void *data);

/* Hands in row number seq (n bytes, copied when held; every number once).
 * Returns 0, the emit function's code, or -errno. */
int reorder_put(struct reorder *r, uint64_t seq, const char *row, size_t n);

/* Returns the number of rows held back. */
size_t reorder_held(const struct reorder *r);

/* Frees r and the rows it still holds (without passing them on). */
void reorder_free(struct reorder *r);

#endif

/* spool.h: an append-only store of bytes that stays in memory up to a
 * bound and goes on in an unlinked temporary file past it, so that output
 * held back (the table's rows, rows waiting for their turn) costs a bounded
 * amount of memory however much of it there is. */
#ifndef CRAWL_SPOOL_H
#define CRAWL_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct spool;

/* Makes a spool that keeps up to mem_bound bytes in memory. Returns NULL
 * when out of memory. */
struct spool *spool_new(size_t mem_bound);

/* Appends n bytes at p; *off (if not NULL) gets their offset in the spool.
 * Returns 0 or -errno (the temporary file could not be made or written). */
int spool_add(struct spool *sp, const void *p, size_t n, uint64_t *off);

/* Copies n bytes from offset off into out. Returns 0 or -errno. */
int spool_get(struct spool *sp, uint64_t off, void *out, size_t n);

/* Calls fn with every byte added, in order, in pieces; stops at the first
 * non-zero return of fn and returns it. Returns 0 or -errno on a read. */
int spool_each(struct spool *sp, int (*fn)(const char *p, size_t n, void *data), void *data);

/* Returns the number of bytes added since the last reset. */
uint64_t spool_size(const struct spool *sp);

/* Forgets every byte (the file is truncated); offsets start again at 0. */
void spool_reset(struct spool *sp);

/* Frees sp and its file. */
void spool_free(struct spool *sp);

#endif

/* dedupe.h: the digests a crawl has seen and where it saw each first, one
 * set for the whole crawl whatever the model: --dedupe's duplicate_of
 * (decoded bodies) and --warc's revisit records (payloads as sent). The
 * set is a shared anonymous mapping made before procs forks its workers,
 * so that every process of a crawl claims digests in the same set without
 * a lock or a message; it is bounded, and a digest it has no room for is
 * one it does not know, never one it mistakes for another. */
#ifndef CRAWL_DEDUPE_H
#define CRAWL_DEDUPE_H

#include <stddef.h>
#include <stdint.h>

#include "digest.h"

struct dedupe;

/* What a digest is of: the same bytes may be a decoded body and, for
 * another page, a payload as sent; they are different entries. */
enum dedupe_kind {
    DEDUPE_BODY = 1,            /* a page's decoded body (--dedupe) */
    DEDUPE_PAYLOAD = 2,         /* a response's payload as sent (--warc) */
};

/* What the set keeps of the first capture of a digest. */
struct dedupe_first {
    const char *uri;            /* the page's final URL; the record's target URI */
    const char *date;           /* the record's WARC-Date, or NULL */
    const char *id;             /* the record's WARC-Record-ID, or NULL (unknown:
                                 * it came from an index) */
};

/* The crawl's set: 2^19 digests, and 64 MiB for the texts of their first
 * captures, 128 bytes a digest (a record's URL of 60 bytes, its date and
 * its id take 160). Its table takes 16 MiB of address space, resident as
 * it is touched; the texts, as they are written. */
#define DEDUPE_MAX   (1u << 19)
#define DEDUPE_BYTES (64u << 20)

/* dedupe_claim's answers. */
enum {
    DEDUPE_FIRST = 0,           /* the first of its digest: now in the set */
    DEDUPE_SEEN = 1,            /* seen before: *out says where */
    DEDUPE_UNKNOWN = 2,         /* not known, not kept: the set is full, or the
                                 * one entry that may be it was never finished
                                 * (its process died in the microseconds of
                                 * the claim) */
};

/* Returns a set of at most max digests and bytes of their texts, mapped
 * shared so that the processes forked after it share it, or NULL
 * (mmap's failure or no memory). Freed with dedupe_free in each process. */
struct dedupe *dedupe_new(size_t max, size_t bytes);
void dedupe_free(struct dedupe *s);

/* Claims the digest md of kind for first (its texts copied into the set)
 * or finds who claimed it. Returns DEDUPE_FIRST; DEDUPE_SEEN, with *out
 * pointing at the first capture's texts in the set (date and id "" when
 * not kept), valid until dedupe_free; or DEDUPE_UNKNOWN. Safe from any
 * thread of any process sharing s. A first claim that finds no room for
 * its texts is still the first; later claims of its digest are then
 * DEDUPE_UNKNOWN. */
int dedupe_claim(struct dedupe *s, enum dedupe_kind kind, const unsigned char md[DIGEST_LEN],
                 const struct dedupe_first *first, struct dedupe_first *out);

/* Returns how many digests the set holds, and how many it turned away
 * for want of room (every process's). */
size_t dedupe_held(const struct dedupe *s);
size_t dedupe_refused(const struct dedupe *s);

#endif

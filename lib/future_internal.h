/* future_internal.h: the two extra calls the pool needs on a future it
 * hands out, so that the caller may cancel or free it at any moment. Not
 * part of the public API. */
#ifndef CRAWL_FUTURE_INTERNAL_H
#define CRAWL_FUTURE_INTERNAL_H

#include "future.h"

/* Takes one more hold on f; each hold is released by one future_free, and
 * the memory goes with the last. Returns f. */
struct future *future__hold(struct future *f);

/* Marks a pending f as running, after which future_cancel refuses it with
 * -EBUSY and only future_set completes it. Returns 0, or -ECANCELED if f
 * was cancelled (or -EALREADY if already set) and its job must not run. */
int future__start(struct future *f);

#endif

/* cancel.h: a run's cancellation, read by every layer that must stop
 * early (the frontier stops admitting links, fetch abandons transfers, a
 * model takes no more jobs) and set by the core: why it stopped (the first
 * reason sticks) and when --deadline stops it, on the monotonic clock. */
#ifndef CRAWL_CANCEL_H
#define CRAWL_CANCEL_H

#include <stdatomic.h>

#include "clock.h"

/* Why a crawl was cancelled. */
enum crawl_cancel_why {
    CRAWL_CANCEL_SIGNAL = 1,    /* SIGINT or SIGTERM */
    CRAWL_CANCEL_DEADLINE,      /* --deadline passed */
    CRAWL_CANCEL_OUTPUT,        /* the output cannot be written: fetch for nobody */
    CRAWL_CANCEL_FRONTIER,      /* the --frontier server was lost */
    CRAWL_CANCEL_STORE          /* the store lost this crawl's data or cannot write it */
};

struct cancel {
    atomic_int why;             /* 0, or the first enum crawl_cancel_why given */
    double deadline_at;         /* monotonic seconds when the run is past
                                 * --deadline; 0: never. Set before the run's
                                 * threads start, read-only after */
};

/* Records why, unless a reason was given before. Returns 1 when this call
 * cancelled, 0 when the run was cancelled already. */
static inline int cancel_set(struct cancel *k, enum crawl_cancel_why why)
{
    int none = 0;
    return atomic_compare_exchange_strong(&k->why, &none, (int)why);
}

/* Returns why the run is cancelled, or 0; a deadline that has passed
 * cancels it here. */
static inline int cancel_why(struct cancel *k)
{
    int why = atomic_load(&k->why);
    if (!why && k->deadline_at > 0 && clock_now() >= k->deadline_at) {
        cancel_set(k, CRAWL_CANCEL_DEADLINE);
        why = atomic_load(&k->why);
    }
    return why;
}

/* The error text of a job the cancellation stopped. */
static inline const char *cancel_text(int why)
{
    switch (why) {
    case CRAWL_CANCEL_DEADLINE: return "cancelled: --deadline reached";
    case CRAWL_CANCEL_OUTPUT:   return "cancelled: the output cannot be written";
    case CRAWL_CANCEL_SIGNAL:   return "cancelled: interrupted";
    case CRAWL_CANCEL_FRONTIER: return "cancelled: the shared frontier's server was lost";
    case CRAWL_CANCEL_STORE:    return "cancelled: the store lost the crawl's data";
    default:                    return "cancelled";
    }
}

#endif

/* future.c: a single-assignment result slot guarded by a mutex, with a
 * condition variable on the monotonic clock so that timed waits do not
 * jump when the wall clock is set. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "future.h"

enum future_state {
    FUTURE_PENDING,
    FUTURE_RUNNING,   /* a pool worker has started the job; only set completes it */
    FUTURE_SET,
    FUTURE_CANCELLED,
};

struct future {
    pthread_mutex_t lock;   /* guards state and value */
    pthread_cond_t done;    /* broadcast once, when state becomes SET or CANCELLED */
    enum future_state state;
    void *value;            /* meaningful once state is SET */
    atomic_int holds;       /* the caller's, plus the pool's while it has the job */
};

struct future *future_new(void)
{
    struct future *f;
    pthread_condattr_t attr;

    f = malloc(sizeof(*f));
    if (f == NULL)
        return NULL;
    if (pthread_mutex_init(&f->lock, NULL) != 0)
        goto err_free;
    if (pthread_condattr_init(&attr) != 0)
        goto err_mutex;
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&f->done, &attr) != 0)
        goto err_attr;
    pthread_condattr_destroy(&attr);
    f->state = FUTURE_PENDING;
    f->value = NULL;
    atomic_init(&f->holds, 1);
    return f;

err_attr:
    pthread_condattr_destroy(&attr);
err_mutex:
    pthread_mutex_destroy(&f->lock);
err_free:
    free(f);
    errno = ENOMEM;
    return NULL;
}

static int is_done(const struct future *f)
{
    return f->state == FUTURE_SET || f->state == FUTURE_CANCELLED;
}

/* Moves f to a final state. The broadcast happens before the unlock, so a
 * waiter cannot see the final state, return and free f while this thread
 * still touches the condition variable. */
static int complete(struct future *f, enum future_state state, void *value)
{
    int rc = 0;

    pthread_mutex_lock(&f->lock);
    if (is_done(f)) {
        rc = -EALREADY;
    } else if (state == FUTURE_CANCELLED && f->state == FUTURE_RUNNING) {
        rc = -EBUSY;
    } else {
        f->state = state;
        f->value = value;
        pthread_cond_broadcast(&f->done);
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int future_set(struct future *f, void *value)
{
    return complete(f, FUTURE_SET, value);
}

int future_cancel(struct future *f)
{
    return complete(f, FUTURE_CANCELLED, NULL);
}

void *future_wait(struct future *f)
{
    void *value;

    pthread_mutex_lock(&f->lock);
    while (!is_done(f))
        pthread_cond_wait(&f->done, &f->lock);
    value = f->value;
    pthread_mutex_unlock(&f->lock);
    return value;
}

int future_wait_for(struct future *f, long timeout_ms, void **value)
{
    struct timespec deadline;
    int rc = 0;

    if (timeout_ms < 0)
        timeout_ms = 0;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }

    pthread_mutex_lock(&f->lock);
    /* Loop: a wake-up can be spurious, and the deadline is absolute so
     * waiting again does not stretch the total. */
    while (!is_done(f) && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&f->done, &f->lock, &deadline);
    if (is_done(f)) {
        if (value != NULL)
            *value = f->value;
        rc = 0;
    } else {
        rc = -ETIMEDOUT;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int future_done(struct future *f)
{
    int done;

    pthread_mutex_lock(&f->lock);
    done = is_done(f);
    pthread_mutex_unlock(&f->lock);
    return done;
}

int future_cancelled(struct future *f)
{
    int cancelled;

    pthread_mutex_lock(&f->lock);
    cancelled = f->state == FUTURE_CANCELLED;
    pthread_mutex_unlock(&f->lock);
    return cancelled;
}

void future_free(struct future *f)
{
    if (f == NULL)
        return;
    /* acq_rel: whichever holder frees must see every write the other
     * holder made before letting go. */
    if (atomic_fetch_sub_explicit(&f->holds, 1, memory_order_acq_rel) != 1)
        return;
    pthread_cond_destroy(&f->done);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

struct future *future_hold(struct future *f)
{
    atomic_fetch_add_explicit(&f->holds, 1, memory_order_relaxed);
    return f;
}

int future_start(struct future *f)
{
    int rc = 0;

    pthread_mutex_lock(&f->lock);
    if (f->state == FUTURE_PENDING)
        f->state = FUTURE_RUNNING;
    else
        rc = f->state == FUTURE_CANCELLED ? -ECANCELED : -EALREADY;
    pthread_mutex_unlock(&f->lock);
    return rc;
}

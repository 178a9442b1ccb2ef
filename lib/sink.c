/* sink.c: the output writer. Rows are buffered and written only whole;
 * nothing here knows what a row says. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "io.h"
#include "sink.h"

#define SINK_BUFFER (64 * 1024)

struct sink {
    int fd;
    pthread_mutex_t lock;       /* guards everything below but the atomics */
    pthread_cond_t wake;        /* the flushing thread's timer; signalled to stop it,
                                 * and to end its idle wait */
    char *buf;                  /* SINK_BUFFER bytes, never moved: see sink_emergency_flush */
    size_t len;
    int err;                    /* the first error, sticky */
    sink_error_fn on_error;
    void *data;
    int flush_ms;
    int stop;
    int threaded;
    int idle;                   /* the flushing thread waits for a row, untimed */
    pthread_t tid;
    atomic_int busy;            /* a thread is changing buf or len */
    atomic_int frozen;          /* the process is ending: change nothing more */
    sink_commit_fn commit;      /* told of every write, with the marks of its rows */
    void *commit_data;
    uint64_t offset;            /* bytes in the file: what it held, and what was written */
    uint64_t *marks;            /* marks of the rows in buf */
    size_t nmarks, marks_cap;
    struct written *wq;         /* writes not yet told to commit, oldest first */
    size_t nwq, wq_cap;
    int committing;             /* a thread is telling commit, without the lock */
    int commit_failed;          /* commit failed: it is told nothing more */
    pthread_cond_t committed;   /* wq emptied */
};

/* A write for the commit callback: its rows' marks and the file's bytes. */
struct written {
    uint64_t *marks;
    size_t n;
    uint64_t offset;
};

/* Records the first error and tells the owner; the lock is held. */
static int fail(struct sink *s, int err)
{
    if (!s->err) {
        s->err = err;
        if (s->on_error)
            s->on_error(err, s->data);
    }
    return s->err;
}

/* Counts n bytes written and queues the marks of the rows written for the
 * commit callback (commit_run); the lock is held. */
static int written(struct sink *s, size_t n)
{
    s->offset += n;
    if (!s->commit) {
        s->nmarks = 0;
        return 0;
    }
    if (s->nwq == s->wq_cap) {
        size_t cap = s->wq_cap ? 2 * s->wq_cap : 8;
        struct written *q = realloc(s->wq, cap * sizeof *q);
        if (!q)
            return fail(s, -ENOMEM);
        s->wq = q, s->wq_cap = cap;
    }
    s->wq[s->nwq++] = (struct written){ .marks = s->marks, .n = s->nmarks, .offset = s->offset };
    s->marks = NULL;
    s->nmarks = s->marks_cap = 0;
    return 0;
}

/* Tells the commit callback of the writes queued, oldest first, letting
 * the lock go meanwhile (a store's round trip must not hold up the rows
 * that follow); one thread at a time does it, so that they are told in
 * order. The lock is held. Returns the sticky error. */
static int commit_run(struct sink *s)
{
    if (s->committing)
        return s->err;
    s->committing = 1;
    while (s->nwq > 0) {
        struct written w = s->wq[0];
        memmove(s->wq, s->wq + 1, (s->nwq - 1) * sizeof *s->wq);
        s->nwq--;
        int rc = 0;
        /* A write that failed after this one does not undo it: its rows
         * are in the file, and are committed. */
        if (!s->commit_failed) {
            pthread_mutex_unlock(&s->lock);
            rc = s->commit(w.marks, w.n, w.offset, s->commit_data);
            pthread_mutex_lock(&s->lock);
        }
        free(w.marks);
        if (rc) {
            s->commit_failed = 1;
            fail(s, rc);
        }
    }
    s->committing = 0;
    pthread_cond_broadcast(&s->committed);
    return s->err;
}

/* Waits until every write queued was told to the commit callback,
 * telling it itself if nobody is; the lock is held. */
static int commit_wait(struct sink *s)
{
    commit_run(s);
    while (s->committing || s->nwq > 0) {
        pthread_cond_wait(&s->committed, &s->lock);
        commit_run(s);
    }
    return s->err;
}

/* Writes the buffer out; the lock is held and busy is set. */
static int drain(struct sink *s)
{
    if (s->len == 0 || s->err)
        return s->err;
    int rc = io_write_all(s->fd, s->buf, s->len);
    size_t n = s->len;
    s->len = 0;
    return rc ? fail(s, rc) : written(s, n);
}

/* Enters the buffer for a change; returns 0 when the sink is frozen. A
 * signal handler that sets frozen and then reads busy as 0 knows that no
 * thread is inside, and none will enter (both are sequentially consistent). */
static int enter(struct sink *s)
{
    atomic_store(&s->busy, 1);
    if (atomic_load(&s->frozen)) {
        atomic_store(&s->busy, 0);
        return 0;
    }
    return 1;
}

static void leave(struct sink *s)
{
    atomic_store(&s->busy, 0);
}

/* The flushing thread: a row put into an empty buffer goes out within
 * flush_ms. With nothing held it sleeps until a row comes (sink_put wakes
 * it), so that a crawl waiting on slow hosts is not woken for nothing. */
static void *flush_main(void *arg)
{
    struct sink *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        if (s->len == 0 && s->nwq == 0 && !s->committing) {
            s->idle = 1;
            pthread_cond_wait(&s->wake, &s->lock);
            s->idle = 0;
            continue;
        }
        struct timespec ts = clock_timespec(clock_now() + s->flush_ms / 1000.0);
        pthread_cond_timedwait(&s->wake, &s->lock, &ts);
        if (s->len && enter(s)) {
            drain(s);
            leave(s);
        }
        commit_run(s);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int sink_new(struct sink **out, int fd, int flush_ms, sink_error_fn on_error, void *data)
{
    struct sink *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->fd = fd;
    s->on_error = on_error;
    s->data = data;
    s->flush_ms = flush_ms;
    atomic_init(&s->busy, 0);
    atomic_init(&s->frozen, 0);
    if (!(s->buf = malloc(SINK_BUFFER)))
        goto err;
    if (pthread_mutex_init(&s->lock, NULL) != 0)
        goto err;
    if (clock_cond_init(&s->wake) != 0) {
        pthread_mutex_destroy(&s->lock);
        goto err;
    }
    if (pthread_cond_init(&s->committed, NULL) != 0) {
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        goto err;
    }
    if (flush_ms > 0) {
        int rc = pthread_create(&s->tid, NULL, flush_main, s);
        if (rc) {
            pthread_cond_destroy(&s->committed);
            pthread_cond_destroy(&s->wake);
            pthread_mutex_destroy(&s->lock);
            free(s->buf);
            free(s);
            return -rc;
        }
        s->threaded = 1;
    }
    *out = s;
    return 0;
err:
    free(s->buf);
    free(s);
    return -ENOMEM;
}

void sink_set_commit(struct sink *s, uint64_t offset, sink_commit_fn fn, void *data)
{
    pthread_mutex_lock(&s->lock);
    s->offset = offset;
    s->commit = fn;
    s->commit_data = data;
    pthread_mutex_unlock(&s->lock);
}

int sink_put_mark(struct sink *s, const char *row, size_t n, uint64_t mark)
{
    int rc;
    pthread_mutex_lock(&s->lock);
    if ((rc = s->err) || !enter(s))
        goto out;
    if (s->len + n > SINK_BUFFER)
        rc = drain(s);
    if (rc == 0 && mark && s->nmarks == s->marks_cap) {
        size_t cap = s->marks_cap ? 2 * s->marks_cap : 256;
        uint64_t *m = realloc(s->marks, cap * sizeof *m);
        if (!m)
            rc = fail(s, -ENOMEM);
        else
            s->marks = m, s->marks_cap = cap;
    }
    if (rc == 0 && mark)
        s->marks[s->nmarks++] = mark;
    if (rc == 0 && n > SINK_BUFFER) {
        rc = io_write_all(s->fd, row, n);
        rc = rc ? fail(s, rc) : written(s, n);
    } else if (rc == 0) {
        memcpy(s->buf + s->len, row, n);
        s->len += n;
    }
    leave(s);
    /* The flushing thread tells the commit callback, not the thread that
     * puts a row; without one, this thread does. A flushing thread asleep
     * with nothing held is woken by the first row. */
    if (s->nwq > 0) {
        if (s->threaded)
            pthread_cond_signal(&s->wake);
        else
            rc = commit_run(s);
    } else if (s->idle && s->len > 0) {
        pthread_cond_signal(&s->wake);
    }
out:
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int sink_put(struct sink *s, const char *row, size_t n)
{
    return sink_put_mark(s, row, n, 0);
}

int sink_flush(struct sink *s)
{
    int rc;
    pthread_mutex_lock(&s->lock);
    rc = s->err;
    if (rc == 0 && enter(s)) {
        rc = drain(s);
        leave(s);
    }
    int crc = commit_wait(s);
    rc = rc ? rc : crc;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int sink_error(struct sink *s)
{
    pthread_mutex_lock(&s->lock);
    int rc = s->err;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void sink_emergency_flush(struct sink *s)
{
    if (!s || atomic_exchange(&s->frozen, 1))
        return;
    if (atomic_load(&s->busy) == 0 && s->len)
        io_write_all(s->fd, s->buf, s->len);
}

int sink_free(struct sink *s)
{
    if (!s)
        return 0;
    if (s->threaded) {
        pthread_mutex_lock(&s->lock);
        s->stop = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->tid, NULL);
    }
    int rc = sink_flush(s);
    pthread_cond_destroy(&s->committed);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    for (size_t i = 0; i < s->nwq; i++)
        free(s->wq[i].marks);
    free(s->wq);
    free(s->buf);
    free(s->marks);
    free(s);
    return rc;
}

/* progress.c: the live progress line. It reads only the published
 * counters, never the crawl's lock, so the crawl it watches pays a few
 * relaxed stores a job and nothing else. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "progress.h"

#define REDRAW_MS 200

struct progress {
    const struct crawl_live *l;
    int fd;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
};

/* "1m05s" for 65 seconds; "3.2s" under a minute. */
static void span(char *buf, size_t n, double s)
{
    if (s < 60)
        snprintf(buf, n, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(buf, n, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

size_t progress_format(const struct crawl_live *l, double now, int width, char *buf,
                       size_t n)
{
    long long t0 = atomic_load_explicit(&l->t0_ns, memory_order_acquire);
    if (n)
        buf[0] = '\0';
    if (t0 == 0 || n == 0)
        return 0;
    double elapsed = now - (double)t0 / 1e9;
    if (elapsed < 0)
        elapsed = 0;
    size_t done = atomic_load_explicit(&l->done, memory_order_relaxed);
    size_t failed = atomic_load_explicit(&l->failed, memory_order_relaxed);
    size_t queued = atomic_load_explicit(&l->queued, memory_order_relaxed);
    size_t total = atomic_load_explicit(&l->total, memory_order_relaxed);
    long xfers = atomic_load_explicit(&l->transfers, memory_order_relaxed);
    char of[64] = "", eta[32] = "", el[16];
    span(el, sizeof el, elapsed);
    if (total >= done && total > 0) {
        snprintf(of, sizeof of, "/%zu (%zu%%)", total, done * 100 / total);
        if (done > 0 && done < total) {
            char t[16];
            span(t, sizeof t, elapsed / (double)done * (double)(total - done));
            snprintf(eta, sizeof eta, ", ETA %s", t);
        }
    }
    int len = snprintf(buf, n, "%s: %zu%s done, %ld in flight, %zu queued, %zu failed, "
                       "%.0f/s, %s%s", l->mode, done, of, xfers < 0 ? 0 : xfers, queued,
                       failed, elapsed > 0 ? (double)done / elapsed : 0.0, el, eta);
    if (len < 0)
        len = 0;
    size_t max = width > 1 ? (size_t)width - 1 : 0;
    if ((size_t)len >= n)
        len = (int)n - 1;
    if ((size_t)len > max) {
        len = (int)max;
        buf[len] = '\0';
    }
    return (size_t)len;
}

/* The terminal's width, or 80 when fd is none. */
static int columns(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

static void draw(struct progress *p)
{
    char line[512];
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    size_t n = progress_format(p->l, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
                               columns(p->fd), line + 1, sizeof line - 8);
    if (n == 0)
        return;
    /* Back to the line's start, the line, and the rest of the old one
     * cleared: a narrower terminal never wraps it. */
    line[0] = '\r';
    memcpy(line + 1 + n, "\033[K", 3);
    ssize_t w = write(p->fd, line, n + 4);
    (void)w;
}

static void *progress_main(void *arg)
{
    struct progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec ts = clock_timespec(clock_now() + REDRAW_MS / 1000.0);
        pthread_cond_timedwait(&p->cond, &p->lock, &ts);
        if (!p->stop)
            draw(p);
    }
    pthread_mutex_unlock(&p->lock);
    ssize_t w = write(p->fd, "\r\033[K", 4);
    (void)w;
    return NULL;
}

struct progress *progress_start(const struct crawl_live *l, int fd)
{
    struct progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->l = l;
    p->fd = fd;
    pthread_mutex_init(&p->lock, NULL);
    clock_cond_init(&p->cond);
    if (pthread_create(&p->tid, NULL, progress_main, p) != 0) {
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

void progress_stop(struct progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->tid, NULL);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

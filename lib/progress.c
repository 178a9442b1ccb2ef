/* progress.c: the live progress line: done, in flight, queued, failed,
 * the rate and the time, redrawn on stderr while the crawl runs. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "progress.h"

static void progress_line(struct crawl *c)
{
    struct crawl_progress p;
    crawl_get_progress(c, &p);
    if (p.elapsed <= 0)
        return;     /* the crawl has not started */
    char total[32] = "";
    if (p.total)
        snprintf(total, sizeof total, "/%zu", p.total);
    fprintf(stderr, "\r%zu%s done, %zu in flight, %zu queued, %zu failed, %.0f/s, %.1fs\033[K",
            p.done, total, p.running, p.queued, p.failed, (double)p.done / p.elapsed,
            p.elapsed);
}

static void *progress_main(void *arg)
{
    struct progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&p->stop_cond, &p->lock, &ts);
        if (!p->stop)
            progress_line(p->c);
    }
    pthread_mutex_unlock(&p->lock);
    fputs("\r\033[K", stderr);
    return NULL;
}

int progress_start(struct progress *p, struct crawl *c)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->stop_cond, NULL);
    return pthread_create(&p->tid, NULL, progress_main, p);
}

void progress_stop(struct progress *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->stop_cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->tid, NULL);
    pthread_cond_destroy(&p->stop_cond);
    pthread_mutex_destroy(&p->lock);
}


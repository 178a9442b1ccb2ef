/* parse_pool.c: a fixed set of threads taking items from one FIFO list
 * under one mutex. Items are intrusive (the caller's struct parse_item), so
 * a hand-over costs a lock and, for a sleeping thread, a signal. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "parse_pool.h"

struct parse_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;        /* an item was queued, or stopping was set */
    struct parse_item *head;
    struct parse_item **tail;
    int queued;                 /* items waiting, not yet taken */
    int stopping;
    int n;                      /* threads started */
    pthread_t *tids;
};

int parse_pool_default(int users)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1 || users < 0 || cpus <= users)
        return 0;
    return (int)(cpus - users);
}

static void *parse_thread(void *arg)
{
    struct parse_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        struct parse_item *it = p->head;
        if (!it) {
            if (p->stopping)
                break;
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        if (!(p->head = it->next))
            p->tail = &p->head;
        p->queued--;
        pthread_mutex_unlock(&p->lock);
        it->next = NULL;
        it->run(it);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

struct parse_pool *parse_pool_new(int n)
{
    if (n < 1) {
        errno = EINVAL;
        return NULL;
    }
    struct parse_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->tids = calloc((size_t)n, sizeof *p->tids))) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    p->tail = &p->head;
    int err = 0;
    for (; p->n < n; p->n++)
        if ((err = pthread_create(&p->tids[p->n], NULL, parse_thread, p)) != 0)
            break;
    if (p->n == 0) {
        parse_pool_free(p);
        errno = err;
        return NULL;
    }
    return p;
}

int parse_pool_size(const struct parse_pool *p)
{
    return p ? p->n : 0;
}

static void queue(struct parse_pool *p, struct parse_item *it)
{
    it->next = NULL;
    *p->tail = it;
    p->tail = &it->next;
    p->queued++;
    pthread_cond_signal(&p->work);
}

void parse_pool_submit(struct parse_pool *p, struct parse_item *it)
{
    pthread_mutex_lock(&p->lock);
    queue(p, it);
    pthread_mutex_unlock(&p->lock);
}

int parse_pool_offer(struct parse_pool *p, struct parse_item *it)
{
    int taken = 0;
    pthread_mutex_lock(&p->lock);
    if (p->queued < p->n) {
        queue(p, it);
        taken = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return taken ? 0 : -1;
}

void parse_pool_free(struct parse_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->tids[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p->tids);
    free(p);
}

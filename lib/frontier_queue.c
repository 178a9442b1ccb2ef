/* frontier_queue.c: the frontier's queues of jobs and links. A listed URL,
 * a sitemap or a retry is queued as its job; a link found is queued as a
 * struct qlink, its fields in one allocation, and made a job when its turn
 * comes: about 210 bytes a queued link instead of 650, and 14 MB less at
 * the peak of a crawl of the 2,000-host web (scripts/results/tuning.txt). */
#include <stdlib.h>
#include <string.h>

#include "frontier_internal.h"
#include "job.h"

void frontier__qpush(struct job_qent **head, struct job_qent **tail, struct job_qent *e)
{
    e->next = NULL;
    if (*tail)
        (*tail)->next = e;
    else
        *head = e;
    *tail = e;
}

void frontier__qpush_front(struct job_qent **head, struct job_qent **tail, struct job_qent *e)
{
    e->next = *head;
    *head = e;
    if (!*tail)
        *tail = e;
}

struct job_qent *frontier__qpop(struct job_qent **head, struct job_qent **tail)
{
    struct job_qent *e = *head;
    if (e) {
        *head = e->next;
        if (!*head)
            *tail = NULL;
        e->next = NULL;
    }
    return e;
}

/* Copies s (when not NULL) to *w in l->s and returns its offset there,
 * or 0 for NULL. */
static uint32_t put(struct qlink *l, char **w, const char *s)
{
    char *c = frontier__str_put(w, s);
    return c ? (uint32_t)(c - l->s) : 0;
}

struct job_qent *frontier__qlink_new(const char *url, const char *scope, const char *parent,
                                     int depth, uint64_t mark, int hops,
                                     const struct frontier_cond *cond, const char *path)
{
    const char *etag = cond ? cond->etag : NULL, *modified = cond ? cond->modified : NULL;
    size_t n = strlen(url) + 1 + strlen(scope) + 1 + frontier__str_size(parent) +
               frontier__str_size(etag) + frontier__str_size(modified) +
               frontier__str_size(path);
    if (n > UINT32_MAX)
        return NULL;
    struct qlink *l = malloc(sizeof *l + n);
    if (!l)
        return NULL;
    l->qe.next = NULL;
    l->qe.job = NULL;
    l->mark = mark;
    l->depth = depth;
    l->hops = hops;
    char *w = l->s;
    put(l, &w, url);
    l->scope = put(l, &w, scope);
    l->parent = put(l, &w, parent);
    l->etag = put(l, &w, etag);
    l->modified = put(l, &w, modified);
    l->path = put(l, &w, path);
    return &l->qe;
}

const char *frontier__qent_url(const struct job_qent *e)
{
    return e->job ? e->job->url : ((const struct qlink *)e)->s;
}

uint64_t frontier__qent_mark(const struct job_qent *e)
{
    return e->job ? e->job->mark : ((const struct qlink *)e)->mark;
}

const char *frontier__qent_path(const struct job_qent *e)
{
    if (e->job)
        return e->job->path;
    const struct qlink *l = (const struct qlink *)e;
    return l->path ? l->s + l->path : NULL;
}

void frontier__qent_free(struct job_qent *e)
{
    if (!e)
        return;
    if (e->job)
        job_free(e->job);
    else
        free(e);
}

/* Duplicates the string at offset off of l, or gives NULL for none; sets
 * *nomem when it cannot. */
static char *dup_at(const struct qlink *l, uint32_t off, int *nomem)
{
    if (!off)
        return NULL;
    char *s = strdup(l->s + off);
    if (!s)
        *nomem = 1;
    return s;
}

struct crawl_job *frontier__qent_job(struct job_qent *e)
{
    if (e->job)
        return e->job;
    struct qlink *l = (struct qlink *)e;
    struct crawl_job *j = job_new();
    int nomem = !j;
    if (j) {
        if (!(j->url = strdup(l->s)))
            nomem = 1;
        j->scope = dup_at(l, l->scope, &nomem);
        j->parent = dup_at(l, l->parent, &nomem);
        struct frontier_cond cond = { l->etag ? l->s + l->etag : NULL,
                                      l->modified ? l->s + l->modified : NULL };
        if (frontier__cond_set(j, &cond) != 0)
            nomem = 1;
        j->depth = l->depth;
        j->hops = l->hops;
        j->mark = l->mark;
        j->found = 1;
        j->unnumbered = 1;
    }
    free(l);
    if (nomem) {
        job_free(j);
        return NULL;
    }
    return j;
}

/* frontier_store.c: the frontier of a --state crawl. The store holds the
 * whole queue, in the order pages were found, and the seen set; memory
 * holds the queue's head, taken from the store as memory's queue drains,
 * so that memory stays flat however large the crawl. A host's robots.txt
 * is kept in the store as fetched, so that a resumed crawl obeys the same
 * rules without asking again. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frontier.h"
#include "frontier_internal.h"
#include "robots.h"
#include "state.h"

/* Returns the kept copy of input file name s, or NULL. */
static const char *name_of(struct frontier *f, const char *s)
{
    if (!s)
        return NULL;
    for (struct name *n = f->names; n; n = n->next)
        if (strcmp(n->s, s) == 0)
            return n->s;
    struct name *n = calloc(1, sizeof *n);
    if (!n || !(n->s = strdup(s))) {
        free(n);
        return NULL;
    }
    n->next = f->names;
    f->names = n;
    return n->s;
}

/* A listed page from the store becomes a job in its turn, with its row
 * number, its line and the failure its line already had. */
static void load_listed(struct frontier *f, uint64_t id, const struct state_page *p)
{
    struct crawl_job *j = job_new();
    if (!j || !(j->url = strdup(p->url))) {
        free(j);
        f->left++;       /* out of memory: the next run takes it */
        return;
    }
    j->line = p->line;
    j->source = name_of(f, p->source);
    j->mark = id;
    j->unnumbered = 1;      /* numbered as it starts */
    if (p->why) {
        job_fail_early(j, CRAWL_FAIL_INPUT, p->why);
        frontier_push_failed(f, j);
    } else if (frontier_push(f, j) == CRAWL_ENOMEM) {
        job_fail_early(j, CRAWL_FAIL_OTHER, "out of memory");
        frontier_push_failed(f, j);
    }
}

/* state_queue_load's callback. */
static void load_one(uint64_t id, const struct state_page *p, void *data)
{
    struct frontier *f = data;
    if (!state_shared(f->st))
        f->st_cursor = id;
    if (p->depth == 0) {
        load_listed(f, id, p);
        return;
    }
    struct url_parts u;
    if (url_split(p->url, &u) != 0) {
        f->left++;
        return;
    }
    if (frontier__place(f, &u, p->scope ? p->scope : u.host, p->depth, id, 0) != 0)
        f->left++;
    url_parts_free(&u);
}

/* Pages a worker holds queued from a shared store: twice its transfers in
 * flight, enough to keep them busy between two leases, few enough to
 * leave the rest to the other workers. */
static size_t lease_batch(const struct frontier *f)
{
    size_t n = f->limit > 0 ? 2 * (size_t)f->limit : 64;
    return n < 16 ? 16 : n > 2048 ? 2048 : n;
}

/* Minimum seconds between two leases that found nothing: another worker
 * may yet find links, or fall silent and give its pages back. */
#define LEASE_POLL 0.05

static void shared_refill(struct frontier *f)
{
    /* Leased when half of it is gone: one round trip for many pages. */
    size_t want = lease_batch(f);
    if (f->queued + f->pending > want / 2 || frontier__cancelled(f))
        return;
    double now = f->now();
    if (!f->sh_found && now < f->sh_poll_at)
        return;
    f->sh_found = 0;
    int n = state_queue_load(f->st, 0, want - (f->queued + f->pending), load_one, f);
    if (n < 0)
        frontier__store_fail(f);
    f->sh_poll_at = n > 0 ? 0 : now + LEASE_POLL;
}

void frontier__store_refill(struct frontier *f)
{
    if (state_shared(f->st)) {
        shared_refill(f);
        return;
    }
    while (f->st_more && f->queued + f->pending < FRONTIER_MEM_JOBS / 2) {
        int n = state_queue_load(f->st, f->st_cursor, FRONTIER_MEM_JOBS / 4, load_one, f);
        if (n < 0)
            frontier__store_fail(f);
        if (n <= 0)
            f->st_more = 0;
    }
}

int frontier__store_admit(struct frontier *f, const struct url_parts *p, const char *scope,
                          int depth)
{
    struct state_page sp = { .url = p->href, .scope = scope, .depth = depth };
    uint64_t id, hash = frontier_hash_url(p->norm);
    if (!f->st_seen)
        f->st_seen = calloc(FRONTIER_SEEN_CACHE, sizeof *f->st_seen);
    uint64_t *slot = f->st_seen ? &f->st_seen[hash % FRONTIER_SEEN_CACHE] : NULL;
    if (slot && *slot == hash)
        return 0;
    int rc = state_admit(f->st, hash, &sp, &id);
    if (rc >= 0 && slot)
        *slot = hash;
    if (state_shared(f->st)) {
        /* Sent to the shared queue: whoever leases it next fetches it. */
        f->sh_found = 1;
        goto out;
    }
    if (rc <= 0)
        goto out;
    /* Memory holds the store's head: a link joins it only when every page
     * before it is in memory too, and there is room. */
    if (f->st_more || f->queued + f->pending >= FRONTIER_MEM_JOBS) {
        f->st_more = 1;
        return 0;
    }
    f->st_cursor = id;
    return frontier__place(f, p, scope, depth, id, 0);
out:
    if (rc < 0)
        frontier__store_fail(f);
    return 0;
}

void frontier__store_robots_load(struct frontier *f, struct crawl_host *h)
{
    long status;
    int fail;
    char *body;
    size_t len;
    if (state_robots_get(f->st, h->key, &status, &fail, &body, &len) != 1)
        return;
    frontier__robots_rules(f, h, (enum crawl_fail)fail, NULL, status, body, len, NULL);
    free(body);
}

void frontier__store_robots_save(struct frontier *f, const struct crawl_job *rj)
{
    /* A fetch the cancellation stopped says nothing of the host. */
    if (!f->st || rj->res.fail == CRAWL_FAIL_CANCELLED)
        return;
    if (state_robots_put(f->st, rj->host->key, rj->res.status, (int)rj->res.fail,
                         rj->body, rj->body_len) != 0)
        frontier__store_fail(f);
}

void frontier__store_drop(struct frontier *f, uint64_t mark)
{
    if (f->st && mark && state_drop(f->st, mark) != 0)
        frontier__store_fail(f);
}

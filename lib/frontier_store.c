/* frontier_store.c: the frontier of a --state crawl. The store holds the
 * whole queue, in the order pages were found, and the seen set; memory
 * holds the queue's head, taken from the store as memory's queue drains,
 * so that memory stays flat however large the crawl. A host's robots.txt
 * is kept in the store as fetched, so that a resumed crawl obeys the same
 * rules without asking again. */
#include <stdio.h>
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

/* In a recrawl pass, what page p's record v (NULL: none) gives its job:
 * its validators when the record can stand for the page (a 304 then has
 * the links it gave, or none are wanted of it); and whether it is not due
 * (fetched after the pass's due time: skipped, its links admitted from the
 * store). Returns 1 when not due, else 0 with *cond filled. */
static int recrawl_cond(const struct frontier *f, const struct state_valid *v, int depth,
                        struct frontier_cond *cond)
{
    *cond = (struct frontier_cond){ 0 };
    if (!v || (!v->has_links && depth < f->conf.depth))
        return 0;
    if (f->due_before > 0 && (double)v->fetched_at > f->due_before)
        return 1;
    cond->etag = v->etag;
    cond->modified = v->modified;
    return 0;
}

/* A page not due (recrawl_cond): a job that the core hands to the store
 * without a fetch or a row, in its turn among the jobs that go first. */
static int skip_job(struct frontier *f, const char *url, const char *scope, int depth,
                    uint64_t id)
{
    struct crawl_job *j = job_new();
    if (!j || !(j->url = strdup(url)) || (scope && !(j->scope = strdup(scope)))) {
        job_free(j);
        return CRAWL_ENOMEM;
    }
    j->depth = depth;
    j->mark = id;
    j->skip = 1;
    j->found = 1;           /* no row, whatever happens to it */
    frontier_push_failed(f, j);
    return 0;
}

/* Whether listed page p of the store is to be split as it is read: the
 * frontier keys it by its host, or a recrawl skips it (its job is scoped
 * to its host). */
static int listed_split(const struct frontier *f, const struct state_page *p)
{
    struct frontier_cond cond;
    return !p->why && (frontier_splits_listed(f) || recrawl_cond(f, p->valid, 0, &cond));
}

/* A listed page from the store, split into *u as it was read (split is
 * url_split's result, 1 when not split), becomes a job in its turn, with
 * its row number, its line and the failure its line already had. */
static void load_listed(struct frontier *f, uint64_t id, const struct state_page *p,
                        struct url_parts *u, int split)
{
    struct frontier_cond cond = { 0 };
    if (!p->why && recrawl_cond(f, p->valid, 0, &cond)) {
        if (split != 0 || skip_job(f, p->url, u->host, 0, id) != 0)
            f->left++;
        return;
    }
    struct crawl_job *j = job_new();
    if (!j || !(j->url = strdup(p->url)) || frontier__cond_set(j, &cond) != 0) {
        job_free(j);
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
    } else if (split == CRAWL_ENOMEM || frontier_push(f, j, split == 0 ? u : NULL) != 0) {
        job_fail_early(j, CRAWL_FAIL_OTHER, "out of memory");
        frontier_push_failed(f, j);
    }
}

/* Places page id read from the store, split into *u as it was read (split
 * is url_split's result, 1 when not split; *u emptied here). */
static void load_one(struct frontier *f, uint64_t id, const struct state_page *p,
                     struct url_parts *u, int split)
{
    if (!state_shared(f->st))
        f->st_cursor = id;
    if (p->depth == 0) {
        load_listed(f, id, p, u, split);
        url_parts_free(u);
        return;
    }
    struct frontier_cond cond;
    if (split != 0) {
        f->left++;
        return;
    }
    const char *scope = p->scope ? p->scope : u->host;
    if (recrawl_cond(f, p->valid, p->depth, &cond)
            ? skip_job(f, u->href, scope, p->depth, id) != 0
            : frontier__place(f, u, scope, p->parent, p->depth, id, 0, &cond) == JOB_LINK_NOMEM)
        f->left++;
    url_parts_free(u);
}

/* Pages a worker holds queued from a shared store: twice its transfers in
 * flight, enough to keep them busy between two leases, few enough to
 * leave the rest to the other workers. While none of those may start yet
 * (their hosts' delays), it leases up to four times as many, so that the
 * hosts the server holds beside them get their turn. */
static size_t lease_batch(const struct frontier *f)
{
    size_t n = f->limit > 0 ? 2 * (size_t)f->limit : 64;
    return n < 16 ? 16 : n > 2048 ? 2048 : n;
}

/* Seconds between two leases that found nothing while memory wants
 * pages: another worker may yet find links, or fall silent and have its
 * pages given back, and the server tells nobody of either; asking again
 * is the only way to learn of them. The leasing thread wakes for it, and
 * wakes the models only when a lease placed pages or the crawl may be
 * over. */
#define LEASE_POLL 0.05

/* A page read from the store without the core's lock, copied whole (the
 * store's strings last only as long as its callback), its URL split there
 * too (a found page's, and a listed one's the frontier keys). */
struct held_page {
    struct held_page *next;
    uint64_t id;
    struct state_page p;
    struct state_valid v;
    struct url_parts u;         /* a found page's URL, split */
    int split;                  /* url_split's result for it; 1: not split */
    char s[];                   /* the strings p and v point into */
};

struct held_robots {
    struct held_robots *next;
    long status;
    int fail;
    struct robots *rules;       /* a 2xx body, parsed; NULL: none */
    struct url_parts *maps;     /* --sitemaps: its sitemaps, split */
    size_t nmaps;
    char key[];                 /* its host */
};

/* Asks the store for the robots.txt of host key, the first time a read
 * meets the host, and keeps it parsed (and with --sitemaps, the sitemaps
 * it names split) for frontier__store_refill_end. A store that fails or
 * has none leaves the host to fetch its own. */
static void robots_look(struct frontier *f, const char *key)
{
    long status;
    int fail;
    char *body;
    size_t len, n = strlen(key) + 1;
    if (hset64_add(&f->rf.looked, frontier_hash_url(key)) != 1 ||
        state_robots_get(f->st, key, &status, &fail, &body, &len) != 1)
        return;
    struct held_robots *r = malloc(sizeof *r + n);
    if (r) {
        r->status = status;
        r->fail = fail;
        r->rules = fail == CRAWL_FAIL_NONE && status >= 200 && status < 300
                       ? robots_parse(body ? body : "", len, f->agent)
                       : NULL;
        r->maps = NULL;
        r->nmaps = 0;
        if (f->sitemaps)
            frontier__sitemap_maps(r->rules, key, &r->maps, &r->nmaps);
        memcpy(r->key, key, n);
        r->next = f->rf.robots;
        f->rf.robots = r;
    }
    free(body);
}

/* Frees what a read kept of a robots.txt. */
static void held_robots_free(struct held_robots *r)
{
    robots_free(r->rules);
    frontier__maps_free(r->maps, r->nmaps);
    free(r);
}

/* The robots.txt of the hosts the read met, in: each host is made with its
 * rules, or given them if it has none yet (a sitemap on it made it: a
 * sitemap is read without its host's robots.txt). */
static void robots_place(struct frontier *f)
{
    for (struct held_robots *r = f->rf.robots, *next; r; r = next) {
        next = r->next;
        struct crawl_host *h = frontier__host_get(f, r->key);
        if (h && h->robots_state == ROBOTS_NONE) {
            frontier__robots_rules(f, h, (enum crawl_fail)r->fail, NULL, r->status, r->rules);
            r->rules = NULL;
            frontier__maps_give(h, &r->maps, &r->nmaps);
        }
        held_robots_free(r);
    }
    f->rf.robots = NULL;
}

/* state_queue_load's callback in frontier__store_refill_read: keeps a copy of
 * page p for frontier__store_refill_end. Touches only f->rf. */
static void hold_one(uint64_t id, const struct state_page *p, void *data)
{
    struct frontier *f = data;
    const struct state_valid *v = p->valid;
    f->rf.last = id;            /* read, copied or not: the cursor passes it */
    size_t n = frontier__str_size(p->url) + frontier__str_size(p->scope) +
               frontier__str_size(p->source) + frontier__str_size(p->why) +
               frontier__str_size(p->parent);
    if (v)
        n += frontier__str_size(v->etag) + frontier__str_size(v->modified);
    struct held_page *h = malloc(sizeof *h + n);
    if (!h) {
        f->rf.lost++;           /* as when a job cannot be made: the next run takes it */
        return;
    }
    char *w = h->s;
    h->next = NULL;
    h->id = id;
    h->p = *p;
    h->p.url = frontier__str_put(&w, p->url);
    h->p.scope = frontier__str_put(&w, p->scope);
    h->p.source = frontier__str_put(&w, p->source);
    h->p.why = frontier__str_put(&w, p->why);
    h->p.parent = frontier__str_put(&w, p->parent);
    h->p.valid = NULL;
    if (v) {
        h->v = *v;
        h->v.etag = frontier__str_put(&w, v->etag);
        h->v.modified = frontier__str_put(&w, v->modified);
        h->v.links = NULL;
        h->v.links_len = 0;
        h->p.valid = &h->v;
    }
    memset(&h->u, 0, sizeof h->u);
    h->split = p->depth > 0 || listed_split(f, &h->p) ? url_split(h->p.url, &h->u) : 1;
    if (f->robots && f->per_host_queues && h->split == 0)
        robots_look(f, h->u.key);
    if (f->rf.tail)
        f->rf.tail->next = h;
    else
        f->rf.head = h;
    f->rf.tail = h;
}

/* The host of page h, which the lease took from another worker: its next
 * request waits out what is left of its delay since that one let it go
 * (robots.txt's rules, read with the lease, are in already). */
static void hand_over(struct frontier *f, const struct held_page *h)
{
    if (h->split != 0)
        return;
    struct crawl_host *host = frontier__host_get(f, h->u.key);
    if (host && host->running == 0) {
        double at = f->now() - h->p.host_idle + host->delay;
        if (at > host->next_at) {
            host->next_at = at;
            f->timed = 1;
        }
    }
}

/* The pages memory wants from a shared store, whenever it may ask; 0:
 * none. Leased when half of what memory holds is gone: one round trip for
 * many pages. */
static size_t lease_want(const struct frontier *f)
{
    size_t want = lease_batch(f), have = f->queued + f->pending;
    if (!f->st_more || frontier__cancelled(f))
        return 0;
    if (f->sh_paced && have < 4 * want)
        want = have + want / 2 > 4 * want ? 4 * want : have + want / 2;
    else if (have > want / 2)
        return 0;
    return want - have;
}

/* The pages a lease would ask for now; 0: none is due. */
static size_t lease_due(const struct frontier *f)
{
    if (!f->sh_found && f->now() < f->sh_poll_at)
        return 0;
    return lease_want(f);
}

int frontier__store_lease_due(const struct frontier *f)
{
    return state_shared(f->st) && lease_due(f) > 0;
}

double frontier__store_lease_at(const struct frontier *f)
{
    if (!state_shared(f->st) || f->sh_found || f->now() >= f->sh_poll_at || !lease_want(f))
        return 0;
    return f->sh_poll_at;
}

int frontier__store_refill_begin(struct frontier *f)
{
    if (!f->st_more)
        return 0;
    if (state_shared(f->st)) {
        size_t n = lease_due(f);
        if (n == 0)
            return 0;
        f->sh_found = 0;
        f->rf.after = 0;
        f->rf.max = n;
    } else {
        if (f->queued + f->pending >= FRONTIER_MEM_JOBS / 2)
            return 0;
        f->rf.after = f->st_cursor;
        f->rf.max = FRONTIER_MEM_JOBS / 4;
    }
    f->rf.deferred = 0;
    f->rf.n = 0;
    f->rf.last = 0;
    return 1;
}

void frontier__store_refill_read(struct frontier *f)
{
    f->rf.n = state_queue_load(f->st, f->rf.after, f->rf.max, hold_one, f);
}

int frontier__store_refill_end(struct frontier *f)
{
    struct held_page *h = f->rf.head, *next;
    f->rf.head = f->rf.tail = NULL;
    robots_place(f);
    for (; h; h = next) {
        next = h->next;
        if (h->p.host_handed && f->per_host_queues)
            hand_over(f, h);
        load_one(f, h->id, &h->p, &h->u, h->split);
        free(h);
    }
    f->left += f->rf.lost;
    f->rf.lost = 0;
    int n = f->rf.n;
    if (n < 0)
        frontier__store_fail(f);
    /* Links sent to the store while it was read: what the read found (and
     * a shared store's count of pages elsewhere) is already out of date. */
    if (state_shared(f->st)) {
        f->sh_poll_at = n > 0 ? 0 : f->now() + LEASE_POLL;
        return f->sh_found;
    }
    if (f->rf.last > f->st_cursor)
        f->st_cursor = f->rf.last;
    if (n < 0 || ((size_t)n < f->rf.max && !f->rf.deferred))
        f->st_more = 0;         /* the store holds nothing past the cursor */
    /* Or the store may hold more, and memory is still short of it (a
     * batch of pages that robots.txt forbids places nothing). */
    return f->st_more && f->queued + f->pending < FRONTIER_MEM_JOBS / 2;
}

void frontier__refill_free(struct frontier *f)
{
    for (struct held_page *h = f->rf.head, *next; h; h = next) {
        next = h->next;
        url_parts_free(&h->u);
        free(h);
    }
    f->rf.head = f->rf.tail = NULL;
    for (struct held_robots *r = f->rf.robots, *next; r; r = next) {
        next = r->next;
        held_robots_free(r);
    }
    f->rf.robots = NULL;
    hset64_free(&f->rf.looked);
}

enum job_verdict frontier__store_send(const struct frontier *f, const struct url_parts *p,
                                      const char *scope, const char *parent, int depth,
                                      uint64_t hash, int *sent)
{
    struct state_page sp = { .url = p->href, .scope = scope, .parent = parent, .depth = depth,
                             .hash = hash, .host = p->key };
    uint64_t id, *slot = f->st_seen ? &f->st_seen[hash % FRONTIER_SEEN_CACHE] : NULL;
    if (slot && __atomic_load_n(slot, __ATOMIC_RELAXED) == hash)
        return JOB_LINK_SEEN;
    int rc = state_admit(f->st, hash, &sp, &id);
    if (rc < 0)
        return JOB_LINK_STORE;
    if (slot)
        __atomic_store_n(slot, hash, __ATOMIC_RELAXED);
    /* A shared store keeps it once, which it says only later, in the
     * batch's reply: sent is admitted, and whoever leases it next fetches
     * it. */
    if (rc == 0 && !state_shared(f->st))
        return JOB_LINK_SEEN;
    *sent = 1;
    return JOB_LINK_ADMITTED;
}

void frontier__store_sent(struct frontier *f, int sent, int failed)
{
    if (failed)
        frontier__store_fail(f);
    if (!sent)
        return;
    if (state_shared(f->st)) {
        f->sh_found = 1;
        return;
    }
    /* Memory takes the store's pages in id order only, by reading them
     * back: pages found by two threads at once get their ids in one order
     * and may reach this in the other. */
    f->st_more = 1;
    /* A read under way may or may not see them: the next one will. */
    f->rf.deferred |= f->rf.on;
}

int frontier__store_robots_save(const struct frontier *f, const struct crawl_job *rj)
{
    /* A fetch the cancellation stopped says nothing of the host. */
    if (!f->st || rj->res.fail == CRAWL_FAIL_CANCELLED)
        return 0;
    return state_robots_put(f->st, rj->host->key, rj->res.status, (int)rj->res.fail,
                            rj->body, rj->body_len) != 0 ? -1 : 0;
}

void frontier__store_drop(struct frontier *f, uint64_t mark)
{
    if (!f->st || !mark)
        return;
    pthread_mutex_lock(&f->drops.lock);
    int kept = 0;
    if (f->drops.n == f->drops.cap) {
        size_t cap = f->drops.cap ? 2 * f->drops.cap : 64;
        uint64_t *v = realloc(f->drops.v, cap * sizeof *v);
        if (v) {
            f->drops.v = v;
            f->drops.cap = cap;
        }
    }
    if (f->drops.n < f->drops.cap) {
        f->drops.v[f->drops.n++] = mark;
        kept = 1;
    }
    pthread_mutex_unlock(&f->drops.lock);
    if (!kept && state_drop(f->st, mark) != 0)
        frontier__store_fail(f);
}

int frontier_store_flush(struct frontier *f)
{
    if (!f || !f->st)
        return 0;
    pthread_mutex_lock(&f->drops.lock);
    uint64_t *v = f->drops.v;
    size_t n = f->drops.n;
    f->drops.v = NULL;
    f->drops.n = f->drops.cap = 0;
    pthread_mutex_unlock(&f->drops.lock);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (state_drop(f->st, v[i]) != 0)
            rc = -1;
    free(v);
    return rc < 0 ? -1 : n > 0;
}

/* ---- what the core asks of the frontier's home -------------------------- */

int frontier_stored(const struct frontier *f)
{
    return f->st != NULL;
}

int frontier_shared(const struct frontier *f)
{
    return f->st && state_shared(f->st);
}

int frontier_elsewhere(struct frontier *f)
{
    return f->st && state_elsewhere(f->st) > 0;
}

int frontier_may_start(struct frontier *f)
{
    double held = f->st ? state_held_until(f->st) : 0;
    if (held <= 0 || clock_now() < held)
        return 1;
    if (state_failure(f->st))
        f->st_failed = 1;
    return 0;
}

int frontier_failure(struct frontier *f, char *buf, size_t n)
{
    if (!f->st)
        return 0;
    if (buf && n)
        snprintf(buf, n, "%s: %s", state_shared(f->st) ? "frontier" : "state",
                 state_error(f->st));
    /* A shared crawl whose server is gone (or gave this worker's pages to
     * others) cannot commit a row; a store that lost the crawl's data (a
     * file that failed a read or a write, a server that lost its keys or
     * holds others) can keep no promise of every page once. */
    int why = state_failure(f->st);
    return why == STATE_ELOST || (!why && !state_shared(f->st)) ? CRAWL_ESTORE : CRAWL_EFRONTIER;
}

void frontier_on_change(struct frontier *f, void (*fn)(void *data), void *data)
{
    if (frontier_shared(f))
        state_on_change(f->st, fn, data);
}

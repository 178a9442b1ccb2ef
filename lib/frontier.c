/* frontier.c: which job starts next, and which links become jobs.
 *
 * A plain list is one FIFO. When the crawl obeys robots.txt, bounds the
 * transfers per host or spaces requests to a host, every host
 * (scheme://host:port) gets a queue of its own, and hosts with queued jobs
 * take turns. A host's robots.txt is fetched by an internal job that goes
 * before every other; until it is in, the host's jobs wait and the links
 * found for it are held back, so that no forbidden path is ever requested.
 * A job to be tried again (--retry) waits apart, in a heap by time, and
 * goes back to the front of its queue when its time comes: it holds no
 * thread and no transfer while it waits. When a host's next request may
 * start is frontier_pace.c's business; the sitemaps of --sitemaps are
 * frontier_sitemap.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "frontier_internal.h"
#include "frontier.h"
#include "frontier_internal.h"
#include "robots.h"
#include "state.h"
#include "url.h"
#include "vec.h"

static void started(struct frontier *f, struct crawl_job *j, int sent);

/* ---- the set of URLs seen ------------------------------------------------ */

/* A second, independent 64-bit hash of s (a multiply-xorshift over 8-byte
 * words), so that the seen set keeps 8 bytes a URL instead of the URL: two
 * URLs are taken for one only when both 64-bit hashes' mix collides, about
 * n^2 / 2^65 for n URLs (one in 370,000 for ten million). */
uint64_t frontier_hash_url(const char *s)
{
    size_t n = strlen(s);
    uint64_t h = hset_hash(s, n), k = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, s + i, n - i < 8 ? n - i : 8);
        h ^= w * k;
        h = (h << 31 | h >> 33) * 0xbf58476d1ce4e5b9ULL;
    }
    h ^= h >> 29;
    return h ? h : 1;
}

/* Adds url; returns 1 when it was new, 0 when seen before, CRAWL_ENOMEM. */
int frontier__seen_add(struct frontier *f, const char *url)
{
    int rc = hset64_add(&f->seen, frontier_hash_url(url));
    return rc < 0 ? CRAWL_ENOMEM : rc;
}

int frontier_seen_hash(const struct frontier *f, const char *norm, uint64_t *hash)
{
    const struct frontier_conf *o = &f->conf;
    char *canon;
    if (!o->canonical && !o->nstrip) {
        *hash = frontier_hash_url(norm);
        return 0;
    }
    if (url_canonical(norm, o->canonical, o->strip, o->nstrip, &canon) != 0)
        return CRAWL_ENOMEM;
    *hash = frontier_hash_url(canon);
    free(canon);
    return 0;
}

/* The seen-set key of split URL p: the one it carries (made without the
 * lock), or made now. 0 or CRAWL_ENOMEM. */
static int seen_key(const struct frontier *f, const struct url_parts *p, uint64_t *hash)
{
    *hash = p->seen;
    return p->seen ? 0 : frontier_seen_hash(f, p->norm, hash);
}

/* ---- hosts ---------------------------------------------------------------- */

static int host_is(const void *item, const void *key)
{
    return strcmp(((const struct crawl_host *)item)->key, key) == 0;
}

struct crawl_host *frontier__host_find(struct frontier *f, const char *key, uint64_t k)
{
    return hset_find(&f->hosts, k, host_is, key);
}

struct crawl_host *frontier__host_get(struct frontier *f, const char *key)
{
    uint64_t k = hset_hash(key, strlen(key));
    struct crawl_host *h = frontier__host_find(f, key, k);
    if (h)
        return h;
    if (!(h = calloc(1, sizeof *h)) || !(h->key = strdup(key)) ||
        hset_add(&f->hosts, k, h) != 0) {
        if (h)
            free(h->key);
        free(h);
        return NULL;
    }
    h->delay = h->floor = f->delay;
    return h;
}

static void ring_add(struct frontier *f, struct crawl_host *h)
{
    if (h->in_ring)
        return;
    h->in_ring = 1;
    if (!f->ring) {
        h->ring_next = h->ring_prev = h;
        f->ring = h;
        return;
    }
    /* Just before the current host: the newest host takes its turn last. */
    h->ring_next = f->ring;
    h->ring_prev = f->ring->ring_prev;
    f->ring->ring_prev->ring_next = h;
    f->ring->ring_prev = h;
}

static void ring_remove(struct frontier *f, struct crawl_host *h)
{
    if (!h->in_ring)
        return;
    h->in_ring = 0;
    if (h->ring_next == h) {
        f->ring = NULL;
    } else {
        h->ring_prev->ring_next = h->ring_next;
        h->ring_next->ring_prev = h->ring_prev;
        if (f->ring == h)
            f->ring = h->ring_next;
    }
}

static void enqueue(struct crawl_job **head, struct crawl_job **tail, struct crawl_job *j)
{
    j->qnext = NULL;
    if (*tail)
        (*tail)->qnext = j;
    else
        *head = j;
    *tail = j;
}

static struct crawl_job *dequeue(struct crawl_job **head, struct crawl_job **tail)
{
    struct crawl_job *j = *head;
    if (j) {
        *head = j->qnext;
        if (!*head)
            *tail = NULL;
        j->qnext = NULL;
    }
    return j;
}

/* ---- life cycle ------------------------------------------------------------ */

struct frontier *frontier_new(const struct frontier_conf *conf)
{
    struct frontier *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->conf = *conf;
    f->now = conf->now ? conf->now : clock_now;
    pthread_mutex_init(&f->drops.lock, NULL);
    const struct frontier_conf *o = &f->conf;
    f->follow = o->depth > 0;
    f->sitemaps = o->sitemaps;
    f->robots = o->robots && (f->follow || f->sitemaps);
    f->fetch_robots = f->robots || f->sitemaps;
    f->throttle = o->auto_throttle;
    f->delay = o->delay;
    f->timed = o->delay > 0;
    /* A 429 or 503 pauses its host only where hosts are kept apart (links,
     * robots.txt or not, sitemaps, pacing): a plain list, --retry or not,
     * does without the per-host queues, which cost a URL parse a job
     * (bench-polite.sh). */
    f->per_host_queues = f->follow || f->fetch_robots || o->per_host > 0 || o->delay > 0 ||
                         o->auto_throttle;
    /* The product token is the one the user agent starts with
     * ("crawl/0.1.0" is crawl's), unless one is given. */
    const char *ua = o->user_agent ? o->user_agent : "crawl";
    f->agent = o->robots_agent ? strdup(o->robots_agent) : strndup(ua, robots_token_len(ua));
    if (!f->agent) {
        free(f);
        return NULL;
    }
    /* Not the caller's: the copy must not outlive what it points to. */
    f->conf.user_agent = f->conf.robots_agent = NULL;
    return f;
}

void frontier_use_store(struct frontier *f, struct state *st, size_t fetched)
{
    f->st = st;
    f->started = fetched;
    f->st_more = 1;
    /* Without it (out of memory), every link asks the store. A recrawl's
     * pass comes again, with a store that starts its pass: none is known. */
    if (f->st_seen)
        memset(f->st_seen, 0, FRONTIER_SEEN_CACHE * sizeof *f->st_seen);
    else
        f->st_seen = calloc(FRONTIER_SEEN_CACHE, sizeof *f->st_seen);
}

void frontier_recrawl(struct frontier *f, uint64_t first, double due_before)
{
    f->recrawl = 1;
    f->due_before = due_before;
    f->st_cursor = first ? first - 1 : 0;
}

void frontier_start(struct frontier *f, int limit, double deadline_at,
                    const atomic_int *cancelled)
{
    f->limit = limit;
    f->deadline_at = deadline_at;
    f->cancelled = cancelled;
}

void frontier_counts(const struct frontier *f, struct frontier_counts *n)
{
    n->queued = f->queued;
    n->delayed = f->nlater;
    n->left = f->left;
    n->dropped = f->dropped;
    n->seen = f->seen.n;
    n->spill_bytes = f->sp.bytes;
    n->started = f->started;
    n->robots_fetched = f->robots_fetched;
    n->robots_blocked = f->robots_blocked;
}

int frontier_queue_full(struct frontier *f)
{
    if (!f->dropped || f->full_said)
        return 0;
    f->full_said = 1;
    return 1;
}

int frontier_keeps(const struct crawl_job *j)
{
    return j->kind == JOB_ROBOTS;
}

void frontier_notes(const struct frontier *f, const struct crawl_job *j, int full,
                    void (*say)(void *data, const char *text), void *data)
{
    char text[600];
    if (full) {
        snprintf(text, sizeof text, "--max-queue %zu reached: links found past it are dropped, "
                 "not fetched (counted in the summary)", f->conf.max_queue);
        say(data, text);
    }
    if (j->kind == JOB_SITEMAP && j->res.fail != CRAWL_FAIL_CANCELLED &&
        (j->res.fail != CRAWL_FAIL_NONE || j->res.error)) {
        snprintf(text, sizeof text, "sitemap %s: %s", j->url,
                 j->res.error ? j->res.error : job_fail_name(j->res.fail));
        say(data, text);
    }
}

int frontier_store_failed(struct frontier *f)
{
    int was = f->st_failed;
    f->st_failed = 0;
    return was;
}

/* Frees every entry of the queue that starts at e. */
static void qent_free_all(struct job_qent *e)
{
    for (struct job_qent *en; e; e = en) {
        en = e->next;
        frontier__qent_free(e);
    }
}

void frontier_free(struct frontier *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->hosts.cap; i++) {
        struct crawl_host *h = f->hosts.slot[i].item;
        if (h) {
            qent_free_all(h->pend);
            qent_free_all(h->head);
            robots_free(h->robots);
            free(h->robots_why);
            free(h->scope);
            frontier__maps_free(h->maps, h->nmaps);
            job_free(h->robots_job);
            free(h->key);
            free(h);
        }
    }
    hset_free(&f->hosts);
    qent_free_all(f->head);
    frontier__refill_free(f);
    for (struct crawl_job *j = f->fhead, *nx; j; j = nx) {
        nx = j->qnext;
        job_free(j);
    }
    for (size_t i = 0; i < f->nlater; i++)
        if (f->later[i]->kind != JOB_ROBOTS)   /* robots jobs go with their hosts */
            job_free(f->later[i]);
    free(f->later);
    hset64_free(&f->seen);
    for (struct name *nm = f->names, *nn; nm; nm = nn) {
        nn = nm->next;
        free(nm->s);
        free(nm);
    }
    frontier__spill_free(f);
    free(f->st_seen);
    free(f->turn_want);
    free(f->drops.v);
    pthread_mutex_destroy(&f->drops.lock);
    free(f->agent);
    free(f);
}

int frontier_paced(const struct frontier *f)
{
    return f->per_host_queues;
}

size_t frontier_queued(const struct frontier *f)
{
    return f ? f->queued : 0;
}

/* ---- queuing ----------------------------------------------------------------- */

/* Starts the robots job of h: it goes before every other job. */
static int robots_start(struct frontier *f, struct crawl_host *h)
{
    struct crawl_job *j = job_new();
    size_t n = strlen(h->key) + sizeof "/robots.txt";
    if (!j || !(j->url = malloc(n))) {
        free(j);
        return CRAWL_ENOMEM;
    }
    snprintf(j->url, n, "%s/robots.txt", h->key);
    j->kind = JOB_ROBOTS;
    j->host = h;
    h->robots_job = j;
    h->robots_state = ROBOTS_PENDING;
    enqueue(&f->rhead, &f->rtail, j);
    f->queued++;
    return 0;
}

/* Puts job j (in c's list) on its host's queue. */
void frontier__host_enqueue(struct frontier *f, struct crawl_host *h, struct crawl_job *j)
{
    j->host = h;
    j->qe.job = j;
    frontier__qpush(&h->head, &h->tail, &j->qe);
    f->queued++;
    ring_add(f, h);
}

void frontier_push_plain(struct frontier *f, struct crawl_job *j)
{
    j->qe.job = j;
    frontier__qpush(&f->head, &f->tail, &j->qe);
    f->queued++;
}

void frontier_push_failed(struct frontier *f, struct crawl_job *j)
{
    j->host = NULL;
    enqueue(&f->fhead, &f->ftail, j);
    f->queued++;
}

/* Records a listed job that the robots.txt of h forbids, or that its
 * failure does: it fails in its turn. */
static void fail_robots(struct frontier *f, struct crawl_job *j, const struct crawl_host *h)
{
    job_fail_early(j, CRAWL_FAIL_ROBOTS,
                      h->robots_why ? h->robots_why : "disallowed by robots.txt");
    f->robots_blocked++;
    frontier_push_failed(f, j);
}

int frontier_splits_listed(const struct frontier *f)
{
    return f->per_host_queues;
}

int frontier_key_listed(const struct frontier *f, struct url_parts *p)
{
    if (!(f->follow || f->sitemaps) || f->st)
        return 0;
    return frontier_seen_hash(f, p->norm, &p->seen);
}

int frontier_push(struct frontier *f, struct crawl_job *j, struct url_parts *p)
{
    if (!f->per_host_queues || !p || !p->key) {
        /* Not split: crawl_add checked it already; the plain queue. */
        frontier_push_plain(f, j);
        return 0;
    }
    /* With --state, the listed URLs were seen as the list was read. */
    uint64_t key;
    if ((f->follow || f->sitemaps) && !f->st &&
        (seen_key(f, p, &key) != 0 || hset64_add(&f->seen, key) < 0))
        return CRAWL_ENOMEM;
    if (f->follow || f->sitemaps) {
        j->scope = p->host;
        p->host = NULL;
    }
    struct crawl_host *h = frontier__host_get(f, p->key);
    int newly = h && f->sitemaps && !h->scope;
    if (!h || (newly && !(h->scope = strdup(j->scope))))
        return CRAWL_ENOMEM;
    /* A host listed once its robots.txt is in (a link reached it first):
     * its sitemaps are read now. */
    if (newly && h->robots_state == ROBOTS_READY)
        frontier__sitemaps_start(f, h);
    if (f->fetch_robots && h->robots_state == ROBOTS_NONE && robots_start(f, h) != 0)
        return CRAWL_ENOMEM;
    if (f->robots && h->robots_state == ROBOTS_READY && !robots_allowed(h->robots, p->path)) {
        fail_robots(f, j, h);
        return 0;
    }
    /* Its rules are read when its host's robots.txt is in (robots_ready). */
    if (f->robots && h->robots_state == ROBOTS_PENDING) {
        j->path = p->path;
        p->path = NULL;
    }
    frontier__host_enqueue(f, h, j);
    return 0;
}

/* ---- retries waiting for their time ------------------------------------- */

static double later_at(const struct frontier *f, size_t i)
{
    return (f->later[i])->not_before;
}

static void later_swap(struct frontier *f, size_t a, size_t b)
{
    struct crawl_job *t = f->later[a];
    f->later[a] = f->later[b];
    f->later[b] = t;
}

/* Takes the soonest waiting retry off the heap. */
static struct crawl_job *later_pop(struct frontier *f)
{
    struct crawl_job *top = f->later[0];
    f->later[0] = f->later[--f->nlater];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < f->nlater && later_at(f, l) < later_at(f, m))
            m = l;
        if (r < f->nlater && later_at(f, r) < later_at(f, m))
            m = r;
        if (m == i)
            break;
        later_swap(f, i, m);
        i = m;
    }
    return top;
}

/* Puts j at the front of the queue it came from: its turn has come. */
static void requeue_front(struct frontier *f, struct crawl_job *j)
{
    struct crawl_host *h = j->host;
    if (j->kind == JOB_ROBOTS) {
        j->qnext = f->rhead;
        f->rhead = j;
        if (!f->rtail)
            f->rtail = j;
    } else {
        j->qe.job = j;
        if (h) {
            frontier__qpush_front(&h->head, &h->tail, &j->qe);
            ring_add(f, h);
        } else {
            frontier__qpush_front(&f->head, &f->tail, &j->qe);
        }
    }
    f->queued++;
}

/* Gives back the host slot job j took in the --frontier server. */
static void slot_give(struct frontier *f, struct crawl_job *j)
{
    if (j->slot) {
        j->slot = 0;
        state_host_give(f->st, j->host->key);
    }
}

/* Whether host h may start a job now as the --frontier server sees it:
 * yes unless --per-host or a delay bounds it across workers and the
 * server does not lease this worker its hosts whole (a worker with no
 * per-host rule of its own meeting a Crawl-delay: crawl leases hosts
 * whole for --per-host, --delay and --auto-throttle). Then h starts on a
 * turn the server gave it (its next start, and with --per-host a slot,
 * given back as the job ends): one given is taken; without one, h waits
 * to be asked for one (frontier_turns_begin), which no pick waits for. */
static int slot_take(struct frontier *f, struct crawl_host *h)
{
    int per = f->conf.per_host;
    if (!state_shared(f->st) || (per <= 0 && h->delay <= 0) || state_hosts_whole(f->st))
        return 1;
    /* The server spaces the turns, not the starts: a turn taken late
     * would start closer to the next worker's than the delay. */
    if (h->turn && f->now() - h->turn_at <= FRONTIER_TURN_FRESH) {
        h->turn = 0;
        return 1;
    }
    if (h->turn && per > 0) {
        state_host_give(f->st, h->key);     /* its slot, unused */
    }
    h->turn = 0;
    if (!h->turn_asked &&
        vec_reserve(&f->turn_want, &f->turn_cap, f->nturn + 1, sizeof *f->turn_want, 8) == 0) {
        h->turn_asked = 1;
        f->turn_want[f->nturn++] = h;
    }
    return 0;
}

int frontier_turns_begin(struct frontier *f, struct frontier_turns *t)
{
    memset(t, 0, sizeof *t);
    if (f->turn_on || f->nturn == 0 || !(t->v = calloc(f->nturn, sizeof *t->v)))
        return 0;
    t->n = f->nturn;
    for (size_t i = 0; i < t->n; i++)
        t->v[i] = (struct frontier_turn){ .host = f->turn_want[i],
                                          .delay = f->turn_want[i]->delay };
    f->nturn = 0;
    f->turn_on = 1;
    return 1;
}

void frontier_turns_read(struct frontier *f, struct frontier_turns *t)
{
    for (size_t i = 0; i < t->n; i++) {
        struct frontier_turn *u = &t->v[i];
        u->rc = state_host_take(f->st, u->host->key, f->conf.per_host > 0 ? f->conf.per_host : 0,
                                u->delay, &u->wait);
        /* A turn counts from its own answer, not the batch's end: the
         * next worker's comes a delay after the server gave it. */
        u->at = f->now();
    }
}

int frontier_turns_end(struct frontier *f, struct frontier_turns *t)
{
    int given = 0;
    double now = f->now();
    for (size_t i = 0; i < t->n; i++) {
        struct frontier_turn *u = &t->v[i];
        struct crawl_host *h = u->host;
        h->turn_asked = 0;
        if (u->rc == 1) {
            h->turn = 1;
            h->turn_at = u->at;
            given = 1;
        } else if (u->rc == 0) {
            /* Asked again once the server's next start has come. */
            if (now + u->wait > h->next_at)
                h->next_at = now + u->wait;
            f->timed = 1;
            given = 1;
        } else {
            frontier__store_fail(f);
        }
    }
    f->turn_on = 0;
    free(t->v);
    memset(t, 0, sizeof *t);
    return given;
}

void frontier_retry(struct frontier *f, struct crawl_job *j, double at)
{
    started(f, j, 0);
    if (j->host)
        j->host->running--;
    slot_give(f, j);
    j->not_before = at;
    if (vec_reserve(&f->later, &f->later_cap, f->nlater + 1, sizeof *f->later, 16) != 0) {
        requeue_front(f, j);    /* no room to wait: it goes again at once */
        return;
    }
    size_t i = f->nlater++;
    f->later[i] = j;
    while (i > 0 && later_at(f, (i - 1) / 2) > later_at(f, i)) {
        later_swap(f, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    f->queued++;
}


/* Moves the retries whose time has come back to their queues; sets *wake
 * to the time of the next one. */
static void later_release(struct frontier *f, double *wake)
{
    double now = f->now();
    struct crawl_job *due = NULL;
    /* Popped soonest first, put back latest first: of the retries due
     * at once, the one due first goes first. */
    while (f->nlater && later_at(f, 0) <= now) {
        struct crawl_job *j = later_pop(f);
        j->qnext = due;
        due = j;
        f->queued--;
    }
    for (struct crawl_job *j = due, *jn; j; j = jn) {
        jn = j->qnext;
        requeue_front(f, j);
    }
    if (f->nlater && wake && (*wake == 0 || later_at(f, 0) < *wake))
        *wake = later_at(f, 0);
}

/* Takes the next entry of the queues that may start now; *hp: the host
 * whose queue it was on, NULL for the plain queue. */
static struct job_qent *pick_entry(struct frontier *f, double *wake, struct crawl_host **hp)
{
    struct job_qent *e;
    *hp = NULL;
    if ((e = frontier__qpop(&f->head, &f->tail)))
        return e;
    if (!f->per_host_queues || !f->ring)
        return NULL;
    const struct frontier_conf *o = &f->conf;
    double now = f->timed ? f->now() : 0;
    struct crawl_host *h = f->ring, *start = h;
    do {
        struct crawl_host *next = h->ring_next;
        /* --auto-throttle sends a host's first request alone: its delay
         * comes from that request's latency. */
        int ok = h->robots_state != ROBOTS_PENDING &&
                 (o->per_host <= 0 || h->running < o->per_host) &&
                 !(f->throttle && !h->sampled && h->running > 0) &&
                 h->starting == 0;
        if (ok && now < h->next_at) {
            if (wake && (*wake == 0 || h->next_at < *wake))
                *wake = h->next_at;
            ok = 0;
        }
        if (ok && !slot_take(f, h))
            ok = 0;
        if (ok) {
            e = frontier__qpop(&h->head, &h->tail);
            if (!h->head)
                ring_remove(f, h);
            /* Round robin: the next pick starts after this host. */
            if (f->ring)
                f->ring = h->in_ring ? h->ring_next : next;
            *hp = h;
            return e;
        }
        h = next;
    } while (h != start && f->ring);
    return NULL;
}

/* Takes the next job that may start now, without the --max-pages test: a
 * link's is made now. */
static struct crawl_job *pick(struct frontier *f, double *wake)
{
    struct crawl_job *j = dequeue(&f->fhead, &f->ftail);
    if (!j)
        j = dequeue(&f->rhead, &f->rtail);
    while (!j) {
        struct crawl_host *h;
        struct job_qent *e = pick_entry(f, wake, &h);
        if (!e)
            return NULL;
        int slot = h && state_shared(f->st) && !state_hosts_whole(f->st) &&
                   f->conf.per_host > 0;
        if ((j = frontier__qent_job(e))) {
            if (h)
                j->host = h;
            j->slot = slot;
            break;
        }
        /* Out of memory: the link is lost, and counted as left. */
        f->queued--;
        f->left++;
        if (slot)
            state_host_give(f->st, h->key);
    }
    f->queued--;
    struct crawl_host *h;
    if ((h = j->host)) {
        h->running++;
        h->last_start = f->now();
        if (h->delay > 0 || f->throttle || (j->kind == JOB_ROBOTS && f->robots)) {
            /* The delay runs from when the request goes out, which the
             * model says (frontier_started): until then the host hands
             * out nothing, however long its model takes to start it. A
             * request whose answer may bring a delay counts too, from
             * when it went out, not from when it was picked (a thread
             * that started late sent the next request too soon after
             * it): robots.txt's (Crawl-delay) and, with --auto-throttle,
             * a host's first (its latency sets the delay). */
            h->next_at = h->last_start + h->delay;
            h->starting++;
            j->pace_start = 1;
            f->timed = 1;
        }
    }
    return j;
}

/* Job j, which its host's pace waited on, has started or never will. */
static void started(struct frontier *f, struct crawl_job *j, int sent)
{
    struct crawl_host *h = j->host;
    if (!j->pace_start || !h)
        return;
    j->pace_start = 0;
    h->starting--;
    if (sent) {
        h->last_start = f->now();
        if (h->last_start + h->delay > h->next_at)
            h->next_at = h->last_start + h->delay;
    }
}

void frontier_started(struct frontier *f, struct crawl_job *j)
{
    started(f, j, 1);
}

int frontier_refill_begin(struct frontier *f)
{
    if (f->rf.on || !(f->st ? frontier__store_refill_begin(f) : frontier__spill_begin(f)))
        return 0;
    f->rf.on = 1;
    return 1;
}

void frontier_refill_read(struct frontier *f)
{
    if (f->st)
        frontier__store_refill_read(f);
    else
        frontier__spill_read(f);
}

int frontier_refill_end(struct frontier *f)
{
    int again = f->st ? frontier__store_refill_end(f) : frontier__spill_end(f);
    f->rf.on = 0;
    return again;
}

void frontier_refill(struct frontier *f)
{
    while (frontier_refill_begin(f)) {
        frontier_refill_read(f);
        if (!frontier_refill_end(f))
            break;
    }
}

int frontier_refilling(const struct frontier *f)
{
    return f->rf.on;
}

int frontier_lease_due(const struct frontier *f)
{
    return (!f->rf.on && f->st && frontier__store_lease_due(f)) || (f->nturn > 0 && !f->turn_on);
}

double frontier_lease_at(const struct frontier *f)
{
    return !f->rf.on && f->st ? frontier__store_lease_at(f) : 0;
}

/* --max-pages bounds the pages that start, listed ones included; a link
 * found before the bound was reached is dropped when its turn comes after
 * it, and counted as left. */
struct crawl_job *frontier_pick(struct frontier *f, double *wake)
{
    /* A shared crawl's --max-pages is kept by the server, over every worker. */
    long max = state_shared(f->st) ? 0 : f->conf.max_pages;
    struct crawl_job *j;
    if (f->nlater)
        later_release(f, wake);
    while ((j = pick(f, wake))) {
        if (j->kind == JOB_PAGE && !j->failed_early && !j->skip && j->res.attempts == 0) {
            if (j->found && max > 0 && f->started >= (size_t)max) {
                started(f, j, 0);
                if (j->host)
                    j->host->running--;
                f->left++;
                frontier__store_drop(f, j->mark);
                job_free(j);
                continue;
            }
            /* Read without the lock too (frontier_prepare). */
            __atomic_store_n(&f->started, f->started + 1, __ATOMIC_RELAXED);
        }
        break;
    }
    f->sh_paced = !j && f->queued > 0;
    return j;
}


/* Queues link entry e on host h's queue (NULL: the plain one). */
static void link_enqueue(struct frontier *f, struct crawl_host *h, struct job_qent *e)
{
    if (h) {
        frontier__qpush(&h->head, &h->tail, e);
        ring_add(f, h);
    } else {
        frontier__qpush(&f->head, &f->tail, e);
    }
    f->queued++;
}

/* Queues a link, found on page parent (or NULL), that passed every test
 * but robots.txt's; its request carries cond's validators (NULL: none).
 * Returns 0 or CRAWL_ENOMEM. */
static int add_link_job(struct frontier *f, struct crawl_host *h, const char *url,
                        const char *scope, const char *parent, int depth, uint64_t mark,
                        int hops, const struct frontier_cond *cond)
{
    struct job_qent *e = frontier__qlink_new(url, scope, parent, depth, mark, hops, cond, NULL);
    if (!e)
        return CRAWL_ENOMEM;
    link_enqueue(f, h, e);
    return 0;
}

static int regex_any(const regex_t *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (regexec(&v[i], s, 0, NULL, 0) == 0)
            return 1;
    return 0;
}

/* The rules a link is held to that need nothing but the configuration: an
 * http(s) URL, the listed URL's host (unless --span-hosts), --include and
 * --exclude. Returns JOB_LINK_PENDING with *p filled, its seen-set key
 * (p->seen) made (the caller frees it), or why the link is not followed
 * (JOB_LINK_NOT_HTTP, _SCOPE, _EXCLUDED, _NOMEM); *p is empty unless
 * JOB_LINK_PENDING. Touches nothing that changes during a run, so it
 * needs no lock. */
static enum job_verdict admit_rules(const struct frontier *f, const char *scope,
                                    const char *url, struct url_parts *p)
{
    const struct frontier_conf *o = &f->conf;
    int rc = url_split(url, p);
    if (rc != 0)
        return rc == CRAWL_ENOMEM ? JOB_LINK_NOMEM : JOB_LINK_NOT_HTTP;
    enum job_verdict v = JOB_LINK_PENDING;
    if (!o->span_hosts && scope && strcmp(p->host, scope) != 0)
        v = JOB_LINK_SCOPE;
    else if ((o->ninclude && !regex_any(o->include, o->ninclude, p->href)) ||
             (o->nexclude && regex_any(o->exclude, o->nexclude, p->href)))
        v = JOB_LINK_EXCLUDED;
    /* Seen by its normal form (or its canonical one, which parses its
     * query); fetched as the page wrote it. */
    else if (frontier_seen_hash(f, p->norm, &p->seen) != 0)
        v = JOB_LINK_NOMEM;
    if (v != JOB_LINK_PENDING)
        url_parts_free(p);
    return v;
}

/* Whether --max-pages pages have started; read without the lock too. */
static int max_pages_reached(const struct frontier *f)
{
    long max = f->conf.max_pages;
    return max > 0 && __atomic_load_n(&f->started, __ATOMIC_RELAXED) >= (size_t)max;
}

/* A link past admit_rules, found on page parent, goes to the store unless
 * --max-pages is reached or the store has seen it; *sent is set when the
 * store took it. Needs no lock. Returns its verdict. */
static enum job_verdict store_admit_parts(const struct frontier *f, const char *scope,
                                          const char *parent, const struct url_parts *p,
                                          int depth, int *sent)
{
    uint64_t hash;
    if (max_pages_reached(f))
        return JOB_LINK_MAX_PAGES;
    if (seen_key(f, p, &hash) != 0)
        return JOB_LINK_NOMEM;
    return frontier__store_send(f, p, scope ? scope : p->host, parent, depth, hash, sent);
}

/* A link past admit_rules, found on page parent, joins the crawl unless
 * --max-pages is reached, it was seen (in the store, the queue or the
 * spill file), or the queue holds --max-queue links. p stays the caller's.
 * hops: the redirects that led to it. Returns its verdict. */
static enum job_verdict admit_parts(struct frontier *f, const char *scope, const char *parent,
                                    const struct url_parts *p, int depth, int hops)
{
    const struct frontier_conf *o = &f->conf;
    uint64_t hash;
    int rc, sent = 0;
    if (f->st) {
        enum job_verdict v = store_admit_parts(f, scope, parent, p, depth, &sent);
        frontier__store_sent(f, sent, v == JOB_LINK_STORE);
        return v;
    }
    if (max_pages_reached(f))
        return JOB_LINK_MAX_PAGES;
    if (!scope)
        scope = p->host;
    if (seen_key(f, p, &hash) != 0)
        return JOB_LINK_NOMEM;
    /* Past --max-queue, a link new to the crawl is dropped and not kept in
     * the seen set: that set then grows with the links queued, not with
     * every link found (50 a page on an endless site), and a link dropped
     * may be queued when found again with room. */
    if (o->max_queue && f->queued + f->pending + f->spilled >= o->max_queue) {
        if (hset64_has(&f->seen, hash))
            return JOB_LINK_SEEN;
        f->dropped++;
        return JOB_LINK_QUEUE_FULL;
    }
    if ((rc = hset64_add(&f->seen, hash)) <= 0)
        return rc < 0 ? JOB_LINK_NOMEM : JOB_LINK_SEEN;
    if (f->spilled || f->queued + f->pending >= FRONTIER_MEM_JOBS)
        return frontier__spill_push(f, p->href, scope, parent, depth, hops) ? JOB_LINK_NOMEM
                                                                          : JOB_LINK_ADMITTED;
    return frontier__place(f, p, scope, parent, depth, 0, hops, NULL);
}

/* Admits url as a page at depth, found on page parent from a listed URL
 * of host scope (NULL: its own host) through hops redirects, when it passes scope, --include,
 * --exclude, the seen set, --max-pages and robots.txt. Returns its
 * verdict. */
static enum job_verdict admit(struct frontier *f, const char *scope, const char *parent,
                              const char *url, int depth, int hops)
{
    struct url_parts p;
    if (max_pages_reached(f))
        return JOB_LINK_MAX_PAGES;
    enum job_verdict v = admit_rules(f, scope, url, &p);
    if (v != JOB_LINK_PENDING)
        return v;
    v = admit_parts(f, scope, parent, &p, depth, hops);
    url_parts_free(&p);
    return v;
}

/* ---- the verdicts of a page's links (--links-out) ------------------------- */

/* Whether j's links are kept with their verdicts. */
static int keeps_verdicts(const struct frontier *f, const struct crawl_job *j)
{
    return f->conf.verdicts && j->kind == JOB_PAGE;
}

/* Moves j's links into j->verdicts, each undecided. Short of memory, j is
 * left as it was: its links go without verdicts. */
static void verdicts_take(struct crawl_job *j)
{
    if (j->verdicts || !j->nlinks)
        return;
    struct job_link *v = malloc(j->nlinks * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < j->nlinks; i++)
        v[i] = (struct job_link){ j->links[i], JOB_LINK_PENDING };
    free(j->links);
    j->links = NULL;
    j->verdicts = v;
    j->nverdicts = j->nlinks;
    j->nlinks = 0;
}

/* Gives every link of j not decided yet verdict v. */
static void verdicts_all(struct crawl_job *j, enum job_verdict v)
{
    for (size_t i = 0; i < j->nverdicts; i++)
        if (j->verdicts[i].verdict == JOB_LINK_PENDING)
            j->verdicts[i].verdict = v;
}

/* Gives the first undecided link of j from *at on verdict v, and moves *at
 * past it: the links frontier_prepare split are the undecided ones, in
 * their order. */
static void verdict_next(struct crawl_job *j, size_t *at, enum job_verdict v)
{
    while (*at < j->nverdicts && j->verdicts[*at].verdict != JOB_LINK_PENDING)
        (*at)++;
    if (*at < j->nverdicts)
        j->verdicts[(*at)++].verdict = v;
}

/* Page j's redirect, handed over by its fetch: the page it names joins the
 * crawl at j's own depth, as a link would (scope, --include, --exclude,
 * the URLs seen, robots.txt, its host's pace), unless the chain is
 * --max-redirs long already: then j fails as libcurl fails such a chain.
 * A --state crawl's store keeps no chain's length: it starts again. */
static void admit_redirect(struct frontier *f, struct crawl_job *j)
{
    struct url_parts *t = j->target;
    j->target = NULL;
    /* The page that redirected is the one its target was found on. */
    const char *parent = j->res.final_url ? j->res.final_url : j->url;
    if (j->hops >= f->conf.max_redirs) {
        char why[64];
        snprintf(why, sizeof why, "Maximum (%ld) redirects followed", f->conf.max_redirs);
        job_error_set(&j->res, CRAWL_FAIL_REDIRECTS, why);
    } else if (j->stored || (!f->st && frontier__cancelled(f))) {
        /* frontier_prepare sent its target to the store, or none is
         * admitted now. */
    } else if (t) {
        if (t->href)
            admit_parts(f, j->scope, parent, t, j->depth, j->hops + 1);
    } else {
        /* frontier_prepare was short of memory. */
        admit(f, j->scope, parent, j->res.location, j->depth, j->hops + 1);
    }
    if (t) {
        url_parts_free(t);
        free(t);
    }
}

/* Page j's redirect, when the frontier follows it and no store takes it,
 * split and held to the rules that need no lock (j->target), for
 * admit_redirect. */
static void prepare_target(const struct frontier *f, struct crawl_job *j)
{
    if (!j->res.location || j->target || j->hops >= f->conf.max_redirs ||
        !(j->target = calloc(1, sizeof *j->target)))
        return;
    if (max_pages_reached(f) ||
        admit_rules(f, j->scope, j->res.location, j->target) != JOB_LINK_PENDING)
        memset(j->target, 0, sizeof *j->target);   /* dropped, as admit would */
}

/* --state, --frontier: page j's links at depth (its own + 1; a sitemap's
 * URLs at 0), as split and each given its verdict, and its redirect's
 * target go to the store here, without the core's lock; frontier_done
 * then only tells the frontier what the store took (j->stored,
 * j->store_rc). A page's go even when the crawl is being cancelled: its
 * row commits it. */
static void store_links(const struct frontier *f, struct crawl_job *j, int depth)
{
    const char *parent = j->res.final_url ? j->res.final_url : j->url;
    int sent = 0, failed = 0;
    if (j->res.location && j->hops < f->conf.max_redirs) {
        struct url_parts p;
        enum job_verdict v = max_pages_reached(f) ? JOB_LINK_MAX_PAGES
                                                  : admit_rules(f, j->scope,
                                                                j->res.location, &p);
        if (v == JOB_LINK_PENDING) {
            v = store_admit_parts(f, j->scope, parent, &p, j->depth, &sent);
            url_parts_free(&p);
        }
        failed |= v == JOB_LINK_STORE;
    }
    size_t at = 0;
    for (size_t i = 0; i < j->nparts; i++) {
        enum job_verdict v = store_admit_parts(f, j->scope, parent, &j->parts[i], depth, &sent);
        failed |= v == JOB_LINK_STORE;
        verdict_next(j, &at, v);
        url_parts_free(&j->parts[i]);
    }
    free(j->parts);
    j->parts = NULL;
    j->nparts = 0;
    j->stored = sent ? 2 : 1;
    j->store_rc = failed ? -1 : 0;
}

/* Sitemap index j's sitemaps (its body, one URL a line), split into
 * j->maps; a sitemap an index lists is read for its pages only (the
 * protocol nests no deeper). Needs no lock. */
static void index_maps(struct crawl_job *j)
{
    size_t n = 0;
    for (const char *l = j->body; l && (l = strchr(l, '\n')); l++)
        n++;
    if (!n || j->depth != 0 || j->maps || !(j->maps = calloc(n, sizeof *j->maps)))
        return;
    for (char *line = j->body, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        if (url_split(line, &j->maps[j->nmaps]) == 0)
            j->nmaps++;     /* not an http(s) URL, or out of memory: skipped */
    }
}

void frontier_prepare(const struct frontier *f, struct crawl_job *j)
{
    if (j->kind == JOB_ROBOTS) {
        if (!j->rules && j->res.fail == CRAWL_FAIL_NONE && j->res.status >= 200 &&
            j->res.status < 300)
            j->rules = robots_parse(j->body ? j->body : "", j->body_len, f->agent);
        /* --sitemaps: its sitemaps, for its host's listed URLs. */
        if (f->sitemaps && !j->maps && j->host)
            frontier__sitemap_maps(j->rules, j->host->key, &j->maps, &j->nmaps);
        /* --state keeps what was read, before the rules apply. */
        j->store_rc = frontier__store_robots_save(f, j);
        return;
    }
    if (j->kind == JOB_SITEMAP)
        index_maps(j);
    if (j->res.location && j->kind == JOB_PAGE && !f->st)
        prepare_target(f, j);
    if (keeps_verdicts(f, j))
        verdicts_take(j);
    struct job_link *kept = j->verdicts;
    size_t nl = kept ? j->nverdicts : j->nlinks;
    /* A sitemap's URLs (at depth 0) go to the store unless the crawl is
     * being cancelled: they would not be admitted then. */
    int store = f->st && !j->stored &&
                (j->kind == JOB_PAGE || (j->kind == JOB_SITEMAP && !frontier__cancelled(f)));
    int depth = j->kind == JOB_PAGE ? j->depth + 1 : 0;
    if (j->parts || !nl) {
        if (store && (j->parts || j->res.location))
            store_links(f, j, depth);
        return;
    }
    if (j->kind == JOB_PAGE && j->depth >= f->conf.depth) {
        verdicts_all(j, JOB_LINK_DEPTH);
        if (store && j->res.location)
            store_links(f, j, depth);
        return;
    }
    struct url_parts *v = malloc(nl * sizeof *v);
    if (!v)
        return;     /* frontier_done splits them itself */
    size_t n = 0;
    for (size_t i = 0; i < nl; i++) {
        enum job_verdict d = admit_rules(f, j->scope, kept ? kept[i].url : j->links[i],
                                         &v[n]);
        if (d == JOB_LINK_PENDING)
            n++;    /* a link out of memory is lost, as under the lock */
        if (kept)
            kept[i].verdict = d;
        else
            free(j->links[i]);
    }
    free(j->links);
    j->links = NULL;
    j->nlinks = 0;
    j->parts = v;
    j->nparts = n;
    if (store)
        store_links(f, j, depth);
}

void frontier__admit_links(struct frontier *f, struct crawl_job *j, int depth, int cancelled_too)
{
    int go = cancelled_too || !frontier__cancelled(f);
    const char *parent = j->res.final_url ? j->res.final_url : j->url;
    size_t at = 0;
    if (keeps_verdicts(f, j))
        verdicts_take(j);
    for (size_t i = 0; i < j->nparts; i++) {
        verdict_next(j, &at, go ? admit_parts(f, j->scope, parent, &j->parts[i], depth, 0)
                                : JOB_LINK_CANCELLED);
        url_parts_free(&j->parts[i]);
    }
    free(j->parts);
    j->parts = NULL;
    j->nparts = 0;
    /* Those frontier_prepare did not split (it was short of memory). */
    for (; at < j->nverdicts; at++)
        if (j->verdicts[at].verdict == JOB_LINK_PENDING)
            j->verdicts[at].verdict = go ? admit(f, j->scope, parent, j->verdicts[at].url, depth, 0)
                                         : JOB_LINK_CANCELLED;
    for (size_t i = 0; i < j->nlinks; i++) {
        if (go)
            admit(f, j->scope, parent, j->links[i], depth, 0);
        free(j->links[i]);
    }
    free(j->links);
    j->links = NULL;
    j->nlinks = 0;
}

int frontier__cond_set(struct crawl_job *j, const struct frontier_cond *cond)
{
    if (cond && cond->etag && !(j->if_etag = strdup(cond->etag)))
        return CRAWL_ENOMEM;
    if (cond && cond->modified && !(j->if_modified = strdup(cond->modified)))
        return CRAWL_ENOMEM;
    return 0;
}

enum job_verdict frontier__place(struct frontier *f, const struct url_parts *pp, const char *scope,
                                 const char *parent, int depth, uint64_t mark, int hops,
                                 const struct frontier_cond *cond)
{
    const struct url_parts p = *pp;
    int rc = 0;
    struct crawl_host *h = NULL;
    if (f->per_host_queues && !(h = frontier__host_get(f, p.key)))
        return JOB_LINK_NOMEM;
    if (h && f->robots) {
        if (h->robots_state == ROBOTS_NONE && (rc = robots_start(f, h)) != 0)
            goto out;
        if (h->robots_state == ROBOTS_PENDING) {
            /* Held back with its path: robots_ready splits nothing. */
            struct job_qent *e = frontier__qlink_new(p.href, scope, parent, depth, mark, hops, cond,
                                                     p.path);
            if (!e) {
                rc = CRAWL_ENOMEM;
                goto out;
            }
            frontier__qpush(&h->pend, &h->pend_tail, e);
            f->pending++;
            goto out;
        }
        if (!robots_allowed(h->robots, p.path)) {
            f->robots_blocked++;
            frontier__store_drop(f, mark);
            return JOB_LINK_ROBOTS;
        }
    }
    rc = add_link_job(f, h, p.href, scope, parent, depth, mark, hops, cond);
out:
    return rc ? JOB_LINK_NOMEM : JOB_LINK_ADMITTED;
}

void frontier__robots_rules(struct frontier *f, struct crawl_host *h, enum crawl_fail fail,
                            const char *error, long st, struct robots *parsed)
{
    if (fail == CRAWL_FAIL_NONE && st >= 200 && st < 300) {
        h->robots = parsed;
        if (f->robots)
            frontier__crawl_delay(f, h);
    } else if (fail == CRAWL_FAIL_NONE && st >= 400 && st < 500)
        h->robots = robots_all(1);       /* no robots.txt: everything allowed */
    else {
        /* Unreachable: nothing allowed (RFC 9309, 2.3.1.4), and the rows
         * say so rather than blame rules the file may not have. */
        char why[160], what[96];
        h->robots = robots_all(0);
        if (fail == CRAWL_FAIL_CANCELLED && error)
            snprintf(what, sizeof what, "%s", error);   /* why it was cancelled */
        else if (fail != CRAWL_FAIL_NONE)
            snprintf(what, sizeof what, "%s", job_fail_name(fail));
        else
            snprintf(what, sizeof what, "%ld", st);
        snprintf(why, sizeof why, "robots.txt unreachable (%s): host treated as disallowed", what);
        h->robots_why = strdup(why);    /* NULL, out of memory: the plain text */
    }
    h->robots_state = ROBOTS_READY;
}

/* Host h's robots.txt rules are in: the listed jobs waiting in its queue
 * and the links held back are held to them, by the paths each was queued
 * with (split without the lock): nothing is parsed here. An entry without
 * one is not fetched. */
static void robots_sort(struct frontier *f, struct crawl_host *h)
{
    /* Listed jobs already queued: drop the forbidden ones from the queue. */
    struct job_qent *keep_head = NULL, *keep_tail = NULL, *e;
    while ((e = frontier__qpop(&h->head, &h->tail))) {
        struct crawl_job *j = e->job;
        const char *path = frontier__qent_path(e);
        /* A sitemap is read whatever the rules say of its path. */
        int allowed = (j && j->kind == JOB_SITEMAP) || (path && robots_allowed(h->robots, path));
        if (j) {
            free(j->path);
            j->path = NULL;
        }
        if (allowed) {
            frontier__qpush(&keep_head, &keep_tail, e);
            continue;
        }
        f->queued--;
        if (j) {
            fail_robots(f, j, h);
        } else {
            f->robots_blocked++;
            frontier__store_drop(f, frontier__qent_mark(e));
            frontier__qent_free(e);
        }
    }
    h->head = keep_head;
    h->tail = keep_tail;
    if (!h->head)
        ring_remove(f, h);

    /* Links held back: those allowed go to the queue as they are. */
    while ((e = frontier__qpop(&h->pend, &h->pend_tail))) {
        f->pending--;
        const char *path = frontier__qent_path(e);
        if (path && robots_allowed(h->robots, path)) {
            link_enqueue(f, h, e);
        } else {
            f->robots_blocked++;
            frontier__store_drop(f, frontier__qent_mark(e));
            frontier__qent_free(e);
        }
    }
}

/* The robots.txt of h is in (or failed), fetched by rj: from now on its
 * rules decide, and its sitemaps (split by frontier_prepare) are read for
 * its listed URLs, now or once one is listed. */
static void robots_ready(struct frontier *f, struct crawl_host *h, struct crawl_job *rj)
{
    /* --state: a fetch the cancellation stopped decides nothing; the
     * host's pages stay queued in the store for the next run. */
    if (f->st && rj->res.fail == CRAWL_FAIL_CANCELLED && frontier__cancelled(f))
        return;
    frontier__robots_rules(f, h, rj->res.fail, rj->res.error, rj->res.status, rj->rules);
    rj->rules = NULL;   /* the host's now, or never made */
    f->robots_fetched++;
    if (rj->store_rc)
        frontier__store_fail(f);
    if (f->robots) {
        robots_sort(f, h);
    } else {
        /* Read for its Sitemap lines only (--no-robots): no rules. */
        robots_free(h->robots);
        h->robots = robots_all(1);
        free(h->robots_why);
        h->robots_why = NULL;
    }
    frontier__maps_give(h, &rj->maps, &rj->nmaps);
    if (f->sitemaps && h->scope)
        frontier__sitemaps_start(f, h);
}

int frontier_done_is_noop(const struct frontier *f, const struct crawl_job *j)
{
    /* Verdicts but no parts: frontier_prepare was short of memory, and
     * frontier_done splits the links. */
    return j->kind == JOB_PAGE && !j->host && !j->pace_start && !j->nlinks && !j->parts &&
           !(j->verdicts && !j->parts) && !j->res.location && !f->st;
}

void frontier_done(struct frontier *f, struct crawl_job *j)
{
    struct crawl_host *h = j->host;
    started(f, j, 0);
    if (h) {
        h->running--;
        slot_give(f, j);
        if (j->kind == JOB_PAGE)
            frontier__observe(f, h, j);
    }
    if (j->kind == JOB_ROBOTS) {
        robots_ready(f, j->host, j);
        frontier__maps_free(j->maps, j->nmaps);
        j->maps = NULL;
        j->nmaps = 0;
        free(j->body);
        j->body = NULL;
        return;
    }
    if (j->kind == JOB_SITEMAP) {
        frontier__sitemap_done(f, j);
        return;
    }
    if (j->res.location)
        admit_redirect(f, j);
    if (j->stored) {
        frontier__store_sent(f, j->stored == 2, j->store_rc != 0);
    } else if (j->depth < f->conf.depth) {
        /* --state: a page's row commits it, so its links must be in the
         * store even when the crawl is being cancelled. */
        frontier__admit_links(f, j, j->depth + 1, f->st != NULL);
        return;
    } else if (keeps_verdicts(f, j)) {
        verdicts_take(j);
        verdicts_all(j, JOB_LINK_DEPTH);
    }
    for (size_t i = 0; i < j->nlinks; i++)
        free(j->links[i]);
    free(j->links);
    j->links = NULL;
    j->nlinks = 0;
}

/* Moves every job of list (head, tail) to the end of list (lh, lt). */
static void take_all(struct crawl_job **head, struct crawl_job **tail,
                     struct crawl_job **lh, struct crawl_job **lt)
{
    struct crawl_job *j;
    while ((j = dequeue(head, tail))) {
        j->host = NULL;
        enqueue(lh, lt, j);
    }
}

/* Moves every job of queue (head, tail) to the end of list (lh, lt); its
 * links, never started, are counted as left. */
static void take_queue(struct frontier *f, struct job_qent **head, struct job_qent **tail,
                       struct crawl_job **lh, struct crawl_job **lt)
{
    struct job_qent *e;
    while ((e = frontier__qpop(head, tail))) {
        if (e->job) {
            e->job->host = NULL;
            enqueue(lh, lt, e->job);
        } else {
            f->left++;
            frontier__qent_free(e);
        }
    }
}

struct crawl_job *frontier_drain(struct frontier *f)
{
    struct crawl_job *lh = NULL, *lt = NULL;
    /* Robots jobs belong to their hosts: they are freed with them. */
    while (dequeue(&f->rhead, &f->rtail))
        ;
    take_all(&f->fhead, &f->ftail, &lh, &lt);
    take_queue(f, &f->head, &f->tail, &lh, &lt);
    /* Waiting retries: pages get their rows; robots jobs stay their hosts'. */
    while (f->nlater) {
        struct crawl_job *w = later_pop(f);
        if (w->kind != JOB_ROBOTS) {
            w->host = NULL;
            enqueue(&lh, &lt, w);
        }
    }
    for (size_t i = 0; i < f->hosts.cap; i++) {
        struct crawl_host *h = f->hosts.slot[i].item;
        if (h) {
            take_queue(f, &h->head, &h->tail, &lh, &lt);
            ring_remove(f, h);
            for (struct job_qent *e; (e = frontier__qpop(&h->pend, &h->pend_tail)); f->left++)
                frontier__qent_free(e);
        }
    }
    f->queued = 0;
    f->pending = 0;
    frontier__spill_drop(f);
    return lh;
}

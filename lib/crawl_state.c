/* crawl_state.c: the core's side of --state. The list is read into the
 * store before the crawl starts (so that a resumed run can tell whether it
 * was given the same one); from then on the frontier takes every page from
 * the store (frontier_store.c), and a page is done in the store only once
 * its row is in the output file: the sink commits the marks of the rows it
 * wrote together with the file's length (crawl_state_commit), and a resumed
 * run cuts the file back to the length last committed. A row is thus
 * either in the file and its page done, or cut off and its page fetched
 * again: every page once across the runs, whatever killed them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "crawl_internal.h"
#include "frontier.h"
#include "state.h"
#include "strbuf.h"
#include "url.h"

/* Listed lines between two commits of the seeding's progress. */
#define SEED_BATCH 4096

/* The crawl stops on the store's error: a shared crawl whose server is
 * gone (or gave this worker's pages to others) cannot commit a row, and a
 * store that lost the crawl's data (a file that failed a read or a write,
 * a server that lost its keys or holds others) can keep no promise of
 * every page once. Writes nothing: safe with the core's lock held. */
static void state_stop(struct crawl *c)
{
    int f = state_failure(c->st);
    int why = f == STATE_ELOST || (!f && !state_shared(c->st)) ? CRAWL_ESTORE : CRAWL_EFRONTIER;
    int none = 0;
    if (atomic_compare_exchange_strong(&c->st_lost, &none, why))
        crawl_cancel(c, why == CRAWL_EFRONTIER ? CRAWL_CANCEL_FRONTIER : CRAWL_CANCEL_STORE);
}

/* Says the store's error, once. */
static void state_say(struct crawl *c)
{
    crawl_warn_once(c, "%s: %s", state_shared(c->st) ? "frontier" : "state",
                    state_error(c->st));
}

void crawl__state_warn(struct crawl *c)
{
    state_say(c);
    state_stop(c);
}

void crawl__state_warn_locked(struct crawl *c)
{
    atomic_store(&c->st_unsaid, 1);
    state_stop(c);
}

void crawl__state_said(struct crawl *c)
{
    if (atomic_load_explicit(&c->st_unsaid, memory_order_relaxed) &&
        atomic_exchange(&c->st_unsaid, 0))
        state_say(c);
}

int crawl_state_lost(struct crawl *c)
{
    return atomic_load(&c->st_lost);
}

const char *crawl_state_error(struct crawl *c)
{
    return state_error(c->st);
}

int crawl_state_cut(struct crawl *c, uint64_t *offset)
{
    int f = c->st ? state_failure(c->st) : 0;
    if (f == STATE_ELAPSED)
        *offset = c->st_offset;
    else if (f == STATE_EBACK)
        *offset = state_back_offset(c->st);
    else
        return 0;
    return f == STATE_EBACK ? 2 : 1;
}

/* The pass a store is in (1, or 2 and on for recrawls): where its pages
 * start in a file's queue, when it started (seconds since 1970), and
 * --recrawl-older's milliseconds. */
struct pass {
    int64_t n, first, started, older;
};

/* Reads st's pass into *p. 0 or -1. */
static int pass_read(struct state *st, struct pass *p)
{
    *p = (struct pass){ .n = 1, .first = 1 };
    return state_get(st, "pass", &p->n) != 0 || state_get(st, "pass_first", &p->first) != 0 ||
           state_get(st, "pass_started", &p->started) != 0 ||
           state_get(st, "pass_older", &p->older) != 0 ? -1 : 0;
}

/* Tells the frontier of a recrawl pass: where its pages start, and which
 * are not due (--recrawl-older: fetched less than that before it began). */
static void pass_begin(struct crawl *c, const struct pass *p)
{
    c->st_pass = p->n;
    if (p->n > 1)
        frontier_recrawl(c->fr, (uint64_t)p->first,
                         p->older > 0 ? (double)p->started - (double)p->older / 1000 : 0);
}

/* state_conf's cancelled: the store's waits end with the crawl's. */
static int store_cancelled(void *data)
{
    return crawl_is_cancelled(data);
}

static int store_listed(void *data, struct crawl *c, const char *url, const char *source,
                        long line, const char *problem, const struct url_parts *u);
static int store_back(void *data, struct crawl *c, struct crawl_job *job);

int crawl_state_open(struct crawl *c, const char *path, const char *opts,
                     const struct state_conf *conf, char *why, size_t n)
{
    enum state_phase ph;
    struct state *st;
    struct state_conf sc;
    if (conf) {
        sc = *conf;
        sc.cancelled = store_cancelled;
        sc.cancel_data = c;
    }
    int orc = state_open(&st, path, opts, conf ? &sc : NULL, &ph, why, n);
    if (orc != 0)
        return orc == STATE_EUNREACHABLE ? CRAWL_EFRONTIER
               : orc == STATE_ELOST      ? CRAWL_ESTORE : CRAWL_ESTATE;
    int64_t off = 0;
    struct pass pass;
    long fetched = state_fetched(st);
    if (state_get(st, "offset", &off) != 0 || state_get(st, "seed_n", &c->seed_n) != 0 ||
        state_get(st, "seed_hash", &c->seed_hash) != 0 ||
        state_get(st, "seed_done", &c->seed_done) != 0 || pass_read(st, &pass) != 0 ||
        fetched < 0) {
        snprintf(why, n, "%s", state_error(st));
        int f = state_shared(st) ? state_failure(st) : STATE_ELOST;
        state_close(st);
        /* A file that fails a read now holds what the crawl did not write;
         * a server that fails one lost the crawl or stopped answering. */
        return f == STATE_ELOST ? CRAWL_ESTORE : f ? CRAWL_EFRONTIER : CRAWL_ESTATE;
    }
    c->st = st;
    c->st_offset = (uint64_t)off;
    frontier_use_store(c->fr, st, (size_t)fetched);
    pass_begin(c, &pass);
    static const struct crawl_hook hook = { .listed = store_listed, .back = store_back };
    crawl_hook(c, CRAWL_HOOK_STORE, &hook, NULL);
    return ph == STATE_NEW ? CRAWL_STATE_NEW : ph == STATE_FINISHED ? CRAWL_STATE_FINISHED
                                                                     : CRAWL_STATE_RESUMED;
}

/* The running hash of the listed lines: their text and line numbers, in
 * order. */
static uint64_t mix(uint64_t h, const char *url, long line)
{
    h = (h ^ hset_hash(url, strlen(url))) * 0x9e3779b97f4a7c15ULL;
    return (h ^ (uint64_t)line) * 0xbf58476d1ce4e5b9ULL;
}

/* Commits what the seeding added, with how far it got. */
static int seed_commit(struct crawl *c, int done)
{
    if (state_set(c->st, "seed_n", (int64_t)c->listed) != 0 ||
        state_set(c->st, "seed_hash", (int64_t)c->listed_hash) != 0 ||
        state_set(c->st, "seed_done", done) != 0 ||
        state_commit(c->st, NULL, 0, c->st_offset) != 0) {
        crawl__state_warn(c);
        return CRAWL_ESTATE;
    }
    return 0;
}

/* The listed hook: a listed line goes into the store as the list is read;
 * it gets its row when the frontier loads it. Returns 1 (the store took
 * it), CRAWL_ENOMEM or CRAWL_ESTATE. */
static int store_listed(void *data, struct crawl *c, const char *url, const char *source,
                        long line, const char *problem, const struct url_parts *u)
{
    int rc = 1;
    pthread_mutex_lock(&c->lock);
    uint64_t i = c->listed++;
    c->listed_hash = mix(c->listed_hash, url, line);
    pthread_mutex_unlock(&c->lock);
    /* The lines an earlier run stored are skipped; they must be these. */
    if ((int64_t)i < c->seed_n) {
        if ((int64_t)i == c->seed_n - 1 && (int64_t)c->listed_hash != c->seed_hash)
            c->seed_differs = 1;
        return rc;
    }
    if (c->seed_differs || c->seed_done) {
        c->seed_differs = 1;
        return rc;
    }
    struct state_page p = { .url = url, .source = source, .why = problem, .line = line };
    uint64_t id;
    if (!problem && u) {
        /* The key of its page: the seen set's, canonical with --canonical
         * (made as it was split); its host's, as the frontier paces it. */
        p.hash = u->seen;
        if (!p.hash && frontier_seen_hash(c->fr, u->norm, &p.hash) < 0)
            return CRAWL_ENOMEM;
        p.host = u->key;
    }
    if (state_queue_add(c->st, &p, &id) != 0)
        goto err;
    /* Seen now, so that no link makes a second job of it. */
    if (p.hash && c->opts->depth > 0 && state_seen_add(c->st, p.hash) < 0)
        goto err;
    if (c->listed % SEED_BATCH == 0 && seed_commit(c, 0) != 0)
        return CRAWL_ESTATE;
    return rc;
err:
    crawl__state_warn(c);
    return CRAWL_ESTATE;
}

int crawl_state_seed(struct crawl *c, char *why, size_t n)
{
    int rc = crawl_fill(c);
    if (rc < 0) {
        snprintf(why, n, "%s", rc == CRAWL_ESTATE ? state_error(c->st) : crawl_strerror(rc));
        return rc;
    }
    if (c->seed_differs || (int64_t)c->listed < c->seed_n) {
        snprintf(why, n, "started with another list of URLs (%lld listed then, %llu now)",
                 (long long)c->seed_n, (unsigned long long)c->listed);
        return CRAWL_ESTATE;
    }
    if (seed_commit(c, 1) != 0) {
        snprintf(why, n, "%s", state_error(c->st));
        return CRAWL_ESTATE;
    }
    return 0;
}

uint64_t crawl_state_offset(const struct crawl *c)
{
    return c->st_offset;
}

int crawl_state_commit(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    struct crawl *c = data;
    if (frontier_store_flush(c->fr) < 0 || state_commit(c->st, marks, n, offset) != 0) {
        crawl__state_warn(c);
        return -EIO;
    }
    c->st_offset = offset;
    return 0;
}

long crawl_state_fetched(struct crawl *c)
{
    return c->st ? state_fetched(c->st) : 0;
}

int crawl_state_recrawl(struct crawl *c, double older, long *n, char *why, size_t len)
{
    int rc = state_recrawl(c->st, older, n);
    struct pass p;
    if (rc > 0 && !state_shared(c->st) && state_commit(c->st, NULL, 0, c->st_offset) != 0)
        rc = -1;
    if (rc >= 0 && pass_read(c->st, &p) != 0)
        rc = -1;
    if (rc < 0) {
        snprintf(why, len, "%s", state_error(c->st));
        crawl__state_warn(c);
        return CRAWL_ESTATE;
    }
    /* The pass's pages are queued: the frontier takes them from its start. */
    frontier_use_store(c->fr, c->st, 0);
    pass_begin(c, &p);
    return rc;
}

int64_t crawl_state_pass(const struct crawl *c)
{
    return c->st_pass;
}

int crawl_state_finish(struct crawl *c)
{
    if (!c->st)
        return 0;
    /* Pages dropped since the last row's commit. */
    int dropped = frontier_store_flush(c->fr);
    if (dropped < 0 || (dropped > 0 && state_commit(c->st, NULL, 0, c->st_offset) != 0)) {
        crawl__state_warn(c);
        return CRAWL_ESTATE;
    }
    if (!c->st_complete || state_queue_left(c->st) != 0)
        return 0;
    if (state_set(c->st, "finished", 1) != 0 ||
        state_commit(c->st, NULL, 0, c->st_offset) != 0) {
        crawl__state_warn(c);
        return CRAWL_ESTATE;
    }
    return 1;
}

/* The seen-set key of url, that of what the store keeps of its page; 0
 * when it has none (not a URL, out of memory). */
static uint64_t url_hash(struct crawl *c, const char *url)
{
    struct url_parts u;
    uint64_t h = 0;
    if (url_split(url, &u) != 0)
        return 0;
    if (frontier_seen_hash(c->fr, u.norm, &h) != 0)
        h = 0;
    url_parts_free(&u);
    return h;
}

/* The links of record v (NUL-terminated, one after the other) as job's,
 * for the frontier to admit as if the page had given them. */
static void links_from(struct crawl_job *job, const struct state_valid *v)
{
    size_t n = 0;
    for (size_t at = 0; at < v->links_len; at += strlen(v->links + at) + 1)
        n++;
    if (!n || !(job->links = calloc(n, sizeof *job->links)))
        return;
    for (size_t at = 0; at < v->links_len; at += strlen(v->links + at) + 1)
        if ((job->links[job->nlinks] = strdup(v->links + at)))
            job->nlinks++;
}

/* What the store keeps of page job, fetched, for the next pass: a whole
 * page's validators and links (those it gave, when it was parsed for
 * them); a 304's, which keep those it had (RFC 9110, 15.4.5: the page is
 * the one last fetched), and its links from the store become the job's,
 * to be admitted again; anything else keeps nothing. */
static void keep_page(struct crawl *c, struct crawl_job *job)
{
    const struct crawl_result *r = &job->res;
    uint64_t h = url_hash(c, job->url);
    int whole = r->fail == CRAWL_FAIL_NONE && r->status >= 200 && r->status < 300;
    int same = r->fail == CRAWL_FAIL_NONE && r->not_modified;
    struct state_valid v = { .fetched_at = (int64_t)time(NULL) }, had;
    char *buf = NULL;
    struct strbuf links = { 0 };
    int rc = 0;
    if (!h)
        return;
    if (whole) {
        v.etag = r->etag;
        v.modified = r->last_modified;
        v.has_links = job->depth < c->opts->depth;
        for (size_t i = 0; i < job->nlinks; i++)
            sb_add(&links, job->links[i], strlen(job->links[i]) + 1);
        v.links = links.data;
        v.links_len = links.nomem ? 0 : links.len;
        v.has_links &= !links.nomem;
        rc = state_valid_put(c->st, h, &v);
    } else if (same && (rc = state_valid_get(c->st, h, &had, &buf)) == 1) {
        if (had.has_links && job->depth < c->opts->depth && !job->links)
            links_from(job, &had);
        v.etag = r->etag ? r->etag : had.etag;
        v.modified = r->last_modified ? r->last_modified : had.modified;
        v.has_links = had.has_links;
        v.links = had.links;
        v.links_len = had.links_len;
        rc = state_valid_put(c->st, h, &v);
    } else if (!same && c->st_pass > 1) {
        rc = state_valid_put(c->st, h, NULL);
    }
    free(buf);
    sb_free(&links);
    if (rc < 0)
        crawl__state_warn(c);
}

/* A page of a recrawl pass not due again (--recrawl-older): it ends
 * without a fetch or a row, done in the store, and the links the store
 * kept of it are admitted as if it had given them. */
static void skip_page(struct crawl *c, struct crawl_job *job)
{
    struct state_valid had;
    char *buf = NULL;
    uint64_t h = url_hash(c, job->url);
    int rc = h ? state_valid_get(c->st, h, &had, &buf) : 0;
    if (rc == 1 && had.has_links && job->depth < c->opts->depth)
        links_from(job, &had);
    free(buf);
    if (rc < 0 || (job->mark && state_drop(c->st, job->mark) != 0))
        crawl__state_warn(c);
    crawl_drop(c, job);
}

/* The back hook: a page that was not fetched (cancelled, no thread or
 * worker for it) gets no row and stays queued in the store, the next run's;
 * the others carry their page's id, marked fetched (and failed), to the
 * row that commits them. */
static int store_back(void *data, struct crawl *c, struct crawl_job *job)
{
    if (job->kind != JOB_PAGE)
        return 0;
    if (job->skip) {
        skip_page(c, job);
        return 1;
    }
    int unfinished = job->unrun ||
                     (job->res.fail == CRAWL_FAIL_CANCELLED && crawl_is_cancelled(c));
    if (job->mark && !job->failed_early)
        job->mark |= STATE_FETCHED;
    if (job->mark && job->res.fail != CRAWL_FAIL_NONE)
        job->mark |= STATE_FAILED;
    if (!unfinished) {
        keep_page(c, job);
        return 0;
    }
    crawl_drop(c, job);
    return 1;
}

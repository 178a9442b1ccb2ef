/* persist.c: --state and --frontier as a hook user (hooks.h). The list is
 * read into the store before the crawl starts (so that a resumed run can
 * tell whether it was given the same one); from then on the frontier takes
 * every page from the store (frontier_store.c), and a page is done in the
 * store only once its row is in the output file: the sink commits the
 * marks of the rows it wrote together with the file's length
 * (persist_commit), and a resumed run cuts the file back to the length
 * last committed. A row is thus either in the file and its page done, or
 * cut off and its page fetched again: every page once across the runs,
 * whatever killed them. The core knows none of this: it reads the
 * frontier, whose home this gives it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "crawl.h"
#include "frontier.h"
#include "hooks.h"
#include "hset.h"
#include "model.h"
#include "persist.h"
#include "state.h"
#include "strbuf.h"
#include "url.h"

/* Listed lines between two commits of the seeding's progress. */
#define SEED_BATCH 4096

struct persist {
    struct crawl *c;
    struct frontier *fr;      /* the crawl's, whose home st is */
    struct state *st;         /* the queue, the seen set, robots.txt and
                               * which pages have their row */
    pthread_mutex_t lock;     /* guards listed and listed_hash */
    uint64_t listed;          /* listed lines read in this run */
    uint64_t listed_hash;     /* ... their running hash */
    int64_t seed_n, seed_hash;  /* the lines an earlier run put in the store */
    int64_t seed_done;        /* ... and whether that was the whole list */
    int    seed_differs;      /* this run's list is not that one */
    uint64_t offset;          /* the output's bytes as last committed */
    int    complete;          /* the run took every page the store held */
    int64_t pass;             /* the store's pass: 1, or 2 and on for recrawls */
};

/* The persist a call's crawl was opened with (persist_open). */
static struct persist *of(struct crawl *c)
{
    return crawl_hook_data(c, CRAWL_HOOK_STORE);
}

const char *persist_error(struct crawl *c)
{
    struct persist *p = of(c);
    return p ? state_error(p->st) : "";
}

int persist_cut(struct crawl *c, uint64_t *offset)
{
    struct persist *p = of(c);
    int f = p ? state_failure(p->st) : 0;
    if (f == STATE_EBACK) {
        *offset = state_back_offset(p->st);
        return 2;
    }
    if (f != STATE_ELAPSED)
        return 0;
    /* The server's word before this process's: a commit whose reply was
     * lost (the link cut as it came back) has its pages done there, and
     * its rows stay. */
    if (state_lapsed_offset(p->st, offset) != 0)
        *offset = p->offset;
    return 1;
}

/* The pass a store is in (1, or 2 and on for recrawls): where its pages
 * start in a file's queue, when it started (seconds since 1970), and
 * --recrawl-older's milliseconds. */
struct pass {
    int64_t n, first, started, older;
};

/* Reads st's pass into *ps. 0 or -1. */
static int pass_read(struct state *st, struct pass *ps)
{
    *ps = (struct pass){ .n = 1, .first = 1 };
    return state_get(st, "pass", &ps->n) != 0 || state_get(st, "pass_first", &ps->first) != 0 ||
           state_get(st, "pass_started", &ps->started) != 0 ||
           state_get(st, "pass_older", &ps->older) != 0 ? -1 : 0;
}

/* Tells the frontier of a recrawl pass: where its pages start, and which
 * are not due (--recrawl-older: fetched less than that before it began). */
static void pass_begin(struct persist *p, const struct pass *ps)
{
    p->pass = ps->n;
    if (ps->n > 1)
        frontier_recrawl(p->fr, (uint64_t)ps->first,
                         ps->older > 0 ? (double)ps->started - (double)ps->older / 1000 : 0);
}

/* state_conf's cancelled: the store's waits end with the crawl's. */
static int store_cancelled(void *data)
{
    return crawl_is_cancelled(data);
}

static int store_listed(void *data, struct crawl *c, const char *url, const char *source,
                        long line, const char *problem, const struct url_parts *u);
static int store_back(void *data, struct crawl *c, struct crawl_job *job);

/* The stop hook: whether this run took every page the store held. */
static void store_stop(void *data, struct crawl *c, int rc)
{
    struct persist *p = data;
    p->complete = crawl_took_all(c);
}

static void persist_free(void *data)
{
    struct persist *p = data;
    state_close(p->st);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Reads what an earlier run left in st into p. 0 or -1. */
static int resume(struct persist *p, struct state *st, struct pass *ps)
{
    int64_t off = 0;
    if (state_get(st, "offset", &off) != 0 || state_get(st, "seed_n", &p->seed_n) != 0 ||
        state_get(st, "seed_hash", &p->seed_hash) != 0 ||
        state_get(st, "seed_done", &p->seed_done) != 0 || pass_read(st, ps) != 0)
        return -1;
    p->offset = (uint64_t)off;
    return 0;
}

int persist_open(struct crawl *c, const char *path, const char *opts,
                 const struct state_conf *conf, char *why, size_t n)
{
    enum state_phase ph;
    struct state *st;
    struct state_conf sc;
    struct persist *p = calloc(1, sizeof *p);
    if (!p || pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        snprintf(why, n, "out of memory");
        return CRAWL_ESTATE;
    }
    if (conf) {
        sc = *conf;
        sc.cancelled = store_cancelled;
        sc.cancel_data = c;
    }
    int orc = state_open(&st, path, opts, conf ? &sc : NULL, &ph, why, n);
    if (orc != 0) {
        persist_free(p);
        return orc == STATE_EUNREACHABLE ? CRAWL_EFRONTIER
               : orc == STATE_ELOST      ? CRAWL_ESTORE : CRAWL_ESTATE;
    }
    struct pass pass;
    long fetched = state_fetched(st);
    if (resume(p, st, &pass) != 0 || fetched < 0) {
        snprintf(why, n, "%s", state_error(st));
        int f = state_shared(st) ? state_failure(st) : STATE_ELOST;
        state_close(st);
        persist_free(p);
        /* A file that fails a read now holds what the crawl did not write;
         * a server that fails one lost the crawl or stopped answering. */
        return f == STATE_ELOST ? CRAWL_ESTORE : f ? CRAWL_EFRONTIER : CRAWL_ESTATE;
    }
    p->c = c;
    p->st = st;
    p->fr = crawl_frontier(c);
    frontier_use_store(p->fr, st, (size_t)fetched);
    pass_begin(p, &pass);
    static const struct crawl_hook hook = {
        .listed = store_listed, .back = store_back, .stop = store_stop, .free = persist_free,
    };
    crawl_hook(c, CRAWL_HOOK_STORE, &hook, p);
    return ph == STATE_NEW ? PERSIST_NEW : ph == STATE_FINISHED ? PERSIST_FINISHED
                                                                 : PERSIST_RESUMED;
}

/* The running hash of the listed lines: their text and line numbers, in
 * order. */
static uint64_t mix(uint64_t h, const char *url, long line)
{
    h = (h ^ hset_hash(url, strlen(url))) * 0x9e3779b97f4a7c15ULL;
    return (h ^ (uint64_t)line) * 0xbf58476d1ce4e5b9ULL;
}

/* Commits what the seeding added, with how far it got. */
static int seed_commit(struct persist *p, int done)
{
    if (state_set(p->st, "seed_n", (int64_t)p->listed) != 0 ||
        state_set(p->st, "seed_hash", (int64_t)p->listed_hash) != 0 ||
        state_set(p->st, "seed_done", done) != 0 ||
        state_commit(p->st, NULL, 0, p->offset) != 0) {
        crawl_frontier_failed(p->c);
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
    struct persist *p = data;
    int rc = 1;
    pthread_mutex_lock(&p->lock);
    uint64_t i = p->listed++;
    p->listed_hash = mix(p->listed_hash, url, line);
    pthread_mutex_unlock(&p->lock);
    /* The lines an earlier run stored are skipped; they must be these. */
    if ((int64_t)i < p->seed_n) {
        if ((int64_t)i == p->seed_n - 1 && (int64_t)p->listed_hash != p->seed_hash)
            p->seed_differs = 1;
        return rc;
    }
    if (p->seed_differs || p->seed_done) {
        p->seed_differs = 1;
        return rc;
    }
    struct state_page pg = { .url = url, .source = source, .why = problem, .line = line };
    uint64_t id;
    if (!problem && u) {
        /* The key of its page: the seen set's, canonical with --canonical
         * (made as it was split); its host's, as the frontier paces it. */
        pg.hash = u->seen;
        if (!pg.hash && frontier_seen_hash(p->fr, u->norm, &pg.hash) < 0)
            return CRAWL_ENOMEM;
        pg.host = u->key;
    }
    if (state_queue_add(p->st, &pg, &id) != 0)
        goto err;
    /* Seen now, so that no link makes a second job of it. */
    if (pg.hash && crawl_options(c)->depth > 0 && state_seen_add(p->st, pg.hash) < 0)
        goto err;
    if (p->listed % SEED_BATCH == 0 && seed_commit(p, 0) != 0)
        return CRAWL_ESTATE;
    return rc;
err:
    crawl_frontier_failed(p->c);
    return CRAWL_ESTATE;
}

int persist_seed(struct crawl *c, char *why, size_t n)
{
    struct persist *p = of(c);
    int rc = crawl_fill(c);
    if (rc < 0) {
        snprintf(why, n, "%s", rc == CRAWL_ESTATE ? state_error(p->st) : crawl_strerror(rc));
        return rc;
    }
    if (p->seed_differs || (int64_t)p->listed < p->seed_n) {
        snprintf(why, n, "started with another list of URLs (%lld listed then, %llu now)",
                 (long long)p->seed_n, (unsigned long long)p->listed);
        return CRAWL_ESTATE;
    }
    if (seed_commit(p, 1) != 0) {
        snprintf(why, n, "%s", state_error(p->st));
        return CRAWL_ESTATE;
    }
    return 0;
}

uint64_t persist_offset(struct crawl *c)
{
    struct persist *p = of(c);
    return p ? p->offset : 0;
}

int persist_commit(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    struct persist *p = of(data);
    if (frontier_store_flush(p->fr) < 0 || state_commit(p->st, marks, n, offset) != 0) {
        crawl_frontier_failed(p->c);
        return -EIO;
    }
    p->offset = offset;
    return 0;
}

long persist_fetched(struct crawl *c)
{
    struct persist *p = of(c);
    return p ? state_fetched(p->st) : 0;
}

int persist_recrawl(struct crawl *c, double older, long *n, char *why, size_t len)
{
    struct persist *p = of(c);
    int rc = state_recrawl(p->st, older, n);
    struct pass ps;
    if (rc > 0 && !state_shared(p->st) && state_commit(p->st, NULL, 0, p->offset) != 0)
        rc = -1;
    if (rc >= 0 && pass_read(p->st, &ps) != 0)
        rc = -1;
    if (rc < 0) {
        snprintf(why, len, "%s", state_error(p->st));
        crawl_frontier_failed(p->c);
        return CRAWL_ESTATE;
    }
    /* The pass's pages are queued: the frontier takes them from its start. */
    frontier_use_store(p->fr, p->st, 0);
    pass_begin(p, &ps);
    return rc;
}

int64_t persist_pass(struct crawl *c)
{
    struct persist *p = of(c);
    return p ? p->pass : 0;
}

int persist_finish(struct crawl *c)
{
    struct persist *p = of(c);
    if (!p)
        return 0;
    /* Pages dropped since the last row's commit. */
    int dropped = frontier_store_flush(p->fr);
    if (dropped < 0 || (dropped > 0 && state_commit(p->st, NULL, 0, p->offset) != 0)) {
        crawl_frontier_failed(p->c);
        return CRAWL_ESTATE;
    }
    if (!p->complete || state_queue_left(p->st) != 0)
        return 0;
    if (state_set(p->st, "finished", 1) != 0 ||
        state_commit(p->st, NULL, 0, p->offset) != 0) {
        crawl_frontier_failed(p->c);
        return CRAWL_ESTATE;
    }
    return 1;
}

/* The seen-set key of url, that of what the store keeps of its page; 0
 * when it has none (not a URL, out of memory). */
static uint64_t url_hash(struct persist *p, const char *url)
{
    struct url_parts u;
    uint64_t h = 0;
    if (url_split(url, &u) != 0)
        return 0;
    if (frontier_seen_hash(p->fr, u.norm, &h) != 0)
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
static void keep_page(struct persist *p, struct crawl_job *job)
{
    const struct crawl_result *r = &job->res;
    uint64_t h = url_hash(p, job->url);
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
        v.has_links = job->depth < crawl_options(p->c)->depth;
        for (size_t i = 0; i < job->nlinks; i++)
            sb_add(&links, job->links[i], strlen(job->links[i]) + 1);
        v.links = links.data;
        v.links_len = links.nomem ? 0 : links.len;
        v.has_links &= !links.nomem;
        rc = state_valid_put(p->st, h, &v);
    } else if (same && (rc = state_valid_get(p->st, h, &had, &buf)) == 1) {
        if (had.has_links && job->depth < crawl_options(p->c)->depth && !job->links)
            links_from(job, &had);
        v.etag = r->etag ? r->etag : had.etag;
        v.modified = r->last_modified ? r->last_modified : had.modified;
        v.has_links = had.has_links;
        v.links = had.links;
        v.links_len = had.links_len;
        rc = state_valid_put(p->st, h, &v);
    } else if (!same && p->pass > 1) {
        rc = state_valid_put(p->st, h, NULL);
    }
    free(buf);
    sb_free(&links);
    if (rc < 0)
        crawl_frontier_failed(p->c);
}

/* A page of a recrawl pass not due again (--recrawl-older): it ends
 * without a fetch or a row, done in the store, and the links the store
 * kept of it are admitted as if it had given them. */
static void skip_page(struct persist *p, struct crawl_job *job)
{
    struct state_valid had;
    char *buf = NULL;
    uint64_t h = url_hash(p, job->url);
    int rc = h ? state_valid_get(p->st, h, &had, &buf) : 0;
    if (rc == 1 && had.has_links && job->depth < crawl_options(p->c)->depth)
        links_from(job, &had);
    free(buf);
    if (rc < 0 || (job->mark && state_drop(p->st, job->mark) != 0))
        crawl_frontier_failed(p->c);
    crawl_drop(p->c, job);
}

/* The back hook: a page that was not fetched (cancelled, no thread or
 * worker for it) gets no row and stays queued in the store, the next run's;
 * the others carry their page's id, marked fetched (and failed), to the
 * row that commits them. */
static int store_back(void *data, struct crawl *c, struct crawl_job *job)
{
    struct persist *p = data;
    if (job->kind != JOB_PAGE)
        return 0;
    if (job->skip) {
        skip_page(p, job);
        return 1;
    }
    int unfinished = job->unrun ||
                     (job->res.fail == CRAWL_FAIL_CANCELLED && crawl_is_cancelled(c));
    if (job->mark && !job->failed_early)
        job->mark |= STATE_FETCHED;
    if (job->mark && job->res.fail != CRAWL_FAIL_NONE)
        job->mark |= STATE_FAILED;
    if (!unfinished) {
        keep_page(p, job);
        return 0;
    }
    crawl_drop(c, job);
    return 1;
}

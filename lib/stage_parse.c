/* stage_parse.c: the page parser as a decoded body stage (fetch_stage.h),
 * the last of the chain. A page's body, as the row counts it, goes to
 * html.c (the link scanner for the default rule, libxml2 for XPath rules)
 * as it arrives; or, when the model parses elsewhere than it fetches
 * (fetch_xfer.defer), it is held whole within the model's budget and
 * parsed later, on any thread (fetch_parse). At the end of a 2xx page
 * fetched whole, its links go to the job (for the frontier) and its
 * extracted values to the row. Only HTML is parsed. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fetch.h"
#include "fetch_stage.h"
#include "html.h"
#include "stage.h"

/* A held body shorter than this is parsed as the transfer finishes:
 * handing it to another thread would cost more than its parse (the
 * fixture's 500-byte pages took 10% more CPU that way). */
#define HELD_MIN 8192

struct parsing {
    struct html_page *page;     /* NULL once the body is known not to be HTML */
    struct fetch_defer *defer;  /* the model's budget for held bodies, or NULL */
    char  *held;                /* the body held for a later parse */
    size_t len, cap;
    int    over;                /* the budget was short: parsed as it arrives */
};

/* A page is parsed when its links are followed or reported (--links-out
 * reports those of a page at --depth too) or values are extracted from
 * it. Out of memory, it is not parsed. */
static int open_parsing(void *conf, struct fetch_xfer *x, void **st)
{
    const struct crawl_opts *o = x->ctx->opts;
    const struct crawl_job *job = x->job;
    struct parsing *s;
    *st = NULL;
    if (job->kind != JOB_PAGE || !o->rules ||
        !(job->depth < o->depth || html_rules_nextract(o->rules) > 0 || o->links_out))
        return 0;
    if (!(s = calloc(1, sizeof *s)))
        return 0;
    if (!(s->page = html_page_new(o->rules, job->url))) {
        free(s);
        return 0;
    }
    /* The tree XPath rules need may hold 20 or more times the body's bytes
     * (a 43 MB page of links: 868 MB): --max-size bounds it as well. */
    if (o->max_size > 0)
        html_page_set_tree_max(s->page, (size_t)o->max_size);
    s->defer = x->defer;
    *st = s;
    return 0;
}

/* The charset parameter of a Content-Type's parameters p (after the media
 * type), quoted or not: sets *len and returns where it starts, or NULL. */
static const char *charset_param(const char *p, size_t *len)
{
    while ((p = strchr(p, ';'))) {
        p++;
        p += strspn(p, " \t");
        if (strncasecmp(p, "charset", 7) != 0)
            continue;
        const char *v = p + 7;
        v += strspn(v, " \t");
        if (*v != '=')
            continue;
        v++;
        v += strspn(v, " \t");
        if (*v == '"') {
            v++;
            *len = strcspn(v, "\"");
        } else {
            *len = strcspn(v, "; \t");
        }
        return v;
    }
    return NULL;
}

/* Only HTML is parsed; a body without a Content-Type is given the benefit
 * of the doubt. The Content-Type's charset goes to the parser. */
static int begin(void *st, struct fetch_xfer *x, long status)
{
    struct parsing *s = st;
    char *ct = NULL;
    if (!s->page || curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct) != CURLE_OK || !ct)
        return 0;
    while (*ct == ' ')
        ct++;
    if (strncasecmp(ct, "text/html", 9) == 0 || strncasecmp(ct, "application/xhtml+xml", 21) == 0) {
        size_t len;
        const char *cs = charset_param(ct, &len);
        if (cs)
            (void)html_page_set_charset(s->page, cs, len);   /* else as without */
        return 0;
    }
    html_page_free(s->page);
    s->page = NULL;
    return 0;
}

/* Frees the held body and gives its bytes back to the budget. */
static void release(struct parsing *s)
{
    if (s->cap)
        atomic_fetch_sub(&s->defer->held, s->cap);
    free(s->held);
    s->held = NULL;
    s->len = s->cap = 0;
}

/* Adds n bytes to the held body. When the budget has no room for them, or
 * memory is short, the body so far goes to the parser and the page is
 * parsed as it arrives from here on: returns -1. A buffer grows by
 * doubling, from the Content-Length when one is given; what it holds, not
 * what is filled, counts against the budget. */
static int hold(struct parsing *s, struct fetch_xfer *x, const char *p, size_t n)
{
    if (s->len + n > s->cap) {
        size_t want = s->len + n, cap = s->cap ? s->cap : 16384;
        curl_off_t cl = -1;
        if (!s->cap &&
            curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK &&
            cl > 0 && (uint64_t)cl < s->defer->max)
            cap = (size_t)cl;
        while (cap < want)
            cap *= 2;
        size_t add = cap - s->cap;
        char *nb = NULL;
        if (atomic_fetch_add(&s->defer->held, add) + add > s->defer->max ||
            !(nb = realloc(s->held, cap))) {
            atomic_fetch_sub(&s->defer->held, add);
            s->over = 1;
            html_page_feed(s->page, s->held, s->len);
            release(s);
            return -1;
        }
        s->held = nb;
        s->cap = cap;
    }
    memcpy(s->held + s->len, p, n);
    s->len += n;
    return 0;
}

/* Held for a later parse while the budget allows; else parsed here, on
 * the worker that fetched it, as bytes arrive. */
static int body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    struct parsing *s = st;
    if (s->page && !(s->defer && !s->over && hold(s, x, p, n) == 0))
        html_page_feed(s->page, p, n);
    return 0;
}

/* Says, once for the page, that its XPath rules saw only its beginning. */
static void warn_stopped(struct fetch_xfer *x, enum html_stop why)
{
    if (why == HTML_STOP_DEPTH)
        fetch_warn_once(x->ctx, "%s: elements nested deeper than libxml2's limit (%u): "
                        "--follow and --extract see only the page before them",
                        x->job->url, html_max_depth());
    else if (why == HTML_STOP_TREE)
        fetch_warn_once(x->ctx, "%s: the page's document tree reached --max-size (%lld bytes): "
                        "--follow and --extract see only the page before that point",
                        x->job->url, (long long)x->ctx->opts->max_size);
}

/* Ends the page's parse: its links go to the job (for the frontier), its
 * extracts to the result. */
static void end_page(struct parsing *s, struct fetch_xfer *x)
{
    struct crawl_result *r = &x->job->res;
    struct html_links l;
    if (html_page_finish(s->page, r->final_url, &l) == 0) {
        r->nlinks = l.nlinks;
        warn_stopped(x, l.stopped);
        if (x->job->depth < x->ctx->opts->depth || x->ctx->opts->links_out) {
            x->job->links = l.links;
            x->job->nlinks = l.nlinks;
            l.links = NULL;
            l.nlinks = 0;
        }
        r->extracts = l.extracts;
        r->nextracts = l.nextracts;
        l.extracts = NULL;
        l.nextracts = 0;
        html_links_free(&l);
    }
    html_page_free(s->page);
    s->page = NULL;
}

/* Links and values come only from pages that arrived whole and well: a
 * 2xx that libcurl fetched to its end. A page the digest stage found to
 * be its own duplicate (its final URL the first's) would give the links
 * and values of the first, every relative link resolved against the same
 * base: it is not parsed (links and extract null in its row). A
 * duplicate at another URL is parsed, its relative links being other
 * links. Returns 1 when the held body waits for fetch_parse. */
static int finish(void *st, struct fetch_xfer *x, int ok)
{
    struct parsing *s = st;
    struct crawl_result *r = &x->job->res;
    const char *url = r->final_url ? r->final_url : x->job->url;
    if (!s->page || r->fail != CRAWL_FAIL_NONE || r->status < 200 || r->status >= 300 ||
        (r->duplicate_of && strcmp(r->duplicate_of, url) == 0))
        return 0;
    if (s->len >= HELD_MIN)
        return 1;
    if (s->len > 0)
        html_page_feed(s->page, s->held, s->len);
    release(s);
    end_page(s, x);
    return 0;
}

static void later(void *st, struct fetch_xfer *x)
{
    struct parsing *s = st;
    html_page_feed(s->page, s->held, s->len);
    release(s);
    end_page(s, x);
}

static void free_parsing(void *st)
{
    struct parsing *s = st;
    release(s);
    html_page_free(s->page);
    free(s);
}

const struct fetch_stage stage_parse = {
    .name = "parse",
    .kind = FETCH_STAGE_DECODED,
    .open = open_parsing,
    .begin = begin,
    .body = body,
    .finish = finish,
    .later = later,
    .free = free_parsing,
};

/* revisit.c: the crawl's digest set (dedupe.c) as a hook user. It is made
 * as the crawl is prepared, in a shared mapping, so that a procs crawl's
 * workers, forked after, claim digests in the one set; an earlier crawl's
 * CDXJ index (--warc-dedupe-cdx) is read into it then. What went wrong is
 * said as the run starts, when warnings have somewhere to go, and a set
 * that filled up as the run stops. The core names none of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crawl.h"
#include "dedupe.h"
#include "fetch.h"
#include "hooks.h"
#include "model.h"
#include "revisit.h"
#include "warc.h"

struct revisit {
    struct fetch_ctx *fx;       /* the context whose set this is (fx->seen) */
    int rc;                     /* why the set was not made or filled: 0,
                                 * CRAWL_ENOMEM, -errno reading the index */
    size_t taken, unread;       /* the index's lines read, passed over */
};

/* The hook's prepare: the set, and the index in it. */
static void prepare(void *data, struct crawl *c)
{
    struct revisit *r = data;
    const struct crawl_opts *o = crawl_options(c);
    r->fx = crawl_fetch_ctx(c);
    r->fx->seen = dedupe_new(DEDUPE_MAX, DEDUPE_BYTES);
    r->rc = r->fx->seen ? 0 : CRAWL_ENOMEM;
    if (r->rc == 0 && o->warc_dedupe_cdx)
        r->rc = warc_cdx_load(o->warc_dedupe_cdx, r->fx->seen, &r->taken, &r->unread);
}

/* The hook's start: what went wrong in prepare, said once. */
static void start(void *data, struct crawl *c)
{
    struct revisit *r = data;
    const struct crawl_opts *o = crawl_options(c);
    if (r->rc == CRAWL_ENOMEM)
        crawl_warn(c, "%s", REVISIT_NOMEM);
    else if (r->rc)
        crawl_warn(c, "--warc-dedupe-cdx %s: %s (its payloads are written whole)",
                   o->warc_dedupe_cdx, strerror(-r->rc));
    else if (r->unread)
        crawl_warn(c, "--warc-dedupe-cdx %s: %zu line%s not CDXJ, passed over (%zu responses read)",
                   o->warc_dedupe_cdx, r->unread, r->unread == 1 ? "" : "s", r->taken);
    r->rc = 0;
    r->unread = 0;
}

/* The hook's stop: the set was too small for the crawl. */
static void stop(void *data, struct crawl *c, int rc)
{
    struct revisit *r = data;
    struct dedupe *seen = r->fx ? r->fx->seen : NULL;
    size_t refused = seen ? dedupe_refused(seen) : 0;
    if (refused)
        crawl_warn(c, "the digest set was full (%zu digests kept): %zu more were not "
                   "remembered (no duplicate_of for their pages; their WARC records written whole)",
                   dedupe_held(seen), refused);
}

static void revisit_free(void *data)
{
    struct revisit *r = data;
    if (r->fx) {
        dedupe_free(r->fx->seen);
        r->fx->seen = NULL;
    }
    free(r);
}

int revisit_attach(struct crawl *c)
{
    const struct crawl_opts *o = crawl_options(c);
    if (!o->dedupe && !o->warc)
        return 0;
    struct revisit *r = calloc(1, sizeof *r);
    if (!r)
        return CRAWL_ENOMEM;
    static const struct crawl_hook hook = {
        .prepare = prepare, .start = start, .stop = stop, .free = revisit_free,
    };
    crawl_hook(c, CRAWL_HOOK_DIGESTS, &hook, r);
    return 0;
}

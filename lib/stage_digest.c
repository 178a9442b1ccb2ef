/* stage_digest.c: the row's digest as a decoded body stage
 * (fetch_stage.h): the SHA-1 of a page's body as the row counts it, taken
 * as the bytes arrive. At the end of a 2xx page fetched whole it goes into
 * the row and, with --dedupe, is claimed in the crawl's digest set
 * (dedupe.c): a page whose digest an earlier page had names that page's
 * final URL in duplicate_of. The core lists it when a row shows the
 * digest or --dedupe needs it; a robots.txt or a sitemap is no row. */
#include <stdlib.h>
#include <string.h>

#include "dedupe.h"
#include "digest.h"
#include "fetch.h"
#include "fetch_stage.h"
#include "stage.h"

/* Out of memory, the page's row has no digest (and claims none). */
static int open_digest(void *conf, struct fetch_xfer *x, void **st)
{
    *st = x->job->kind == JOB_PAGE ? digest_new() : NULL;
    return 0;
}

static int body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    digest_add(st, p, n);
    return 0;
}

/* When the duplicate's final URL is its own (two listed URLs, or two
 * redirects, that end on one page), the parser after it in the chain
 * leaves the page unparsed (stage_parse.c). */
static int finish(void *st, struct fetch_xfer *x, int ok)
{
    struct crawl_result *r = &x->job->res;
    unsigned char md[DIGEST_LEN];
    char text[DIGEST_TEXT];
    free(r->digest);
    free(r->duplicate_of);
    r->digest = r->duplicate_of = NULL;
    if (r->fail == CRAWL_FAIL_NONE && r->status >= 200 && r->status < 300 &&
        digest_end(st, md) == 0 && (r->digest = strdup(digest_text(md, text))) &&
        x->ctx->opts->dedupe && x->ctx->seen) {
        struct dedupe_first first = { .uri = r->final_url ? r->final_url : x->job->url }, got;
        if (dedupe_claim(x->ctx->seen, DEDUPE_BODY, md, &first, &got) == DEDUPE_SEEN)
            r->duplicate_of = strdup(got.uri);
    }
    return 0;
}

static void free_digest(void *st)
{
    digest_free(st);
}

const struct fetch_stage stage_digest = {
    .name = "digest",
    .kind = FETCH_STAGE_DECODED,
    .open = open_digest,
    .body = body,
    .finish = finish,
    .free = free_digest,
};

/* fetch_stage.c: a transfer through the run's body stages (fetch_stage.h),
 * the chain the core listed: raw stages, the decoder, fetch's own count,
 * decoded stages. With a raw stage (the WARC writer), libcurl hands over
 * the body as sent (transfer coding removed, content coding kept,
 * CURLOPT_HTTP_CONTENT_DECODING off): it goes to the raw stages, then to
 * the decoder, which hands it on decoded (fetch_stage_pass), so that the
 * row is the one libcurl's own decoding gives, Length the decoded length.
 * Redirects are then followed here rather than by libcurl, which drops the
 * body of a response it follows: a raw stage sees every response. The
 * crawl's digest set is made here too. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fetch_internal.h"

void fetch_stage_fail(struct fetch_xfer *x, enum crawl_fail fail, const char *fmt, ...)
{
    if (x->stage_fail != CRAWL_FAIL_NONE)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&x->stage_why, fmt, ap) < 0)
        x->stage_why = NULL;
    va_end(ap);
    x->stage_fail = fail;
}

const char *fetch_xfer_url(struct fetch_xfer *x)
{
    char *url = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
    return url ? url : x->job->url;
}

/* The chain's stage i. */
#define STAGE(x, i) ((x)->ctx->chain[i])

/* Frees the states x's stages still hold: a put-off work the model never
 * ran (fetch_parse) is dropped. */
static void stages_free(struct fetch_xfer *x)
{
    for (int i = 0; i < x->ctx->nchain; i++)
        if (x->st[i]) {
            STAGE(x, i)->free(x->st[i]);
            x->st[i] = NULL;
        }
    x->later = 0;
}

int fetch__stages_prepare(struct fetch_xfer *x)
{
    const struct fetch_ctx *c = x->ctx;
    if (x->later)
        stages_free(x);
    x->decided = x->skip = x->hops = 0;
    x->hop_time = 0;
    x->stage_fail = CRAWL_FAIL_NONE;
    for (int i = 0; i < c->nchain; i++)
        if (STAGE(x, i)->open(c->stage_conf[i], x, &x->st[i]) != 0) {
            x->st[i] = NULL;    /* it said why: the body fails at its first byte */
            return CRAWL_ENOMEM;
        }
    return 0;
}

void fetch__stages_header(struct fetch_xfer *x, const char *p, size_t n)
{
    for (int i = 0; i < x->ctx->raw; i++)
        if (STAGE(x, i)->header && x->st[i])
            STAGE(x, i)->header(x->st[i], p, n);
}

void fetch__stages_request(struct fetch_xfer *x, const char *p, size_t n)
{
    for (int i = 0; i < x->ctx->raw; i++)
        if (STAGE(x, i)->request && x->st[i])
            STAGE(x, i)->request(x->st[i], p, n);
}

/* The response's body begins for stages [from, to). Returns 0 or -1. */
static int stages_begin(struct fetch_xfer *x, int from, int to, long status)
{
    for (int i = from; i < to; i++)
        if (STAGE(x, i)->begin && x->st[i] && STAGE(x, i)->begin(x->st[i], x, status) != 0)
            return -1;
    return 0;
}

/* Whether the response is a redirect that fetch's own following takes.
 * Its Location header is looked at: libcurl 7.88 resolves
 * CURLINFO_REDIRECT_URL only once the transfer is done. */
static int will_follow(struct fetch_xfer *x, long status)
{
    struct curl_header *h;
    return x->ctx->raw && !x->redirect_out && x->ctx->opts->max_redirs > 0 &&
           status >= 300 && status < 400 &&
           curl_easy_header(x->easy, "Location", 0, CURLH_HEADER, -1, &h) == CURLHE_OK &&
           h->value[0];
}

/* At the first body byte: the stages hear the body begins, and a redirect
 * fetch follows goes to the raw ones only. Returns 0 or -1. */
static int decide(struct fetch_xfer *x)
{
    const struct fetch_ctx *c = x->ctx;
    long status = 0;
    x->decided = 1;
    if (!c->begins)
        return 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (stages_begin(x, 0, c->raw, status) != 0)
        return -1;
    if ((x->skip = will_follow(x, status)))
        return 0;
    return stages_begin(x, c->raw, c->nchain, status);
}

int fetch_stage_pass(struct fetch_xfer *x, const char *p, size_t n)
{
    const struct fetch_ctx *c = x->ctx;
    int took = fetch__take(x, p, n);
    if (took < 0)
        return -1;
    for (int i = c->decoded; i < c->nchain; i++)
        if (x->st[i] && STAGE(x, i)->body(x->st[i], x, p, n) != 0)
            return -1;
    return took ? -1 : 0;
}

int fetch__stages_body(struct fetch_xfer *x, const char *p, size_t n)
{
    const struct fetch_ctx *c = x->ctx;
    if (x->stage_fail != CRAWL_FAIL_NONE)
        return -1;
    if (!x->decided && decide(x) != 0)
        return -1;
    if (!c->raw)
        return fetch_stage_pass(x, p, n);
    for (int i = 0; i < c->raw; i++)
        if (x->st[i] && STAGE(x, i)->body(x->st[i], x, p, n) != 0)
            return -1;
    if (x->skip)
        return 0;
    /* The decoder, which fetch_stages_open put after the raw stages; it
     * takes part in every transfer. */
    void *d = x->st[c->raw];
    return d ? STAGE(x, c->raw)->body(d, x, p, n) : -1;
}

int fetch_follow(struct fetch_xfer *x, CURLcode rc)
{
    const struct fetch_ctx *c = x->ctx;
    char *loc = NULL;
    long status = 0;
    curl_off_t took = 0;
    if (!c->raw)
        return 0;
    for (int i = 0; i < c->raw; i++)
        if (STAGE(x, i)->ended && x->st[i])
            STAGE(x, i)->ended(x->st[i], x, rc);
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || x->stage_fail != CRAWL_FAIL_NONE || !will_follow(x, status))
        return 0;
    if (curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
        return 0;
    if (x->hops >= c->opts->max_redirs) {
        fetch_stage_fail(x, CRAWL_FAIL_REDIRECTS, "Maximum (%ld) redirects followed",
                         c->opts->max_redirs);
        return 0;
    }
    /* The row says what libcurl's own following says: the redirect
     * counted, the URL it named as the final one. */
    if (strncasecmp(loc, "http://", 7) != 0 && strncasecmp(loc, "https://", 8) != 0) {
        fetch_stage_fail(x, CRAWL_FAIL_PROTOCOL, "redirect refused, only http and https are "
                         "followed (%.*s)", (int)strcspn(loc, ":"), loc);
        free(x->refused);
        if (!(x->refused = strdup(loc)))
            fetch_stage_fail(x, CRAWL_FAIL_OTHER, "out of memory");
        return 0;
    }
    char *next = strdup(loc);
    if (!next) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "out of memory");
        return 0;
    }
    curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &took);
    x->hop_time += (double)took / 1e6;
    x->hops++;
    x->decided = x->skip = 0;
    curl_easy_setopt(x->easy, CURLOPT_URL, next);
    free(next);
    return 1;
}

int fetch__stages_finish(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r)
{
    const struct fetch_ctx *c = x->ctx;
    unsigned later = 0;
    /* A body of no bytes never met decide(): its stages begin all the
     * same (--save's empty file), and codings libcurl refuses before any
     * body (too many) are refused. */
    if (!x->decided && rc == CURLE_OK && x->stage_fail == CRAWL_FAIL_NONE)
        (void)decide(x);
    int ok = rc == CURLE_OK && x->stage_fail == CRAWL_FAIL_NONE && r->fail == CRAWL_FAIL_NONE;
    for (int i = 0; i < c->nchain; i++)
        if (STAGE(x, i)->finish && x->st[i] && STAGE(x, i)->finish(x->st[i], x, ok) == 1 &&
            STAGE(x, i)->later)
            later |= 1u << i;
    if (x->hops) {
        r->redirects = x->hops;
        r->time_total += x->hop_time;
    }
    /* The body of a redirect meant to be followed is no page's (fetch.c
     * counts it out of wire_bytes in the same words). */
    if (x->skip)
        r->wire_bytes = 0;
    if (x->refused) {
        r->redirects = x->hops + 1;
        free(r->final_url);
        if (!(r->final_url = strdup(x->refused)))
            fetch_stage_fail(x, CRAWL_FAIL_OTHER, "out of memory");
        free(x->refused);
        x->refused = NULL;
    }
    if (x->stage_fail != CRAWL_FAIL_NONE) {
        job_error_set(r, x->stage_fail, x->stage_why ? x->stage_why : "out of memory");
        free(x->stage_why);
        x->stage_why = NULL;
    }
    for (int i = 0; i < c->nchain; i++)
        if (x->st[i] && !(later & (1u << i))) {
            STAGE(x, i)->free(x->st[i]);
            x->st[i] = NULL;
        }
    x->later = later;
    return later != 0;
}

void fetch_parse(struct fetch_xfer *x)
{
    for (int i = 0; x->later; i++)
        if (x->later & (1u << i)) {
            x->later &= ~(1u << i);
            STAGE(x, i)->later(x->st[i], x);
            STAGE(x, i)->free(x->st[i]);
            x->st[i] = NULL;
        }
}

/* Puts the stages of one kind into c's chain, in the order listed. */
static void chain_kind(struct fetch_ctx *c, enum fetch_stage_kind kind, int *n)
{
    for (int i = 0; i < c->nstages; i++)
        if (c->stages[i]->kind == kind)
            c->chain[(*n)++] = c->stages[i];
}

int fetch_stages_open(struct fetch_ctx *c)
{
    int n = 0, raw, decoders = 0, begins = 0;
    c->nchain = c->raw = c->decoded = c->begins = 0;
    if (c->nstages > FETCH_STAGES_MAX)
        c->nstages = FETCH_STAGES_MAX;
    chain_kind(c, FETCH_STAGE_RAW, &n);
    raw = n;
    for (int i = 0; i < c->nstages; i++)
        decoders += c->stages[i]->kind == FETCH_STAGE_DECODER;
    if (decoders > 1 || (raw && !decoders)) {
        fetch_warn_once(c, "body stages: %s", decoders > 1 ? "two decoders listed"
                        : "a stage takes bodies as sent, and no decoder is listed");
        return -EINVAL;
    }
    /* Without a raw stage libcurl decodes: the decoder is left out. */
    if (raw)
        chain_kind(c, FETCH_STAGE_DECODER, &n);
    c->decoded = n;
    chain_kind(c, FETCH_STAGE_DECODED, &n);
    for (c->nchain = 0; c->nchain < n; c->nchain++) {
        const struct fetch_stage *s = c->chain[c->nchain];
        c->stage_conf[c->nchain] = NULL;
        if (s->run_open && s->run_open(c, &c->stage_conf[c->nchain]) != 0) {
            (void)fetch_stages_close(c);
            return CRAWL_EOUTPUT;
        }
        begins |= s->begin != NULL;
    }
    c->raw = raw;
    c->begins = raw || begins;
    return 0;
}

int fetch_stages_close(struct fetch_ctx *c)
{
    int rc = 0;
    while (c->nchain > 0) {
        const struct fetch_stage *s = c->chain[--c->nchain];
        if (s->run_close && s->run_close(c, c->stage_conf[c->nchain]) != 0)
            rc = CRAWL_EOUTPUT;
        c->stage_conf[c->nchain] = NULL;
    }
    c->raw = c->decoded = c->begins = 0;
    return rc;
}


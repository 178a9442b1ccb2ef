/* fetch_keep.c: a transfer through the run's body stages (fetch_stage.h).
 * With a raw stage (the WARC writer), libcurl hands over the body as sent
 * (transfer coding removed, content coding kept,
 * CURLOPT_HTTP_CONTENT_DECODING off): that goes to the raw stages, and a
 * copy decoded here (decode.c: the codings libcurl decodes, as it decodes
 * them) goes on to the decoded stages (--save) and to be counted and
 * parsed, so that the row is the one libcurl's own decoding gives, Length
 * the decoded length. Redirects are then followed here rather than by
 * libcurl, which drops the body of a response it follows: a raw stage sees
 * every response. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decode.h"
#include "dedupe.h"
#include "fetch_keep.h"
#include "strbuf.h"

static void keep_fail(struct fetch_keep *k, enum crawl_fail fail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void keep_failv(struct fetch_keep *k, enum crawl_fail fail, const char *fmt, va_list ap)
{
    if (k->fail != CRAWL_FAIL_NONE)
        return;
    if (vasprintf(&k->why, fmt, ap) < 0)
        k->why = NULL;
    k->fail = fail;
}

/* Records the first reason keeping fails the transfer. */
static void keep_fail(struct fetch_keep *k, enum crawl_fail fail, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    keep_failv(k, fail, fmt, ap);
    va_end(ap);
}

void fetch_stage_fail(struct fetch_xfer *x, enum crawl_fail fail, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (x->keep)
        keep_failv(x->keep, fail, fmt, ap);
    va_end(ap);
}

const char *fetch_xfer_url(struct fetch_xfer *x)
{
    char *url = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
    return url ? url : x->job->url;
}

/* The run's stage i. */
#define STAGE(x, i) ((x)->ctx->opts->stages[i])

int keep_prepare(struct fetch_xfer *x)
{
    struct fetch_ctx *c = x->ctx;
    if (c->stages_open == 0)
        return 0;
    struct fetch_keep *k = x->keep = calloc(1, sizeof *k);
    x->keep_nomem = !k;
    if (!k)
        return CRAWL_ENOMEM;
    for (int i = 0; i < c->stages_open; i++) {
        int rc = STAGE(x, i)->open(c->stage_conf[i], x, &k->st[i]);
        if (rc)
            return rc;
    }
    return 0;
}

size_t keep_on_header(char *p, size_t size, size_t n, void *data)
{
    struct fetch_xfer *x = data;
    if (x->keep)
        for (int i = 0; i < x->ctx->stages_open; i++)
            if (STAGE(x, i)->raw && STAGE(x, i)->header && x->keep->st[i])
                STAGE(x, i)->header(x->keep->st[i], p, size * n);
    return size * n;
}

int keep_on_debug(CURL *h, curl_infotype type, char *p, size_t n, void *data)
{
    struct fetch_xfer *x = data;
    if (type == CURLINFO_HEADER_OUT && x->keep)
        for (int i = 0; i < x->ctx->stages_open; i++)
            if (STAGE(x, i)->raw && STAGE(x, i)->request && x->keep->st[i])
                STAGE(x, i)->request(x->keep->st[i], p, n);
    return 0;
}

/* Runs the body bytes through the stages of one kind (raw or decoded).
 * Returns 0 or -1. */
static int stages_body(struct fetch_xfer *x, int raw, const char *p, size_t n)
{
    for (int i = 0; i < x->ctx->stages_open; i++)
        if (STAGE(x, i)->raw == raw && x->keep->st[i] &&
            STAGE(x, i)->body(x->keep->st[i], x, p, n) != 0)
            return -1;
    return 0;
}

/* The response's body begins, for the stages of one kind. */
static int stages_begin(struct fetch_xfer *x, int raw, long status)
{
    for (int i = 0; i < x->ctx->stages_open; i++)
        if (STAGE(x, i)->raw == raw && STAGE(x, i)->begin && x->keep->st[i] &&
            STAGE(x, i)->begin(x->keep->st[i], x, status) != 0)
            return -1;
    return 0;
}

/* The codings this libcurl decodes, which it offers in Accept-Encoding
 * (CURLOPT_ACCEPT_ENCODING ""): the ones --warc's transfers decode here. */
static unsigned curl_codings(void)
{
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    unsigned known = 0;
    if (v->features & CURL_VERSION_LIBZ)
        known |= DECODE_DEFLATE | DECODE_GZIP;
    if (v->features & CURL_VERSION_BROTLI)
        known |= DECODE_BR;
    if (v->features & CURL_VERSION_ZSTD)
        known |= DECODE_ZSTD;
    return known;
}

/* The response's Content-Encoding, every line of it joined with ", " as
 * libcurl stacks them, in b ("" for none). Returns 0 or CRAWL_ENOMEM. */
static int codings(struct fetch_xfer *x, struct strbuf *b)
{
    struct curl_header *h;
    for (size_t i = 0;
         curl_easy_header(x->easy, "Content-Encoding", i, CURLH_HEADER, -1, &h) == CURLHE_OK; i++) {
        if (i)
            sb_adds(b, ", ");
        sb_adds(b, h->value);
        if (i + 1 >= h->amount)
            break;
    }
    sb_addc(b, '\0');
    return b->nomem ? CRAWL_ENOMEM : 0;
}

/* decode_sink: decoded bytes on to the decoded stages and fetch. */
static int on_decoded(void *data, const char *p, size_t n);

/* Sets up the decoding of the response's body. Returns 0 or -1. */
static int decode_begin(struct fetch_xfer *x)
{
    struct fetch_keep *k = x->keep;
    struct strbuf b = { 0 };
    int rc = codings(x, &b);
    if (rc == 0)
        rc = decode_new(&k->dec, b.data, curl_codings(), on_decoded, x);
    sb_free(&b);
    if (rc == DECODE_EBAD) {
        keep_fail(k, CRAWL_FAIL_PROTOCOL, "%s", decode_why(k->dec));
        return -1;
    }
    if (rc) {
        keep_fail(k, CRAWL_FAIL_OTHER, "out of memory");
        return -1;
    }
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

/* At the first body byte: what becomes of the body. Returns 0 or -1. */
static int decide(struct fetch_xfer *x)
{
    struct fetch_keep *k = x->keep;
    long status = 0;
    k->decided = 1;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (stages_begin(x, 1, status) != 0)
        return -1;
    if ((k->skip = will_follow(x, status)))
        return 0;
    if (x->ctx->raw && decode_begin(x) != 0)
        return -1;
    return stages_begin(x, 0, status);
}

/* Decoded bytes: to the decoded stages, then to fetch. */
static int decoded(struct fetch_xfer *x, const char *p, size_t n)
{
    if (stages_body(x, 0, p, n) != 0)
        return -1;
    return fetch__decoded(x, p, n);
}

static int on_decoded(void *data, const char *p, size_t n)
{
    return decoded(data, p, n);
}

/* Decodes n bytes of the body as sent and passes them on. */
static int decode_on(struct fetch_xfer *x, const char *p, size_t n)
{
    struct fetch_keep *k = x->keep;
    int rc = decode_write(k->dec, p, n);
    if (rc == DECODE_EBAD)
        keep_fail(k, CRAWL_FAIL_PROTOCOL, "%s", decode_why(k->dec));
    else if (rc == DECODE_EAFTER)
        keep_fail(k, CRAWL_FAIL_OTHER, "%s", decode_why(k->dec));
    else if (rc == DECODE_ENOMEM)
        keep_fail(k, CRAWL_FAIL_OTHER, "out of memory");
    return rc ? -1 : 0;
}

int keep_body(struct fetch_xfer *x, const char *p, size_t n)
{
    struct fetch_keep *k = x->keep;
    if (k->fail != CRAWL_FAIL_NONE)
        return -1;
    if (!k->decided && decide(x) != 0)
        return -1;
    if (stages_body(x, 1, p, n) != 0)
        return -1;
    if (k->skip)
        return 0;
    return k->dec ? decode_on(x, p, n) : decoded(x, p, n);
}

/* Ends the content decoding of one response. */
static void end_decode(struct fetch_keep *k)
{
    decode_free(k->dec);
    k->dec = NULL;
}

int keep_follow(struct fetch_xfer *x, CURLcode rc)
{
    struct fetch_keep *k = x->keep;
    char *loc = NULL;
    long status = 0;
    curl_off_t took = 0;
    if (!k || !x->ctx->raw)
        return 0;
    for (int i = 0; i < x->ctx->stages_open; i++)
        if (STAGE(x, i)->raw && STAGE(x, i)->ended && k->st[i])
            STAGE(x, i)->ended(k->st[i], x, rc);
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || k->fail != CRAWL_FAIL_NONE || !will_follow(x, status))
        return 0;
    if (curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
        return 0;
    if (k->hops >= x->ctx->opts->max_redirs) {
        keep_fail(k, CRAWL_FAIL_REDIRECTS, "Maximum (%ld) redirects followed",
                  x->ctx->opts->max_redirs);
        return 0;
    }
    /* The row says what libcurl's own following says: the redirect
     * counted, the URL it named as the final one. */
    if (strncasecmp(loc, "http://", 7) != 0 && strncasecmp(loc, "https://", 8) != 0) {
        keep_fail(k, CRAWL_FAIL_PROTOCOL, "redirect refused, only http and https are "
                  "followed (%.*s)", (int)strcspn(loc, ":"), loc);
        if (!(k->refused = strdup(loc)))
            keep_fail(k, CRAWL_FAIL_OTHER, "out of memory");
        return 0;
    }
    char *next = strdup(loc);
    if (!next) {
        keep_fail(k, CRAWL_FAIL_OTHER, "out of memory");
        return 0;
    }
    curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &took);
    k->hop_time += (double)took / 1e6;
    k->hops++;
    k->decided = k->skip = 0;
    end_decode(k);
    curl_easy_setopt(x->easy, CURLOPT_URL, next);
    free(next);
    return 1;
}

void keep_finish(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r)
{
    struct fetch_keep *k = x->keep;
    if (!k) {
        if (x->keep_nomem)
            job_error_set(r, CRAWL_FAIL_OTHER, "out of memory for --warc or --save");
        x->keep_nomem = 0;
        return;
    }
    /* A body of no bytes never met decide(): its stages begin all the
     * same (--save's empty file), and codings libcurl refuses before any
     * body (too many) are refused. */
    if (!k->decided && rc == CURLE_OK && k->fail == CRAWL_FAIL_NONE)
        (void)decide(x);
    int ok = rc == CURLE_OK && k->fail == CRAWL_FAIL_NONE && r->fail == CRAWL_FAIL_NONE;
    for (int i = 0; i < x->ctx->stages_open; i++)
        if (STAGE(x, i)->finish && k->st[i])
            STAGE(x, i)->finish(k->st[i], x, ok);
    if (k->hops) {
        r->redirects = k->hops;
        r->time_total += k->hop_time;
    }
    /* The body of a redirect meant to be followed is no page's (fetch.c
     * counts it out of wire_bytes in the same words). */
    if (k->skip)
        r->wire_bytes = 0;
    if (k->refused) {
        r->redirects = k->hops + 1;
        free(r->final_url);
        if (!(r->final_url = strdup(k->refused)))
            keep_fail(k, CRAWL_FAIL_OTHER, "out of memory");
    }
    if (k->fail != CRAWL_FAIL_NONE)
        job_error_set(r, k->fail, k->why ? k->why : "out of memory");
    end_decode(k);
    for (int i = 0; i < x->ctx->stages_open; i++)
        if (k->st[i])
            STAGE(x, i)->free(k->st[i]);
    free(k->refused);
    free(k->why);
    free(k);
    x->keep = NULL;
}

int fetch_stages_open(struct fetch_ctx *c)
{
    const struct crawl_opts *o = c->opts;
    c->raw = 0;
    int n = o->nstages < FETCH_STAGES_MAX ? o->nstages : FETCH_STAGES_MAX;
    for (c->stages_open = 0; c->stages_open < n; c->stages_open++) {
        const struct fetch_stage *s = o->stages[c->stages_open];
        c->stage_conf[c->stages_open] = NULL;
        if (s->run_open && s->run_open(c, &c->stage_conf[c->stages_open]) != 0) {
            (void)fetch_stages_close(c);
            return CRAWL_EOUTPUT;
        }
        c->raw |= s->raw;
    }
    return 0;
}

int fetch_stages_close(struct fetch_ctx *c)
{
    int rc = 0;
    while (c->stages_open > 0) {
        const struct fetch_stage *s = c->opts->stages[--c->stages_open];
        if (s->run_close && s->run_close(c, c->stage_conf[c->stages_open]) != 0)
            rc = CRAWL_EOUTPUT;
        c->stage_conf[c->stages_open] = NULL;
    }
    c->raw = 0;
    return rc;
}

int fetch_digests_open(struct fetch_ctx *c)
{
    const struct crawl_opts *o = c->opts;
    if (!o->dedupe && !o->warc)
        return 0;
    return (c->seen = dedupe_new(DEDUPE_MAX, DEDUPE_BYTES)) ? 0 : CRAWL_ENOMEM;
}

void fetch_digests_close(struct fetch_ctx *c)
{
    dedupe_free(c->seen);
    c->seen = NULL;
}

/* fetch_keep.c: a transfer kept as it goes, for --warc and --save. With
 * --warc, libcurl hands over the body as sent (transfer coding removed,
 * content coding kept, CURLOPT_HTTP_CONTENT_DECODING off): that goes to the
 * archive, and a copy decoded here (decode.c: the codings libcurl decodes,
 * as it decodes them) goes on to be counted, parsed and saved, so that the
 * row is the one libcurl's own decoding gives, Length the decoded length.
 * Redirects are then followed here rather than by libcurl, which drops
 * the body of a response it follows: the archive keeps every response. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crawl.h"
#include "decode.h"
#include "dedupe.h"
#include "fetch_keep.h"
#include "strbuf.h"
#include "warc.h"

static void keep_fail(struct fetch_keep *k, enum crawl_fail fail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first reason keeping fails the transfer. */
static void keep_fail(struct fetch_keep *k, enum crawl_fail fail, const char *fmt, ...)
{
    if (k->fail != CRAWL_FAIL_NONE)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&k->why, fmt, ap) < 0)
        k->why = NULL;
    va_end(ap);
    k->fail = fail;
}

int keep_prepare(struct fetch_xfer *x)
{
    struct fetch_ctx *c = x->ctx;
    if (!c->warc && !c->opts->save_dir)
        return 0;
    struct fetch_keep *k = x->keep = calloc(1, sizeof *k);
    x->keep_nomem = !k;
    if (!k)
        return CRAWL_ENOMEM;
    k->file.fd = -1;
    if (!c->warc)
        return 0;
    if (!(k->cap = warc_capture_new())) {
        keep_fail(k, CRAWL_FAIL_OTHER, "--warc: out of memory");
        return CRAWL_ENOMEM;
    }
    curl_easy_setopt(x->easy, CURLOPT_DEBUGDATA, x);
    return 0;
}

size_t keep_on_header(char *p, size_t size, size_t n, void *data)
{
    struct fetch_xfer *x = data;
    if (x->keep && x->keep->cap)
        warc_capture_header(x->keep->cap, p, size * n);
    return size * n;
}

int keep_on_debug(CURL *h, curl_infotype type, char *p, size_t n, void *data)
{
    struct fetch_xfer *x = data;
    if (type == CURLINFO_HEADER_OUT && x->keep && x->keep->cap)
        warc_capture_request(x->keep->cap, p, n);
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

/* decode_sink: decoded bytes on to --save and fetch. */
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

/* Whether the response is a redirect that --warc's own following takes.
 * Its Location header is looked at: libcurl 7.88 resolves
 * CURLINFO_REDIRECT_URL only once the transfer is done. */
static int will_follow(struct fetch_xfer *x, long status)
{
    struct curl_header *h;
    return x->ctx->warc && !x->redirect_out && x->ctx->opts->max_redirs > 0 &&
           status >= 300 && status < 400 &&
           curl_easy_header(x->easy, "Location", 0, CURLH_HEADER, -1, &h) == CURLHE_OK &&
           h->value[0];
}

/* At the first body byte: what becomes of the body. Returns 0 or -1. */
static int decide(struct fetch_xfer *x)
{
    struct fetch_keep *k = x->keep;
    long status = 0;
    char *url = NULL;
    k->decided = 1;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if ((k->skip = will_follow(x, status)))
        return 0;
    if (x->ctx->warc && decode_begin(x) != 0)
        return -1;
    if (x->ctx->opts->save_dir && status >= 200 && status < 300) {
        curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
        int rc = mirror_begin(&k->file, url ? url : x->job->url);
        if (rc) {
            keep_fail(k, CRAWL_FAIL_OTHER, "--save: no file for %s: %s",
                      url ? url : x->job->url, strerror(-rc));
            return -1;
        }
        k->saving = 1;
    }
    return 0;
}

/* Decoded bytes: to the file of --save, then to fetch. */
static int decoded(struct fetch_xfer *x, const char *p, size_t n)
{
    struct fetch_keep *k = x->keep;
    if (k->saving) {
        int rc = mirror_write(&k->file, x->ctx->opts->save_dir, p, n);
        if (rc) {
            keep_fail(k, CRAWL_FAIL_OTHER, "--save: %s/%s: %s", x->ctx->opts->save_dir,
                      k->file.rel, strerror(-rc));
            return -1;
        }
    }
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
    if (k->cap) {
        int rc = warc_capture_body(k->cap, p, n);
        if (rc) {
            keep_fail(k, CRAWL_FAIL_OTHER, "--warc: spooling the body: %s", strerror(-rc));
            return -1;
        }
    }
    if (k->skip)
        return 0;
    return k->dec ? decode_on(x, p, n) : decoded(x, p, n);
}

/* Writes the records of the transfer that just ended with rc. */
static void archive(struct fetch_xfer *x, CURLcode rc)
{
    struct fetch_keep *k = x->keep;
    char *url = NULL, *ip = NULL;
    const char *cut = NULL;
    if (!warc_capture_has_response(k->cap))
        return;
    curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
    curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_IP, &ip);
    if (rc != CURLE_OK)
        cut = x->too_large || x->robots_cut || rc == CURLE_FILESIZE_EXCEEDED ? "length"
            : rc == CURLE_OPERATION_TIMEDOUT ? "time"
            : rc == CURLE_WRITE_ERROR ? "unspecified" : "disconnect";
    int wr = warc_write(x->ctx->warc, k->cap, url ? url : x->job->url, ip, cut);
    if (wr)
        keep_fail(k, CRAWL_FAIL_OTHER, "--warc: %s: %s", warc_file_name(x->ctx->warc), strerror(-wr));
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
    if (!k || !k->cap)
        return 0;
    archive(x, rc);
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
    warc_capture_reset(k->cap);
    curl_easy_setopt(x->easy, CURLOPT_URL, next);
    free(next);
    return 1;
}

void keep_finish(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r)
{
    struct fetch_keep *k = x->keep;
    long status = 0;
    if (!k) {
        if (x->keep_nomem)
            job_error_set(r, CRAWL_FAIL_OTHER, "out of memory for --warc or --save");
        x->keep_nomem = 0;
        return;
    }
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    /* A body of no bytes never met decide(): an empty file all the same,
     * and codings libcurl refuses before any body (too many) refused. */
    if (!k->decided && rc == CURLE_OK && k->fail == CRAWL_FAIL_NONE &&
        (x->ctx->warc || (x->ctx->opts->save_dir && status >= 200 && status < 300)))
        (void)decide(x);
    if (k->saving) {
        if (rc == CURLE_OK && k->fail == CRAWL_FAIL_NONE && r->fail == CRAWL_FAIL_NONE) {
            int e = mirror_commit(&k->file, x->ctx->opts->save_dir);
            if (e)
                keep_fail(k, CRAWL_FAIL_OTHER, "--save: %s/%s: %s", x->ctx->opts->save_dir,
                          k->file.rel ? k->file.rel : "", strerror(-e));
        } else {
            mirror_abort(&k->file, x->ctx->opts->save_dir);
        }
        mirror_end(&k->file);
    }
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
    free(k->refused);
    free(k->why);
    warc_capture_free(k->cap);
    free(k);
    x->keep = NULL;
}

int fetch_keep_open(struct fetch_ctx *c)
{
    const struct crawl_opts *o = c->opts;
    char software[256];
    if (!o->warc)
        return 0;
    struct warc_conf conf = {
        .path = o->warc, .worker = o->warc_worker, .max_size = (uint64_t)o->warc_max_size,
        .cdx = o->cdx, .software = crawl_version_line(software, sizeof software),
        .options = o->warc_options, .seen = c->seen,
    };
    char failed[4096] = "";
    int rc = warc_open(&c->warc, &conf, failed, sizeof failed);
    if (rc) {
        c->warc = NULL;
        if (failed[0])
            fetch_warn_once(c, "%s: %s (the archive is not written)", failed, strerror(-rc));
        else
            fetch_warn_once(c, "--warc: cannot write %s: %s", o->warc, strerror(-rc));
        return CRAWL_EOUTPUT;
    }
    return 0;
}

int fetch_digests_open(struct fetch_ctx *c, size_t *taken, size_t *unread)
{
    const struct crawl_opts *o = c->opts;
    *taken = *unread = 0;
    if (!o->dedupe && !o->warc)
        return 0;
    if (!(c->seen = dedupe_new(DEDUPE_MAX, DEDUPE_BYTES)))
        return CRAWL_ENOMEM;
    return o->warc_dedupe_cdx ? warc_cdx_load(o->warc_dedupe_cdx, c->seen, taken, unread) : 0;
}

void fetch_digests_close(struct fetch_ctx *c)
{
    dedupe_free(c->seen);
    c->seen = NULL;
}

int fetch_keep_close(struct fetch_ctx *c)
{
    if (!c->warc)
        return 0;
    char *name = strdup(warc_file_name(c->warc));
    int rc = warc_close(c->warc);
    c->warc = NULL;
    if (rc)
        fetch_warn_once(c, "--warc: %s: %s", name ? name : c->opts->warc, strerror(-rc));
    free(name);
    return rc ? CRAWL_EOUTPUT : 0;
}

/* stage_decode.c: the decoder as a body stage (fetch_stage.h). In a run
 * with a raw stage, libcurl hands over each body as sent, its content
 * coding kept; this undoes the codings libcurl would have undone, as it
 * undoes them (decode.c), and hands the body on as the row counts it
 * (fetch_stage_pass), so that the row is the one libcurl's own decoding
 * gives. fetch puts it in the chain only when a raw stage is in it. */
#include <stdlib.h>

#include "decode.h"
#include "fetch.h"
#include "fetch_stage.h"
#include "stage.h"
#include "strbuf.h"

/* A transfer's decoding: the response's decoder, and where its output goes. */
struct decoding {
    struct decode *dec;         /* the response's, from its first body byte */
    struct fetch_xfer *x;
};

/* The codings this libcurl decodes, which it offers in Accept-Encoding
 * (CURLOPT_ACCEPT_ENCODING ""): the ones undone here. */
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

static int open_decoding(void *conf, struct fetch_xfer *x, void **st)
{
    struct decoding *d = calloc(1, sizeof *d);
    if (!d) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "out of memory");
        return CRAWL_ENOMEM;
    }
    d->x = x;
    *st = d;
    return 0;
}

/* decode_sink: the decoded body, on down the chain. */
static int on_decoded(void *data, const char *p, size_t n)
{
    return fetch_stage_pass(((struct decoding *)data)->x, p, n);
}

/* Sets up the decoding of the response's body from its head. */
static int begin(void *st, struct fetch_xfer *x, long status)
{
    struct decoding *d = st;
    struct strbuf b = { 0 };
    decode_free(d->dec);
    d->dec = NULL;
    int rc = codings(x, &b);
    if (rc == 0)
        rc = decode_new(&d->dec, b.data, curl_codings(), on_decoded, d);
    sb_free(&b);
    if (rc == DECODE_EBAD) {
        fetch_stage_fail(x, CRAWL_FAIL_PROTOCOL, "%s", decode_why(d->dec));
        return -1;
    }
    if (rc) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "out of memory");
        return -1;
    }
    return 0;
}

/* Decodes n bytes of the body as sent; what comes out goes on as it
 * comes. A failure of the chain below (DECODE_ESINK) has said why. */
static int body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    struct decoding *d = st;
    int rc = d->dec ? decode_write(d->dec, p, n) : DECODE_ENOMEM;
    if (rc == DECODE_EBAD)
        fetch_stage_fail(x, CRAWL_FAIL_PROTOCOL, "%s", decode_why(d->dec));
    else if (rc == DECODE_EAFTER)
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "%s", decode_why(d->dec));
    else if (rc == DECODE_ENOMEM)
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "out of memory");
    return rc ? -1 : 0;
}

static void free_decoding(void *st)
{
    struct decoding *d = st;
    decode_free(d->dec);
    free(d);
}

const struct fetch_stage stage_decode = {
    .name = "decode",
    .kind = FETCH_STAGE_DECODER,
    .open = open_decoding,
    .begin = begin,
    .body = body,
    .free = free_decoding,
};

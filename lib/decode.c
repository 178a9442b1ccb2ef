/* decode.c: a stack of content decoders (zlib for deflate and gzip,
 * libbrotli for br, libzstd for zstd), built and driven as libcurl 7.88's
 * lib/content_encoding.c builds and drives its own: the codings named
 * last undone first, at most 5 of them, identity passed through, a name
 * not known failing the first body byte, a stream that ends early not an
 * error, bytes after a stream's end one. What a failure is called is
 * libcurl's text, so a row does not say who decoded the body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>

#include "decode.h"

#define DECODE_BUF  16384       /* output of one step, as libcurl's */
#define DECODE_MAX  5           /* libcurl's MAX_ENCODE_STACK */

/* libcurl's words: its curl_easy_strerror of CURLE_BAD_CONTENT_ENCODING
 * (br and zstd failures carry no message of their own) and of
 * CURLE_WRITE_ERROR (what it reports for bytes after a stream's end). */
#define BAD_CODING  "Unrecognized or bad HTTP Content or Transfer-Encoding"
#define WRITE_ERROR "Failed writing received data to disk/application"

enum kind { K_IDENTITY, K_DEFLATE, K_GZIP, K_BR, K_ZSTD, K_UNKNOWN };

/* The states of libcurl's zlib writer (zlibInitState). */
enum zstate { Z_UNINIT, Z_INIT, Z_INFLATING, Z_EXT_TRAILER, Z_INIT_GZIP };

struct stage {
    enum kind kind;
    enum zstate zs;             /* K_DEFLATE, K_GZIP */
    unsigned trailer;           /* bytes still tolerated after a raw deflate */
    z_stream z;
    BrotliDecoderState *br;     /* K_BR: NULL once its stream ended */
    ZSTD_DStream *zstd;
    unsigned char *buf;         /* DECODE_BUF bytes of output */
};

struct decode {
    struct stage st[DECODE_MAX];    /* in the order the header names them */
    int n;
    unsigned known;
    decode_sink sink;
    void *data;
    int err;                    /* the first error, returned ever after */
    char why[160];
};

static int stage_write(struct decode *d, int i, const char *p, size_t n);

char *decode_list(char *buf, size_t n, unsigned known)
{
    static const struct { unsigned bit; const char *name; } all[] = {
        { DECODE_DEFLATE, "deflate" }, { DECODE_GZIP, "gzip" },
        { DECODE_BR, "br" }, { DECODE_ZSTD, "zstd" },
    };
    size_t len = 0;
    if (n == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (known & all[i].bit)
            len += (size_t)snprintf(buf + (len < n ? len : n - 1), len < n ? n - len : 1,
                                    "%s%s", len ? ", " : "", all[i].name);
    if (len == 0)
        snprintf(buf, n, "identity");
    return buf;
}

/* Records the words of an error and returns it. */
static int fail(struct decode *d, int err, const char *why)
{
    snprintf(d->why, sizeof d->why, "%s", why);
    return err;
}

/* Hands stage i's output on: to the stage before it, or the sink. */
static int pass(struct decode *d, int i, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (i == 0)
        return d->sink(d->data, p, n) ? DECODE_ESINK : 0;
    return stage_write(d, i - 1, p, n);
}

/* libcurl's exit_zlib: the stream is done with, for good. */
static void zlib_end(struct stage *s)
{
    if (s->zs != Z_UNINIT)
        inflateEnd(&s->z);
    s->zs = Z_UNINIT;
}

static int zlib_error(struct decode *d, struct stage *s)
{
    char why[sizeof d->why];
    snprintf(why, sizeof why, "Error while processing content unencoding: %s",
             s->z.msg ? s->z.msg : "Unknown failure within decompression software.");
    zlib_end(s);
    return fail(d, DECODE_EBAD, why);
}

/* libcurl's process_trailer: what may follow a stream's end. A gzip
 * member may be followed by nothing (a second member included); a raw
 * deflate stream by up to 4 bytes, a zlib trailer it did not expect. */
static int zlib_trailer(struct decode *d, struct stage *s)
{
    uInt len = s->z.avail_in < s->trailer ? s->z.avail_in : s->trailer;
    int rc = 0;
    s->trailer -= len;
    s->z.avail_in -= len;
    s->z.next_in += len;
    if (s->z.avail_in)
        rc = fail(d, DECODE_EAFTER, WRITE_ERROR);
    if (rc || !s->trailer)
        zlib_end(s);
    else
        s->zs = Z_EXT_TRAILER;
    return rc;
}

/* libcurl's inflate_stream: a deflate stream without its zlib header
 * (some servers send raw deflate) is tried again raw, once, while nothing
 * has come out of it yet. */
static int zlib_inflate(struct decode *d, int i, enum zstate started)
{
    struct stage *s = &d->st[i];
    uInt nread = s->z.avail_in;
    Bytef *orig = s->z.next_in;
    int done = 0, rc = 0;

    if (s->zs != Z_INIT && s->zs != Z_INFLATING && s->zs != Z_INIT_GZIP) {
        zlib_end(s);
        return fail(d, DECODE_EAFTER, WRITE_ERROR);
    }
    while (!done && rc == 0) {
        done = 1;
        s->z.next_out = s->buf;
        s->z.avail_out = DECODE_BUF;
        int status = inflate(&s->z, Z_BLOCK);
        if (s->z.avail_out != DECODE_BUF && (status == Z_OK || status == Z_STREAM_END)) {
            s->zs = started;
            rc = pass(d, i, (const char *)s->buf, DECODE_BUF - s->z.avail_out);
            if (rc) {
                zlib_end(s);
                break;
            }
        }
        switch (status) {
        case Z_OK:
            done = 0;           /* zlib may hold output back */
            break;
        case Z_BUF_ERROR:
            break;
        case Z_STREAM_END:
            rc = zlib_trailer(d, s);
            break;
        case Z_DATA_ERROR:
            if (s->zs == Z_INIT && inflateReset2(&s->z, -MAX_WBITS) == Z_OK) {
                s->z.next_in = orig;
                s->z.avail_in = nread;
                s->zs = Z_INFLATING;
                s->trailer = 4;
                done = 0;
                break;
            }
            rc = zlib_error(d, s);
            break;
        default:
            rc = zlib_error(d, s);
            break;
        }
    }
    if (nread && s->zs == Z_INIT)
        s->zs = started;        /* no raw retry after the first bytes */
    return rc;
}

static int zlib_write(struct decode *d, int i, const char *p, size_t n)
{
    struct stage *s = &d->st[i];
    s->z.next_in = (Bytef *)p;
    s->z.avail_in = (uInt)n;
    if (s->zs == Z_EXT_TRAILER)
        return zlib_trailer(d, s);
    if (s->kind == K_GZIP && s->zs != Z_INIT_GZIP) {
        zlib_end(s);
        return fail(d, DECODE_EAFTER, WRITE_ERROR);
    }
    return zlib_inflate(d, i, s->kind == K_GZIP ? Z_INIT_GZIP : Z_INFLATING);
}

static int br_write(struct decode *d, int i, const char *p, size_t n)
{
    struct stage *s = &d->st[i];
    const uint8_t *src = (const uint8_t *)p;
    BrotliDecoderResult r = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
    int rc = 0;
    if (!s->br)
        return fail(d, DECODE_EAFTER, WRITE_ERROR);
    while ((n || r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) && rc == 0) {
        uint8_t *dst = s->buf;
        size_t left = DECODE_BUF;
        r = BrotliDecoderDecompressStream(s->br, &n, &src, &left, &dst, NULL);
        if ((rc = pass(d, i, (const char *)s->buf, DECODE_BUF - left)) != 0)
            break;
        if (r == BROTLI_DECODER_RESULT_SUCCESS) {
            BrotliDecoderDestroyInstance(s->br);
            s->br = NULL;
            if (n)
                rc = fail(d, DECODE_EAFTER, WRITE_ERROR);
            break;
        }
        if (r == BROTLI_DECODER_RESULT_ERROR) {
            BrotliDecoderErrorCode e = BrotliDecoderGetErrorCode(s->br);
            /* libcurl's brotli_map_error: allocations apart, a bad stream */
            if (e <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES &&
                e >= BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES)
                rc = DECODE_ENOMEM;
            else if (e == BROTLI_DECODER_ERROR_UNREACHABLE)
                rc = fail(d, DECODE_EAFTER, WRITE_ERROR);
            else
                rc = fail(d, DECODE_EBAD, BAD_CODING);
        }
    }
    return rc;
}

/* Frames follow one another freely; anything else after one is bad. */
static int zstd_write(struct decode *d, int i, const char *p, size_t n)
{
    struct stage *s = &d->st[i];
    ZSTD_inBuffer in = { p, n, 0 };
    for (;;) {
        ZSTD_outBuffer out = { s->buf, DECODE_BUF, 0 };
        size_t e = ZSTD_decompressStream(s->zstd, &out, &in);
        if (ZSTD_isError(e))
            return fail(d, DECODE_EBAD, BAD_CODING);
        int rc = pass(d, i, (const char *)s->buf, out.pos);
        if (rc)
            return rc;
        if (in.pos == n && out.pos < out.size)
            return 0;
    }
}

static int stage_write(struct decode *d, int i, const char *p, size_t n)
{
    struct stage *s = &d->st[i];
    switch (s->kind) {
    case K_IDENTITY:
        return pass(d, i, p, n);
    case K_DEFLATE:
    case K_GZIP:
        return zlib_write(d, i, p, n);
    case K_BR:
        return br_write(d, i, p, n);
    case K_ZSTD:
        return zstd_write(d, i, p, n);
    case K_UNKNOWN:
        break;
    }
    char why[sizeof d->why], list[64];
    snprintf(why, sizeof why, "Unrecognized content encoding type. libcurl understands %s "
             "content encodings.", decode_list(list, sizeof list, d->known));
    return fail(d, DECODE_EBAD, why);
}

int decode_write(struct decode *d, const char *p, size_t n)
{
    if (d->err)
        return d->err;
    /* zlib counts in uInt: a larger piece goes in slices. */
    while (n > 0) {
        size_t step = n > (1u << 30) ? 1u << 30 : n;
        int rc = d->n ? stage_write(d, d->n - 1, p, step) : pass(d, 0, p, step);
        if (rc)
            return d->err = rc;
        p += step;
        n -= step;
    }
    return 0;
}

/* The coding a name (len bytes) stands for, among those known. */
static enum kind kind_of(const char *name, size_t len, unsigned known)
{
    static const struct { const char *name; enum kind kind; unsigned bit; } names[] = {
        { "identity", K_IDENTITY, 0 }, { "none", K_IDENTITY, 0 },
        { "deflate", K_DEFLATE, DECODE_DEFLATE },
        { "gzip", K_GZIP, DECODE_GZIP }, { "x-gzip", K_GZIP, DECODE_GZIP },
        { "br", K_BR, DECODE_BR }, { "zstd", K_ZSTD, DECODE_ZSTD },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncasecmp(name, names[i].name, len) == 0 &&
            (names[i].bit == 0 || (known & names[i].bit)))
            return names[i].kind;
    return K_UNKNOWN;
}

/* Sets stage s up for its coding. Returns 0 or DECODE_ENOMEM. */
static int stage_init(struct stage *s, enum kind kind)
{
    s->kind = kind;
    if (kind == K_IDENTITY || kind == K_UNKNOWN)
        return 0;
    if (!(s->buf = malloc(DECODE_BUF)))
        return DECODE_ENOMEM;
    switch (kind) {
    case K_DEFLATE:
        if (inflateInit(&s->z) != Z_OK)
            return DECODE_ENOMEM;
        s->zs = Z_INIT;
        return 0;
    case K_GZIP:
        if (inflateInit2(&s->z, MAX_WBITS + 32) != Z_OK)
            return DECODE_ENOMEM;
        s->zs = Z_INIT_GZIP;    /* zlib reads the gzip header itself */
        return 0;
    case K_BR:
        return (s->br = BrotliDecoderCreateInstance(NULL, NULL, NULL)) ? 0 : DECODE_ENOMEM;
    case K_ZSTD:
        return (s->zstd = ZSTD_createDStream()) ? 0 : DECODE_ENOMEM;
    default:
        return 0;
    }
}

int decode_new(struct decode **out, const char *codings, unsigned known,
               decode_sink sink, void *data)
{
    struct decode *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d)
        return DECODE_ENOMEM;
    d->known = known;
    d->sink = sink;
    d->data = data;
    /* libcurl's Curl_build_unencoding_stack: names between commas, blanks
     * around them dropped, empty ones skipped. */
    const char *p = codings;
    do {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *name = p;
        size_t len = 0;
        for (; *p && *p != ','; p++)
            if (*p > ' ')
                len = (size_t)(p - name) + 1;
        if (!len)
            continue;
        if (d->n == DECODE_MAX) {
            *out = d;
            char why[80];
            snprintf(why, sizeof why, "Reject response due to more than %d content encodings",
                     DECODE_MAX);
            return d->err = fail(d, DECODE_EBAD, why);
        }
        if (stage_init(&d->st[d->n++], kind_of(name, len, known)) != 0) {
            decode_free(d);
            return DECODE_ENOMEM;
        }
    } while (*p);
    *out = d;
    return 0;
}

const char *decode_why(const struct decode *d)
{
    return d->why[0] ? d->why : NULL;
}

void decode_free(struct decode *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n; i++) {
        struct stage *s = &d->st[i];
        if (s->kind == K_DEFLATE || s->kind == K_GZIP)
            zlib_end(s);
        if (s->br)
            BrotliDecoderDestroyInstance(s->br);
        if (s->zstd)
            ZSTD_freeDStream(s->zstd);
        free(s->buf);
    }
    free(d);
}

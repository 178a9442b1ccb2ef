/* decode.h: undoing a response's content codings (RFC 9110, 8.4) the way
 * libcurl 7.88 undoes them, for a transfer that receives its body as sent
 * (--warc): the same codings understood, the same limits, the same
 * failures in the same words, so that a row reads the same whoever decoded
 * its body. Nothing here knows HTTP or libcurl's handles. */
#ifndef CRAWL_DECODE_H
#define CRAWL_DECODE_H

#include <stddef.h>

/* The codings a decoder may undo (identity and none always pass). */
enum decode_coding {
    DECODE_DEFLATE = 1u << 0,
    DECODE_GZIP    = 1u << 1,   /* and x-gzip */
    DECODE_BR      = 1u << 2,
    DECODE_ZSTD    = 1u << 3,
};

/* What decode_new and decode_write return besides 0. */
enum decode_err {
    DECODE_ESINK  = -1, /* the sink returned non-zero: its own failure */
    DECODE_EBAD   = -2, /* a coding not understood, too many codings, or
                         * data that is not of its coding: decode_why */
    DECODE_EAFTER = -3, /* bytes after the end of a coded stream, which
                         * libcurl reports as its write error: decode_why */
    DECODE_ENOMEM = -4,
};

/* Where decoded bytes go. Returns 0, or non-zero to stop. */
typedef int (*decode_sink)(void *data, const char *p, size_t n);

struct decode;

/* Makes in *out a decoder for a Content-Encoding value (header lines
 * joined with ", "), undoing the codings of known it names, the last
 * first, and handing what comes out to sink. A name not known fails the
 * first body byte, as libcurl's does. Returns 0, DECODE_EBAD (more than 5
 * codings: *out is set, for decode_why) or DECODE_ENOMEM (*out is NULL).
 * The caller frees *out with decode_free. */
int decode_new(struct decode **out, const char *codings, unsigned known,
               decode_sink sink, void *data);

/* Decodes n more bytes at p. Returns 0 or a decode_err; after an error
 * every later call returns it again. */
int decode_write(struct decode *d, const char *p, size_t n);

/* The words of the last DECODE_EBAD or DECODE_EAFTER (libcurl's own
 * text for the same failure), or NULL. Owned by d. */
const char *decode_why(const struct decode *d);

/* Frees d (NULL is fine). */
void decode_free(struct decode *d);

/* Writes into buf (size n) the codings of known, comma-separated in
 * libcurl's order ("deflate, gzip, br, zstd"), or "identity" for none.
 * Returns buf. */
char *decode_list(char *buf, size_t n, unsigned known);

#endif

/* strbuf.h: a growable byte string for building output rows. Functions
 * that grow it record running out of memory in the buffer instead of
 * returning it, so that a caller builds a whole row and checks once. */
#ifndef CRAWL_STRBUF_H
#define CRAWL_STRBUF_H

#include <stddef.h>

struct strbuf {
    char  *data;        /* NUL-terminated while len < cap; owned, unless lent */
    size_t len, cap;
    int    nomem;       /* a growth failed; the contents are incomplete */
    int    lent;        /* data is the caller's (sb_init_lent) until it grows */
};

/* Makes b empty, in the n bytes at buf (n > 0), which the caller owns and
 * which must outlive b's use: a row built in a buffer on the stack costs
 * no allocation. Past n bytes b moves to the heap, as any strbuf grows;
 * sb_free frees only what b allocated. */
void sb_init_lent(struct strbuf *b, char *buf, size_t n);

/* Makes room for n more bytes. Returns 0, or -1 (and sets nomem). */
int sb_reserve(struct strbuf *b, size_t n);

/* Appends n bytes at p. */
void sb_add(struct strbuf *b, const void *p, size_t n);

/* Appends the NUL-terminated s. */
void sb_adds(struct strbuf *b, const char *s);

/* Appends one byte. */
void sb_addc(struct strbuf *b, char ch);

/* Appends printf-style text. */
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Empties b and keeps its memory. */
void sb_reset(struct strbuf *b);

/* Frees b's memory and empties it. */
void sb_free(struct strbuf *b);

#endif

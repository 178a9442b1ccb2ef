/* scan.h: a streaming scanner for the default link rule (//a/@href). It
 * tokenizes HTML as bytes arrive, after the WHATWG HTML Standard's
 * tokenizer, only as far as links need: tags and their attributes,
 * comments, doctypes and other markup declarations, and the elements whose
 * content is text (script, style, title, textarea, xmp, iframe, noembed,
 * noframes, plaintext). It builds no tree and allocates nothing while it
 * runs. It hands over each <a href>, the first <base href> and the first
 * <meta> charset; what they mean (cleaning, resolving, keeping each link
 * once, switching decoders) is the caller's. html.c uses it for the default
 * rule; libxml2 stays for XPath rules.
 *
 * Where it recovers as libxml2 2.9 does rather than as a browser would:
 *  - a start tag cut off by the end of the body is still reported;
 *  - a text-only element other than script and style (title, textarea, ...)
 *    that the body never closes: the markup after its start tag is scanned
 *    as markup after all (a second tokenizer runs in its content, and what
 *    it found is reported at the end of the body), so "<title>x<body>..."
 *    without </title> keeps its links;
 *  - named character references need their ';' and come from HTML 4's
 *    table (libxml2's: htmlEntityLookup).
 * Values are UTF-8: bytes pass through while the body is valid UTF-8 (as
 * libxml2 2.9 checks it), and from the first byte that is not, each byte is
 * read as ISO-8859-1; the caller may start that at any point. */
#ifndef CRAWL_SCAN_H
#define CRAWL_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* What a charset callback asks of the scanner. */
enum scan_next {
    SCAN_GO = 0,                /* go on as before */
    SCAN_LATIN1,                /* read every byte from here on as ISO-8859-1 */
    SCAN_STOP,                  /* stop: the caller parses the rest itself */
};

struct scan_cb {
    /* An <a href> value, len bytes of UTF-8 (may hold NUL bytes when the
     * page does); in document order. Returns 0, or non-zero to stop the
     * scanner (an error of the caller's). */
    int (*link)(void *data, const char *href, size_t len);
    /* The first <base> with an href, once. Same return. */
    int (*base)(void *data, const char *href, size_t len);
    /* The charset named by the first <meta charset> or <meta http-equiv=
     * "Content-Type" content="...charset=NAME">, NUL-terminated, as libxml2
     * 2.9 takes it (the rest of the content after "charset=", leading blanks
     * skipped); not called after scan_pin_charset. Returns an enum
     * scan_next; the scanner stops right after the <meta> tag's '>' for
     * SCAN_STOP. */
    int (*charset)(void *data, const char *name);
};

struct scan;

/* Returns a new scanner calling cb (which must outlive it) with data, or
 * NULL when out of memory. Free it with scan_free. */
struct scan *scan_new(const struct scan_cb *cb, void *data);
void scan_free(struct scan *s);

/* The body's encoding is settled (a byte order mark or an HTTP charset):
 * <meta> charsets are ignored. latin1: every byte is ISO-8859-1. Call it
 * before the first scan_feed. */
void scan_pin_charset(struct scan *s, int latin1);

/* Scans the next len bytes of the body. Returns the number of bytes used:
 * len, or fewer when a callback stopped the scanner (for SCAN_STOP, the
 * bytes after the <meta> tag are the caller's); once stopped, always 0. */
size_t scan_feed(struct scan *s, const char *buf, size_t len);

/* Ends the body: a start tag cut off is reported, and so is what a text
 * element left open hid. Returns 0, or non-zero when a callback stopped
 * the scanner (then, or earlier). */
int scan_finish(struct scan *s);

#endif

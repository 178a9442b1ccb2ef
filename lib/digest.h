/* digest.h: SHA-1 as WARC writes it (WARC-Payload-Digest) and the rows'
 * digest column repeat it: "sha1:" and the RFC 4648 base32 of the 20
 * bytes. The digest is OpenSSL's, taken as bytes arrive; nothing here
 * knows what the bytes are. */
#ifndef CRAWL_DIGEST_H
#define CRAWL_DIGEST_H

#include <stddef.h>

#define DIGEST_LEN  20          /* SHA-1's bytes */
#define DIGEST_TEXT 38          /* "sha1:", 32 base32 characters, a NUL */

struct digest;

/* Returns a digest begun afresh (freed with digest_free), or NULL when
 * out of memory. */
struct digest *digest_new(void);
void digest_free(struct digest *d);

/* Begins d afresh. Returns 0, or -1 when OpenSSL could not (d then gives
 * no digest: digest_end fails). */
int digest_reset(struct digest *d);

/* Adds the n bytes at p. */
void digest_add(struct digest *d, const void *p, size_t n);

/* Writes the digest of every byte added since the last reset into md and
 * leaves d as it is, so more bytes may follow. Returns 0 or -1. */
int digest_peek(const struct digest *d, unsigned char md[DIGEST_LEN]);

/* The same, and d needs a reset before it is used again (cheaper: no copy
 * of the state). Returns 0 or -1. */
int digest_end(struct digest *d, unsigned char md[DIGEST_LEN]);

/* The SHA-1 of the n bytes at p, in md. Returns 0 or -1. */
int digest_of(const void *p, size_t n, unsigned char md[DIGEST_LEN]);

/* Writes "sha1:" and the base32 of md into out. Returns out. */
char *digest_text(const unsigned char md[DIGEST_LEN], char out[DIGEST_TEXT]);

/* Reads a digest as digest_text writes it, or its 32 base32 characters
 * alone (pywb's and warcio's CDXJ lines drop "sha1:"), n bytes at s, into
 * md. Returns 0, or -1 when it is neither. */
int digest_parse(const char *s, size_t n, unsigned char md[DIGEST_LEN]);

/* Writes the unpadded RFC 4648 base32 text of the n bytes at p into out
 * (room for (n * 8 + 4) / 5 + 1 bytes). Returns out. */
char *digest_base32(const unsigned char *p, size_t n, char *out);

#endif

/* digest.c: SHA-1 through OpenSSL's SHA1_* calls, and its base32 text.
 * Not through EVP: in OpenSSL 3.0 an EVP context is a heap object of its
 * own, and the first EVP init of a process loads the default provider
 * and its method store, some 200 KiB of libcrypto's code made resident
 * for a row's digest (measured by the crawl's peak RSS); SHA1_* runs the
 * same block function (SHA-NI where the CPU has it) on a plain struct the
 * caller owns. The calls are deprecated in 3.0, not removed, and Debian
 * builds them. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/sha.h>

#include "digest.h"

struct digest {
    SHA_CTX ctx;
    int ok;                     /* the init worked: the state is SHA-1's */
};

struct digest *digest_new(void)
{
    struct digest *d = malloc(sizeof *d);
    if (d)
        digest_reset(d);
    return d;
}

void digest_free(struct digest *d)
{
    free(d);
}

int digest_reset(struct digest *d)
{
    d->ok = SHA1_Init(&d->ctx) == 1;
    return d->ok ? 0 : -1;
}

void digest_add(struct digest *d, const void *p, size_t n)
{
    if (d->ok && n > 0 && SHA1_Update(&d->ctx, p, n) != 1)
        d->ok = 0;
}

int digest_end(struct digest *d, unsigned char md[DIGEST_LEN])
{
    int ok = d->ok && SHA1_Final(md, &d->ctx) == 1;
    d->ok = 0;
    return ok ? 0 : -1;
}

int digest_peek(const struct digest *d, unsigned char md[DIGEST_LEN])
{
    struct digest copy = *d;
    return digest_end(&copy, md);
}

int digest_of(const void *p, size_t n, unsigned char md[DIGEST_LEN])
{
    SHA_CTX ctx;
    return SHA1_Init(&ctx) == 1 && SHA1_Update(&ctx, p, n) == 1 && SHA1_Final(md, &ctx) == 1
           ? 0 : -1;
}

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

char *digest_base32(const unsigned char *p, size_t n, char *out)
{
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8) | p[i];
        bits += 8;
        while (bits >= 5) {
            out[o++] = b32[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out[o++] = b32[(acc << (5 - bits)) & 31];
    out[o] = '\0';
    return out;
}

char *digest_text(const unsigned char md[DIGEST_LEN], char out[DIGEST_TEXT])
{
    memcpy(out, "sha1:", 5);
    digest_base32(md, DIGEST_LEN, out + 5);
    return out;
}

int digest_parse(const char *s, size_t n, unsigned char md[DIGEST_LEN])
{
    if (n > 5 && strncasecmp(s, "sha1:", 5) == 0) {
        s += 5;
        n -= 5;
    }
    /* 20 bytes are 160 bits, 32 characters of 5 bits with none left over. */
    if (n != 32)
        return -1;
    unsigned acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = memchr(b32, s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i], 32);
        if (!c || !s[i])
            return -1;
        acc = (acc << 5) | (unsigned)(c - b32);
        bits += 5;
        if (bits >= 8) {
            md[o++] = (unsigned char)(acc >> (bits - 8));
            bits -= 8;
        }
    }
    return 0;
}

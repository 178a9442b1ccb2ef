/* digest.c: SHA-1 through OpenSSL's EVP interface, and its base32 text.
 * The algorithm is fetched once for the process: OpenSSL 3.0 would look
 * it up in its provider store, under a lock, at every EVP_sha1() init,
 * which is every transfer here. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/evp.h>

#include "digest.h"

struct digest {
    EVP_MD_CTX *ctx;
    int ok;                     /* the init worked: the state is SHA-1's */
};

static pthread_once_t sha1_once = PTHREAD_ONCE_INIT;
static const EVP_MD *sha1_md;

static void sha1_fetch(void)
{
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA1", NULL);
    sha1_md = md ? md : EVP_sha1();
}

static const EVP_MD *sha1(void)
{
    pthread_once(&sha1_once, sha1_fetch);
    return sha1_md;
}

struct digest *digest_new(void)
{
    struct digest *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    if (!(d->ctx = EVP_MD_CTX_new())) {
        free(d);
        return NULL;
    }
    digest_reset(d);
    return d;
}

void digest_free(struct digest *d)
{
    if (!d)
        return;
    EVP_MD_CTX_free(d->ctx);
    free(d);
}

int digest_reset(struct digest *d)
{
    d->ok = EVP_DigestInit_ex2(d->ctx, sha1(), NULL) == 1;
    return d->ok ? 0 : -1;
}

void digest_add(struct digest *d, const void *p, size_t n)
{
    if (d->ok && n > 0 && EVP_DigestUpdate(d->ctx, p, n) != 1)
        d->ok = 0;
}

int digest_end(struct digest *d, unsigned char md[DIGEST_LEN])
{
    unsigned len = 0;
    int ok = d->ok && EVP_DigestFinal_ex(d->ctx, md, &len) == 1 && len == DIGEST_LEN;
    d->ok = 0;
    return ok ? 0 : -1;
}

int digest_peek(const struct digest *d, unsigned char md[DIGEST_LEN])
{
    struct digest copy = { EVP_MD_CTX_new(), d->ok };
    int rc = -1;
    if (copy.ctx && d->ok && EVP_MD_CTX_copy_ex(copy.ctx, d->ctx) == 1)
        rc = digest_end(&copy, md);
    EVP_MD_CTX_free(copy.ctx);
    return rc;
}

int digest_of(const void *p, size_t n, unsigned char md[DIGEST_LEN])
{
    unsigned len = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex2(ctx, sha1(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, p, n) == 1 && EVP_DigestFinal_ex(ctx, md, &len) == 1 &&
             len == DIGEST_LEN;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
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

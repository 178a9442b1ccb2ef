/* url_host.c: the URL Standard's host parser for http and https ("Host
 * parsing"): bracketed IPv6 addresses, IPv4 addresses in every form the
 * standard reads (192.168.257, 0xC0A80001, 3232235777), and domains, with
 * international names turned into punycode by ICU's UTS #46 processing,
 * the one the standard names ("domain to ASCII"). Each host comes out in
 * the standard's serialisation: what a browser would connect to, and one
 * spelling for each. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/uidna.h>

#include "ascii.h"
#include "errors.h"
#include "url_internal.h"

/* ---- IPv6 ------------------------------------------------------------------ */

/* The IPv6 parser of the standard: s[0..n), without its brackets, into
 * a[8]. Returns 0 or -EINVAL. */
static int ipv6_parse(const char *s, size_t n, uint16_t a[8])
{
    size_t p = 0;
    int piece = 0, compress = -1;

#define C (p < n ? (unsigned char)s[p] : -1)
    memset(a, 0, 8 * sizeof *a);
    if (C == ':') {
        if (p + 1 >= n || s[p + 1] != ':')
            return -EINVAL;
        p += 2;
        compress = ++piece;
    }
    while (C != -1) {
        unsigned value = 0;
        int len = 0;

        if (piece == 8)
            return -EINVAL;
        if (C == ':') {
            if (compress >= 0)
                return -EINVAL;
            p++;
            compress = ++piece;
            continue;
        }
        while (len < 4 && C != -1 && ascii_hex(C)) {
            int d = C;
            value = value * 16 + (unsigned)(ascii_digit(d) ? d - '0' : ascii_lower(d) - 'a' + 10);
            p++;
            len++;
        }
        if (C == '.') {
            /* An IPv4 address in the last two pieces. */
            int seen = 0;
            if (len == 0 || piece > 6)
                return -EINVAL;
            p -= (size_t)len;
            while (C != -1) {
                int v = -1;
                if (seen > 0) {
                    if (C != '.' || seen >= 4)
                        return -EINVAL;
                    p++;
                }
                if (C == -1 || !ascii_digit(C))
                    return -EINVAL;
                while (C != -1 && ascii_digit(C)) {
                    if (v == 0)
                        return -EINVAL;         /* no leading zeros */
                    v = v < 0 ? C - '0' : v * 10 + (C - '0');
                    if (v > 255)
                        return -EINVAL;
                    p++;
                }
                a[piece] = (uint16_t)(a[piece] * 0x100 + v);
                if (++seen == 2 || seen == 4)
                    piece++;
            }
            if (seen != 4)
                return -EINVAL;
            break;
        } else if (C == ':') {
            p++;
            if (C == -1)
                return -EINVAL;
        } else if (C != -1) {
            return -EINVAL;
        }
        a[piece++] = (uint16_t)value;
    }
#undef C
    if (compress >= 0) {
        int swaps = piece - compress;
        piece = 7;
        while (piece != 0 && swaps > 0) {
            uint16_t t = a[piece];
            a[piece] = a[compress + swaps - 1];
            a[compress + swaps - 1] = t;
            piece--;
            swaps--;
        }
    } else if (piece != 8) {
        return -EINVAL;
    }
    return 0;
}

/* Writes a as the standard serialises it: lower-case hex, the first
 * longest run of two or more zero pieces as "::". */
static void ipv6_put(const uint16_t a[8], struct strbuf *b)
{
    int best = -1, bestlen = 1, ignore0 = 0;
    char piece[8];

    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && a[j] == 0)
            j++;
        if (j - i > bestlen) {
            best = i;
            bestlen = j - i;
        }
        i = j > i ? j : i + 1;
    }
    sb_addc(b, '[');
    for (int i = 0; i < 8; i++) {
        if (ignore0 && a[i] == 0)
            continue;
        ignore0 = 0;
        if (i == best) {
            sb_adds(b, i == 0 ? "::" : ":");
            ignore0 = 1;
            continue;
        }
        snprintf(piece, sizeof piece, "%x", a[i]);
        sb_adds(b, piece);
        if (i != 7)
            sb_addc(b, ':');
    }
    sb_addc(b, ']');
}

/* ---- IPv4 ------------------------------------------------------------------ */

/* The standard's IPv4 number parser: decimal, 0x hex or 0 octal; "" after
 * a prefix is 0. Returns 0 and *v (capped past 2^32: too large either
 * way), or -EINVAL. */
static int ipv4_number(const char *s, size_t n, uint64_t *v)
{
    unsigned radix = 10;

    if (n == 0)
        return -EINVAL;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        radix = 16;
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0') {
        radix = 8;
        s++;
        n--;
    }
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        unsigned d;
        if (ascii_digit(c))
            d = (unsigned)(c - '0');
        else if (radix == 16 && ascii_hex(c))
            d = (unsigned)(ascii_lower(c) - 'a' + 10);
        else
            return -EINVAL;
        if (d >= radix)
            return -EINVAL;
        if (*v <= UINT32_MAX)
            *v = *v * radix + d;
    }
    return 0;
}

/* Does the domain s[0..n) end in a number, and so have to be an IPv4
 * address ("ends in a number checker")? */
static int ends_in_number(const char *s, size_t n)
{
    size_t start;
    uint64_t v;

    if (n > 0 && s[n - 1] == '.') {
        if (n == 1)
            return 0;
        n--;
    }
    start = n;
    while (start > 0 && s[start - 1] != '.')
        start--;
    if (start == n)
        return 0;
    for (size_t i = start; i < n; i++)
        if (!ascii_digit(s[i]))
            return ipv4_number(s + start, n - start, &v) == 0;
    return 1;
}

/* The standard's IPv4 parser. Returns 0 and *addr, or -EINVAL. */
static int ipv4_parse(const char *s, size_t n, uint32_t *addr)
{
    uint64_t v[4], last;
    size_t count = 0, start = 0;

    if (n > 0 && s[n - 1] == '.' && n > 1)
        n--;                    /* one trailing dot is allowed */
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        if (count == 4 || ipv4_number(s + start, i - start, &v[count]) != 0)
            return -EINVAL;
        count++;
        start = i + 1;
    }
    for (size_t i = 0; i + 1 < count; i++)
        if (v[i] > 255)
            return -EINVAL;
    last = v[count - 1];
    if (last >= (uint64_t)1 << (8 * (5 - count)))
        return -EINVAL;
    *addr = (uint32_t)last;
    for (size_t i = 0; i + 1 < count; i++)
        *addr += (uint32_t)(v[i] << (8 * (3 - i)));
    return 0;
}

/* ---- domains --------------------------------------------------------------- */

/* A forbidden domain code point (URL Standard, 3.1): never in a host. A
 * byte past ASCII cannot be left after "domain to ASCII" either. */
static int forbidden(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || strchr("#%/:<>?@[\\]^|", c) != NULL;
}

/* Errors of UTS #46 that the standard's "domain to ASCII" does not check
 * (CheckHyphens and VerifyDnsLength are false for URLs). */
#define IDNA_IGNORED (UIDNA_ERROR_EMPTY_LABEL | UIDNA_ERROR_LABEL_TOO_LONG |          \
                      UIDNA_ERROR_DOMAIN_NAME_TOO_LONG | UIDNA_ERROR_LEADING_HYPHEN | \
                      UIDNA_ERROR_TRAILING_HYPHEN | UIDNA_ERROR_HYPHEN_3_4)

/* Turns the domain s[0..n), UTF-8 with bytes past ASCII, into ASCII (UTS
 * #46 ToASCII, nontransitional, with the Bidi and joiner checks the
 * standard asks for): "faß.ExAmPlE" is xn--fa-hia.example. Returns 0 and
 * *out (malloc'd), -EINVAL when the name is not valid, or CRAWL_ENOMEM.
 *
 * ICU does this rather than libidn2 (which libcurl uses): libidn2 applies
 * IDNA2008's rules on top, refusing symbols (☃.net) and hyphens the
 * standard allows. A UTS #46 converter is opened per name: only names
 * past ASCII come here, and it costs about a microsecond, where one kept
 * for the process would be hidden state. */
static int to_ascii(const char *s, size_t n, char **out, size_t *outlen)
{
    UErrorCode e = U_ZERO_ERROR;
    UIDNAInfo info = UIDNA_INFO_INITIALIZER;
    UIDNA *idna;
    int32_t len, cap = (int32_t)(n * 4 + 64);
    int err = 0;

    *out = NULL;
    if (n > INT32_MAX / 8)
        return -EINVAL;
    idna = uidna_openUTS46(UIDNA_CHECK_BIDI | UIDNA_CHECK_CONTEXTJ |
                           UIDNA_NONTRANSITIONAL_TO_ASCII, &e);
    if (U_FAILURE(e))
        return e == U_MEMORY_ALLOCATION_ERROR ? CRAWL_ENOMEM : -EINVAL;
    for (;;) {
        if (!(*out = malloc((size_t)cap + 1))) {
            err = CRAWL_ENOMEM;
            break;
        }
        e = U_ZERO_ERROR;
        len = uidna_nameToASCII_UTF8(idna, s, (int32_t)n, *out, cap, &info, &e);
        if (e == U_BUFFER_OVERFLOW_ERROR && len > cap) {
            free(*out);
            cap = len;
            continue;
        }
        if (e == U_MEMORY_ALLOCATION_ERROR)
            err = CRAWL_ENOMEM;
        else if (U_FAILURE(e) || (info.errors & ~IDNA_IGNORED))
            err = -EINVAL;
        break;
    }
    uidna_close(idna);
    if (err) {
        free(*out);
        *out = NULL;
        return err;
    }
    (*out)[len] = '\0';
    *outlen = (size_t)len;
    return 0;
}

int url__host(const char *in, size_t n, struct strbuf *b)
{
    char small[256], *d = small, *idn = NULL;
    size_t k = 0;
    int err = 0, wide = 0;
    uint32_t v4;

    if (n > 0 && in[0] == '[') {
        uint16_t a[8];
        if (n < 2 || in[n - 1] != ']' || ipv6_parse(in + 1, n - 2, a) != 0)
            return -EINVAL;
        ipv6_put(a, b);
        return b->nomem ? CRAWL_ENOMEM : 0;
    }
    if (n > sizeof small && !(d = malloc(n)))
        return CRAWL_ENOMEM;
    /* Percent-decoded first: %41 in a host is A, and %2e a dot. */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '%' && i + 2 < n && ascii_hex(in[i + 1]) && ascii_hex(in[i + 2])) {
            int hi = ascii_lower(in[i + 1]), lo = ascii_lower(in[i + 2]);
            c = (unsigned char)(((ascii_digit(hi) ? hi - '0' : hi - 'a' + 10) << 4) |
                                (ascii_digit(lo) ? lo - '0' : lo - 'a' + 10));
            i += 2;
        }
        wide |= c >= 0x80;
        d[k++] = (char)ascii_lower(c);
    }
    /* An ASCII name is its own ASCII form, lower-cased: UTS #46 maps
     * nothing else in ASCII when STD3 rules are off. Labels written as
     * punycode ("xn--") are kept as they are, not decoded and checked:
     * ICU 72 knows Unicode 15.0, and refuses labels (xn--, xn--pokxncvks)
     * that the standard's current data accepts. */
    if (wide) {
        if ((err = to_ascii(d, k, &idn, &k)) != 0)
            goto out;
    }
    const char *h = idn ? idn : d;
    if (k == 0) {
        err = -EINVAL;
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        if (forbidden((unsigned char)h[i])) {
            err = -EINVAL;
            goto out;
        }
    if (ends_in_number(h, k)) {
        if ((err = ipv4_parse(h, k, &v4)) == 0)
            sb_printf(b, "%u.%u.%u.%u", v4 >> 24, (v4 >> 16) & 255, (v4 >> 8) & 255, v4 & 255);
    } else {
        sb_add(b, h, k);
    }
    if (!err && b->nomem)
        err = CRAWL_ENOMEM;
out:
    free(idn);
    if (d != small)
        free(d);
    return err;
}

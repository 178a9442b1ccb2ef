/* url.c: every URL operation of crawl, on the URL Standard's parser
 * (url_parse.c, url_host.c), and the only user of libcurl's URL API, which
 * checks that a listed URL is one libcurl will fetch as listed. What two
 * spellings of one URL have in common is decided here, once, in
 * url_norm_escapes. The lists that keep a page's links once each live here
 * too. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "ascii.h"
#include "errors.h"
#include "url.h"
#include "url_internal.h"
#include "vec.h"

/* ---- characters ---------------------------------------------------------
 * ASCII only: a URL's syntax is ASCII (RFC 3986), whatever the locale. */

/* Returns the length of the scheme s starts with, or 0 when it starts with
 * none: a letter, then letters, digits, '+', '-' or '.', then ':' (RFC
 * 3986, 3.1). */
static size_t scheme_len(const char *s)
{
    const char *p = s + 1;

    if (!ascii_alpha((unsigned char)s[0]))
        return 0;
    while (ascii_alpha((unsigned char)*p) || ascii_digit((unsigned char)*p) ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return *p == ':' ? (size_t)(p - s) : 0;
}

/* Is s[0..n) "http" or "https", in any case? */
static int is_http(const char *s, size_t n)
{
    return (n == 4 && strncasecmp(s, "http", 4) == 0) ||
           (n == 5 && strncasecmp(s, "https", 5) == 0);
}

static const char hex_digits[] = "0123456789ABCDEF";

static int hex_value(int c)
{
    return ascii_digit(c) ? c - '0' : ascii_lower(c) - 'a' + 10;
}

/* ---- the parts the frontier keys on ---------------------------------------- */

/* Fills the empty *p from parsed URL r, which it frees. Returns 0, or
 * CRAWL_ENOMEM with *p empty. */
static int parts_of(struct url__rec *r, struct url_parts *p)
{
    size_t kl = r->host_end - r->host + sizeof "https://:65535";
    int err;

    if ((err = url_norm_escapes(r->href, r->len, &p->norm)) == 0 &&
        (err = url_norm_escapes(r->href + r->path, r->len - r->path, &p->path)) == 0) {
        p->href = r->href;
        r->href = NULL;
        p->host = strndup(p->href + r->host, r->host_end - r->host);
        p->key = malloc(kl);
        if (!p->host || !p->key)
            err = CRAWL_ENOMEM;
        else
            snprintf(p->key, kl, "%s://%s:%d", r->https ? "https" : "http", p->host, r->port);
    }
    url__rec_free(r);
    if (err)
        url_parts_free(p);
    return err;
}

/* ---- checking a listed URL ----------------------------------------------- */

static const char *const problems[] = {
    "empty URL",
    "contains control characters",
    "contains spaces",
    "not an absolute http or https URL (no scheme)",
    "unsupported scheme: only http and https are fetched",
    "malformed URL",
    "URL has no host",
};

/* The checks that need no parser, in the order that picks the message a
 * line gets. Returns NULL or a problem. */
static const char *problem_of(const char *s)
{
    size_t n;

    if (!*s)
        return problems[0];
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return problems[1];
    if ((n = scheme_len(s)) == 0)
        return problems[3];
    if (!is_http(s, n))
        return problems[4];
    if (strncmp(s + n, "://", 3) != 0)
        return problems[5];
    if (strchr(s, ' '))
        return problems[2];
    return NULL;
}

int url_validate_split(const char *s, const char **why, struct url_parts *p)
{
    CURLU *u;
    CURLUcode rc;
    char *host = NULL;
    struct url__rec r;
    int err;

    if (p)
        memset(p, 0, sizeof *p);
    if ((*why = problem_of(s)))
        return -EINVAL;
    if (!(u = curl_url()))
        return CRAWL_ENOMEM;
    /* As listed, without CURLU_URLENCODE: this is the text fetch.c gives
     * libcurl, and what libcurl refuses here it would refuse there. */
    rc = curl_url_set(u, CURLUPART_URL, s, 0);
    if (rc == CURLUE_OK) {
        rc = curl_url_get(u, CURLUPART_HOST, &host, 0);
        if (rc != CURLUE_OUT_OF_MEMORY && (rc != CURLUE_OK || !*host))
            *why = problems[6];
    } else if (rc != CURLUE_OUT_OF_MEMORY) {
        *why = problems[5];
    }
    curl_free(host);
    curl_url_cleanup(u);
    if (rc == CURLUE_OUT_OF_MEMORY)
        return CRAWL_ENOMEM;
    if (*why)
        return -EINVAL;
    /* Links are parsed by the standard's parser, and so is a listed URL
     * when its links are followed: one it refuses (a host like a|b, an
     * IPv4 address past 255) is malformed whatever libcurl makes of it. */
    if ((err = url__parse(s, strlen(s), NULL, &r)) != 0) {
        if (err == CRAWL_ENOMEM)
            return err;
        *why = problems[5];
        return -EINVAL;
    }
    if (p)
        return parts_of(&r, p);
    url__rec_free(&r);
    return 0;
}

int url_validate(const char *s, const char **why)
{
    return url_validate_split(s, why, NULL);
}

/* ---- cleaning an href ---------------------------------------------------- */

int url_clean_n(const char *in, size_t len, char **out)
{
    size_t n, cut, tail;
    char *s, *w;

    *out = NULL;
    while (len > 0 && (unsigned char)*in <= 0x20) {
        in++;
        len--;
    }
    while (len > 0 && (unsigned char)in[len - 1] <= 0x20)
        len--;
    if (len > URL_MAX)
        return 0;
    /* The fragment goes; spaces and controls just before it are no longer
     * at the end, and the parser must not trim them: they are written
     * encoded, as the parser would write them (or refuse them, in a host). */
    for (cut = 0; cut < len && in[cut] != '#'; cut++)
        ;
    for (tail = cut; cut < len && tail > 0 && (unsigned char)in[tail - 1] <= 0x20; tail--)
        ;

    s = malloc(3 * len + 1);
    if (!s)
        return CRAWL_ENOMEM;
    w = s;
    for (size_t i = 0; i < cut; i++) {
        unsigned char c = (unsigned char)in[i];
        /* The URL standard removes these wherever they are: an href
         * broken over lines in the source is one URL. */
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '\0' || i >= tail) {
            *w++ = '%';
            *w++ = hex_digits[c >> 4];
            *w++ = hex_digits[c & 15];
        } else {
            *w++ = (char)c;
        }
    }
    *w = '\0';

    /* Without a scheme the href is relative. */
    if ((size_t)(w - s) > URL_MAX || ((n = scheme_len(s)) && !is_http(s, n))) {
        free(s);
        return 0;
    }
    *out = s;
    return 0;
}

int url_clean(const char *href, char **out)
{
    return url_clean_n(href, strlen(href), out);
}

/* ---- bases and resolution ------------------------------------------------ */

struct url_base {
    struct url__rec rec;        /* parsed once, for every link of the page */
};

int url_base_new(const char *page_url, const char *base_href, struct url_base **out)
{
    struct url__rec page, with_base;
    int err;

    *out = NULL;
    if (!page_url)
        return 0;
    if ((err = url__parse(page_url, strlen(page_url), NULL, &page)) != 0)
        return err == CRAWL_ENOMEM ? err : 0;
    /* HTML: the base href parsed against the page's URL replaces it,
     * unless it does not parse; one of another scheme replaces it too. */
    if (base_href) {
        err = url__parse(base_href, strlen(base_href), &page, &with_base);
        if (err == CRAWL_ENOMEM || err == -EPROTONOSUPPORT) {
            url__rec_free(&page);
            return err == CRAWL_ENOMEM ? err : 0;
        }
        if (err == 0) {
            url__rec_free(&page);
            page = with_base;
        }
    }
    if (!(*out = malloc(sizeof **out))) {
        url__rec_free(&page);
        return CRAWL_ENOMEM;
    }
    (*out)->rec = page;
    return 0;
}

void url_base_free(struct url_base *b)
{
    if (!b)
        return;
    url__rec_free(&b->rec);
    free(b);
}

int url_resolve(const struct url_base *b, const char *href, char **out)
{
    struct url__rec r;
    int err;

    *out = NULL;
    if ((err = url__parse(href, strlen(href), b ? &b->rec : NULL, &r)) != 0)
        return err == CRAWL_ENOMEM ? err : 0;
    if (r.len > URL_MAX) {
        url__rec_free(&r);
        return 0;
    }
    *out = r.href;
    return 0;
}

/* ---- normal form and parts ----------------------------------------------- */

/* Is c one of RFC 3986's unreserved characters (2.3)? */
static int unreserved(int c)
{
    return ascii_alpha(c) || ascii_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Is c never literal in a URI (RFC 3986, 2: neither reserved nor
 * unreserved)? A '%' that starts no escape is not either: written %25, it
 * cannot make an escape of the bytes after it once they are decoded
 * ("%3%63" would become "%3c"), and normalising stays idempotent. */
static int never_literal(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || strchr("%\"<>\\^`{|}", c) != NULL;
}

int url_norm_escapes(const char *s, size_t n, char **out)
{
    char *w = malloc(3 * n + 1);

    if (!(*out = w))
        return CRAWL_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%' && i + 2 < n && ascii_hex(s[i + 1]) && ascii_hex(s[i + 2])) {
            c = (unsigned char)(hex_value(s[i + 1]) << 4 | hex_value(s[i + 2]));
            i += 2;
            if (unreserved(c)) {
                *w++ = (char)c;
                continue;
            }
        } else if (!never_literal(c)) {
            *w++ = (char)c;
            continue;
        }
        *w++ = '%';
        *w++ = hex_digits[c >> 4];
        *w++ = hex_digits[c & 15];
    }
    *w = '\0';
    return 0;
}

int url_normalise(const char *url, char **out)
{
    struct url__rec r;
    int err;

    *out = NULL;
    if ((err = url__parse(url, strlen(url), NULL, &r)) != 0)
        return err == CRAWL_ENOMEM ? err : -EINVAL;
    err = url_norm_escapes(r.href, r.len, out);
    url__rec_free(&r);
    return err;
}

/* ---- the canonical form ------------------------------------------------- */

/* One argument of a query: s[0..len), its name the first nlen bytes; at
 * is its place in the query, which keeps the sort stable. */
struct qarg {
    const char *s;
    size_t len, nlen, at;
};

static int qarg_cmp(const void *a, const void *b)
{
    const struct qarg *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->nlen < y->nlen ? x->nlen : y->nlen);
    if (c == 0 && x->nlen != y->nlen)
        c = x->nlen < y->nlen ? -1 : 1;
    if (c == 0)
        c = x->at < y->at ? -1 : x->at > y->at;
    return c;
}

/* Does one of strip[0..n) match the whole of name (len bytes, copied into
 * buf, which has room for it and its NUL)? A match is the leftmost and
 * longest (POSIX): when one spans the whole name, it is that one. */
static int qname_stripped(const char *name, size_t len, const regex_t *strip, size_t n,
                          char *buf)
{
    memcpy(buf, name, len);
    buf[len] = '\0';
    for (size_t i = 0; i < n; i++) {
        regmatch_t m;
        if (regexec(&strip[i], buf, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == len)
            return 1;
    }
    return 0;
}

int url_canonical(const char *url, int sort, const regex_t *strip, size_t nstrip, char **out)
{
    size_t end = strcspn(url, "#"), n = 0, max = 1;
    const char *q = memchr(url, '?', end);
    if (!q)
        return (*out = strdup(url)) ? 0 : CRAWL_ENOMEM;
    const char *qs = q + 1, *qe = url + end;
    for (const char *p = qs; p < qe; p++)
        max += *p == '&';
    struct qarg *v = malloc(max * sizeof *v);
    char *name = malloc((size_t)(qe - qs) + 1), *w = malloc(strlen(url) + 1);
    if (!v || !name || !w) {
        free(v);
        free(name);
        free(w);
        *out = NULL;
        return CRAWL_ENOMEM;
    }
    for (const char *p = qs;; p++) {
        const char *amp = memchr(p, '&', (size_t)(qe - p));
        size_t len = (size_t)((amp ? amp : qe) - p);
        const char *eq = memchr(p, '=', len);
        size_t nlen = eq ? (size_t)(eq - p) : len;
        if (len && !qname_stripped(p, nlen, strip, nstrip, name)) {
            v[n] = (struct qarg){ p, len, nlen, n };
            n++;
        }
        if (!amp)
            break;
        p = amp;
    }
    if (sort)
        qsort(v, n, sizeof *v, qarg_cmp);
    size_t o = (size_t)(q - url);
    memcpy(w, url, o);
    for (size_t i = 0; i < n; i++) {
        w[o++] = i ? '&' : '?';
        memcpy(w + o, v[i].s, v[i].len);
        o += v[i].len;
    }
    strcpy(w + o, qe);          /* the fragment, if any */
    free(v);
    free(name);
    *out = w;
    return 0;
}

int url_split(const char *url, struct url_parts *p)
{
    struct url__rec r;
    int err;

    memset(p, 0, sizeof *p);
    if ((err = url__parse(url, strlen(url), NULL, &r)) != 0)
        return err == CRAWL_ENOMEM ? err : -EINVAL;
    return parts_of(&r, p);
}

void url_parts_free(struct url_parts *p)
{
    free(p->href);
    free(p->norm);
    free(p->key);
    free(p->host);
    free(p->path);
    memset(p, 0, sizeof *p);
}

/* ---- lists of distinct URLs ---------------------------------------------- */

static int same_str(const void *item, const void *key)
{
    return strcmp(item, key) == 0;
}

int url_list_add(struct url_list *l, char *s, size_t max)
{
    uint64_t h = hset_hash(s, strlen(s));
    int rc;

    if (hset_has(&l->set, h, same_str, s))
        rc = 1;
    else if (l->n >= max)
        rc = 2;
    else if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16) != 0 ||
             hset_add(&l->set, h, s) != 0)
        rc = CRAWL_ENOMEM;
    else {
        l->v[l->n++] = s;
        return 0;
    }
    free(s);
    return rc;
}

char **url_list_take(struct url_list *l, size_t *n)
{
    char **v = l->v;

    *n = l->n;
    if (l->n == 0) {
        free(v);
        v = NULL;
    }
    hset_free(&l->set);
    memset(l, 0, sizeof *l);
    return v;
}

void url_list_free(struct url_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    hset_free(&l->set);
    memset(l, 0, sizeof *l);
}

uint64_t url_host_hash(const char *url)
{
    const char *p = strstr(url, "://");
    int https = strncasecmp(url, "https", 5) == 0;
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "/?#\\");
    const char *at = memchr(p, '@', n);
    if (at) {
        n -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    /* The port: a default one is the same host as none. */
    const char *colon = NULL;
    for (size_t i = n; i-- > 0 && p[i] != ']';)
        if (p[i] == ':') {
            colon = p + i;
            break;
        }
    if (colon) {
        const char *def = https ? ":443" : ":80";
        size_t len = n - (size_t)(colon - p);
        if (len == 1 || (len == strlen(def) && memcmp(colon, def, len) == 0))
            n = (size_t)(colon - p);
    }
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)https;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)ascii_lower(p[i])) * 1099511628211ULL;
    return h ? h : 1;
}

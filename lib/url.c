/* url.c: every URL operation of crawl, and the only user of libcurl's URL
 * API. What a URL means on the wire is libcurl's business (fetch.c hands
 * it the URL as listed); what two spellings of one URL have in common is
 * decided here, once, in normal_form. The lists that keep a page's links
 * once each live here too. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "ascii.h"
#include "crawl.h"
#include "url.h"
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

/* Whether byte c is never literal in a URL a browser sends: white space,
 * control bytes and '"', '<', '>', '`'. libcurl would keep most of them as
 * they are, and turn a space in a query into '+'. */
static int is_odd(unsigned char c)
{
    return c <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '`';
}

/* Writes c to w as %XX; returns the end. */
static char *put_escape(char *w, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";

    *w++ = '%';
    *w++ = hex[c >> 4];
    *w++ = hex[c & 15];
    return w;
}

/* Writes the escapes of s in upper case, in place: %7e and %7E name the
 * same byte (RFC 3986, 6.2.2.1), and one spelling keeps one fetch. */
static void upper_escapes(char *s)
{
    for (char *p = s; *p; p++)
        if (p[0] == '%' && ascii_hex((unsigned char)p[1]) && ascii_hex((unsigned char)p[2])) {
            p[1] = (char)ascii_upper((unsigned char)p[1]);
            p[2] = (char)ascii_upper((unsigned char)p[2]);
            p += 2;
        }
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

int url_validate(const char *s, const char **why)
{
    CURLU *u;
    CURLUcode rc;
    char *host = NULL;

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
    return *why ? -EINVAL : 0;
}

/* ---- cleaning an href ---------------------------------------------------- */

int url_clean(const char *in, char **out)
{
    size_t len, n;
    char *s, *w;

    *out = NULL;
    while (ascii_ws((unsigned char)*in))
        in++;
    len = strlen(in);
    while (len > 0 && ascii_ws((unsigned char)in[len - 1]))
        len--;
    if (len > URL_MAX)
        return 0;

    s = malloc(3 * len + 1);
    if (!s)
        return CRAWL_ENOMEM;
    w = s;
    for (size_t i = 0; i < len && in[i] != '#'; i++) {
        unsigned char c = (unsigned char)in[i];
        /* The URL standard removes these wherever they are: an href
         * broken over lines in the source is one URL. */
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (is_odd(c))
            w = put_escape(w, c);
        else
            *w++ = (char)c;
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

/* ---- libcurl's handle ---------------------------------------------------- */

/* Returns the code for rc: 0, CRAWL_ENOMEM, or -EINVAL for any refusal. */
static int code_of(CURLUcode rc)
{
    return rc == CURLUE_OK ? 0 : rc == CURLUE_OUT_OF_MEMORY ? CRAWL_ENOMEM : -EINVAL;
}

/* Sets u to s: absolute, or relative to the URL u holds. Bytes never
 * literal in a URL are escaped first, as url_clean does: with
 * CURLU_URLENCODE libcurl 7.88 escapes only spaces and bytes past ASCII,
 * and writes a space in the query as '+'. Returns 0, -EINVAL when libcurl
 * refuses s, or CRAWL_ENOMEM. */
static int set_url(CURLU *u, const char *s)
{
    char *esc = NULL, *w;
    const unsigned char *p;
    int err;

    for (p = (const unsigned char *)s; *p && !is_odd(*p); p++)
        ;
    if (*p) {
        esc = w = malloc(3 * strlen(s) + 1);
        if (!esc)
            return CRAWL_ENOMEM;
        for (p = (const unsigned char *)s; *p; p++) {
            if (is_odd(*p))
                w = put_escape(w, *p);
            else
                *w++ = (char)*p;
        }
        *w = '\0';
        s = esc;
    }
    err = code_of(curl_url_set(u, CURLUPART_URL, s, CURLU_URLENCODE));
    free(esc);
    return err;
}

/* Returns 0 when u is an http or https URL, -EINVAL when it is not, or
 * CRAWL_ENOMEM. */
static int check_scheme(CURLU *u)
{
    char *scheme = NULL;
    CURLUcode rc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    int err = code_of(rc);

    /* libcurl hands the scheme back in lower case. */
    if (!err && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        err = -EINVAL;
    curl_free(scheme);
    return err;
}

/* Brings u to the normal form (see url_normalise) and writes it to *out
 * (malloc'd). Returns 0, -EINVAL when u is no http(s) URL, or CRAWL_ENOMEM. */
static int normal_form(CURLU *u, char **out)
{
    char *host = NULL, *url = NULL;
    CURLUcode rc;
    int err;

    *out = NULL;
    if ((err = code_of(curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0))) != 0 ||
        (err = check_scheme(u)) != 0)
        return err;
    /* libcurl 7.88 lower-cases the scheme but keeps the host as written
     * (RFC 3986, 6.2.2.1: both are case-insensitive). */
    rc = curl_url_get(u, CURLUPART_HOST, &host, 0);
    if (rc == CURLUE_OK) {
        for (char *h = host; *h; h++)
            *h = (char)ascii_lower((unsigned char)*h);
        rc = curl_url_set(u, CURLUPART_HOST, host, 0);
    }
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_URL, &url, CURLU_NO_DEFAULT_PORT);
    if (rc == CURLUE_OK) {
        upper_escapes(url);
        if (!(*out = strdup(url)))
            rc = CURLUE_OUT_OF_MEMORY;
    }
    curl_free(url);
    curl_free(host);
    return code_of(rc);
}

/* ---- bases and resolution ------------------------------------------------ */

struct url_base {
    CURLU *u;                   /* parsed once, copied per link: libcurl
                                   resolves a reference in the handle */
};

/* Sets b, a copy of the page's handle, to href, cleaned; keeps it in *u
 * (freeing the page's) when it makes an http(s) URL, else frees it.
 * Returns 0 or CRAWL_ENOMEM. */
static int use_base_href(CURLU **u, CURLU *b, const char *href)
{
    int err = set_url(b, href);

    if (!err)
        err = check_scheme(b);
    if (err) {
        curl_url_cleanup(b);
        return err == CRAWL_ENOMEM ? err : 0;
    }
    curl_url_cleanup(*u);
    *u = b;
    return 0;
}

int url_base_new(const char *page_url, const char *base_href, struct url_base **out)
{
    CURLU *u = NULL, *b;
    char *href = NULL;
    int err;

    *out = NULL;
    if (!page_url)
        return 0;
    if (!(u = curl_url()))
        return CRAWL_ENOMEM;
    if ((err = set_url(u, page_url)) == 0)
        err = check_scheme(u);
    if (err) {
        curl_url_cleanup(u);
        return err == CRAWL_ENOMEM ? err : 0;
    }
    if (base_href && (err = url_clean(base_href, &href)) != 0)
        goto fail;
    /* An empty <base href> (or one that is only a fragment) is the page. */
    if (href && href[0] != '\0') {
        if (!(b = curl_url_dup(u)) || (err = use_base_href(&u, b, href)) != 0) {
            err = CRAWL_ENOMEM;
            goto fail;
        }
    }
    free(href);
    href = NULL;
    if (!(*out = malloc(sizeof **out))) {
        err = CRAWL_ENOMEM;
        goto fail;
    }
    (*out)->u = u;
    return 0;
fail:
    free(href);
    curl_url_cleanup(u);
    return err;
}

void url_base_free(struct url_base *b)
{
    if (!b)
        return;
    curl_url_cleanup(b->u);
    free(b);
}

int url_resolve(const struct url_base *b, const char *href, char **out)
{
    CURLU *u;
    int err = 0;

    *out = NULL;
    if (!b && href[0] == '\0')
        return 0;
    /* curl_url_dup of libcurl 7.88 takes no const; it only reads. */
    u = b ? curl_url_dup(b->u) : curl_url();
    if (!u)
        return CRAWL_ENOMEM;
    /* libcurl's relative resolution takes an empty href for a path, so the
     * empty href (what a lone "#top" leaves) is handled here: it is the
     * base itself (RFC 3986, 5.2.2). */
    if (href[0] != '\0')
        err = set_url(u, href);
    if (!err)
        err = normal_form(u, out);
    curl_url_cleanup(u);
    if (err == -EINVAL)
        err = 0;
    if (*out && strlen(*out) > URL_MAX) {
        free(*out);
        *out = NULL;
    }
    return err;
}

/* ---- normal form and parts ----------------------------------------------- */

int url_normalise(const char *url, char **out)
{
    CURLU *u = curl_url();
    int err;

    *out = NULL;
    if (!u)
        return CRAWL_ENOMEM;
    err = set_url(u, url);
    if (!err)
        err = normal_form(u, out);
    curl_url_cleanup(u);
    return err;
}

/* Fills the parts of p but norm from u, in normal form already. Returns 0,
 * -EINVAL or CRAWL_ENOMEM. */
static int split_parts(CURLU *u, struct url_parts *p)
{
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
    CURLUcode rc;
    size_t kl, pl;

    rc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_HOST, &host, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_PATH, &path, 0);
    if (rc == CURLUE_OK) {
        rc = curl_url_get(u, CURLUPART_QUERY, &query, 0);
        if (rc == CURLUE_NO_QUERY)
            rc = CURLUE_OK;
    }
    if (rc == CURLUE_OK) {
        kl = strlen(scheme) + strlen(host) + strlen(port) + sizeof "://:";
        pl = strlen(path) + (query ? strlen(query) + 2 : 1);
        if (!(p->key = malloc(kl)) || !(p->path = malloc(pl)) || !(p->host = strdup(host)))
            rc = CURLUE_OUT_OF_MEMORY;
    }
    if (rc == CURLUE_OK) {
        snprintf(p->key, kl, "%s://%s:%s", scheme, host, port);
        snprintf(p->path, pl, "%s%s%s", path, query ? "?" : "", query ? query : "");
        /* The same escapes as in norm: libcurl writes its own in lower case. */
        upper_escapes(p->path);
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    return code_of(rc);
}

int url_split(const char *url, struct url_parts *p)
{
    CURLU *u = curl_url();
    int err;

    memset(p, 0, sizeof *p);
    if (!u)
        return CRAWL_ENOMEM;
    err = set_url(u, url);
    if (!err)
        err = normal_form(u, &p->norm);
    if (!err)
        err = split_parts(u, p);
    curl_url_cleanup(u);
    if (err)
        url_parts_free(p);
    return err;
}

void url_parts_free(struct url_parts *p)
{
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

/* url.h: every URL operation of crawl, on libcurl's URL API: checking a
 * listed URL, cleaning and resolving the links of a page against its base,
 * the one normal form, and the parts the frontier keys on. The link text and
 * the seen-set key are both url_normalise's form, so a URL found twice is
 * fetched once however it was spelled; url_list keeps each link of a page
 * once. Only http and https URLs come out. Reentrant: nothing here is
 * global. */
#ifndef CRAWL_URL_H
#define CRAWL_URL_H

#include <stddef.h>
#include "hset.h"

/* A reference longer than this, cleaned or resolved, is dropped. */
#define URL_MAX 8192

/* Checks a URL from a list: an absolute http or https URL with a host,
 * without white space or control characters, that libcurl parses. Returns
 * 0; -EINVAL with *why set to a static text saying what is wrong ("empty
 * URL", "contains control characters", "contains spaces", "not an absolute
 * http or https URL (no scheme)", "unsupported scheme: only http and https
 * are fetched", "malformed URL", "URL has no host"); or CRAWL_ENOMEM. */
int url_validate(const char *s, const char **why);

/* Prepares a raw href as a browser does: trims HTML white space, removes
 * tabs and newlines, drops the fragment, percent-encodes spaces, control
 * bytes and the characters never literal in a URL ('"', '<', '>', '`'), and
 * skips any scheme but http and https, and anything longer than URL_MAX.
 * Returns 0 and *out (malloc'd, the caller's; NULL when the href is
 * skipped), or CRAWL_ENOMEM. */
int url_clean(const char *href, char **out);

/* What the links of one page resolve against. */
struct url_base;

/* Makes the base of a page: page_url (its URL after redirects), or its
 * first <base href> (base_href, raw; NULL: none) resolved against page_url
 * when that makes an http(s) URL. Returns 0 and *out, freed with
 * url_base_free (NULL when page_url is NULL or no http(s) URL: then only
 * absolute links resolve), or CRAWL_ENOMEM. Copies what it needs. */
int url_base_new(const char *page_url, const char *base_href, struct url_base **out);

/* Frees b; NULL is fine. */
void url_base_free(struct url_base *b);

/* Resolves href, as url_clean left it, against b (NULL: no base, only
 * absolute hrefs resolve; "" is the base itself) and normalises the result
 * (url_normalise). Returns 0 and *out (malloc'd, the caller's; NULL when
 * href makes no http(s) URL, or one longer than URL_MAX), or CRAWL_ENOMEM. */
int url_resolve(const struct url_base *b, const char *href, char **out);

/* The normal form of an absolute URL: the fragment dropped, scheme and host
 * in lower case, the default port (80 for http, 443 for https) removed, dot
 * segments removed, spaces, control bytes, '"', '<', '>', '`' and bytes
 * past ASCII percent-encoded, and percent escapes in upper case. The path
 * and query keep their case otherwise: they are the server's to interpret.
 * Normalising a normal form gives it back. Returns 0 and *out (malloc'd,
 * the caller's), -EINVAL when url is no http(s) URL libcurl parses, or
 * CRAWL_ENOMEM. */
int url_normalise(const char *url, char **out);

/* The parts of a URL the frontier needs, all from its normal form; each a
 * malloc'd string owned by the struct. */
struct url_parts {
    char *norm;                 /* url_normalise's form: the seen-set key */
    char *key;                  /* the host key scheme://host:port, port always written */
    char *host;                 /* the host name, lower case: the crawl's scope */
    char *path;                 /* path and query ("/a?b"): what robots.txt rules match */
};

/* Splits url into *p. Returns 0 with *p filled, freed with url_parts_free;
 * -EINVAL when url is no http(s) URL libcurl parses; or CRAWL_ENOMEM. On an
 * error *p is empty. */
int url_split(const char *url, struct url_parts *p);

/* Frees the strings of p and empties it; p itself is the caller's. */
void url_parts_free(struct url_parts *p);

/* Distinct URLs (or cleaned hrefs) in the order first added, with a hash
 * set over them so that a page of many links is de-duplicated in linear
 * time. Zero-initialise one to start. */
struct url_list {
    char **v;                   /* the strings, first-seen order; owned */
    size_t n, cap;
    struct hset set;            /* the same strings, by hash */
};

/* Adds s, which the list owns from then on, unless an equal string is in
 * it or it holds max strings already; s is freed then, and on an error.
 * Returns 0 when added, 1 when s was there already, 2 when the list is full
 * and s was not in it, or CRAWL_ENOMEM. */
int url_list_add(struct url_list *l, char *s, size_t max);

/* Hands the array of strings (malloc'd, as each string is) to the caller,
 * with their number in *n, and empties l. Returns NULL when l is empty. */
char **url_list_take(struct url_list *l, size_t *n);

/* Frees the strings of l and empties it; l itself is the caller's. */
void url_list_free(struct url_list *l);

/* Returns a hash of url's host and port as written (the authority after
 * "scheme://", without user information, lower case; no port and the
 * scheme's default port alike), never 0: a fast key for sharing hosts out
 * among workers, not a parse. */
uint64_t url_host_hash(const char *url);

#endif

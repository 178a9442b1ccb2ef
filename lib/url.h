/* url.h: every URL operation of crawl: checking a listed URL, cleaning and
 * resolving the links of a page against its base as a browser does (the
 * WHATWG URL Standard, for http and https), the normal form two spellings
 * of one URL share, and the parts the frontier keys on. A link comes out
 * as a browser would request it; the seen set keys on its normal form, so
 * a URL found twice is fetched once however it was spelled. url_list keeps
 * each link of a page once. Only http and https URLs come out. Reentrant:
 * nothing here is global. */
#ifndef CRAWL_URL_H
#define CRAWL_URL_H

#include <regex.h>
#include <stddef.h>
#include "hset.h"

/* A reference longer than this, cleaned or resolved, is dropped. */
#define URL_MAX 8192

/* Checks a URL from a list: an absolute http or https URL with a host,
 * without white space or control characters, that libcurl (which fetches
 * it as listed) and the URL Standard's parser both accept. Returns
 * 0; -EINVAL with *why set to a static text saying what is wrong ("empty
 * URL", "contains control characters", "contains spaces", "not an absolute
 * http or https URL (no scheme)", "unsupported scheme: only http and https
 * are fetched", "malformed URL", "URL has no host"); or CRAWL_ENOMEM. */
int url_validate(const char *s, const char **why);

/* Prepares a raw href for url_resolve, and for telling two hrefs of a page
 * apart: trims C0 controls and spaces at both ends, removes tabs and
 * newlines, drops the fragment (writing the spaces and controls just
 * before it as escapes, since they no longer end the href), and skips any
 * scheme but http and https, and anything longer than URL_MAX. The rest is
 * left as written: the parser does the percent-encoding. Returns 0 and
 * *out (malloc'd, the caller's; NULL when the href is skipped), or
 * CRAWL_ENOMEM. */
int url_clean(const char *href, char **out);

/* url_clean for the n bytes at href, which may hold NUL bytes: each is
 * written %00, as the parser would encode it (or refuse it, in a host). */
int url_clean_n(const char *href, size_t n, char **out);

/* What the links of one page resolve against. */
struct url_base;

/* Makes the base of a page as HTML does: page_url (its URL after
 * redirects), or its first <base href> (base_href, raw; NULL: none)
 * resolved against page_url when that parses. Returns 0 and *out, freed
 * with url_base_free, or CRAWL_ENOMEM. *out is NULL, and only absolute
 * links resolve, when page_url is NULL or no http(s) URL, or when the base
 * href makes a URL of another scheme (against which a browser resolves no
 * http link either). Copies what it needs. */
int url_base_new(const char *page_url, const char *base_href, struct url_base **out);

/* Frees b; NULL is fine. */
void url_base_free(struct url_base *b);

/* Resolves href, as url_clean left it, against b (NULL: no base, only
 * absolute hrefs resolve; "" is the base itself) with the URL Standard's
 * parser, and gives the URL as a browser would request it: its
 * serialisation without the fragment (host in lower case or punycode,
 * default port dropped, dot segments gone, what the standard encodes
 * percent-encoded, escapes already there kept as written). Returns 0 and
 * *out (malloc'd, the caller's; NULL when href makes no http(s) URL, or one
 * longer than URL_MAX), or CRAWL_ENOMEM. */
int url_resolve(const struct url_base *b, const char *href, char **out);

/* The normal form of an absolute URL, the one the seen set keys on: the
 * URL as url_resolve gives it, then its escapes made one spelling
 * (url_norm_escapes): %7e and ~ are one URL (RFC 3986, 6.2.2.2; RFC 9110,
 * 4.2.3), %2f and %2F too, and "/a|b" and "/a%7Cb". An empty query is kept
 * ("/?" is not "/"), as the standard keeps it. The path and query keep
 * their case: they are the server's to interpret. Normalising a normal
 * form gives it back. Returns 0 and *out (malloc'd, the caller's), -EINVAL
 * when url is no http(s) URL, or CRAWL_ENOMEM. */
int url_normalise(const char *url, char **out);

/* The canonical form of absolute URL url (a normal form, as url_normalise
 * gives it) for a seen set that takes more spellings for one page than
 * the normal form does: the query's arguments (the pieces between '&')
 * whose whole name (the bytes before the first '=', or the whole piece)
 * one of strip[0..nstrip) matches are dropped, and with sort the others
 * are put in order of their names, compared byte by byte as written (an
 * escape is not decoded: "%62" sorts before "a"), arguments of one name
 * keeping their order. Values are kept as written: "a=" and "a" stay
 * two arguments. Empty pieces ("&&", a '&' at either end) are dropped,
 * and the '?' with them when no argument is left. The rest of url, its
 * fragment included, is left as it is. strip is compiled with
 * REG_EXTENDED and without REG_NOSUB (the match's extent is read).
 * Returns 0 and *out (malloc'd, the caller's), or CRAWL_ENOMEM. */
int url_canonical(const char *url, int sort, const regex_t *strip, size_t nstrip, char **out);

/* Writes the n bytes at s with one spelling for each escape: %XX of an
 * unreserved character (letters, digits, '-', '.', '_', '~') decoded,
 * other escapes in upper case, and bytes that are never literal in a URI
 * (controls, space, bytes past ASCII, '"', '<', '>', '\\', '^', '`', '{',
 * '|', '}', and a '%' that starts no escape) percent-encoded; reserved
 * characters ('/', '?', '*', '$', ...) stay as they are, escaped or not.
 * robots.txt rules and paths are compared in this form (RFC 9309, 2.2.2).
 * Returns 0 and *out (malloc'd, NUL-terminated), or CRAWL_ENOMEM. */
int url_norm_escapes(const char *s, size_t n, char **out);

/* The parts of a URL the frontier needs; each a malloc'd string owned by
 * the struct. */
struct url_parts {
    char *href;                 /* url_resolve's form: what is fetched */
    char *norm;                 /* url_normalise's form: the seen-set key */
    char *key;                  /* the host key scheme://host:port, port always written */
    char *host;                 /* the host as serialised (lower case, punycode): the crawl's scope */
    char *path;                 /* path and query of norm ("/a?b"): what robots.txt rules match */
    uint64_t seen;              /* its user's key for it, kept with it (the
                                 * frontier's seen-set hash); 0 until set */
};

/* Splits url (absolute) into *p. Returns 0 with *p filled, freed with
 * url_parts_free; -EINVAL when url is no http(s) URL; or CRAWL_ENOMEM. On
 * an error *p is empty. */
int url_split(const char *url, struct url_parts *p);

/* url_validate, and with p not NULL url_split's parts of s too, from one
 * parse: a listed URL is checked and split for the frontier at once.
 * Returns as url_validate does; *p (when given) is filled when it returns
 * 0, and empty otherwise. */
int url_validate_split(const char *s, const char **why, struct url_parts *p);

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

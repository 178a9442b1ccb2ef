/* url_internal.h: the URL module's own parts, shared by url.c (the public
 * calls), url_parse.c (the URL Standard's parser for http and https) and
 * url_host.c (its host parser). Nothing outside the module includes it. */
#ifndef CRAWL_URL_INTERNAL_H
#define CRAWL_URL_INTERNAL_H

#include <stddef.h>

#include "strbuf.h"

/* A parsed http or https URL: its serialisation without the fragment (what
 * a browser would request and show), and where its parts are in it. */
struct url__rec {
    char *href;                 /* "http://user:pass@host:port/path?query", malloc'd */
    size_t len;                 /* strlen(href) */
    size_t host, host_end;      /* the host is href[host, host_end) */
    size_t path;                /* the path starts here, with '/' */
    size_t query;               /* the '?' of the query, or len when there is none */
    int port;                   /* the port; the scheme's default when none is written */
    int https;                  /* 1: https, 0: http */
};

/* Parses in[0..n) (any bytes; UTF-8 past ASCII) as the URL Standard's basic
 * URL parser does, against base (NULL: none), and keeps the result when it
 * is an http or https URL. Returns 0 with *out filled (freed with
 * url__rec_free), -EINVAL when the parser fails, -EPROTONOSUPPORT when the
 * URL has another scheme (the parse stops at its colon: whether the rest
 * would parse is not looked at), or CRAWL_ENOMEM. On an error *out is
 * empty. */
int url__parse(const char *in, size_t n, const struct url__rec *base, struct url__rec *out);

/* Frees what r holds and empties it; NULL members are fine. */
void url__rec_free(struct url__rec *r);

/* The URL Standard's host parser for a special scheme: appends the host
 * in[0..n) (percent-encoded or not, bracketed IPv6, IPv4 in any of its
 * number forms, or a domain, international names as punycode) to b in its
 * serialised form. Returns 0, -EINVAL when in is no valid host, or
 * CRAWL_ENOMEM. */
int url__host(const char *in, size_t n, struct strbuf *b);

#endif

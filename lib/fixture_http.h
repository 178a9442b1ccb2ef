/* fixture_http.h: the fixture server's HTTP/1.x request parser and the small
 * pure helpers it needs (header lookup, token lists, percent-decoding, query
 * parameters, path safety). Nothing here allocates, blocks or keeps state, so
 * each function can be fed arbitrary bytes by a fuzzer. */
#ifndef CRAWL_FIXTURE_HTTP_H
#define CRAWL_FIXTURE_HTTP_H

#include <stddef.h>

struct fixture_http_header {
    const char *name;         /* as received, case preserved */
    size_t name_len;
    const char *value;        /* without surrounding spaces and tabs */
    size_t value_len;
};

struct fixture_http_request {
    const char *method;
    size_t method_len;
    const char *target;       /* request-target as received, query included */
    size_t target_len;
    int minor_version;        /* x of HTTP/1.x */
    struct fixture_http_header *headers;   /* the caller's array */
    size_t num_headers;       /* in: its capacity; out: headers found */
};

/* Parses one request head (request line, header lines, empty line) at
 * buf[0..len). Returns the number of bytes consumed (the whole head), -2 if
 * the head is incomplete so far, -1 if it is malformed or has more header
 * lines than req->num_headers. On success the pointers in req point into buf,
 * which stays the caller's; on failure req is left unspecified. Lines may end
 * in CRLF or LF; empty lines before the request line are skipped. */
long fixture_http_parse_request(const char *buf, size_t len,
                                struct fixture_http_request *req);

/* Returns the first header of req named name (ASCII case-insensitive), or
 * NULL. The result points into req->headers. */
const struct fixture_http_header *
fixture_http_find_header(const struct fixture_http_request *req, const char *name);

/* Looks token up (case-insensitive) in a comma-separated list such as a
 * Connection or Accept-Encoding value. Returns -1 if it is absent, otherwise
 * its quality value in thousandths (1000 when there is no q parameter, 0 for
 * q=0). */
int fixture_http_token_q(const char *list, size_t len, const char *token);

/* Percent-decodes src[0..len) into dst, which has room for cap bytes; a '+'
 * stays a '+'. Returns the decoded length, or -1 on a malformed escape or when
 * dst is too small (cap >= len is always enough). dst is not terminated. */
long fixture_http_percent_decode(const char *src, size_t len, char *dst, size_t cap);

/* Finds parameter name in a query string (the part after '?', '&'-separated
 * name=value pairs). Returns 0 and points *value and *value_len at its raw,
 * still percent-encoded value inside query, or -1 if it is absent. */
int fixture_http_query_param(const char *query, size_t len, const char *name,
                             const char **value, size_t *value_len);

/* Returns 1 when the decoded path[0..len) is safe to append to a document
 * root: it starts with '/', holds no NUL and no "." or ".." segment, and no
 * backslash; returns 0 otherwise. */
int fixture_http_path_is_safe(const char *path, size_t len);

#endif

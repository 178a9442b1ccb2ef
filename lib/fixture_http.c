/* fixture_http.c: a strict, allocation-free HTTP/1.x request-head parser in
 * the manner of picohttpparser, and the helpers the fixture server uses to
 * read a request. Everything is a pure function of its arguments. */
#include "fixture_http.h"

#include <string.h>

/* tchar from RFC 9110 section 5.6.2: the characters of a method or a header
 * name. */
static int is_tchar(unsigned char ch)
{
    if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
        return 1;
    return ch != 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* A request-target may hold any visible character; bytes above 0x7f are let
 * through because some clients send raw UTF-8 paths. */
static int is_target_char(unsigned char ch)
{
    return ch > 0x20 && ch != 0x7f;
}

/* field-content: visible characters, spaces, tabs and obs-text. */
static int is_value_char(unsigned char ch)
{
    return ch == '\t' || (ch >= 0x20 && ch != 0x7f);
}

static unsigned char lower(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch;
}

static int ieq(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return 0;
    for (size_t i = 0; i < alen; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return 0;
    return 1;
}

/* Consumes a line ending at buf[*i]: 1 if one was there, 0 if the byte is not
 * a line ending, -2 if the input stops inside it, -1 for a CR without LF. */
static int eat_eol(const char *buf, size_t len, size_t *i)
{
    if (*i >= len)
        return -2;
    if (buf[*i] == '\n') {
        (*i)++;
        return 1;
    }
    if (buf[*i] != '\r')
        return 0;
    if (*i + 1 >= len)
        return -2;
    if (buf[*i + 1] != '\n')
        return -1;
    *i += 2;
    return 1;
}

long fixture_http_parse_request(const char *buf, size_t len,
                                struct fixture_http_request *req)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t cap = req->num_headers, n = 0, i = 0, start;
    int r;

    /* RFC 9112 section 2.2: a server should ignore empty lines received
     * before the request line. */
    while ((r = eat_eol(buf, len, &i)) == 1)
        ;
    if (r != 0)
        return r;

    start = i;
    while (i < len && is_tchar(p[i]))
        i++;
    if (i >= len)
        return -2;
    if (p[i] != ' ' || i == start)
        return -1;
    req->method = buf + start;
    req->method_len = i - start;
    i++;

    start = i;
    while (i < len && is_target_char(p[i]))
        i++;
    if (i >= len)
        return -2;
    if (p[i] != ' ' || i == start)
        return -1;
    req->target = buf + start;
    req->target_len = i - start;
    i++;

    /* Compare the version byte by byte so that a partial "HTT" is -2 and a
     * wrong byte is -1 at once. */
    static const char version[] = "HTTP/1.";
    for (size_t k = 0; k < sizeof version - 1; k++, i++) {
        if (i >= len)
            return -2;
        if (buf[i] != version[k])
            return -1;
    }
    if (i >= len)
        return -2;
    if (p[i] < '0' || p[i] > '9')
        return -1;
    req->minor_version = p[i] - '0';
    i++;
    if ((r = eat_eol(buf, len, &i)) != 1)
        return r == 0 ? -1 : r;

    for (;;) {
        if ((r = eat_eol(buf, len, &i)) == 1)
            break;
        if (r != 0)
            return r;
        /* Obsolete line folding and whitespace before the colon are both
         * rejected, as RFC 9112 section 5 allows. */
        start = i;
        while (i < len && is_tchar(p[i]))
            i++;
        if (i >= len)
            return -2;
        if (p[i] != ':' || i == start)
            return -1;
        if (n == cap)
            return -1;
        req->headers[n].name = buf + start;
        req->headers[n].name_len = i - start;
        i++;
        while (i < len && (p[i] == ' ' || p[i] == '\t'))
            i++;
        start = i;
        while (i < len && is_value_char(p[i]))
            i++;
        if (i >= len)
            return -2;
        size_t end = i;
        while (end > start && (p[end - 1] == ' ' || p[end - 1] == '\t'))
            end--;
        req->headers[n].value = buf + start;
        req->headers[n].value_len = end - start;
        n++;
        if ((r = eat_eol(buf, len, &i)) != 1)
            return r == 0 ? -1 : r;
    }
    req->num_headers = n;
    return (long)i;
}

const struct fixture_http_header *
fixture_http_find_header(const struct fixture_http_request *req, const char *name)
{
    for (size_t i = 0; i < req->num_headers; i++)
        if (ieq(req->headers[i].name, req->headers[i].name_len, name))
            return &req->headers[i];
    return NULL;
}

static int is_ows(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* Parses a qvalue ("0", "0.5", "1.000") into thousandths; -1 if malformed. */
static int parse_q(const char *s, size_t len)
{
    if (len == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int q = (s[0] - '0') * 1000, scale = 100;
    if (len == 1)
        return q;
    if (s[1] != '.' || len > 5)
        return -1;
    for (size_t i = 2; i < len; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        q += (s[i] - '0') * scale;
    }
    return q > 1000 ? -1 : q;
}

int fixture_http_token_q(const char *list, size_t len, const char *token)
{
    size_t i = 0;
    while (i < len) {
        size_t elem = i;
        while (i < len && list[i] != ',')
            i++;
        size_t elem_end = i++;   /* step over the comma */

        /* element = token *( OWS ";" OWS param ) */
        size_t a = elem, b;
        while (a < elem_end && is_ows(list[a]))
            a++;
        b = a;
        while (b < elem_end && list[b] != ';' && !is_ows(list[b]))
            b++;
        if (!ieq(list + a, b - a, token))
            continue;

        int q = 1000;
        while (b < elem_end) {
            while (b < elem_end && (is_ows(list[b]) || list[b] == ';'))
                b++;
            size_t pa = b;
            while (b < elem_end && list[b] != ';')
                b++;
            size_t pb = b;
            while (pb > pa && is_ows(list[pb - 1]))
                pb--;
            if (pb - pa >= 2 && lower((unsigned char)list[pa]) == 'q' && list[pa + 1] == '=') {
                int v = parse_q(list + pa + 2, pb - pa - 2);
                if (v >= 0)
                    q = v;
            }
        }
        return q;
    }
    return -1;
}

static int hexval(unsigned char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = lower(ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

long fixture_http_percent_decode(const char *src, size_t len, char *dst, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch == '%') {
            if (len - i < 3)
                return -1;
            int hi = hexval((unsigned char)src[i + 1]), lo = hexval((unsigned char)src[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            ch = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        if (o >= cap)
            return -1;
        dst[o++] = (char)ch;
    }
    return (long)o;
}

int fixture_http_query_param(const char *query, size_t len, const char *name,
                             const char **value, size_t *value_len)
{
    size_t nlen = strlen(name), i = 0;
    while (i <= len) {
        size_t a = i;
        while (i < len && query[i] != '&')
            i++;
        /* query[a..i) is one pair */
        if (i - a >= nlen && memcmp(query + a, name, nlen) == 0) {
            if (i - a == nlen) {
                *value = query + i;
                *value_len = 0;
                return 0;
            }
            if (query[a + nlen] == '=') {
                *value = query + a + nlen + 1;
                *value_len = i - a - nlen - 1;
                return 0;
            }
        }
        i++;
    }
    return -1;
}

int fixture_http_path_is_safe(const char *path, size_t len)
{
    if (len == 0 || path[0] != '/')
        return 0;
    if (memchr(path, '\0', len) || memchr(path, '\\', len))
        return 0;
    size_t i = 1;
    while (i <= len) {
        size_t a = i;
        while (i < len && path[i] != '/')
            i++;
        size_t seg = i - a;
        if ((seg == 1 && path[a] == '.') || (seg == 2 && path[a] == '.' && path[a + 1] == '.'))
            return 0;
        i++;
    }
    return 1;
}

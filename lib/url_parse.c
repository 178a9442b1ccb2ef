/* url_parse.c: the URL Standard's basic URL parser (WHATWG, "URL parsing"),
 * for the two schemes crawl fetches. It is the state machine of the
 * standard, state for state, with what only other schemes need left out
 * (file, opaque paths, state overrides): a reference with another scheme
 * ends the parse at its colon, since crawl has no use for it. The URL is
 * written out in serialised form as it is parsed, one part after another,
 * so the serialisation costs nothing more; the host goes to url_host.c.
 * Browsers parse a page's links with this algorithm, which is why crawl
 * does: RFC 3986 resolution (libcurl's) differs on backslashes, "http:foo",
 * dot segments written %2e, empty queries and what gets percent-encoded. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "errors.h"
#include "url_internal.h"

/* ---- percent-encode sets (URL Standard, 1.3) ------------------------------ */

enum pset { SET_USERINFO, SET_PATH, SET_QUERY };

/* Does byte c go percent-encoded in the part set names? Every byte past
 * ASCII does: the input is UTF-8, and a code point is encoded as its bytes. */
static int encoded(unsigned char c, enum pset set)
{
    if (c < 0x20 || c > 0x7e)
        return 1;                               /* C0 control set */
    switch (c) {
    case ' ': case '"': case '#': case '<': case '>':
        return 1;                               /* query set */
    case '\'':
        return set == SET_QUERY;                /* special-query set */
    case '?': case '^': case '`': case '{': case '}':
        return set != SET_QUERY;                /* path set */
    case '/': case ':': case ';': case '=': case '@': case '[': case '\\': case ']': case '|':
        return set == SET_USERINFO;             /* userinfo set */
    default:
        return 0;
    }
}

/* Appends c to b, percent-encoded when set says so. */
static void put(struct strbuf *b, unsigned char c, enum pset set)
{
    static const char hex[] = "0123456789ABCDEF";

    if (sb_reserve(b, 3) != 0)
        return;
    if (encoded(c, set)) {
        b->data[b->len++] = '%';
        b->data[b->len++] = hex[c >> 4];
        b->data[b->len++] = hex[c & 15];
    } else {
        b->data[b->len++] = (char)c;
    }
    b->data[b->len] = '\0';
}

/* ---- the parser's state ---------------------------------------------------- */

enum state {
    SCHEME_START, SCHEME, NO_SCHEME, SPECIAL_RELATIVE_OR_AUTHORITY, RELATIVE,
    RELATIVE_SLASH, SPECIAL_AUTHORITY_SLASHES, SPECIAL_AUTHORITY_IGNORE_SLASHES,
    AUTHORITY, HOST, PORT, PATH_START, PATH, QUERY, DONE,
};

struct parser {
    const char *s;              /* the input, trimmed, without tabs and newlines */
    size_t n;
    const struct url__rec *base;
    struct strbuf out;          /* the serialisation so far */
    struct strbuf user, pass;   /* userinfo, encoded, until the host is written */
    struct url__rec r;          /* the parts' places in out */
    size_t seg;                 /* the '/' that starts the path segment being read */
};

/* c, the byte at the parser's pointer, is EOF past the end. */
#define END (-1)

static int is_slash(int c)
{
    return c == '/' || c == '\\';       /* a special URL takes '\' for '/' */
}

/* Ends the authority, host and port states. */
static int ends_authority(int c)
{
    return c == END || is_slash(c) || c == '?' || c == '#';
}

/* Takes url's username, password, host and port from the base: they are
 * its serialisation up to the path. Then the path, when with_path, up to
 * the query. */
static void copy_base(struct parser *P, int with_path)
{
    const struct url__rec *b = P->base;

    sb_add(&P->out, b->href, with_path ? b->query : b->path);
    P->r.https = b->https;
    P->r.host = b->host;
    P->r.host_end = b->host_end;
    P->r.port = b->port;
    P->r.path = b->path;
}

/* Writes the scheme, the userinfo and the host buffer s[0..n). */
static int put_host(struct parser *P, const char *s, size_t n)
{
    sb_adds(&P->out, P->r.https ? "https://" : "http://");
    if (P->user.len || P->pass.len) {
        if (P->user.len)
            sb_add(&P->out, P->user.data, P->user.len);
        if (P->pass.len) {
            sb_addc(&P->out, ':');
            sb_add(&P->out, P->pass.data, P->pass.len);
        }
        sb_addc(&P->out, '@');
    }
    P->r.host = P->out.len;
    int err = url__host(s, n, &P->out);
    P->r.host_end = P->out.len;
    P->r.port = P->r.https ? 443 : 80;
    return err;
}

/* Removes the path's last segment, if any ("shorten a URL's path"). */
static void shorten(struct parser *P)
{
    size_t i = P->out.len;

    while (i > P->r.path && P->out.data[i - 1] != '/')
        i--;
    if (i > P->r.path)
        P->out.len = i - 1;
}

static void segment_open(struct parser *P)
{
    P->seg = P->out.len;
    sb_addc(&P->out, '/');
}

/* Is the segment being read "." (dots == 1) or ".." (dots == 2), with any
 * dot written %2e? */
static int is_dots(const struct parser *P, int dots)
{
    const char *s = P->out.data + P->seg + 1;
    size_t n = P->out.len - P->seg - 1;

    for (int i = 0; i < dots; i++) {
        if (n >= 1 && s[0] == '.') {
            s++;
            n--;
        } else if (n >= 3 && s[0] == '%' && s[1] == '2' && (s[2] == 'e' || s[2] == 'E')) {
            s += 3;
            n -= 3;
        } else {
            return 0;
        }
    }
    return n == 0;
}

/* Ends the segment being read at c: ".." takes the one before it away,
 * "." goes, and either leaves an empty last segment when c ends the path
 * (so that "a/.." is "/" and "a/." is "a/"). */
static void segment_close(struct parser *P, int c)
{
    int dd = is_dots(P, 2), d = !dd && is_dots(P, 1);

    if (!dd && !d)
        return;
    P->out.len = P->seg;
    if (dd)
        shorten(P);
    if (!is_slash(c))
        sb_addc(&P->out, '/');
}

static void query_open(struct parser *P)
{
    P->r.query = P->out.len;
    sb_addc(&P->out, '?');
}

/* ---- the state machine ----------------------------------------------------- */

/* Runs the parser; returns 0, -EINVAL or CRAWL_ENOMEM. */
static int run(struct parser *P)
{
    const char *s = P->s;
    const struct url__rec *base = P->base;
    size_t n = P->n, p, buf = 0;
    int at_seen = 0, pass_seen = 0, brackets = 0, err = 0;
    long port = -1;
    enum state st = SCHEME_START;

    P->r.query = SIZE_MAX;
    for (p = 0; st != DONE && !err; p++) {
        int c = p < n ? (unsigned char)s[p] : END;

        switch (st) {
        case SCHEME_START:
            if (ascii_alpha(c)) {
                st = SCHEME;
            } else {
                st = NO_SCHEME;
                p--;
            }
            break;
        case SCHEME:
            if (ascii_alpha(c) || ascii_digit(c) || c == '+' || c == '-' || c == '.')
                break;
            if (c != ':') {
                st = NO_SCHEME;         /* no scheme after all: start over */
                p = (size_t)-1;
                break;
            }
            if (p == 4 && strncasecmp(s, "http", 4) == 0)
                P->r.https = 0;
            else if (p == 5 && strncasecmp(s, "https", 5) == 0)
                P->r.https = 1;
            else
                return -EPROTONOSUPPORT;        /* not a URL crawl fetches */
            st = base && base->https == P->r.https ? SPECIAL_RELATIVE_OR_AUTHORITY
                                                   : SPECIAL_AUTHORITY_SLASHES;
            break;
        case NO_SCHEME:
            if (!base)
                return -EINVAL;
            st = RELATIVE;
            p--;
            break;
        case SPECIAL_RELATIVE_OR_AUTHORITY:
            if (c == '/' && p + 1 < n && s[p + 1] == '/') {
                st = SPECIAL_AUTHORITY_IGNORE_SLASHES;
                p++;
            } else {
                st = RELATIVE;
                p--;
            }
            break;
        case RELATIVE:
            P->r.https = base->https;
            if (is_slash(c)) {
                st = RELATIVE_SLASH;
                break;
            }
            copy_base(P, 1);
            if (c == '?') {
                query_open(P);
                st = QUERY;
            } else if (c == END || c == '#') {
                if (base->query < base->len) {
                    P->r.query = P->out.len;
                    sb_add(&P->out, base->href + base->query, base->len - base->query);
                }
                st = DONE;
            } else {
                shorten(P);
                segment_open(P);
                st = PATH;
                p--;
            }
            break;
        case RELATIVE_SLASH:
            if (is_slash(c)) {
                st = SPECIAL_AUTHORITY_IGNORE_SLASHES;
            } else {
                copy_base(P, 0);
                segment_open(P);
                st = PATH;
                p--;
            }
            break;
        case SPECIAL_AUTHORITY_SLASHES:
            if (c == '/' && p + 1 < n && s[p + 1] == '/')
                p++;
            else
                p--;
            st = SPECIAL_AUTHORITY_IGNORE_SLASHES;
            break;
        case SPECIAL_AUTHORITY_IGNORE_SLASHES:
            if (!is_slash(c)) {
                st = AUTHORITY;
                buf = p;
                p--;
            }
            break;
        case AUTHORITY:
            if (c == '@') {
                /* Everything up to the last '@' is userinfo; an earlier
                 * '@' is part of it, encoded. */
                if (at_seen)
                    sb_add(pass_seen ? &P->pass : &P->user, "%40", 3);
                at_seen = 1;
                for (size_t i = buf; i < p; i++) {
                    if (s[i] == ':' && !pass_seen)
                        pass_seen = 1;
                    else
                        put(pass_seen ? &P->pass : &P->user, (unsigned char)s[i], SET_USERINFO);
                }
                buf = p + 1;
            } else if (ends_authority(c)) {
                if (at_seen && buf == p)
                    return -EINVAL;     /* "http://user@/": no host */
                p = buf - 1;            /* read the host from the buffer's start */
                st = HOST;
            }
            break;
        case HOST:
            if (c == ':' && !brackets) {
                if (p == buf)
                    return -EINVAL;
                err = put_host(P, s + buf, p - buf);
                buf = p + 1;
                st = PORT;
            } else if (ends_authority(c)) {
                if (p == buf)
                    return -EINVAL;     /* a special URL needs a host */
                err = put_host(P, s + buf, p - buf);
                st = PATH_START;
                p--;
            } else if (c == '[') {
                brackets = 1;
            } else if (c == ']') {
                brackets = 0;
            }
            break;
        case PORT:
            if (ascii_digit(c)) {
                if (port < 0)
                    port = 0;
                if (port <= 65535)
                    port = port * 10 + (c - '0');
            } else if (ends_authority(c)) {
                if (port > 65535)
                    return -EINVAL;
                if (port >= 0 && port != P->r.port) {
                    sb_printf(&P->out, ":%ld", port);
                    P->r.port = (int)port;
                }
                st = PATH_START;
                p--;
            } else {
                return -EINVAL;
            }
            break;
        case PATH_START:
            P->r.path = P->out.len;
            segment_open(P);
            st = PATH;
            if (!is_slash(c))
                p--;
            break;
        case PATH:
            if (ends_authority(c)) {
                segment_close(P, c);
                if (is_slash(c)) {
                    segment_open(P);
                } else if (c == '?') {
                    query_open(P);
                    st = QUERY;
                } else {
                    st = DONE;          /* the end, or a fragment crawl drops */
                }
            } else {
                put(&P->out, (unsigned char)c, SET_PATH);
            }
            break;
        case QUERY:
            if (c == END || c == '#')
                st = DONE;
            else
                put(&P->out, (unsigned char)c, SET_QUERY);
            break;
        case DONE:
            break;
        }
    }
    return err;
}

/* ---- entry ------------------------------------------------------------------ */

void url__rec_free(struct url__rec *r)
{
    free(r->href);
    memset(r, 0, sizeof *r);
}

int url__parse(const char *in, size_t n, const struct url__rec *base, struct url__rec *out)
{
    struct parser P = { .base = base };
    char *clean = NULL;
    int err;

    memset(out, 0, sizeof *out);
    /* Leading and trailing C0 controls and spaces go, and every tab and
     * newline, wherever it is. */
    while (n > 0 && (unsigned char)in[0] <= 0x20) {
        in++;
        n--;
    }
    while (n > 0 && (unsigned char)in[n - 1] <= 0x20)
        n--;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '\t' || in[i] == '\n' || in[i] == '\r') {
            size_t k = 0;
            if (!(clean = malloc(n)))
                return CRAWL_ENOMEM;
            for (size_t j = 0; j < n; j++)
                if (in[j] != '\t' && in[j] != '\n' && in[j] != '\r')
                    clean[k++] = in[j];
            in = clean;
            n = k;
            break;
        }
    }
    P.s = in;
    P.n = n;
    /* Most URLs grow little: room for the base and the input, escaped. */
    if (n < SIZE_MAX / 4)
        sb_reserve(&P.out, (base ? base->len : 0) + n + n / 2 + 16);
    err = run(&P);
    if (!err && (P.out.nomem || P.user.nomem || P.pass.nomem))
        err = CRAWL_ENOMEM;
    if (!err) {
        P.r.href = P.out.data;
        P.r.len = P.out.len;
        if (P.r.query == SIZE_MAX)
            P.r.query = P.r.len;
        *out = P.r;
    } else {
        sb_free(&P.out);
    }
    sb_free(&P.user);
    sb_free(&P.pass);
    free(clean);
    return err;
}

/* fixture-server: the local HTTP/1.1 server that the tests, the demo and the
 * benchmarks run against. One thread and one libev loop serve every
 * connection: delays are timers, large bodies are generated as the socket
 * drains, so no client can hold up another. Every answer is deterministic. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>
#include <zlib.h>

#include "fixture_http.h"

#define MAX_HEAD       16384            /* a longer request head gets 431 */
#define IN_CAP         (MAX_HEAD + 1024)
#define MAX_HEADERS    128
#define OUT_HIGH       (64 * 1024)      /* stop generating while this much waits */
#define BODY_SLICE     (64 * 1024)      /* body bytes generated per step */
#define GZIP_SLICE     (256 * 1024)     /* input deflated per step (~1 ms) */
#define MAX_ROUNDS     16               /* steps per callback before yielding */
#define MAX_BODY       (1ULL << 40)     /* /bytes, /chunked, /gzip, /trickle */
#define MAX_DELAY_MS   86400000ULL
#define MAX_GRAPH_N    1000000000ULL
#define MAX_GRAPH_F    1000ULL
#define IDLE_TIMEOUT   60.0             /* seconds a keep-alive connection may idle */
#define LINGER_TIMEOUT 2.0              /* seconds to drain input before closing */
#define PATHS_MAX      200000           /* distinct paths counted for /stats?path= */
#define PATH_BYTES_MAX (64u << 20)
#define MAX_DEEP       100000           /* /deep nesting */
#define MAX_WIDE       1000000          /* /wide links */
#define MAX_BIG_HEADER (64u << 20)      /* /big-header line */

/* The body of /bytes, /chunked, /gzip and /trickle: byte i is PATTERN[i % 64].
 * Text, so it can be printed; periodic, so gzip shrinks it about 1:340. */
#define PATTERN "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.\n"
#define PATTERN_LEN 64
_Static_assert(sizeof PATTERN - 1 == PATTERN_LEN, "pattern is one 64-byte line");

/* The body of every /delay answer, whatever the path after the delay. */
static const char delay_body[] =
    "<!DOCTYPE html>\n"
    "<html><head><title>delay</title></head>"
    "<body><p>delayed response.</p></body></html>\n";
#define DELAY_BODY_LEN (sizeof delay_body - 1)
_Static_assert(DELAY_BODY_LEN == 100, "the documented /delay body length");

static const char garbage_body[] = "GARBAGE \x01\x02\x03 this is not an HTTP response\r\n\r\n";

enum conn_state {
    ST_READ,     /* between responses: parsing the next request */
    ST_WAIT,     /* a response waits on its timer (delay, trickle) or forever (hang) */
    ST_BODY,     /* a body is generated as the socket drains */
    ST_LINGER    /* output shut down; input is discarded until the peer closes */
};

enum wait_kind { WAIT_DELAY, WAIT_TRICKLE, WAIT_HANG };
enum body_kind { BODY_BYTES, BODY_GZIP, BODY_FILE };
enum finish { FIN_KEEP, FIN_CLOSE, FIN_RESET };   /* after the current response */

/* A growable byte queue: the data is p[off..len). */
struct buf {
    char *p;
    size_t off, len, cap;
    int broken;                 /* an allocation failed: the contents are incomplete */
};

struct conn {
    int fd;
    ev_io rio, wio;
    ev_timer timer;             /* delay, trickle and lingering close */
    struct conn *prev, *next;   /* every connection, for shutdown */
    struct conn *iprev, *inext; /* the idle list: ST_READ, least recently read first */
    int in_idle;
    ev_tstamp last;             /* time of the last read, for the idle timeout */
    enum conn_state state;
    enum wait_kind wait;
    enum body_kind body;
    enum finish fin;
    char *in;                   /* IN_CAP bytes; unparsed input is in[in_off..in_len) */
    size_t in_off, in_len;
    struct buf out;             /* queued output */
    uint64_t left;              /* body bytes still to generate */
    uint64_t pos;               /* offset of the next body byte in the pattern */
    int chunked;                /* frame the body in chunks */
    int file_fd;                /* BODY_FILE */
    z_stream *z;                /* BODY_GZIP */
    unsigned answered;          /* responses queued whose requests are still "active" */
    unsigned counted : 1;       /* carried a request other than /stats: in accepted/open */
    unsigned cur_counted : 1;   /* the request in progress is in "active" */
    unsigned head_only : 1;     /* the request in progress is a HEAD */
    unsigned http10 : 1;        /* ... and came as HTTP/1.0 */
    unsigned out_stats : 1;     /* out holds a /stats answer, whose bytes are not counted */
    unsigned need_input : 1;    /* parsing stopped for want of bytes */
    unsigned peer_eof : 1;
    unsigned broken : 1;        /* out of memory or a file went wrong: close */
};

struct path_slot {
    char *key;                  /* NULL: empty */
    size_t len;
    uint64_t hash;
    uint64_t count;
};

/* The one top-level context: the loop, the listener, the counters. */
static struct fixture {
    struct ev_loop *loop;
    int lfd;
    ev_io accept_w;
    ev_timer accept_retry;      /* re-arms accept after running out of descriptors */
    ev_timer sweep;             /* closes idle connections */
    ev_signal sigint, sigterm;
    const char *root;
    const char *robots;         /* --robots: the path /robots.txt is answered as */
    struct conn *conns;
    struct conn *idle_head, *idle_tail;
    uint64_t accepted, requests, open, peak_open, active, peak_active, bytes_out;
    struct path_slot *paths;    /* open addressing, cap a power of two */
    size_t paths_cap, paths_used, paths_bytes;
    char pattern_buf[BODY_SLICE + PATTERN_LEN];  /* PATTERN repeated */
} fx;

/* A parsed request as the handlers see it. */
struct req {
    const struct fixture_http_request *h;
    const char *path;           /* raw, up to '?' */
    size_t path_len;
    const char *query;          /* after '?', or NULL */
    size_t query_len;
};

/* ---- per-path counts ---------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;          /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static struct path_slot *paths_find(const char *path, size_t len, uint64_t h)
{
    if (!fx.paths)
        return NULL;
    size_t mask = fx.paths_cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct path_slot *s = &fx.paths[i];
        if (!s->key || (s->hash == h && s->len == len && memcmp(s->key, path, len) == 0))
            return s;
    }
}

static int paths_grow(void)
{
    size_t cap = fx.paths_cap ? fx.paths_cap * 2 : 1024;
    struct path_slot *old = fx.paths, *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    size_t old_cap = fx.paths_cap;
    fx.paths = slots;
    fx.paths_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            *paths_find(old[i].key, old[i].len, old[i].hash) = old[i];
    free(old);
    return 0;
}

/* Counts one request for path. Past PATHS_MAX distinct paths (or when out of
 * memory) new paths are no longer tracked; known ones still count. */
static void paths_count(const char *path, size_t len)
{
    uint64_t h = hash_bytes(path, len);
    struct path_slot *s = paths_find(path, len, h);
    if (s && s->key) {
        s->count++;
        return;
    }
    if (fx.paths_used >= PATHS_MAX || fx.paths_bytes + len > PATH_BYTES_MAX)
        return;
    if ((fx.paths_used + 1) * 2 > fx.paths_cap) {
        if (paths_grow() < 0)
            return;
        s = paths_find(path, len, h);
    }
    char *key = malloc(len + 1);
    if (!key)
        return;
    memcpy(key, path, len);
    key[len] = '\0';
    *s = (struct path_slot){ key, len, h, 1 };
    fx.paths_used++;
    fx.paths_bytes += len;
}

static uint64_t paths_get(const char *path, size_t len)
{
    struct path_slot *s = paths_find(path, len, hash_bytes(path, len));
    return s && s->key ? s->count : 0;
}

static void paths_free(void)
{
    for (size_t i = 0; i < fx.paths_cap; i++)
        free(fx.paths[i].key);
    free(fx.paths);
    fx.paths = NULL;
    fx.paths_cap = fx.paths_used = fx.paths_bytes = 0;
}

/* ---- output buffer ------------------------------------------------------ */

static size_t buf_pending(const struct buf *b)
{
    return b->len - b->off;
}

/* Makes room for n more bytes at p + len. Returns 0, or -1 (and marks the
 * buffer broken, its contents now incomplete) when out of memory. */
static int buf_reserve(struct buf *b, size_t n)
{
    if (b->broken)
        return -1;
    if (b->len + n <= b->cap)
        return 0;
    if (b->off > 0) {
        memmove(b->p, b->p + b->off, buf_pending(b));
        b->len -= b->off;
        b->off = 0;
        if (b->len + n <= b->cap)
            return 0;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->broken = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void buf_put(struct buf *b, const void *data, size_t len)
{
    if (buf_reserve(b, len) < 0)
        return;
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

static void buf_str(struct buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void buf_printf(struct buf *b, const char *fmt, ...)
{
    size_t room = 256;
    for (;;) {
        if (buf_reserve(b, room) < 0)
            return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->broken = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        room = (size_t)n + 1;
    }
}

/* ---- connection bookkeeping ------------------------------------------- */

static void idle_remove(struct conn *c)
{
    if (!c->in_idle)
        return;
    if (c->iprev) c->iprev->inext = c->inext; else fx.idle_head = c->inext;
    if (c->inext) c->inext->iprev = c->iprev; else fx.idle_tail = c->iprev;
    c->iprev = c->inext = NULL;
    c->in_idle = 0;
}

/* Puts c at the young end of the idle list, so the sweep only ever looks at
 * the head: the list stays sorted by c->last without a timer per connection. */
static void idle_touch(struct conn *c)
{
    idle_remove(c);
    c->last = ev_now(fx.loop);
    c->iprev = fx.idle_tail;
    c->inext = NULL;
    if (fx.idle_tail) fx.idle_tail->inext = c; else fx.idle_head = c;
    fx.idle_tail = c;
    c->in_idle = 1;
}

static void conn_close(struct conn *c)
{
    ev_io_stop(fx.loop, &c->rio);
    ev_io_stop(fx.loop, &c->wio);
    ev_timer_stop(fx.loop, &c->timer);
    idle_remove(c);
    if (c->prev) c->prev->next = c->next; else fx.conns = c->next;
    if (c->next) c->next->prev = c->prev;
    fx.active -= c->answered + c->cur_counted;
    if (c->counted)
        fx.open--;
    if (c->z) {
        deflateEnd(c->z);
        free(c->z);
    }
    if (c->file_fd >= 0)
        close(c->file_fd);
    close(c->fd);
    free(c->in);
    free(c->out.p);
    free(c);
}

/* The response to the request in progress is fully queued: its request stops
 * being active once the queue drains, and the connection reads again. */
static void req_answered(struct conn *c)
{
    if (c->cur_counted) {
        c->answered++;
        c->cur_counted = 0;
    }
    c->state = ST_READ;
    idle_touch(c);
}

static const char *reason(int code)
{
    switch (code) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 102: return "Processing";
    case 103: return "Early Hints";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 418: return "I'm a teapot";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 426: return "Upgrade Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 451: return "Unavailable For Legal Reasons";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default:  return "Unknown";
    }
}

/* Queues a status line and headers. clen < 0 sends no Content-Length;
 * extra is more header lines, each ending in CRLF, or NULL. */
static void put_head(struct conn *c, int code, const char *ctype, long long clen,
                     const char *extra)
{
    buf_printf(&c->out, "HTTP/1.1 %d %s\r\n", code, reason(code));
    if (ctype)
        buf_printf(&c->out, "Content-Type: %s\r\n", ctype);
    if (clen >= 0)
        buf_printf(&c->out, "Content-Length: %lld\r\n", clen);
    if (extra)
        buf_str(&c->out, extra);
    /* Said for HTTP/1.1 too, where it is the default: some clients (wget2
     * 1.99) keep a connection only when the response says so. */
    if (c->fin != FIN_KEEP)
        buf_str(&c->out, "Connection: close\r\n");
    else
        buf_str(&c->out, "Connection: keep-alive\r\n");
    buf_str(&c->out, "\r\n");
}

/* Queues a whole response with a body held in memory and ends the request. */
static void respond(struct conn *c, int code, const char *ctype, const char *body,
                    size_t len, const char *extra)
{
    put_head(c, code, ctype, (long long)len, extra);
    if (!c->head_only)
        buf_put(&c->out, body, len);
    req_answered(c);
}

static void respond_text(struct conn *c, int code, const char *body)
{
    respond(c, code, "text/plain; charset=utf-8", body, strlen(body), NULL);
}

static void respond_status_text(struct conn *c, int code, const char *extra)
{
    char body[64];
    int n = snprintf(body, sizeof body, "%d %s\n", code, reason(code));
    respond(c, code, "text/plain; charset=utf-8", body, (size_t)n, extra);
}

/* ---- body generators ----------------------------------------------------- */

static void body_done(struct conn *c)
{
    if (c->file_fd >= 0) {
        close(c->file_fd);
        c->file_fd = -1;
    }
    if (c->z) {
        deflateEnd(c->z);
        free(c->z);
        c->z = NULL;
    }
    req_answered(c);
}

static const char *pattern_at(uint64_t pos)
{
    return fx.pattern_buf + pos % PATTERN_LEN;
}

static void fill_bytes(struct conn *c)
{
    size_t n = c->left < BODY_SLICE ? (size_t)c->left : BODY_SLICE;
    if (n > 0) {
        if (c->chunked)
            buf_printf(&c->out, "%zx\r\n", n);
        buf_put(&c->out, pattern_at(c->pos), n);
        if (c->chunked)
            buf_str(&c->out, "\r\n");
        c->left -= n;
        c->pos += n;
    }
    if (c->left == 0) {
        if (c->chunked)
            buf_str(&c->out, "0\r\n\r\n");
        body_done(c);
    }
}

static void fill_file(struct conn *c)
{
    size_t want = c->left < BODY_SLICE ? (size_t)c->left : BODY_SLICE;
    if (buf_reserve(&c->out, want) < 0)
        return;
    ssize_t n = read(c->file_fd, c->out.p + c->out.len, want);
    if (n <= 0) {
        /* The file shrank or failed under us: the promised length cannot be
         * kept, so the connection must end. */
        if (n < 0 && errno == EINTR)
            return;
        c->broken = 1;
        return;
    }
    c->out.len += (size_t)n;
    c->left -= (uint64_t)n;
    if (c->left == 0)
        body_done(c);
}

/* Deflates at most GZIP_SLICE more bytes of the body. With chunked framing
 * the chunk-size is written with a fixed width (leading zeros are allowed)
 * into room reserved before the deflate output it counts. */
static void fill_gzip(struct conn *c)
{
    const size_t hdr = c->chunked ? 10 : 0, room = BODY_SLICE;
    if (buf_reserve(&c->out, hdr + room + 8) < 0)
        return;
    char *base = c->out.p + c->out.len;
    z_stream *z = c->z;
    uint64_t budget = GZIP_SLICE;
    int ret = Z_OK;

    z->next_out = (Bytef *)base + hdr;
    z->avail_out = (uInt)room;
    while (z->avail_out > 0) {
        if (z->avail_in == 0 && c->left > 0) {
            if (budget == 0)
                break;
            size_t n = BODY_SLICE;
            if (c->left < n)
                n = (size_t)c->left;
            if (budget < n)
                n = (size_t)budget;
            z->next_in = (Bytef *)pattern_at(c->pos);
            z->avail_in = (uInt)n;
            c->left -= n;
            c->pos += n;
            budget -= n;
        }
        ret = deflate(z, c->left == 0 ? Z_FINISH : Z_NO_FLUSH);
        if (ret == Z_STREAM_END)
            break;
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            c->broken = 1;
            return;
        }
    }
    size_t produced = room - z->avail_out;
    if (produced > 0) {
        if (c->chunked) {
            static const char hex[] = "0123456789abcdef";
            for (int i = 7; i >= 0; i--)
                base[7 - i] = hex[(produced >> (i * 4)) & 0xf];
            base[8] = '\r';
            base[9] = '\n';
            c->out.len += hdr + produced;
            buf_str(&c->out, "\r\n");
        } else {
            c->out.len += produced;
        }
    }
    if (ret == Z_STREAM_END) {
        if (c->chunked)
            buf_str(&c->out, "0\r\n\r\n");
        body_done(c);
    }
}

/* Generates body bytes until OUT_HIGH are queued. A gzip step is bounded by
 * its input rather than its (tiny) output, so it runs once per call. */
static void body_fill(struct conn *c)
{
    while (c->state == ST_BODY && buf_pending(&c->out) < OUT_HIGH && !c->broken) {
        switch (c->body) {
        case BODY_BYTES: fill_bytes(c); break;
        case BODY_FILE:  fill_file(c); break;
        case BODY_GZIP:  fill_gzip(c); return;
        }
    }
}

/* ---- endpoints ----------------------------------------------------------- */

/* Parses a decimal number that is all of s[0..len); -1 if it is not one or
 * exceeds max. */
static int parse_num(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 20)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int path_is(const struct req *r, const char *s)
{
    size_t n = strlen(s);
    return r->path_len == n && memcmp(r->path, s, n) == 0;
}

/* If the path starts with prefix, points *rest at what follows. */
static int path_has_prefix(const struct req *r, const char *prefix, const char **rest,
                           size_t *rest_len)
{
    size_t n = strlen(prefix);
    if (r->path_len < n || memcmp(r->path, prefix, n) != 0)
        return 0;
    *rest = r->path + n;
    *rest_len = r->path_len - n;
    return 1;
}

static void not_found(struct conn *c)
{
    respond_text(c, 404, "not found\n");
}

static void start_body(struct conn *c, enum body_kind kind, uint64_t len)
{
    c->body = kind;
    c->left = len;
    c->pos = 0;
    c->state = ST_BODY;
}

static void ep_bytes(struct conn *c, const char *rest, size_t len, int chunked)
{
    uint64_t n;
    if (parse_num(rest, len, MAX_BODY, &n) < 0)
        return not_found(c);
    /* HTTP/1.0 has no chunked coding: such a client gets the plain body. */
    c->chunked = chunked && !c->http10;
    if (c->chunked)
        put_head(c, 200, "text/plain; charset=utf-8", -1, "Transfer-Encoding: chunked\r\n");
    else
        put_head(c, 200, "text/plain; charset=utf-8", (long long)n, NULL);
    if (c->head_only)
        return req_answered(c);
    start_body(c, BODY_BYTES, n);
}

static void ep_gzip(struct conn *c, const struct req *r, const char *rest, size_t len)
{
    uint64_t n;
    if (parse_num(rest, len, MAX_BODY, &n) < 0)
        return not_found(c);
    const struct fixture_http_header *ae = fixture_http_find_header(r->h, "Accept-Encoding");
    int gzip = 0;
    if (ae) {
        int q = fixture_http_token_q(ae->value, ae->value_len, "gzip");
        if (q < 0)
            q = fixture_http_token_q(ae->value, ae->value_len, "x-gzip");
        if (q < 0)
            q = fixture_http_token_q(ae->value, ae->value_len, "*");
        gzip = q > 0;
    }
    if (!gzip) {
        put_head(c, 200, "text/plain; charset=utf-8", (long long)n, "Vary: Accept-Encoding\r\n");
        if (c->head_only)
            return req_answered(c);
        c->chunked = 0;
        return start_body(c, BODY_BYTES, n);
    }
    /* The compressed length is known only at the end: chunked framing, or
     * for HTTP/1.0 the end of the connection. */
    c->chunked = !c->http10;
    if (!c->chunked)
        c->fin = FIN_CLOSE;
    put_head(c, 200, "text/plain; charset=utf-8", -1,
             c->chunked ? "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"
                          "Transfer-Encoding: chunked\r\n"
                        : "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n");
    if (c->head_only)
        return req_answered(c);
    c->z = calloc(1, sizeof *c->z);
    if (!c->z || deflateInit2(c->z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9,
                              Z_DEFAULT_STRATEGY) != Z_OK) {
        free(c->z);
        c->z = NULL;
        c->broken = 1;
        return;
    }
    start_body(c, BODY_GZIP, n);
}

static void ep_delay(struct conn *c, const char *rest, size_t len)
{
    const char *slash = memchr(rest, '/', len);
    uint64_t ms;
    if (parse_num(rest, slash ? (size_t)(slash - rest) : len, MAX_DELAY_MS, &ms) < 0)
        return not_found(c);
    c->state = ST_WAIT;
    c->wait = WAIT_DELAY;
    /* The loop's idea of "now" dates from the start of this iteration, which
     * may be long past after a burst of accepts: a delay must start now. */
    ev_now_update(fx.loop);
    ev_timer_set(&c->timer, (double)ms / 1000.0, 0.);
    ev_timer_start(fx.loop, &c->timer);
}

static void ep_trickle(struct conn *c, const char *rest, size_t len)
{
    const char *slash = memchr(rest, '/', len);
    uint64_t n, ms;
    if (!slash || parse_num(rest, (size_t)(slash - rest), MAX_BODY, &n) < 0 ||
        parse_num(slash + 1, len - (size_t)(slash - rest) - 1, MAX_DELAY_MS, &ms) < 0)
        return not_found(c);
    put_head(c, 200, "text/plain; charset=utf-8", (long long)n, NULL);
    if (c->head_only || n == 0)
        return req_answered(c);
    c->state = ST_WAIT;
    c->wait = WAIT_TRICKLE;
    c->left = n;
    c->pos = 0;
    /* A repeat of 0 would make the timer one-shot; MS=0 trickles as fast as
     * the loop turns instead. */
    double every = ms ? (double)ms / 1000.0 : 1e-4;
    ev_now_update(fx.loop);
    ev_timer_set(&c->timer, every, every);
    ev_timer_start(fx.loop, &c->timer);
}

static void ep_status(struct conn *c, const char *rest, size_t len)
{
    uint64_t code;
    if (parse_num(rest, len, 599, &code) < 0 || code < 100)
        return not_found(c);
    if (code == 101) {
        /* Switching protocols without an Upgrade is no answer a client
         * could act on. */
        return respond_text(c, 400, "101 needs an Upgrade request\n");
    }
    if (code < 200) {
        /* A 1xx is never final: send it as an interim response, then 200. */
        buf_printf(&c->out, "HTTP/1.1 %d %s\r\n\r\n", (int)code, reason((int)code));
        return respond_status_text(c, 200, NULL);
    }
    if (code == 204 || code == 304) {
        /* These carry no body and, for 204, no Content-Length (RFC 9110). */
        put_head(c, (int)code, NULL, -1, NULL);
        return req_answered(c);
    }
    respond_status_text(c, (int)code, NULL);
}

static void ep_redirect(struct conn *c, const char *rest, size_t len)
{
    uint64_t n;
    if (parse_num(rest, len, UINT64_MAX, &n) < 0)
        return not_found(c);
    if (n == 0)
        return respond_text(c, 200, "end of redirect chain\n");
    char loc[64];
    snprintf(loc, sizeof loc, "Location: /redirect/%llu\r\n", (unsigned long long)(n - 1));
    respond_status_text(c, 302, loc);
}

static void ep_redirect_to(struct conn *c, const struct req *r)
{
    const char *raw;
    size_t raw_len;
    if (!r->query || fixture_http_query_param(r->query, r->query_len, "url", &raw, &raw_len) < 0)
        return respond_text(c, 400, "missing url parameter\n");
    char url[MAX_HEAD];
    long n = fixture_http_percent_decode(raw, raw_len, url, sizeof url);
    if (n <= 0)
        return respond_text(c, 400, "bad url parameter\n");
    for (long i = 0; i < n; i++)
        if ((unsigned char)url[i] < 0x20 || url[i] == 0x7f)
            return respond_text(c, 400, "bad url parameter\n");   /* header injection */
    char loc[MAX_HEAD + 16];
    snprintf(loc, sizeof loc, "Location: %.*s\r\n", (int)n, url);
    respond_status_text(c, 302, loc);
}

static void ep_headers(struct conn *c, const struct req *r)
{
    size_t len = 0;
    for (size_t i = 0; i < r->h->num_headers; i++)
        len += r->h->headers[i].name_len + 2 + r->h->headers[i].value_len + 1;
    put_head(c, 200, "text/plain; charset=utf-8", (long long)len, NULL);
    if (!c->head_only) {
        for (size_t i = 0; i < r->h->num_headers; i++) {
            const struct fixture_http_header *hd = &r->h->headers[i];
            buf_put(&c->out, hd->name, hd->name_len);
            buf_put(&c->out, ": ", 2);
            buf_put(&c->out, hd->value, hd->value_len);
            buf_put(&c->out, "\n", 1);
        }
    }
    req_answered(c);
}

/* /links?u=URL&u=URL...: an HTML page linking to each percent-decoded u,
 * in order, so that tests can build a page with exactly the links they
 * need (another host, another scheme, odd spellings). */
static void ep_links(struct conn *c, const struct req *r)
{
    struct buf body = {0};
    buf_printf(&body, "<!DOCTYPE html>\n<html><head><title>links</title></head><body>\n");
    const char *q = r->query, *end = r->query ? r->query + r->query_len : NULL;
    while (q && q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *pe = amp ? amp : end;
        if (pe - q > 2 && q[0] == 'u' && q[1] == '=') {
            char url[MAX_HEAD];
            long n = fixture_http_percent_decode(q + 2, (size_t)(pe - q - 2), url, sizeof url);
            if (n > 0) {
                buf_put(&body, "<a href=\"", 9);
                for (long i = 0; i < n; i++) {
                    switch (url[i]) {
                    case '&': buf_put(&body, "&amp;", 5); break;
                    case '<': buf_put(&body, "&lt;", 4); break;
                    case '>': buf_put(&body, "&gt;", 4); break;
                    case '"': buf_put(&body, "&quot;", 6); break;
                    default:  buf_put(&body, &url[i], 1);
                    }
                }
                buf_put(&body, "\">link</a>\n", 11);
            }
        }
        q = amp ? amp + 1 : end;
    }
    buf_printf(&body, "</body></html>\n");
    put_head(c, 200, "text/html; charset=utf-8", (long long)(body.len - body.off), NULL);
    if (!c->head_only)
        buf_put(&c->out, body.p + body.off, body.len - body.off);
    free(body.p);
    req_answered(c);
}

/* /header/NAME: the value of request header NAME (case-insensitive) as the
 * body, so that a client's headers can be checked through its body length;
 * 404 when the request has no such header. */
static void ep_header(struct conn *c, const struct req *r, const char *name, size_t len)
{
    for (size_t i = 0; i < r->h->num_headers; i++) {
        const struct fixture_http_header *hd = &r->h->headers[i];
        if (hd->name_len == len && strncasecmp(hd->name, name, len) == 0) {
            put_head(c, 200, "text/plain; charset=utf-8", (long long)hd->value_len, NULL);
            if (!c->head_only)
                buf_put(&c->out, hd->value, hd->value_len);
            return req_answered(c);
        }
    }
    respond_text(c, 404, "no such header\n");
}

/* Writes the canonical path of graph page j: page 0 is /graph/N/F/, so that
 * links back to it name the URL a crawl starts from. */
static void graph_link(struct buf *b, uint64_t n, uint64_t f, uint64_t j)
{
    if (j == 0)
        buf_printf(b, "/graph/%llu/%llu/", (unsigned long long)n, (unsigned long long)f);
    else
        buf_printf(b, "/graph/%llu/%llu/%llu", (unsigned long long)n,
                   (unsigned long long)f, (unsigned long long)j);
}

static void ep_graph(struct conn *c, const char *rest, size_t len)
{
    const char *end = rest + len, *s1, *s2;
    uint64_t n, f, i = 0;
    if (!(s1 = memchr(rest, '/', len)) || !(s2 = memchr(s1 + 1, '/', (size_t)(end - s1 - 1))))
        return not_found(c);
    if (parse_num(rest, (size_t)(s1 - rest), MAX_GRAPH_N, &n) < 0 || n == 0 ||
        parse_num(s1 + 1, (size_t)(s2 - s1 - 1), MAX_GRAPH_F, &f) < 0)
        return not_found(c);
    if (s2 + 1 < end && parse_num(s2 + 1, (size_t)(end - s2 - 1), UINT64_MAX, &i) < 0)
        return not_found(c);
    if (i >= n)
        return not_found(c);

    unsigned long long un = n, uf = f, ui = i;
    struct buf b = { 0 };
    buf_printf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                   "<title>graph %llu/%llu page %llu</title></head>\n<body>\n"
                   "<h1>page %llu of %llu, fan-out %llu</h1>\n<ul>\n", un, uf, ui, ui, un, uf);
    uint64_t first = i * f + 1, kids = 0;   /* i < 1e9, f <= 1e3: no overflow */
    for (uint64_t k = 0; k < f && first + k < n; k++, kids++) {
        buf_str(&b, "<li><a href=\"");
        graph_link(&b, n, f, first + k);
        buf_printf(&b, "\">child %llu</a></li>\n", (unsigned long long)(first + k));
    }
    buf_str(&b, "</ul>\n");
    if (i > 0) {
        buf_str(&b, "<p><a href=\"");
        graph_link(&b, n, f, (i - 1) / f);
        buf_str(&b, "\">parent</a></p>\n");
    }
    buf_str(&b, "<p><a href=\"");
    graph_link(&b, n, f, i);
    buf_str(&b, "#top\">this page</a></p>\n");
    if (kids > 0)
        buf_printf(&b, "<p><a href=\"../%llu/%llu\">first child, relative</a></p>\n",
                   uf, (unsigned long long)first);
    buf_printf(&b, "<p><a href=\"mailto:page-%llu@example.invalid\">mail</a> "
                   "<a href=\"javascript:void(0)\">script</a></p>\n</body></html>\n", ui);
    if (b.broken)
        c->broken = 1;
    else
        respond(c, 200, "text/html; charset=utf-8", b.p, b.len, NULL);
    free(b.p);
}

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return "application/octet-stream";
    static const struct { const char *ext, *type; } types[] = {
        { ".html", "text/html; charset=utf-8" },
        { ".htm",  "text/html; charset=utf-8" },
        { ".css",  "text/css; charset=utf-8" },
        { ".js",   "text/javascript; charset=utf-8" },
        { ".png",  "image/png" },
        { ".jpg",  "image/jpeg" },
        { ".jpeg", "image/jpeg" },
        { ".txt",  "text/plain; charset=utf-8" },
        { ".xml",  "application/xml" },
        { ".json", "application/json" },
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strcasecmp(dot, types[k].ext) == 0)
            return types[k].type;
    return "application/octet-stream";
}

/* Serves ROOT + rel (decoded, already checked safe). raw is the request path,
 * for the redirect that adds a directory's trailing slash. charset, when not
 * NULL, replaces the charset of a text/ type. */
static void serve_file(struct conn *c, const char *rel, size_t rel_len,
                       const char *raw, size_t raw_len, const char *charset)
{
    char full[PATH_MAX];
    int n = snprintf(full, sizeof full, "%s%.*s", fx.root, (int)rel_len, rel);
    if (n < 0 || (size_t)n >= sizeof full - sizeof "index.html")
        return not_found(c);
    /* O_NONBLOCK so that a FIFO under the root cannot stall the loop. */
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        goto missing;
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        fd = -1;
        if (raw[raw_len - 1] != '/') {
            char loc[MAX_HEAD + 32];
            snprintf(loc, sizeof loc, "Location: %.*s/\r\n", (int)raw_len, raw);
            return respond_status_text(c, 301, loc);
        }
        strcat(full, "index.html");
        fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0)
            goto missing;
    }
    if (!S_ISREG(st.st_mode))
        goto missing;
    const char *ctype = content_type(full);
    char typed[128];
    if (charset && strncmp(ctype, "text/", 5) == 0) {
        snprintf(typed, sizeof typed, "%.*s; charset=%s", (int)strcspn(ctype, ";"), ctype,
                 charset);
        ctype = typed;
    }
    put_head(c, 200, ctype, (long long)st.st_size, NULL);
    if (c->head_only || st.st_size == 0) {
        close(fd);
        return req_answered(c);
    }
    c->file_fd = fd;
    start_body(c, BODY_FILE, (uint64_t)st.st_size);
    return;
missing:
    if (fd >= 0)
        close(fd);
    not_found(c);
}

#define CHARSET_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:"

static void ep_site(struct conn *c, const struct req *r)
{
    if (r->path_len == 5)     /* "/site": its pages' relative links need the slash */
        return respond_status_text(c, 301, "Location: /site/\r\n");
    const char *rel = r->path + 5;
    size_t rel_len = r->path_len - 5;
    char dec[MAX_HEAD];
    long n = fixture_http_percent_decode(rel, rel_len, dec, sizeof dec);
    if (n < 0)
        return respond_text(c, 400, "bad percent-encoding\n");
    if (!fixture_http_path_is_safe(dec, (size_t)n))
        return not_found(c);
    /* ?charset=NAME: what a text file's Content-Type says it is in. */
    const char *cs;
    size_t cs_len;
    char charset[41];
    if (r->query && fixture_http_query_param(r->query, r->query_len, "charset", &cs, &cs_len) == 0) {
        if (cs_len == 0 || cs_len >= sizeof charset || strspn(cs, CHARSET_CHARS) < cs_len)
            return respond_text(c, 400, "bad charset\n");
        memcpy(charset, cs, cs_len);
        charset[cs_len] = '\0';
        return serve_file(c, dec, (size_t)n, r->path, r->path_len, charset);
    }
    serve_file(c, dec, (size_t)n, r->path, r->path_len, NULL);
}

static void json_string(struct buf *b, const char *s, size_t len)
{
    buf_put(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            buf_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            buf_printf(b, "\\u%04x", ch);
        else
            buf_put(b, &s[i], 1);
    }
    buf_put(b, "\"", 1);
}

/* /stats answers are built into an empty output buffer (serve_requests sees
 * to it) and flagged, so that their bytes never count in bytes_out. */
static void ep_stats(struct conn *c, const struct req *r)
{
    const char *raw;
    size_t raw_len;
    struct buf b = { 0 };

    if (r->query && fixture_http_query_param(r->query, r->query_len, "path", &raw, &raw_len) == 0) {
        char path[MAX_HEAD];
        long n = fixture_http_percent_decode(raw, raw_len, path, sizeof path);
        if (n < 0)
            return respond_text(c, 400, "bad path parameter\n");
        buf_str(&b, "{\"path\":");
        json_string(&b, path, (size_t)n);
        buf_printf(&b, ",\"count\":%llu}\n", (unsigned long long)paths_get(path, (size_t)n));
    } else {
        buf_printf(&b,
            "{\"accepted\":%llu,\"requests\":%llu,\"open\":%llu,\"peak_open\":%llu,"
            "\"active\":%llu,\"peak_active\":%llu,\"bytes_out\":%llu}\n",
            (unsigned long long)fx.accepted, (unsigned long long)fx.requests,
            (unsigned long long)fx.open, (unsigned long long)fx.peak_open,
            (unsigned long long)fx.active, (unsigned long long)fx.peak_active,
            (unsigned long long)fx.bytes_out);
    }
    if (b.broken) {
        c->broken = 1;
    } else {
        c->out_stats = 1;
        respond(c, 200, "application/json", b.p, b.len, "Cache-Control: no-store\r\n");
    }
    free(b.p);
}

/* The rules of the default root's robots.txt, for the /robots/ variants. */
#define ROBOTS_RULES "User-agent: *\nDisallow: /site/private/\n"

/* /robots/bom, /robots/cr, /robots/huge/N: hostile spellings of the default
 * robots.txt, to be served as /robots.txt with --robots: after a UTF-8 byte
 * order mark; with CR alone as line end; its two lines followed by
 * comment-free filler (the /bytes pattern) up to N bytes, streamed. */
static void ep_robots(struct conn *c, const char *rest, size_t len)
{
    static const char bom[] = "\xEF\xBB\xBF" ROBOTS_RULES;
    static const char cr[] = "User-agent: *\rDisallow: /site/private/\r";
    const char *plain = "text/plain; charset=utf-8";
    uint64_t n;
    if (len == 3 && memcmp(rest, "bom", 3) == 0)
        return respond(c, 200, plain, bom, sizeof bom - 1, NULL);
    if (len == 2 && memcmp(rest, "cr", 2) == 0)
        return respond(c, 200, plain, cr, sizeof cr - 1, NULL);
    if (len < 5 || memcmp(rest, "huge/", 5) != 0 ||
        parse_num(rest + 5, len - 5, MAX_BODY, &n) < 0 || n < sizeof ROBOTS_RULES - 1)
        return not_found(c);
    put_head(c, 200, plain, (long long)n, NULL);
    if (c->head_only)
        return req_answered(c);
    buf_str(&c->out, ROBOTS_RULES);
    c->chunked = 0;
    start_body(c, BODY_BYTES, n - (sizeof ROBOTS_RULES - 1));
}

/* /deep/N: an HTML page whose one link (/bytes/1) sits inside N nested
 * <div>s, followed by a shallow one (/bytes/2), for parsers' depth limits. */
static void ep_deep(struct conn *c, const char *rest, size_t len)
{
    uint64_t n;
    if (parse_num(rest, len, MAX_DEEP, &n) < 0)
        return not_found(c);
    struct buf b = { 0 };
    buf_str(&b, "<!DOCTYPE html>\n<html><head><title>deep</title></head><body>\n");
    for (uint64_t i = 0; i < n; i++)
        buf_str(&b, "<div>");
    buf_str(&b, "<a href=\"/bytes/1\">deep</a>");
    for (uint64_t i = 0; i < n; i++)
        buf_str(&b, "</div>");
    buf_str(&b, "\n<p><a href=\"/bytes/2\">shallow</a></p></body></html>\n");
    if (b.broken)
        c->broken = 1;
    else
        respond(c, 200, "text/html; charset=utf-8", b.p, b.len, NULL);
    free(b.p);
}

/* /wide/N: an HTML page of N links, /bytes/1 to /bytes/N, side by side: a
 * small body whose document tree is many times its size. */
static void ep_wide(struct conn *c, const char *rest, size_t len)
{
    uint64_t n;
    if (parse_num(rest, len, MAX_WIDE, &n) < 0)
        return not_found(c);
    struct buf b = { 0 };
    buf_str(&b, "<!DOCTYPE html>\n<html><head><title>wide</title></head><body>\n");
    for (uint64_t i = 1; i <= n; i++)
        buf_printf(&b, "<a href=\"/bytes/%llu\">%llu</a>\n", (unsigned long long)i,
                   (unsigned long long)i);
    buf_str(&b, "</body></html>\n");
    if (b.broken)
        c->broken = 1;
    else
        respond(c, 200, "text/html; charset=utf-8", b.p, b.len, NULL);
    free(b.p);
}

/* /big-header/N: 200 "ok\n" after a response header line "X-Big: " with N
 * bytes of value, for clients' limits on response headers. */
static void ep_big_header(struct conn *c, const char *rest, size_t len)
{
    uint64_t n;
    if (parse_num(rest, len, MAX_BIG_HEADER, &n) < 0)
        return not_found(c);
    struct buf h = { 0 };
    buf_str(&h, "X-Big: ");
    if (buf_reserve(&h, (size_t)n + 3) == 0) {
        memset(h.p + h.len, 'a', (size_t)n);
        h.len += (size_t)n;
    }
    buf_put(&h, "\r\n", 3);     /* with the NUL that put_head's buf_str needs */
    if (h.broken)
        c->broken = 1;
    else
        respond(c, 200, "text/plain; charset=utf-8", "ok\n", 3, h.p);
    free(h.p);
}

static void dispatch(struct conn *c, const struct req *r)
{
    const char *rest;
    size_t len;

    if (path_has_prefix(r, "/delay/", &rest, &len))
        return ep_delay(c, rest, len);
    if (path_has_prefix(r, "/bytes/", &rest, &len))
        return ep_bytes(c, rest, len, 0);
    if (path_has_prefix(r, "/chunked/", &rest, &len))
        return ep_bytes(c, rest, len, 1);
    if (path_has_prefix(r, "/gzip/", &rest, &len))
        return ep_gzip(c, r, rest, len);
    if (path_has_prefix(r, "/graph/", &rest, &len))
        return ep_graph(c, rest, len);
    if (path_is(r, "/site") || path_has_prefix(r, "/site/", &rest, &len))
        return ep_site(c, r);
    if (path_has_prefix(r, "/status/", &rest, &len))
        return ep_status(c, rest, len);
    if (path_has_prefix(r, "/redirect/", &rest, &len))
        return ep_redirect(c, rest, len);
    if (path_is(r, "/redirect-loop"))
        return respond_status_text(c, 302, "Location: /redirect-loop\r\n");
    if (path_is(r, "/redirect-to"))
        return ep_redirect_to(c, r);
    if (path_is(r, "/headers"))
        return ep_headers(c, r);
    if (path_is(r, "/links"))
        return ep_links(c, r);
    if (path_has_prefix(r, "/header/", &rest, &len) && len > 0)
        return ep_header(c, r, rest, len);
    if (path_has_prefix(r, "/robots/", &rest, &len))
        return ep_robots(c, rest, len);
    if (path_has_prefix(r, "/deep/", &rest, &len))
        return ep_deep(c, rest, len);
    if (path_has_prefix(r, "/wide/", &rest, &len))
        return ep_wide(c, rest, len);
    if (path_has_prefix(r, "/big-header/", &rest, &len))
        return ep_big_header(c, rest, len);
    if (path_is(r, "/robots.txt") && fx.robots) {
        /* Answered as the request for --robots PATH would be. */
        struct req alt = *r;
        alt.path = fx.robots;
        alt.path_len = strcspn(fx.robots, "?");
        alt.query = fx.robots[alt.path_len] ? fx.robots + alt.path_len + 1 : NULL;
        alt.query_len = alt.query ? strlen(alt.query) : 0;
        return dispatch(c, &alt);
    }
    if (path_is(r, "/robots.txt"))
        return serve_file(c, "/robots.txt", 11, r->path, r->path_len, NULL);
    if (path_has_prefix(r, "/trickle/", &rest, &len))
        return ep_trickle(c, rest, len);
    if (path_is(r, "/hang")) {
        c->state = ST_WAIT;
        c->wait = WAIT_HANG;
        return;
    }
    if (path_is(r, "/reset")) {
        c->fin = FIN_RESET;
        return req_answered(c);
    }
    if (path_is(r, "/garbage")) {
        c->fin = FIN_CLOSE;
        buf_put(&c->out, garbage_body, sizeof garbage_body - 1);
        return req_answered(c);
    }
    not_found(c);
}

/* An answer to a request that could not be parsed; the connection ends,
 * since where the next request would start is unknown. */
static void respond_error(struct conn *c, int code)
{
    c->fin = FIN_CLOSE;
    c->head_only = 0;
    c->http10 = 0;
    idle_remove(c);
    respond_status_text(c, code, NULL);
}

/* Parses and answers requests from the input buffer, in order, until one
 * must wait (delay, body, hang), output piles up, or input runs out. */
static void serve_requests(struct conn *c)
{
    c->need_input = 0;
    while (c->state == ST_READ && c->fin == FIN_KEEP && !c->out_stats && !c->broken) {
        if (buf_pending(&c->out) >= OUT_HIGH)
            break;
        if (c->in_off == c->in_len) {
            c->need_input = 1;
            break;
        }
        struct fixture_http_header hdrs[MAX_HEADERS];
        struct fixture_http_request h = { .headers = hdrs, .num_headers = MAX_HEADERS };
        const char *buf = c->in + c->in_off;
        size_t avail = c->in_len - c->in_off;
        long n = fixture_http_parse_request(buf, avail, &h);
        if (n == -2 && avail < MAX_HEAD) {
            c->need_input = 1;
            break;
        }
        if (n == -2 || (n > MAX_HEAD)) {
            respond_error(c, 431);
            break;
        }
        if (n < 0) {
            respond_error(c, 400);
            break;
        }

        struct req r = { .h = &h, .path = h.target, .path_len = h.target_len };
        /* absolute-form, as sent to a proxy: keep only the path */
        if (r.path_len >= 7 && strncasecmp(r.path, "http://", 7) == 0) {
            const char *p = memchr(r.path + 7, '/', r.path_len - 7);
            const char *q = memchr(r.path + 7, '?', r.path_len - 7);
            if (!p || (q && q < p)) {
                respond_error(c, 400);
                break;
            }
            r.path_len -= (size_t)(p - r.path);
            r.path = p;
        }
        if (r.path[0] != '/') {
            respond_error(c, 400);
            break;
        }
        const char *q = memchr(r.path, '?', r.path_len);
        if (q) {
            r.query = q + 1;
            r.query_len = r.path_len - (size_t)(q - r.path) - 1;
            r.path_len = (size_t)(q - r.path);
        }

        int is_stats = r.path_len == 6 && memcmp(r.path, "/stats", 6) == 0;
        if (is_stats && buf_pending(&c->out) > 0)
            break;              /* answered once the buffer drains */

        const struct fixture_http_header *hd;
        int keep = h.minor_version >= 1;
        if ((hd = fixture_http_find_header(&h, "Connection"))) {
            if (fixture_http_token_q(hd->value, hd->value_len, "close") >= 0)
                keep = 0;
            else if (fixture_http_token_q(hd->value, hd->value_len, "keep-alive") >= 0)
                keep = 1;
        }
        /* A request body is never read; after answering, the connection
         * ends instead of parsing the body as the next request. */
        if ((hd = fixture_http_find_header(&h, "Content-Length"))) {
            uint64_t cl;
            if (parse_num(hd->value, hd->value_len, UINT64_MAX, &cl) < 0) {
                respond_error(c, 400);
                break;
            }
            if (cl > 0)
                keep = 0;
        }
        if (fixture_http_find_header(&h, "Transfer-Encoding"))
            keep = 0;

        c->fin = keep ? FIN_KEEP : FIN_CLOSE;
        c->http10 = h.minor_version == 0;
        c->head_only = h.method_len == 4 && memcmp(h.method, "HEAD", 4) == 0;
        idle_remove(c);
        if (!is_stats) {
            fx.requests++;
            if (++fx.active > fx.peak_active)
                fx.peak_active = fx.active;
            c->cur_counted = 1;
            if (!c->counted) {
                c->counted = 1;
                fx.accepted++;
                if (++fx.open > fx.peak_open)
                    fx.peak_open = fx.open;
            }
            paths_count(r.path, r.path_len);
        }

        int get = h.method_len == 3 && memcmp(h.method, "GET", 3) == 0;
        if (!get && !c->head_only)
            respond(c, 405, "text/plain; charset=utf-8", "method not allowed\n", 19,
                    "Allow: GET, HEAD\r\n");
        else if (is_stats)
            ep_stats(c, &r);
        else
            dispatch(c, &r);
        c->in_off += (size_t)n;
    }
    /* Keep unparsed input at the front so the next read has room. */
    if (c->in_off > 0) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->need_input && c->peer_eof && c->state == ST_READ && c->fin == FIN_KEEP)
        c->fin = FIN_CLOSE;     /* nothing more can come */
}

/* ---- I/O ---------------------------------------------------------------- */

/* Writes queued output. Returns 0 when drained, 1 when the socket is full,
 * -1 when the connection failed. */
static int conn_flush(struct conn *c)
{
    while (c->out.off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out.off, c->out.len - c->out.off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 1;
            return -1;
        }
        c->out.off += (size_t)n;
        if (!c->out_stats)
            fx.bytes_out += (uint64_t)n;
    }
    return 0;
}

/* Ends a connection whose last response is fully written. */
static void conn_finish(struct conn *c)
{
    if (c->fin == FIN_RESET) {
        /* A zero linger time makes close() send RST instead of FIN. */
        struct linger lg = { 1, 0 };
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        return conn_close(c);
    }
    if (c->peer_eof)
        return conn_close(c);
    /* Closing with unread input would make the kernel send RST, which can
     * destroy the response before the client reads it; so shut down the
     * sending side and read until the client closes too (or gives up). */
    shutdown(c->fd, SHUT_WR);
    idle_remove(c);
    c->state = ST_LINGER;
    ev_io_stop(fx.loop, &c->wio);
    ev_io_start(fx.loop, &c->rio);
    ev_timer_stop(fx.loop, &c->timer);
    ev_timer_set(&c->timer, LINGER_TIMEOUT, 0.);
    ev_timer_start(fx.loop, &c->timer);
}

/* Drives a connection: generate, write, and when the output drains, go on
 * with the next body step or request. Yields to the loop after MAX_ROUNDS
 * steps so that one fast client cannot starve the others. */
static void conn_run(struct conn *c)
{
    for (int round = 0;; round++) {
        if (c->state == ST_BODY)
            body_fill(c);
        if (c->state == ST_READ)
            serve_requests(c);
        if (c->broken || c->out.broken)
            return conn_close(c);
        int r = conn_flush(c);
        if (r < 0)
            return conn_close(c);
        if (r > 0) {
            ev_io_start(fx.loop, &c->wio);
            break;
        }
        fx.active -= c->answered;
        c->answered = 0;
        c->out_stats = 0;
        c->out.off = c->out.len = 0;
        if (c->out.cap > 4 * OUT_HIGH) {
            free(c->out.p);
            c->out.p = NULL;
            c->out.cap = 0;
        }
        if (c->state == ST_READ && c->fin != FIN_KEEP)
            return conn_finish(c);
        int more = c->state == ST_BODY || (c->state == ST_READ && !c->need_input);
        if (!more) {
            ev_io_stop(fx.loop, &c->wio);
            break;
        }
        if (round >= MAX_ROUNDS) {
            /* The socket is writable, so this fires on the next iteration. */
            ev_io_start(fx.loop, &c->wio);
            break;
        }
    }
    if (!c->peer_eof && c->in_len < IN_CAP)
        ev_io_start(fx.loop, &c->rio);
}

static void on_write(struct ev_loop *loop, ev_io *w, int revents)
{
    conn_run(w->data);
}

static void on_read(struct ev_loop *loop, ev_io *w, int revents)
{
    struct conn *c = w->data;

    if (c->state == ST_LINGER) {
        char scratch[16384];
        ssize_t n = recv(c->fd, scratch, sizeof scratch, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            conn_close(c);
        return;
    }
    if (c->in_len >= IN_CAP) {
        ev_io_stop(loop, w);    /* restarted once requests are parsed */
        return;
    }
    ssize_t n = recv(c->fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        return conn_close(c);
    }
    if (n == 0) {
        c->peer_eof = 1;
        ev_io_stop(loop, w);
        /* A client that goes away while its answer waits on a timer (or
         * forever) is taken as gone, so that "open" and "active" drop at
         * once rather than when the delay ends. The price: a client that
         * only half-closes while waiting gets no answer; curl and wrk never
         * do that. */
        if (c->state == ST_WAIT)
            return conn_close(c);
    } else {
        c->in_len += (size_t)n;
        if (c->in_idle)
            idle_touch(c);
    }
    if (c->state == ST_READ)
        conn_run(c);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct conn *c = w->data;

    if (c->state == ST_LINGER)
        return conn_close(c);
    if (c->state != ST_WAIT)
        return;
    if (c->wait == WAIT_DELAY) {
        respond(c, 200, "text/html; charset=utf-8", delay_body, DELAY_BODY_LEN, NULL);
    } else if (c->wait == WAIT_TRICKLE) {
        buf_put(&c->out, pattern_at(c->pos), 1);
        c->pos++;
        if (--c->left == 0) {
            ev_timer_stop(loop, w);
            req_answered(c);
        }
    }
    conn_run(c);
}

static void conn_new(int fd)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        goto err;
    c->in = malloc(IN_CAP);
    if (!c->in)
        goto err;
    c->fd = fd;
    c->file_fd = -1;
    /* Responses leave in one send; without NODELAY a trickled byte or a
     * second small write would wait for the peer's delayed ACK. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ev_io_init(&c->rio, on_read, fd, EV_READ);
    ev_io_init(&c->wio, on_write, fd, EV_WRITE);
    ev_init(&c->timer, on_timer);
    c->rio.data = c->wio.data = c->timer.data = c;
    c->next = fx.conns;
    if (fx.conns)
        fx.conns->prev = c;
    fx.conns = c;
    idle_touch(c);
    ev_io_start(fx.loop, &c->rio);
    return;
err:
    if (c)
        free(c->in);
    free(c);
    close(fd);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    for (;;) {
        int fd = accept4(fx.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            conn_new(fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            /* The listener stays readable while the backlog waits: pause
             * rather than spin until a descriptor frees up. */
            ev_io_stop(loop, w);
            ev_timer_set(&fx.accept_retry, 0.1, 0.);
            ev_timer_start(loop, &fx.accept_retry);
        }
        return;
    }
}

static void on_accept_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_io_start(loop, &fx.accept_w);
}

static void on_sweep(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_tstamp now = ev_now(loop);
    while (fx.idle_head && now - fx.idle_head->last >= IDLE_TIMEOUT)
        conn_close(fx.idle_head);
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

/* ---- start-up ----------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
"usage: fixture-server [--port N] [--port-file FILE] [--root DIR]\n"
"                      [--stall-port-file FILE] [--robots PATH] [-q]\n"
"\n"
"A deterministic HTTP/1.1 server on 127.0.0.1 for tests and benchmarks.\n"
"\n"
"  --port N          port to listen on; 0 picks a free one (default 0)\n"
"  --port-file FILE  write the port number to FILE once listening\n"
"  --root DIR        the files served under /site/ (default testdata/site)\n"
"  --stall-port-file FILE  also listen on a second port, whose queue of\n"
"                    connections is kept full so that a connect() to it\n"
"                    never completes (connect timeouts), and write its\n"
"                    port number to FILE\n"
"  --robots PATH     answer /robots.txt as the request for PATH would be\n"
"                    (e.g. /status/503, /hang, /robots/huge/104857600)\n"
"  -q, --quiet       do not print \"listening on http://127.0.0.1:PORT\"\n"
"  -h, --help        this text\n"
"\n"
"Endpoints (GET and HEAD; other methods get 405):\n"
"  /delay/MS[/ANY...]   200 after MS milliseconds; the same %zu-byte HTML body\n"
"                       for every path\n"
"  /bytes/N             N bytes of text/plain, Content-Length N; byte i is\n"
"                       the i%%64-th byte of the 64-byte line\n"
"                       \"abc...xyzABC...XYZ0123456789.\\n\"\n"
"  /chunked/N           the same N bytes in chunked transfer coding\n"
"  /gzip/N              the same N bytes, gzip-compressed and chunked when\n"
"                       Accept-Encoding allows gzip, plain otherwise\n"
"  /status/CODE         CODE (200..599) with body \"CODE Reason\\n\"; 204 and 304\n"
"                       have no body; 1xx is sent as an interim response\n"
"                       before a 200; 101 gets 400\n"
"  /redirect/N          302 to /redirect/N-1; /redirect/0 is 200\n"
"                       \"end of redirect chain\\n\"\n"
"  /redirect-loop       302 to itself\n"
"  /redirect-to?url=U   302 to the percent-decoded U, whatever its scheme\n"
"  /headers             200, the request's header lines as \"Name: value\\n\"\n"
"  /header/NAME         200, the value of request header NAME as the body\n"
"  /links?u=URL&u=...   200, an HTML page linking to each percent-decoded URL\n"
"                       (404 when absent)\n"
"  /graph/N/F/I         page I (0..N-1) of a generated site: links to\n"
"                       children I*F+1..I*F+F (< N), the parent, itself#top,\n"
"                       the first child as ../F/J, a mailto: and a javascript:\n"
"                       link; /graph/N/F/ is page 0 (and links to page 0 use\n"
"                       it); from there depth d reaches min(N, 1+F+...+F^d) pages\n"
"  /site/PATH           static files under --root; a directory serves its\n"
"                       index.html; /robots.txt serves ROOT/robots.txt\n"
"  /hang                reads the request, never answers\n"
"  /reset               closes the connection with a TCP RST\n"
"  /trickle/N/MS        Content-Length N, then one byte every MS milliseconds\n"
"  /garbage             a response that is not HTTP, then close\n"
"  /robots/bom, /robots/cr  the default robots.txt after a UTF-8 byte order\n"
"                       mark, or with CR alone as line end\n"
"  /robots/huge/N       the default robots.txt's two lines, then filler up\n"
"                       to N bytes\n"
"  /deep/N              HTML: a link (/bytes/1) inside N nested <div>s, then\n"
"                       a shallow one (/bytes/2)\n"
"  /wide/N              HTML: N links, /bytes/1 to /bytes/N\n"
"  /big-header/N        200 \"ok\\n\" after a header line \"X-Big: \" + N bytes\n"
"  /stats               JSON counters: accepted, requests, open, peak_open,\n"
"                       active, peak_active, bytes_out (/stats itself is\n"
"                       never counted)\n"
"  /stats?path=P        {\"path\":P,\"count\":N}: requests for exactly path P\n"
"  anything else        404 \"not found\\n\"\n",
        DELAY_BODY_LEN);
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "fixture-server: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see --help)\n");
    exit(2);
}

/* Writes the port to a temporary file and renames it into place, so that a
 * reader polling for the file never sees it half written. */
static int write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int bad = fprintf(f, "%d\n", port) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* A listening socket with a backlog of 0, never accepted from, and one
 * connection of its own waiting in its queue: Linux drops every further SYN
 * while the queue is full, so a client's connect() stays in SYN-SENT until
 * it gives up. Both descriptors stay open for the server's life. Returns the
 * port, or -1 with errno set. */
static int stall_listen(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t slen = sizeof sa;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0)
        return -1;
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 0) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &slen) < 0)
        goto err;
    int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (cfd < 0)
        goto err;
    if (connect(cfd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(cfd);
        errno = e;
        goto err;
    }
    return ntohs(sa.sin_port);
err:;
    int e = errno;
    close(lfd);
    errno = e;
    return -1;
}

int main(int argc, char **argv)
{
    long port = 0;
    const char *port_file = NULL, *stall_file = NULL;
    int quiet = 0, root_given = 0;
    fx.root = "testdata/site";

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const char *eq = strchr(a, '=');
        size_t name_len = eq && strncmp(a, "--", 2) == 0 ? (size_t)(eq - a) : strlen(a);
        int takes = 0;
        if ((name_len == 6 && strncmp(a, "--port", 6) == 0) ||
            (name_len == 11 && strncmp(a, "--port-file", 11) == 0) ||
            (name_len == 17 && strncmp(a, "--stall-port-file", 17) == 0) ||
            (name_len == 6 && strncmp(a, "--root", 6) == 0) ||
            (name_len == 8 && strncmp(a, "--robots", 8) == 0))
            takes = 1;
        if (takes) {
            if (eq && name_len < strlen(a)) {
                val = eq + 1;
            } else if (i + 1 < argc) {
                val = argv[++i];
            } else {
                die_usage("%s needs a value", a);
            }
        }
        if (takes && strncmp(a, "--port-file", 11) == 0) {
            port_file = val;
        } else if (takes && strncmp(a, "--stall-port-file", 17) == 0) {
            stall_file = val;
        } else if (takes && strncmp(a, "--port", 6) == 0) {
            char *end;
            errno = 0;
            port = strtol(val, &end, 10);
            if (errno || *val == '\0' || *end != '\0' || port < 0 || port > 65535)
                die_usage("--port: not a port number: '%s'", val);
        } else if (takes && strncmp(a, "--robots", 8) == 0) {
            if (val[0] != '/' || strncmp(val, "/robots.txt", 11) == 0)
                die_usage("--robots: not a path of another endpoint: '%s'", val);
            fx.robots = val;
        } else if (takes) {
            fx.root = val;
            root_given = 1;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            die_usage("unknown flag '%s'", a);
        }
    }
    if (root_given) {
        struct stat st;
        if (stat(fx.root, &st) < 0 || !S_ISDIR(st.st_mode))
            die_usage("--root: not a directory: '%s'", fx.root);
    }

    raise_nofile();
    signal(SIGPIPE, SIG_IGN);
    for (size_t k = 0; k < sizeof fx.pattern_buf; k++)
        fx.pattern_buf[k] = PATTERN[k % PATTERN_LEN];

    fx.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fx.lfd < 0) {
        perror("fixture-server: socket");
        return 1;
    }
    int one = 1;
    setsockopt(fx.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t slen = sizeof sa;
    /* The kernel trims the backlog to net.core.somaxconn; ask for the most. */
    if (bind(fx.lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fx.lfd, 65535) < 0 ||
        getsockname(fx.lfd, (struct sockaddr *)&sa, &slen) < 0) {
        fprintf(stderr, "fixture-server: cannot listen on 127.0.0.1:%ld: %s\n", port,
                strerror(errno));
        close(fx.lfd);
        return 1;
    }
    port = ntohs(sa.sin_port);

    fx.loop = ev_default_loop(0);
    if (!fx.loop) {
        fprintf(stderr, "fixture-server: cannot start the event loop\n");
        return 1;
    }
    ev_io_init(&fx.accept_w, on_accept, fx.lfd, EV_READ);
    ev_io_start(fx.loop, &fx.accept_w);
    ev_init(&fx.accept_retry, on_accept_retry);
    ev_timer_init(&fx.sweep, on_sweep, 1., 1.);
    ev_timer_start(fx.loop, &fx.sweep);
    ev_signal_init(&fx.sigint, on_signal, SIGINT);
    ev_signal_start(fx.loop, &fx.sigint);
    ev_signal_init(&fx.sigterm, on_signal, SIGTERM);
    ev_signal_start(fx.loop, &fx.sigterm);

    if (stall_file) {
        int sport = stall_listen();
        if (sport < 0) {
            fprintf(stderr, "fixture-server: cannot set up the stalled port: %s\n",
                    strerror(errno));
            return 1;
        }
        if (write_port_file(stall_file, sport) < 0) {
            fprintf(stderr, "fixture-server: cannot write %s: %s\n", stall_file, strerror(errno));
            return 1;
        }
    }
    if (port_file && write_port_file(port_file, (int)port) < 0) {
        fprintf(stderr, "fixture-server: cannot write %s: %s\n", port_file, strerror(errno));
        return 1;
    }
    if (!quiet) {
        printf("listening on http://127.0.0.1:%ld\n", port);
        fflush(stdout);
    }

    ev_run(fx.loop, 0);

    ev_io_stop(fx.loop, &fx.accept_w);
    close(fx.lfd);
    while (fx.conns)
        conn_close(fx.conns);
    paths_free();
    ev_loop_destroy(fx.loop);
    return 0;
}

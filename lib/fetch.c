/* fetch.c: the one place where libcurl options are set and results read, so
 * that every model fetches with exactly the same settings. */
#include <ctype.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "clock.h"
#include "cookiejar.h"
#include "fetch_internal.h"
#include "sitemap.h"
#include "strbuf.h"
#include "vec.h"

/* Keeps the first FETCH_ROBOTS_MAX bytes of a robots.txt body, and sets
 * x->robots_cut once they are in. Returns 0, or -1 when out of memory (the
 * rules of a part of the file could allow what the rest forbids). */
static int keep_robots(struct fetch_xfer *x, const char *p, size_t n)
{
    if (n > FETCH_ROBOTS_MAX - x->buf_len) {
        n = FETCH_ROBOTS_MAX - x->buf_len;
        x->robots_cut = 1;
    }
    if (x->buf_len + n + 1 > x->buf_cap) {
        if (vec_reserve(&x->buf, &x->buf_cap, x->buf_len + n + 1, 1, 4096) != 0)
            return -1;
    }
    memcpy(x->buf + x->buf_len, p, n);
    x->buf_len += n;
    x->buf[x->buf_len] = '\0';
    return 0;
}

/* Drops the line that a robots.txt body cut at FETCH_ROBOTS_MAX ends in
 * the middle of: "Disallow: /private/" cut to "Disallow: /pri" would be a
 * rule the file does not have. */
static void drop_partial_line(struct fetch_xfer *x)
{
    while (x->buf_len > 0 && x->buf[x->buf_len - 1] != '\n' && x->buf[x->buf_len - 1] != '\r')
        x->buf_len--;
    if (x->buf)
        x->buf[x->buf_len] = '\0';
}

/* Counts the decoded body and stops one that grows past --max-size
 * (Content-Length may be absent or the body compressed, so
 * CURLOPT_MAXFILESIZE alone cannot catch every case). */
int fetch__take(struct fetch_xfer *x, const char *ptr, size_t n)
{
    curl_off_t max = x->ctx->opts->max_size;
    x->body += (curl_off_t)n;
    if (x->job->kind == JOB_ROBOTS) {
        /* Its own limit: a robots.txt over --max-size is read in part,
         * never failed (which would forbid the whole host). */
        if (keep_robots(x, ptr, n) != 0)
            return -1;
        return x->robots_cut;
    }
    if (x->job->kind == JOB_SITEMAP) {
        /* The protocol's limits, not --max-size: read as it comes. */
        int rc = x->sitemap ? sitemap_feed(x->sitemap, ptr, n) : -1;
        x->sitemap_over = rc == 1;
        return rc != 0;
    }
    if (max > 0 && x->body > max) {
        x->too_large = 1;
        return -1;
    }
    return 0;
}

/* CURLOPT_WRITEFUNCTION: the body as libcurl gives it, down the chain of
 * body stages (fetch_stage.c), fetch's own count in its place. */
static size_t on_body(char *ptr, size_t size, size_t nmemb, void *data)
{
    size_t n = size * nmemb;
    return fetch__stages_body(data, ptr, n) == 0 ? n : 0;     /* 0: CURLE_WRITE_ERROR */
}

/* One element of a Content-Length list from p (OWS, 1*DIGIT, OWS) to
 * end or the next comma: 1 with its value in *v, 0 for an empty element
 * (the list syntax of RFC 9110, 5.6.1 allows them), -1 for anything else
 * or a value past curl_off_t. *p moves past the element and its comma. */
static int length_element(const char **p, const char *end, curl_off_t *v)
{
    const char *s = *p;
    int digits = 0, rc = 0;
    *v = 0;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    for (; s < end && *s >= '0' && *s <= '9'; s++, digits++)
        if (*v > (INT64_MAX - (*s - '0')) / 10)
            rc = -1;
        else
            *v = *v * 10 + (*s - '0');
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
        s++;
    if (s < end && *s != ',')
        rc = -1;
    *p = s < end ? s + 1 : end;
    return rc < 0 ? -1 : digits > 0;
}

int fetch_length_line(struct fetch_length *l, const char *p, size_t n)
{
    static const char name[] = "Content-Length:";
    const char *end = p + n;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        memset(l, 0, sizeof *l);        /* a new response: a redirect, a 1xx */
        return 0;
    }
    if (l->bad)
        return -1;
    if (n < sizeof name - 1 || strncasecmp(p, name, sizeof name - 1) != 0)
        return 0;
    p += sizeof name - 1;
    while (p < end) {
        curl_off_t v;
        int e = length_element(&p, end, &v);
        if (e < 0) {
            l->bad = FETCH_LENGTH_INVALID;
            return -1;
        }
        if (e == 0)
            continue;
        if (l->seen && v != l->value) {
            l->other = v;
            l->bad = FETCH_LENGTH_CONFLICT;
            return -1;
        }
        l->seen = 1;
        l->value = v;
    }
    return 0;
}

/* CURLOPT_HEADERFUNCTION: every header line of every response, redirects'
 * included. libcurl 7.88 takes the last of two different Content-Length
 * values (5 then 7: a body of 7 bytes) and the first of a list ("5, 7":
 * 5), where RFC 9112, 6.3 makes either an unrecoverable error: the
 * response's end is unknown, the classic way to smuggle a second response
 * onto a connection. The transfer stops here (CURLE_WRITE_ERROR), and
 * libcurl closes a connection whose transfer failed. */
int fetch_header_value(const char *p, size_t n, const char *name, const char **v, size_t *vn)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(p, name, k) != 0 || p[k] != ':')
        return 0;
    const char *s = p + k + 1, *e = p + n;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *v = s;
    *vn = (size_t)(e - s);
    return 1;
}

/* The validators (RFC 9110, 8.8) of the response being read: a status
 * line starts a response (a redirect's are not the page's), an ETag or
 * Last-Modified line sets one. Out of memory, one is taken for none: the
 * next request is then made whole, which is always correct. */
static void take_validator(struct fetch_xfer *x, const char *p, size_t n)
{
    const char *v;
    size_t vn;
    char **to;
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        free(x->etag);
        free(x->modified);
        x->etag = x->modified = NULL;
        return;
    }
    if (fetch_header_value(p, n, "ETag", &v, &vn))
        to = &x->etag;
    else if (fetch_header_value(p, n, "Last-Modified", &v, &vn))
        to = &x->modified;
    else
        return;
    free(*to);
    *to = vn > 0 && vn <= FETCH_VALIDATOR_MAX ? strndup(v, vn) : NULL;
}

static size_t on_header(char *p, size_t size, size_t n, void *data)
{
    struct fetch_xfer *x = data;
    size_t len = size * n;
    /* Most lines are none of a status line ("HTTP/"), Content-Length,
     * ETag or Last-Modified: their first letter says so at once. A bad
     * Content-Length has already stopped the transfer. */
    int c = len ? (unsigned char)p[0] | 0x20 : 0;
    if ((c == 'h' || c == 'c') && fetch_length_line(&x->length, p, len) != 0)
        return 0;
    if (c == 'h' || c == 'e' || c == 'l')
        take_validator(x, p, len);
    if (x->ctx->raw)
        fetch__stages_header(x, p, len);
    return len;
}

/* CURLOPT_XFERINFOFUNCTION, blocking fetches only: lets a cancelled crawl
 * abandon transfers in flight instead of waiting for their timeouts. */
static int on_progress(void *data, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    struct fetch_xfer *x = data;
    return cancel_why(x->ctx->cancel) ? 1 : 0;
}

/* The receive buffer when --buffer-size is not given and more than
 * FETCH_MANY transfers are in flight at once. libcurl's 16 KiB buffer is
 * mostly never touched by a small response, but its first and last pages
 * are: some 4 KiB resident per transfer, where 2 KiB holds a typical
 * response head and a small body in one read. The price is more reads for
 * big bodies, paid only when a thousand transfers share the link, each with
 * a small share of it (figures: scripts/results/tuning.txt). */
#define FETCH_MANY         1000
#define FETCH_MANY_BUFFER  2048

/* Returns the receive buffer size for c's transfers; 0: libcurl's. When
 * the crawl has no bound, all that it holds is in flight at once. A
 * link-following crawl finds its pages as it goes (and its count changes
 * under the lock), so only its bound counts: past FETCH_MANY it fills
 * that bound on a web of many hosts, and without one it keeps libcurl's. */
static long buffer_size(const struct fetch_ctx *ctx, int *automatic)
{
    size_t in_flight;
    *automatic = 0;
    if (ctx->opts->buffer_size > 0)
        return ctx->opts->buffer_size;
    if (ctx->finds && ctx->limit <= 0)
        return 0;
    in_flight = ctx->finds ? (size_t)ctx->limit : ctx->listed;
    if (ctx->limit > 0 && (size_t)ctx->limit < in_flight)
        in_flight = (size_t)ctx->limit;
    if (in_flight <= FETCH_MANY)
        return 0;
    *automatic = 1;
    return FETCH_MANY_BUFFER;
}

/* Whether the environment names a proxy libcurl would use for http or
 * https (it reads no HTTP_PROXY, for CGI's sake). Read once: libcurl reads
 * these and no_proxy again for every transfer, five getenv() calls and as
 * many copies, unless CURLOPT_PROXY and CURLOPT_NOPROXY are set. */
static pthread_once_t proxy_once = PTHREAD_ONCE_INIT;
static int proxy_in_env;

static void proxy_check(void)
{
    static const char *const vars[] = {
        "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
    };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            proxy_in_env = 1;
    }
}

/* libcurl hands a host name that is not ASCII to libidn2's
 * idn2_lookup_ul, which converts it from the locale's charset: under the C
 * locale, which a program has until it calls setlocale, "bücher.example"
 * cannot be converted and libcurl fails with CURLE_URL_MALFORMAT, where
 * the curl tool (which calls setlocale) goes to xn--bcher-kva.example. The
 * URLs crawl reads are UTF-8 whatever the environment says (JSON output,
 * HTML decoding), so a locale that is not UTF-8 (LANG unset, as on many CI
 * machines) gives way to C.UTF-8. Only LC_CTYPE: numbers and messages stay
 * as they are. */
int fetch_set_locale(void)
{
    const char *set = setlocale(LC_CTYPE, "");
    if (set && strcmp(nl_langinfo(CODESET), "UTF-8") == 0)
        return 0;
    if (setlocale(LC_CTYPE, "C.UTF-8"))
        return 0;
    return set ? 0 : -1;
}

/* CURLOPT_OPENSOCKETFUNCTION: libcurl's own socket(), counted, so that a
 * trace can show the connections open as each transfer starts and ends. */
static curl_socket_t open_socket(void *data, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct fetch_ctx *ctx = data;
    curl_socket_t fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    if (fd != CURL_SOCKET_BAD)
        atomic_fetch_add(&ctx->sockets, 1);
    return fd;
}

/* CURLOPT_CLOSESOCKETFUNCTION: libcurl calls it with the clientp of the
 * handle that opened the socket, whichever handle closes it (a connection
 * cache's cleanup included): ctx outlives every handle of its run. */
static int close_socket(void *data, curl_socket_t fd)
{
    struct fetch_ctx *ctx = data;
    atomic_fetch_sub(&ctx->sockets, 1);
    return close(fd);
}

CURL *fetch_easy_new(struct fetch_ctx *ctx, struct fetch_share *share)
{
    int automatic;
    long bufsize = buffer_size(ctx, &automatic);
    const struct crawl_opts *o = ctx->opts;
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;
    /* Signals are the CLI's business, and several models run threads. */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(o->timeout * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout * 1000));
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, o->max_redirs > 0 ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, o->max_redirs);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    /* The length is that of the decoded body, as len(r.content) is. */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_USERAGENT, o->user_agent);
    if (ctx->headers)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, ctx->headers);
    /* Loaded into the handle's DNS cache on its first transfer. */
    if (o->resolve)
        curl_easy_setopt(h, CURLOPT_RESOLVE, o->resolve);
    if (bufsize > 0)
        curl_easy_setopt(h, CURLOPT_BUFFERSIZE, bufsize);
    if (o->cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert);
    if (o->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (!ctx->reuse) {
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    }
    /* -x and --noproxy as curl reads them: each replaces its environment
     * variables. With neither given nor any proxy variable set, say so,
     * and libcurl looks for none; with one set, libcurl's own rules (and
     * no_proxy) apply as usual. */
    pthread_once(&proxy_once, proxy_check);
    if (o->proxy || !proxy_in_env)
        curl_easy_setopt(h, CURLOPT_PROXY, o->proxy ? o->proxy : "");
    if (o->noproxy || (!o->proxy && !proxy_in_env))
        curl_easy_setopt(h, CURLOPT_NOPROXY, o->noproxy ? o->noproxy : "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    if (o->cookie)
        curl_easy_setopt(h, CURLOPT_COOKIE, o->cookie);
    /* The run's one cookie jar, so that a cookie one response sets goes
     * with every later request to its site, whichever handle, thread, loop
     * or pool worker sends it. libcurl 7.88 uses a share's cookies only on
     * a handle whose engine is on: a COOKIEFILE, "" for no file. */
    if (ctx->cookies) {
        share = ctx->cookies;
        curl_easy_setopt(h, CURLOPT_COOKIEFILE, "");
    }
    /* A raw stage (the WARC writer) takes the body as sent, and every
     * response of a redirect chain: the decoder stage decodes it (every
     * coding libcurl decodes and so offers) and fetch_stage.c follows
     * redirects itself. The request head comes from the debug callback,
     * which libcurl calls only when verbose. */
    if (ctx->raw) {
        curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    }
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, ctx);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, ctx);
    if (share)
        curl_easy_setopt(h, CURLOPT_SHARE, share->sh);
    return h;
}

/* CURLOPT_DEBUGFUNCTION, on a handle that is verbose for it: the request
 * head as it was written to the connection (libcurl tells it once the
 * bytes are sent), for the raw stages, and for a job its host's pace
 * waits on the moment that pace counts from. Stamped after the write, not
 * before it (CURLOPT_PREREQFUNCTION), a thread that the machine's load
 * holds back between the two cannot send a host's request closer to the
 * next than the rule. */
static int on_debug(CURL *h, curl_infotype type, char *p, size_t n, void *data)
{
    struct fetch_xfer *x = data;
    if (type != CURLINFO_HEADER_OUT)
        return 0;
    if (x->job->pace_start && x->ctx->started)
        x->ctx->started(x->ctx->started_data, x->job);
    if (x->ctx->raw)
        fetch__stages_request(x, p, n);
    return 0;
}

/* Points x's handle at the request headers of job: the run's, and for a
 * page the validators of its conditional request (RFC 9110, 13.1.2:
 * If-None-Match, the ETag as it was sent; 13.1.3: If-Modified-Since).
 * Returns 0, or CRAWL_ENOMEM (then the run's alone: the page is fetched
 * whole). */
static int cond_headers(struct fetch_xfer *x, const struct crawl_job *job)
{
    struct curl_slist *l = NULL, *n;
    char line[FETCH_VALIDATOR_MAX + 32];
    const char *names[2] = { "If-None-Match", "If-Modified-Since" };
    const char *vals[2] = { job->if_etag, job->if_modified };
    int rc = 0;
    curl_slist_free_all(x->cond);
    x->cond = NULL;
    if (job->kind == JOB_PAGE && (vals[0] || vals[1])) {
        for (const struct curl_slist *h = x->ctx->headers; h && rc == 0; h = h->next)
            if (!(n = curl_slist_append(l, h->data)))
                rc = CRAWL_ENOMEM;
            else
                l = n;
        for (int i = 0; i < 2 && rc == 0; i++) {
            if (!vals[i])
                continue;
            snprintf(line, sizeof line, "%s: %s", names[i], vals[i]);
            if (!(n = curl_slist_append(l, line)))
                rc = CRAWL_ENOMEM;
            else
                l = n;
        }
        if (rc == 0)
            x->cond = l;
        else
            curl_slist_free_all(l);
    }
    curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->cond ? x->cond : x->ctx->headers);
    return rc;
}

/* CURLOPT_RESOLVER_START_FUNCTION: libcurl's DNS cache had no entry for
 * the name of the URL being fetched (a redirect's, after one), so it is
 * looked up. libcurl 7.88 calls it for an address written as the host too,
 * which needs no lookup and is not counted. */
static int on_resolver_start(void *resolver, void *reserved, void *data)
{
    struct fetch_xfer *x = data;
    char *url = NULL, *host = NULL;
    CURLU *u = curl_url();
    if (u && curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK && url &&
        curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        struct in_addr a4;
        if (host[0] != '[' && inet_pton(AF_INET, host, &a4) != 1)
            x->job->res.dns_lookups++;
        curl_free(host);
    }
    curl_url_cleanup(u);
    return 0;
}

/* Adds n (1 or -1) to the live count of transfers in flight, if any. */
static void count_transfer(struct fetch_ctx *ctx, long n)
{
    if (ctx->transfers)
        atomic_fetch_add_explicit(ctx->transfers, n, memory_order_relaxed);
}

int fetch_prepare(struct fetch_xfer *x, struct fetch_ctx *ctx, struct crawl_job *job,
                  int worker)
{
    count_transfer(ctx, 1);
    x->ctx = ctx;
    x->job = job;
    x->body = 0;
    x->too_large = 0;
    memset(&x->length, 0, sizeof x->length);
    x->worker = worker;
    x->errbuf[0] = '\0';
    free(x->etag);
    free(x->modified);
    x->etag = x->modified = NULL;
    (void)cond_headers(x, job);
    job->res.worker = worker;
    job->res.start = clock_now() - ctx->t0;
    job->res.flight_start = atomic_fetch_add(&ctx->flight, 1) + 1;
    job->res.conns_start = atomic_load(&ctx->sockets);
    /* A job its host's pace waits on says when its request went out, as
     * the raw stages take the request head: through the debug callback,
     * which libcurl calls only when verbose. */
    int debug = job->pace_start || ctx->raw;
    /* A handle serves one transfer struct for its life in every model
     * (a coroutine's, a worker's): what points at it is set once, and
     * each option a job changes only when it does. */
    if (x->bound != x->easy) {
        curl_easy_setopt(x->easy, CURLOPT_DEBUGDATA, x);
        curl_easy_setopt(x->easy, CURLOPT_RESOLVER_START_FUNCTION, on_resolver_start);
        curl_easy_setopt(x->easy, CURLOPT_RESOLVER_START_DATA, x);
        curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
        curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
        curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
        x->bound = x->easy;
        x->debug = -1;
    }
    if (x->debug != debug) {
        curl_easy_setopt(x->easy, CURLOPT_VERBOSE, debug ? 1L : 0L);
        curl_easy_setopt(x->easy, CURLOPT_DEBUGFUNCTION, debug ? on_debug : NULL);
        x->debug = debug;
    }
    job->res.dns_lookups = 0;
    x->buf_len = 0;
    x->robots_cut = 0;
    sitemap_free(x->sitemap);
    x->sitemap = NULL;
    x->sitemap_over = 0;
    if (job->kind == JOB_SITEMAP)
        x->sitemap = sitemap_new(job->url);     /* NULL: the fetch fails, out of memory */
    const struct crawl_opts *o = ctx->opts;
    /* Set per job, on handles that serve both kinds: a robots.txt whose
     * Content-Length is over --max-size is still read up to its own limit. */
    curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE,
                     job->kind != JOB_PAGE ? (curl_off_t)0 : o->max_size);
    /* Links followed: a page's redirect ends its transfer, and the page it
     * names joins the crawl as a link does, held to its host's robots.txt
     * and pace and to the URLs seen; robots.txt and sitemaps follow theirs
     * here (RFC 9309, 2.3.1.2), as does a plain list. */
    x->redirect_out = job->kind == JOB_PAGE && o->depth > 0 && o->max_redirs > 0;
    curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION,
                     !x->redirect_out && !ctx->raw && o->max_redirs > 0 ? 1L : 0L);
    curl_easy_setopt(x->easy, CURLOPT_URL, job->url);
    /* A transfer to an https host whose first connection is still being set
     * up waits to learn whether it multiplexes (HTTP/2) rather than opening
     * a connection of its own. Never for plain http: libcurl 7.88 makes such
     * a transfer wait for the first response on the host's connection, so
     * one slow URL would hold up every transfer started beside it. */
    curl_easy_setopt(x->easy, CURLOPT_PIPEWAIT,
                     ctx->reuse && strncasecmp(job->url, "https:", 6) == 0 ? 1L : 0L);
    return fetch__stages_prepare(x);
}

/* Whether a transfer that ended in rc with the given status stopped on a
 * response header line too long for libcurl. libcurl 7.88 gathers a header
 * line in a buffer capped at CURL_MAX_HTTP_HEADER (100 KiB) and reports a
 * longer one as CURLE_OUT_OF_MEMORY, with no message: running out of
 * memory after the status line was read and before any body byte came is
 * that cap. (All the header lines together have a cap too, 300 KiB, which
 * libcurl reports itself: "Too large response headers", CURLE_RECV_ERROR.) */
static int header_too_large(CURLcode rc, const struct fetch_xfer *x, long status)
{
    curl_off_t wire = 0;
    curl_easy_getinfo(x->easy, CURLINFO_SIZE_DOWNLOAD_T, &wire);
    return rc == CURLE_OUT_OF_MEMORY && status > 0 && x->body == 0 && wire == 0;
}

enum crawl_fail fetch_fail_class(CURLcode rc)
{
    switch (rc) {
    case CURLE_OK:
        return CRAWL_FAIL_NONE;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return CRAWL_FAIL_DNS;
    case CURLE_COULDNT_CONNECT:
        return CRAWL_FAIL_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return CRAWL_FAIL_TIMEOUT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
        return CRAWL_FAIL_TLS;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_URL_MALFORMAT:
        return CRAWL_FAIL_PROTOCOL;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return CRAWL_FAIL_RECV;
    case CURLE_TOO_MANY_REDIRECTS:
        return CRAWL_FAIL_REDIRECTS;
    case CURLE_FILESIZE_EXCEEDED:
        return CRAWL_FAIL_TOO_LARGE;
    case CURLE_ABORTED_BY_CALLBACK:
        return CRAWL_FAIL_CANCELLED;
    default:
        return CRAWL_FAIL_OTHER;
    }
}

/* The failure class of transfer x that ended with rc: what the write
 * callback and the header cap know first, then libcurl's code. */
static enum crawl_fail classify(CURLcode rc, const struct fetch_xfer *x, long status)
{
    if (x->too_large)
        return CRAWL_FAIL_TOO_LARGE;
    if (x->length.bad)
        return CRAWL_FAIL_PROTOCOL;
    if (header_too_large(rc, x, status))
        return CRAWL_FAIL_RECV;
    return fetch_fail_class(rc);
}

static double usec(CURL *h, CURLINFO what)
{
    curl_off_t v = 0;
    curl_easy_getinfo(h, what, &v);
    return (double)v / 1e6;
}

/* Copies libcurl's figures for the transfer into r. */
static void take_info(struct fetch_xfer *x, struct crawl_result *r)
{
    CURL *h = x->easy;
    char *eff = NULL;
    long conns = 0;

    r->end = clock_now() - x->ctx->t0;
    r->flight_end = atomic_fetch_sub(&x->ctx->flight, 1) - 1;
    r->conns_end = atomic_load(&x->ctx->sockets);
    r->length = x->body;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &r->redirects);
    curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &r->wire_bytes);
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &conns);
    if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff) {
        free(r->final_url);
        r->final_url = strdup(eff);
    }
    r->time_dns = usec(h, CURLINFO_NAMELOOKUP_TIME_T);
    r->time_connect = usec(h, CURLINFO_CONNECT_TIME_T);
    r->time_tls = usec(h, CURLINFO_APPCONNECT_TIME_T);
    r->time_ttfb = usec(h, CURLINFO_STARTTRANSFER_TIME_T);
    r->time_total = usec(h, CURLINFO_TOTAL_TIME_T);
    if (conns > 0)
        atomic_fetch_add(&x->ctx->conns, (size_t)conns);
}

/* A robots job keeps its body for the core; a body cut at FETCH_ROBOTS_MAX
 * on purpose is a success, without its partial last line. */
static CURLcode take_robots(struct fetch_xfer *x, CURLcode rc)
{
    if (x->robots_cut && rc == CURLE_WRITE_ERROR) {
        rc = CURLE_OK;
        drop_partial_line(x);
    }
    free(x->job->body);
    x->job->body = x->buf;
    x->job->body_len = x->buf_len;
    x->buf = NULL;
    x->buf_len = x->buf_cap = 0;
    return rc;
}

/* A sitemap's outcome: the URLs it gave become the job's links (a
 * urlset's pages), or its body, one a line (an index's sitemaps); what it
 * could not read is said in the result's error, the job not failing for
 * it. A status other than 2xx gives nothing. */
static CURLcode take_sitemap(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r)
{
    struct crawl_job *j = x->job;
    struct sitemap *s = x->sitemap;
    if (x->sitemap_over && rc == CURLE_WRITE_ERROR)
        rc = CURLE_OK;
    if (!s)
        return rc == CURLE_OK ? CURLE_OUT_OF_MEMORY : rc;
    if (rc != CURLE_OK || r->status < 200 || r->status > 299)
        goto out;
    if (sitemap_end(s) != 0) {
        rc = CURLE_OUT_OF_MEMORY;
        goto out;
    }
    char **urls;
    size_t n = sitemap_take(s, &urls);
    if (sitemap_is_index(s)) {
        struct strbuf b = { 0 };
        for (size_t i = 0; i < n; i++) {
            sb_adds(&b, urls[i]);
            sb_addc(&b, '\n');
            free(urls[i]);
        }
        free(urls);
        if (b.nomem) {
            sb_free(&b);
            rc = CURLE_OUT_OF_MEMORY;
            goto out;
        }
        free(j->body);
        j->body = b.data;
        j->body_len = b.len;
    } else {
        j->links = urls;
        j->nlinks = n;
    }
    if (sitemap_problem(s))
        job_error_set(r, CRAWL_FAIL_NONE, sitemap_problem(s));
out:
    sitemap_free(s);
    x->sitemap = NULL;
    return rc;
}

/* Records why transfer x failed with rc, in words a user can act on. */
static void record_failure(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r)
{
    char buf[CURL_ERROR_SIZE + 64];
    const char *curl_text = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
    enum crawl_fail fail = classify(rc, x, r->status);
    if (fail == CRAWL_FAIL_TOO_LARGE)
        snprintf(buf, sizeof buf, "body larger than --max-size (%lld bytes)",
                 (long long)x->ctx->opts->max_size);
    else if (x->length.bad == FETCH_LENGTH_CONFLICT)
        snprintf(buf, sizeof buf, "conflicting Content-Length headers (%lld and %lld)",
                 (long long)x->length.value, (long long)x->length.other);
    else if (x->length.bad)
        snprintf(buf, sizeof buf, "invalid Content-Length header");
    else if (header_too_large(rc, x, r->status))
        snprintf(buf, sizeof buf, "response header too large: a header line over %d bytes",
                 CURL_MAX_HTTP_HEADER);
    else if (fail == CRAWL_FAIL_CANCELLED)
        snprintf(buf, sizeof buf, "%s", cancel_text(atomic_load(&x->ctx->cancel->why)));
    else if (rc == CURLE_UNSUPPORTED_PROTOCOL && r->status >= 300 && r->status < 400)
        /* The effective URL is the target refused: its scheme is the reason
         * (--warc's own following says the same, fetch_stage.c). */
        snprintf(buf, sizeof buf, "redirect refused, only http and https are followed (%.*s)",
                 r->final_url ? (int)strcspn(r->final_url, ":") : (int)strlen(curl_text),
                 r->final_url ? r->final_url : curl_text);
    else
        snprintf(buf, sizeof buf, "%s", curl_text);
    job_error_set(r, fail, buf);
}

int fetch_retry_after_applies(long status)
{
    return status == 429 || status == 503;
}

int fetch_retry_after_parse(const char *v, time_t now, double *secs)
{
    while (*v == ' ' || *v == '\t')
        v++;
    if (isdigit((unsigned char)*v)) {
        char *end;
        double s = strtod(v, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        /* delay-seconds is 1*DIGIT: no sign, point or exponent. */
        for (const char *p = v; p < end; p++)
            if (!isdigit((unsigned char)*p) && *p != ' ' && *p != '\t')
                return -1;
        if (*end)
            return -1;
        *secs = s;
        return 0;
    }
    /* libcurl's date parser reads the three forms RFC 9110, 5.6.7 lists. */
    time_t t = curl_getdate(v, NULL);
    if (t == -1)
        return -1;
    *secs = t > now ? (double)(t - now) : 0;
    return 0;
}

/* The seconds a 429 or 503 asks to wait (Retry-After), or -1: for a
 * retry's wait, and for the pause of its host. */
static double retry_after(struct fetch_xfer *x, long status)
{
    struct curl_header *h;
    double secs;
    if (!fetch_retry_after_applies(status) ||
        curl_easy_header(x->easy, "Retry-After", 0, CURLH_HEADER, -1, &h) != CURLHE_OK ||
        fetch_retry_after_parse(h->value, time(NULL), &secs) != 0)
        return -1;
    return secs;
}

/* Hands the last response's validators to r, and whether it was a 304
 * (RFC 9110, 15.4.5: not modified, no body); the handle goes back to the
 * run's headers, as it was before fetch_prepare. */
static void take_validators(struct fetch_xfer *x, struct crawl_result *r)
{
    free(r->etag);
    free(r->last_modified);
    r->etag = x->etag;
    r->last_modified = x->modified;
    x->etag = x->modified = NULL;
    r->not_modified = r->status == 304;
    if (x->cond) {
        curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->ctx->headers);
        curl_slist_free_all(x->cond);
        x->cond = NULL;
    }
}

/* A redirect handed to the frontier: the URL it names, in r->location; a
 * scheme other than http and https is refused as libcurl refuses it. A
 * 3xx without a Location is a page like any other. */
static void take_location(struct fetch_xfer *x, struct crawl_result *r)
{
    char *loc = NULL;
    free(r->location);
    r->location = NULL;
    if (curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
        return;
    if (strncasecmp(loc, "http://", 7) != 0 && strncasecmp(loc, "https://", 8) != 0) {
        char buf[96];
        snprintf(buf, sizeof buf, "redirect refused, only http and https are followed (%.*s)",
                 (int)strcspn(loc, ":"), loc);
        job_error_set(r, CRAWL_FAIL_PROTOCOL, buf);
        /* The row libcurl's own following gives: the redirect counted, the
         * URL it named as the final one. */
        r->wire_bytes = 0;
        r->redirects = 1;
        free(r->final_url);
        r->final_url = strdup(loc);
        return;
    }
    if (!(r->location = strdup(loc)))
        job_error_set(r, CRAWL_FAIL_OTHER, "out of memory");
}

int fetch_finish(struct fetch_xfer *x, CURLcode rc)
{
    count_transfer(x->ctx, -1);
    struct crawl_result *r = &x->job->res;

    take_info(x, r);
    r->retry_after = retry_after(x, r->status);
    take_validators(x, r);
    job_error_free(r->error);
    r->error = NULL;
    r->fail = CRAWL_FAIL_NONE;
    if (x->job->kind == JOB_ROBOTS)
        rc = take_robots(x, rc);
    else if (x->job->kind == JOB_SITEMAP)
        rc = take_sitemap(x, rc, r);
    /* A redirect that was being followed when the chain stopped (too many,
     * a scheme refused) is no page: its body counts as little in wire_bytes
     * as in length. libcurl reads such a body only when the connection is
     * to be reused, and --warc reads it for the archive (fetch_stage.c). */
    if (rc == CURLE_TOO_MANY_REDIRECTS ||
        (rc == CURLE_UNSUPPORTED_PROTOCOL && r->status >= 300 && r->status < 400))
        r->wire_bytes = 0;
    if (rc != CURLE_OK) {
        record_failure(x, rc, r);
    } else if (x->ctx->opts->fail_http && r->status >= 400) {
        char buf[64];
        snprintf(buf, sizeof buf, "HTTP status %ld", r->status);
        job_error_set(r, CRAWL_FAIL_HTTP, buf);
    } else if (x->redirect_out && r->status >= 300 && r->status < 400) {
        take_location(x, r);
    }
    return fetch__stages_finish(x, rc, r);
}

/* A blocking fetch hears of --deadline only in its progress callback, which
 * libcurl calls about once a second while no byte comes: its time limit is
 * cut to what is left of the run, so that it ends at the deadline rather
 * than up to a second after (the coro model's loop has a timer for it). */
static int limit_to_deadline(struct fetch_xfer *x, const struct fetch_ctx *ctx)
{
    double ms = ctx->opts->timeout * 1000;
    int cut = 0;
    if (ctx->cancel->deadline_at > 0) {
        double left = (ctx->cancel->deadline_at - clock_now()) * 1000 + 1;
        if (left < ms) {
            ms = left < 1 ? 1 : left;
            cut = 1;
        }
    }
    curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, (long)ms);
    return cut;
}

void fetch_perform(struct fetch_xfer *x, struct fetch_ctx *ctx, struct crawl_job *job,
                   int worker)
{
    int why = cancel_why(ctx->cancel);
    if (why) {
        job_error_set(&job->res, CRAWL_FAIL_CANCELLED, cancel_text(why));
        return;
    }
    fetch_prepare(x, ctx, job, worker);
    curl_easy_setopt(x->easy, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(x->easy, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(x->easy, CURLOPT_NOPROGRESS, 0L);
    CURLcode rc;
    for (;;) {
        int cut = limit_to_deadline(x, ctx);
        rc = curl_easy_perform(x->easy);
        /* A limit the deadline cut is the deadline's cancellation, even
         * when libcurl's millisecond clock ran out a moment before it. */
        if (rc == CURLE_OPERATION_TIMEDOUT && (cancel_why(ctx->cancel) || cut)) {
            cancel_set(ctx->cancel, CRAWL_CANCEL_DEADLINE);
            rc = CURLE_ABORTED_BY_CALLBACK;
        }
        if (!fetch_follow(x, rc))
            break;
        if (cancel_why(ctx->cancel)) {
            rc = CURLE_ABORTED_BY_CALLBACK;     /* between two hops */
            break;
        }
    }
    fetch_finish(x, rc);
}

/* CURLSHOPT_LOCKFUNC / CURLSHOPT_UNLOCKFUNC: one mutex per kind of shared
 * data, so that DNS look-ups do not wait on the connection cache. */
static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *data)
{
    struct fetch_share *s = data;
    pthread_mutex_lock(&s->locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *data)
{
    struct fetch_share *s = data;
    pthread_mutex_unlock(&s->locks[d]);
}

static struct fetch_share *share_new(int locked, int cookies)
{
    struct fetch_share *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&s->locks[i], NULL);
    if (!(s->sh = curl_share_init()))
        goto err;
    if (locked) {
        curl_share_setopt(s->sh, CURLSHOPT_LOCKFUNC, share_lock);
        curl_share_setopt(s->sh, CURLSHOPT_UNLOCKFUNC, share_unlock);
        curl_share_setopt(s->sh, CURLSHOPT_USERDATA, s);
    }
    /* No connections: libcurl does not support sharing connections
     * between concurrent threads (CURLSHOPT_SHARE), so the thread model
     * reuses connections by passing idle easy handles between threads. */
    curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    /* Without it every easy handle allocates a TLS session cache of its
     * own (5 x 184 bytes), even for plain HTTP, which adds up with
     * thousands of handles in flight. Shared, a session also resumes on the
     * other handles. */
    curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    if (cookies && curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) != CURLSHE_OK)
        goto err;
    return s;
err:
    fetch_share_free(s);
    return NULL;
}

struct fetch_share *fetch_share_new(void)
{
    return share_new(1, 0);
}

struct fetch_share *fetch_share_new_local(void)
{
    return share_new(0, 0);
}

int fetch_cookies_open(struct fetch_ctx *ctx, int file)
{
    const char *jar = ctx->opts->cookie_jar;
    if (!jar)
        return 0;
    if (!(ctx->cookies = share_new(1, 1)) || !(ctx->cookie_easy = curl_easy_init())) {
        fetch_share_free(ctx->cookies);
        ctx->cookies = NULL;
        return CRAWL_ENOMEM;
    }
    /* This handle never fetches: it reads the file into the shared jar
     * once, before any transfer, and writes the jar at the end. A
     * COOKIEFILE on every handle would read the file again as each one
     * starts, over cookies the run has set since. */
    curl_easy_setopt(ctx->cookie_easy, CURLOPT_SHARE, ctx->cookies->sh);
    curl_easy_setopt(ctx->cookie_easy, CURLOPT_COOKIEFILE, jar);
    curl_easy_setopt(ctx->cookie_easy, CURLOPT_COOKIELIST, "RELOAD");
    ctx->cookie_file = file;
    return 0;
}

int fetch_cookie_add(struct fetch_ctx *ctx, const char *line)
{
    if (!ctx->cookie_easy)
        return 0;
    return curl_easy_setopt(ctx->cookie_easy, CURLOPT_COOKIELIST, line) == CURLE_OUT_OF_MEMORY
           ? CRAWL_ENOMEM : 0;
}

int fetch_cookies_close(struct fetch_ctx *ctx, void (*fn)(const char *line, void *data),
                        void *data)
{
    int rc = 0;
    if (!ctx->cookie_easy)
        return 0;
    struct curl_slist *list = NULL;
    CURLcode got = curl_easy_getinfo(ctx->cookie_easy, CURLINFO_COOKIELIST, &list);
    if (ctx->cookie_file) {
        /* Not libcurl's CURLOPT_COOKIEJAR, which says nothing when the
         * file cannot be written (cookiejar.c). */
        int e = got == CURLE_OK ? cookiejar_write(ctx->opts->cookie_jar, list, time(NULL)) : -ENOMEM;
        if (e) {
            fetch_warn_once(ctx, "--cookie-jar %s: %s", ctx->opts->cookie_jar, strerror(-e));
            rc = CRAWL_EOUTPUT;
        }
    } else if (fn && got == CURLE_OK) {
        for (struct curl_slist *l = list; l; l = l->next)
            fn(l->data, data);
    }
    curl_slist_free_all(list);
    curl_easy_cleanup(ctx->cookie_easy);    /* with no COOKIEJAR, writes nothing */
    ctx->cookie_easy = NULL;
    fetch_share_free(ctx->cookies);
    ctx->cookies = NULL;
    return rc;
}

void fetch_share_free(struct fetch_share *s)
{
    if (!s)
        return;
    if (s->sh)
        curl_share_cleanup(s->sh);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&s->locks[i]);
    free(s);
}

/* Writes m bytes as "64M", "16K" or "1000" into buf. */
static const char *size_text(long long m, char *buf, size_t n)
{
    if (m % (1 << 20) == 0)
        snprintf(buf, n, "%lldM", m >> 20);
    else if (m % 1024 == 0)
        snprintf(buf, n, "%lldK", m >> 10);
    else
        snprintf(buf, n, "%lld", m);
    return buf;
}

const char *fetch_describe_opts(const struct crawl_opts *o, char *buf, size_t n)
{
    char size[32];
    long long m = (long long)o->max_size;
    if (m == 0)
        snprintf(size, sizeof size, "none");
    else
        size_text(m, size, sizeof size);
    snprintf(buf, n,
             "timeout %gs, connect %gs, redirects %ld, max size %s, "
             "HTTP/1.1 (h2 over TLS when offered), libcurl %s",
             o->timeout, o->connect_timeout, o->max_redirs, size,
             curl_version_info(CURLVERSION_NOW)->version);
    return buf;
}

const char *fetch_describe(const struct fetch_ctx *ctx, char *buf, size_t n)
{
    char limit[32], rest[256], bufsize[64] = "", size[32];
    int automatic;
    long bs = buffer_size(ctx, &automatic);
    if (ctx->limit > 0)
        snprintf(limit, sizeof limit, "%d", ctx->limit);
    else
        snprintf(limit, sizeof limit, "all");
    if (bs > 0)
        snprintf(bufsize, sizeof bufsize, ", buffer %s%s", size_text(bs, size, sizeof size),
                 automatic ? " (auto)" : "");
    snprintf(buf, n, "in flight %s, reuse %s%s%s, %s", limit, ctx->reuse ? "on" : "off",
             ctx->opts->reuse == CRAWL_REUSE_AUTO ? " (auto)" : "", bufsize,
             fetch_describe_opts(ctx->opts, rest, sizeof rest));
    return buf;
}

void fetch_warn_once(struct fetch_ctx *ctx, const char *fmt, ...)
{
    if (!ctx->warn_once)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->warn_once(ctx->warn_data, buf);
}

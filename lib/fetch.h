/* fetch.h: one URL fetched through libcurl, the same way in every model.
 * A model owns the easy handles and a fetch_xfer per transfer in flight;
 * fetch sets the options, counts the body and turns libcurl's outcome into
 * the job's result. */
#ifndef CRAWL_FETCH_H
#define CRAWL_FETCH_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>
#include <curl/curl.h>

#include "cancel.h"
#include "errors.h"
#include "job.h"
#include "opts.h"

struct dedupe;
struct fetch_share;
struct fetch_stage;

/* What every transfer of a run shares, built by the core as the run
 * starts and read by fetch only: the options and request headers, the
 * reuse policy, the run's cancellation, the counters it keeps (atomics,
 * since any thread fetches), the cookie jar, the body stages and the
 * crawl's digest set. */
struct fetch_ctx {
    const struct crawl_opts *opts;
    struct curl_slist *headers; /* the run's request headers */
    int    reuse;               /* connections are reused */
    int    limit;               /* transfers in flight at most; 0: all at once */
    size_t listed;              /* URLs listed when the run started */
    int    finds;               /* the run finds pages as it goes (links, sitemaps) */
    double t0;                  /* when the run started (monotonic seconds) */
    struct cancel *cancel;      /* the run's cancellation */
    atomic_int flight;          /* transfers between fetch_prepare and fetch_finish */
    atomic_int sockets;         /* sockets libcurl opened and has not closed */
    atomic_size_t conns;        /* connections opened, as libcurl counts them */
    atomic_long *transfers;     /* a live counter of transfers in flight, or NULL */
    struct fetch_share *cookies;  /* with --cookie-jar: the one cookie jar of
                                   * every easy handle of the run */
    CURL  *cookie_easy;         /* the handle that reads the jar's file */
    int    cookie_file;         /* the jar is written to the file at the end */
    /* The body stages (fetch_stage.h), listed by the core: the program's
     * (opts->stages), then its own. */
    const struct fetch_stage *stages[FETCH_STAGES_MAX];
    int    nstages;
    /* While the run fetches (fetch_stages_open to fetch_stages_close):
     * the chain they make, raw stages in chain[0, raw), then the decoder
     * when there is a raw one, then the decoded stages in
     * chain[decoded, nchain); and each one's own. */
    const struct fetch_stage *chain[FETCH_STAGES_MAX];
    void  *stage_conf[FETCH_STAGES_MAX];
    int    nchain;              /* how many are open */
    int    raw;                 /* raw stages: libcurl's decoding is off and
                                 * fetch follows redirects itself */
    int    decoded;
    int    begins;              /* a stage is told where each body begins */
    struct dedupe *seen;        /* the crawl's digests (--dedupe, --warc's
                                 * revisits; revisit.c makes it), shared by
                                 * a procs crawl's processes; NULL: none */
    /* Called as a job whose host's pace waits on it (job->pace_start)
     * starts its first request: the core tells the frontier. */
    void (*started)(void *data, struct crawl_job *job);
    void  *started_data;
    /* Where fetch's warnings go: msg, said once for each distinct text. */
    void (*warn_once)(void *data, const char *msg);
    void  *warn_data;
};

/* A budget of body bytes held for work a stage puts off (the parser's,
 * fetch_parse), shared by the transfers of a crawl whose model parses
 * elsewhere than it fetches. fetch only carries it to the stages. */
struct fetch_defer {
    atomic_size_t held;         /* bytes of held bodies' buffers */
    size_t max;                 /* held at most: past it, pages parse as they arrive */
};

/* The budget a model gives its fetch_defer: 16 MiB, some 160 pages of the
 * python3.11-doc tree. */
#define FETCH_DEFER_MAX (16u << 20)

/* RFC 9112, 6.3: what the head of the response being read says of its
 * length, gathered line by line by the header callback. */
struct fetch_length {
    curl_off_t value;           /* the one value given so far */
    curl_off_t other;           /* a different one, when the head is refused */
    int    seen;                /* a Content-Length line came */
    int    bad;                 /* FETCH_LENGTH_CONFLICT or _INVALID, else 0 */
};

#define FETCH_LENGTH_CONFLICT 1 /* two different values: 5 and 7 */
#define FETCH_LENGTH_INVALID  2 /* an element of the list is no number */

struct fetch_xfer {
    CURL  *easy;
    CURL  *bound;               /* the handle whose options point at this
                                 * transfer (its callbacks' data): set once */
    int    debug;               /* ... and whether its debug callback is on */
    struct fetch_ctx *ctx;
    struct crawl_job *job;
    curl_off_t body;            /* decoded body bytes so far */
    int    too_large;           /* the write callback stopped an oversized body */
    struct fetch_length length; /* the Content-Length of the response being read */
    int    worker;
    void  *data;                /* the model's own: a coroutine, a thread */
    struct fetch_defer *defer;  /* set by the model, or NULL: a page's body may be
                                   held whole for fetch_parse instead of being
                                   parsed as it arrives, within defer's budget */
    char  *buf;                 /* a robots.txt body */
    size_t buf_len, buf_cap;
    int    robots_cut;          /* the robots.txt body reached FETCH_ROBOTS_MAX: the
                                   transfer was stopped there, and that is no failure */
    struct sitemap *sitemap;    /* a sitemap job's reader, as the body arrives */
    int    sitemap_over;        /* it read all it will: the transfer was stopped
                                   there, and that is no failure */
    void  *multi;               /* the multi handle it is in (multi_ev.c), or NULL */
    int    redirect_out;        /* a redirect ends the transfer: the URL it names
                                   goes to the frontier (links followed) */
    /* Its way through the body stages (fetch_stage.c): */
    void  *st[FETCH_STAGES_MAX]; /* each one's state (ctx->chain[i]'s); NULL:
                                   not in this transfer */
    unsigned later;             /* bit i: chain[i] put work off (fetch_parse) */
    int    decided;             /* the response's body began: the stages were told */
    int    skip;                /* a redirect fetch follows: its body goes to
                                   the raw stages only, never counted or kept */
    int    hops;                /* redirects followed by fetch itself */
    double hop_time;            /* the seconds they took */
    char  *refused;             /* the target of a redirect refused for its
                                   scheme, which the row names as final */
    enum crawl_fail stage_fail; /* why a stage failed the transfer, or NONE */
    char  *stage_why;           /* ... in words */
    struct curl_slist *cond;    /* the run's request headers and the page's
                                   validators (If-None-Match, If-Modified-Since),
                                   for this transfer; NULL: the run's alone */
    char  *etag, *modified;     /* ETag and Last-Modified of the response being
                                   read (fetch_finish hands them to the result) */
    char   errbuf[CURL_ERROR_SIZE];
};

/* The most of a robots.txt body read, whatever --max-size says: RFC 9309,
 * 2.5 asks crawlers to parse at least the first 500 KiB. The transfer stops
 * there and the rest is ignored; the rules come from what was read. */
#define FETCH_ROBOTS_MAX (512 * 1024)

/* Sets the program's LC_CTYPE for libcurl's international host names: the
 * environment's when its charset is UTF-8, else C.UTF-8. Returns 0, or -1
 * when neither could be set (non-ASCII host names then fail as malformed
 * URLs). Call it from main before any thread starts: it changes the
 * locale of the whole process. */
int fetch_set_locale(void);

/* Returns a new easy handle with every option that does not depend on the
 * URL (timeouts, redirects, protocols, reuse policy, headers), or NULL when
 * out of memory. share may be NULL. The caller frees it with
 * curl_easy_cleanup. */
CURL *fetch_easy_new(struct fetch_ctx *ctx, struct fetch_share *share);

/* Points x, with its easy handle already in x->easy, at job: URL, callbacks,
 * error buffer, CURLOPT_PRIVATE = x. Returns 0 or CRAWL_ENOMEM. */
int fetch_prepare(struct fetch_xfer *x, struct fetch_ctx *ctx, struct crawl_job *job,
                  int worker);

/* Called by the model after each run of the transfer, whose outcome was
 * rc: the raw stages hear the response ended (--warc archives it) and,
 * when it was a redirect that fetch follows itself (a raw stage: libcurl
 * would drop the body of a redirect it follows), the handle is pointed at
 * the next URL and it returns 1: the model runs the transfer again.
 * Returns 0 when the transfer is over (then fetch_finish). */
int fetch_follow(struct fetch_xfer *x, CURLcode rc);

/* Fills x->job's result from libcurl's outcome rc of the finished transfer:
 * status, sizes, timings, error; then the body stages finish (the digest,
 * a parsed page's links and extracted values). Does not hand the job
 * back. Returns 0; or, only when x->defer is set, 1 when a stage put work
 * off (a page's body held to be parsed): the caller then calls fetch_parse,
 * on any thread, before it hands the job back or prepares x again. */
int fetch_finish(struct fetch_xfer *x, CURLcode rc);

/* Runs the work fetch_finish's stages put off (the parse of the held body:
 * the job's links and extracted values) and frees what they held.
 * Touches x and its job only (and the budget, atomically): it may run on
 * any thread while the model's others go on. */
void fetch_parse(struct fetch_xfer *x);

/* A blocking fetch: prepare, curl_easy_perform, finish; the job's result
 * is filled in and the caller hands it back with crawl_done, as after
 * fetch_finish. A cancelled crawl fetches nothing: the result says so. */
void fetch_perform(struct fetch_xfer *x, struct fetch_ctx *ctx, struct crawl_job *job,
                   int worker);

/* What threads with easy handles of their own share: the DNS cache and TLS
 * sessions. */
struct fetch_share {
    CURLSH *sh;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

/* Returns a new share for c, or NULL when out of memory; the caller frees it
 * with fetch_share_free after every handle using it is gone. */
struct fetch_share *fetch_share_new(void);

/* The same for the handles of one thread that drives them through multi
 * handles of its own (connections stay with each multi handle): the DNS
 * cache and TLS sessions, without locks. */
struct fetch_share *fetch_share_new_local(void);
void fetch_share_free(struct fetch_share *s);

/* With --cookie-jar: makes ctx's one cookie jar, shared (with locks) by
 * every easy handle that fetch_easy_new makes from now on whatever share it
 * is given, and loads the jar's file if it exists; file: the jar is
 * written back there (0: it is handed over instead, fetch_cookies_close).
 * Returns 0 (also without --cookie-jar) or CRAWL_ENOMEM. */
int fetch_cookies_open(struct fetch_ctx *ctx, int file);

/* Adds a cookie (a Netscape cookie-file line) to ctx's jar. Returns 0, or
 * CRAWL_ENOMEM. Without a jar it does nothing. */
int fetch_cookie_add(struct fetch_ctx *ctx, const char *line);

/* Writes ctx's cookie jar to its file (cookiejar_write), or, when it has
 * none, hands every cookie to fn (if not NULL), one Netscape cookie-file
 * line at a time; then frees the jar. Call it once every handle is done.
 * Returns 0, or CRAWL_EOUTPUT after a warning ("--cookie-jar FILE:
 * reason") when the file could not be written. */
int fetch_cookies_close(struct fetch_ctx *ctx, void (*fn)(const char *line, void *data),
                        void *data);

/* Returns a one-line description of the libcurl options every model shares,
 * in buf (of size n), e.g. "in flight 10, reuse on, timeout 30s, ...". */
const char *fetch_describe(const struct fetch_ctx *ctx, char *buf, size_t n);

/* Passes the printf-style message to ctx->warn_once. */
void fetch_warn_once(struct fetch_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The same for what options o fix whatever the model: timeouts, redirects,
 * sizes, HTTP version, libcurl. */
const char *fetch_describe_opts(const struct crawl_opts *o, char *buf, size_t n);

/* Returns 1 when a response with this status may carry a Retry-After that
 * crawl honours (429 and 503, RFC 9110 10.2.3 and RFC 6585 4), else 0. */
int fetch_retry_after_applies(long status);

/* Reads one response header line of n bytes (as libcurl's header callback
 * gets it, line end included) into l: a status line starts a new response,
 * a Content-Length line adds its comma-separated values. Repeated equal
 * values are one value (RFC 9112, 6.3, item 5); two different ones, or an
 * element that is not a number, make the length unknowable, an
 * unrecoverable error. Returns 0, or -1 once l->bad is set. */
int fetch_length_line(struct fetch_length *l, const char *p, size_t n);

/* The longest ETag or Last-Modified value kept; a longer one is taken for
 * none (no conditional request is made from it). */
#define FETCH_VALIDATOR_MAX 1024

/* Whether header line p (n bytes, as libcurl's header callback gets it,
 * line end included) is a name: value line for header name (any case):
 * returns 1 with *v and *vn the value, without the white space around it
 * and the line end; else 0. */
int fetch_header_value(const char *p, size_t n, const char *name, const char **v, size_t *vn);

/* Parses a Retry-After value v (RFC 9110, 10.2.3): delay-seconds, or an
 * HTTP-date, which is turned into seconds from now (0 when it is past).
 * Returns 0 with the seconds in *secs, or -1 when v is neither. */
int fetch_retry_after_parse(const char *v, time_t now, double *secs);

/* Returns the failure class for libcurl's code rc (CRAWL_FAIL_NONE for
 * CURLE_OK); the causes only the transfer knows (--max-size, an oversized
 * header line) are decided by fetch_finish before it asks this. */
enum crawl_fail fetch_fail_class(CURLcode rc);

#endif

/* job.h: a job and its result, the unit every layer passes along: the
 * core queues jobs, the frontier orders them, a model fetches them, the
 * report writes their rows. Types, their life cycle and the failure
 * classes; nothing here knows who made a job or where it goes next. */
#ifndef CRAWL_JOB_H
#define CRAWL_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "html.h"

struct crawl_host;
struct robots;
struct url_parts;

/* Why a URL failed, in classes that tests and scripts can rely on; the text
 * of the error says the rest. */
enum crawl_fail {
    CRAWL_FAIL_NONE = 0,
    CRAWL_FAIL_INPUT,       /* the input line is not a URL crawl fetches */
    CRAWL_FAIL_DNS,
    CRAWL_FAIL_CONNECT,     /* refused, unreachable */
    CRAWL_FAIL_TIMEOUT,
    CRAWL_FAIL_TLS,
    CRAWL_FAIL_PROTOCOL,    /* not HTTP, bad encoding, bad redirect target */
    CRAWL_FAIL_RECV,        /* reset, closed early */
    CRAWL_FAIL_REDIRECTS,   /* more than --max-redirs */
    CRAWL_FAIL_TOO_LARGE,   /* body over --max-size */
    CRAWL_FAIL_HTTP,        /* an HTTP error status with --fail */
    CRAWL_FAIL_THREAD,      /* no thread could be started for it */
    CRAWL_FAIL_CANCELLED,   /* interrupted or past --deadline */
    CRAWL_FAIL_ROBOTS,      /* a listed URL that robots.txt forbids */
    CRAWL_FAIL_OTHER
};

/* Returns the one-word name of a failure class ("timeout", "connect", ...). */
const char *job_fail_name(enum crawl_fail f);

struct crawl_result;

/* Records failure class fail in r with the error text (copied), replacing
 * any earlier error. When the copy cannot be made (memory is short) the
 * error becomes a static text for the class instead: a failed result always
 * says why. Free r->error only with job_error_free. */
void job_error_set(struct crawl_result *r, enum crawl_fail fail, const char *text);

/* Frees a result's error text, unless it is one of the static texts that
 * job_error_set falls back to. error may be NULL. */
void job_error_free(char *error);

/* The outcome of one job, filled in by fetch (or by the core for input
 * errors and cancellations). Strings are owned by the job. */
struct crawl_result {
    char  *final_url;         /* after redirects; NULL when nothing was fetched */
    long   status;            /* HTTP status of the last response; 0 if none */
    int64_t length;           /* decoded body bytes */
    int64_t wire_bytes;       /* body bytes as they came over the wire */
    long   redirects;
    double time_dns, time_connect, time_tls, time_ttfb, time_total; /* libcurl's, seconds */
    double start;             /* seconds from the crawl's start to this fetch's start */
    double end;               /* seconds from the crawl's start to its end */
    int    worker;            /* id of the thread or coroutine that ran it */
    double queued;            /* seconds from the crawl's start to when the model
                               * queued it for a worker (pool); 0: no queue */
    int    flight_start, flight_end; /* transfers in flight in the process that
                               * fetched it, itself counted, as it started; and
                               * the others, as it ended */
    int    conns_start, conns_end;   /* connections (sockets libcurl opened and
                               * has not closed) of that process at those moments */
    enum crawl_fail fail;     /* CRAWL_FAIL_NONE on success */
    char  *error;             /* NULL on success, else why it failed (may be
                               * static: see job_error_set) */
    struct html_extract *extracts; /* values of --extract, in rule order */
    size_t nextracts;
    size_t nlinks;            /* links the page gave (before admission) */
    int    attempts;          /* fetches made for it, this one included (the
                               * core counts them; 0: it never ran) */
    double retry_after;       /* seconds a 429 or 503 asked to wait
                               * (Retry-After, read with --retry); -1: none */
    char  *etag;              /* the last response's ETag as sent (quotes and
                               * all), or NULL: none */
    char  *last_modified;     /* ... its Last-Modified, or NULL */
    int    not_modified;      /* the last response was a 304: the page as last
                               * fetched stands, and no body came */
    char  *digest;            /* "sha1:" base32 of the decoded body of a 2xx
                               * page that arrived whole; else NULL */
    char  *duplicate_of;      /* --dedupe: the final URL of the first page of
                               * the crawl with the same digest; else NULL */
    char  *location;          /* a redirect not followed in the transfer but
                               * handed to the frontier (links followed): the
                               * URL it names; else NULL */
    int    dns_lookups;       /* names looked up for it (libcurl's cache
                               * missed; an address given as one excepted) */
};


/* What became of a link a page gave, as the frontier decided it (kept for
 * --links-out): admitted, or why not. */
enum job_verdict {
    JOB_LINK_PENDING = 0,     /* not decided yet (between frontier_prepare and
                               * frontier_done) */
    JOB_LINK_ADMITTED,        /* queued as a page to fetch */
    JOB_LINK_SEEN,            /* seen before: listed, queued or fetched already */
    JOB_LINK_SCOPE,           /* on another host than the listed URL's */
    JOB_LINK_EXCLUDED,        /* --include matched none of it, or --exclude did */
    JOB_LINK_ROBOTS,          /* its host's robots.txt disallows it */
    JOB_LINK_DEPTH,           /* found on a page at --depth, whose links are not followed */
    JOB_LINK_NOT_HTTP,        /* no http or https URL the frontier can split */
    JOB_LINK_QUEUE_FULL,      /* the queue held --max-queue links */
    JOB_LINK_MAX_PAGES,       /* --max-pages pages were started already */
    JOB_LINK_CANCELLED,       /* found as the crawl was being cancelled */
    JOB_LINK_STORE,           /* the --state or --frontier store failed */
    JOB_LINK_NOMEM            /* out of memory */
};

/* Returns the reason a link was not admitted ("seen", "out of scope",
 * "excluded", "robots", "depth", "not http", "queue full", "max pages",
 * "cancelled", "store failed", "out of memory"), or NULL for one that was
 * (and for one not decided). */
const char *job_verdict_reason(enum job_verdict v);

/* A link a page gave and its verdict; url is owned. */
struct job_link {
    char *url;
    enum job_verdict verdict;
};

/* A place in a frontier's queue: a job's own (job is that job), or that of
 * a link admitted and not yet started, kept as its few fields until its
 * turn comes (job NULL; the frontier holds the fields beside it). */
struct job_qent {
    struct job_qent *next;
    struct crawl_job *job;
};

/* A page is a row of the output; a robots job fetches a host's robots.txt
 * for the core, a sitemap job a sitemap (--sitemaps), and neither is
 * shown. */
enum crawl_job_kind { JOB_PAGE, JOB_ROBOTS, JOB_SITEMAP };

/* A job lives from the moment it is queued until its row is written: then
 * it is freed, so that memory follows what is queued and in flight, not
 * what was done. */
struct crawl_job {
    uint64_t seq;             /* its row's number in input order: listed URLs
                               * as read, discovered pages as they start */
    char  *url;               /* as listed */
    long   line;              /* input line number; 0 for a discovered link */
    const char *source;       /* input file name ("-" for standard input) */
    int    depth;             /* link hops from a listed URL */
    enum crawl_job_kind kind;
    struct crawl_result res;
    char **links;             /* links found by fetch (a sitemap's page URLs),
                               * taken by the core */
    size_t nlinks;
    char  *body;              /* a robots job's body; a sitemap job's: the
                               * sitemap URLs of an index, one a line */
    size_t body_len;
    /* The frontier's, made by frontier_prepare and always taken by
     * frontier_done: job_clear and job_free leave them alone. */
    struct url_parts *parts;  /* links split and past the rules that need no
                               * crawl state, or NULL */
    size_t nparts;
    struct url_parts *target; /* its redirect's target (res.location) split
                               * and past those rules, or empty when they
                               * drop it; NULL: not prepared */
    struct robots *rules;     /* a robots job's body parsed */
    struct url_parts *maps;   /* --sitemaps: the sitemaps a robots job's file
                               * names (or its host's /sitemap.xml), or those
                               * a sitemap index lists, split */
    size_t nmaps;
    int    store_rc;          /* what frontier_prepare wrote to the store (a
                               * robots.txt, a page's links): 0, or -1 for
                               * the frontier to latch */
    int    stored;            /* frontier_prepare sent a page's links and its
                               * redirect's target to the store: 1, or 2 when
                               * the store took any; 0: not (yet) */
    uint64_t mark;            /* --state: its page's id in the store (with
                               * STATE_FETCHED once fetched); 0: none */
    /* Where the job stands, kept by the core and the frontier. */
    int    failed_early;      /* res holds a failure decided before any fetch
                               * (bad input line, robots.txt): the core writes
                               * its row when the job's turn comes */
    int    unrun;             /* handed back without a fetch (no thread, cancelled) */
    int    found;             /* a page the crawl found (a link, a sitemap's
                               * URL), not a listed one: its row number is
                               * given as it starts, and none if it never does */
    int    unnumbered;        /* its row number is given as it starts (a page
                               * found, or one loaded from a store) */
    int    slot;              /* holds a slot of its host in the --frontier server */
    int    pace_start;        /* its host's pace waits for it to start
                               * (frontier_started) */
    struct crawl_host *host;  /* its per-host queue, when the frontier keeps them */
    char  *path;              /* a listed page's path and query (url_split's),
                               * kept by the frontier while its host's
                               * robots.txt is on its way, for its rules; or
                               * NULL. job_free frees it */
    char  *scope;             /* host name of the listed URL it was reached from */
    char  *parent;            /* the final URL of the page (or the sitemap) it was
                               * found on; NULL for a listed URL */
    struct job_link *verdicts;  /* --links-out: every link the page gave, in its
                               * order, with its verdict (the frontier's); the
                               * links are these then, not links */
    size_t nverdicts;
    struct crawl_job *qnext;  /* next job in its list (robots jobs, early
                               * failures, a drained queue) */
    struct job_qent qe;       /* its place in a host's queue or the plain one */
    int    hops;              /* redirects that led to this page, each a job
                               * of its own (links followed) */
    double not_before;        /* a retry's earliest start (monotonic seconds) */
    /* Conditional requests (--state's recrawl, --validators,
     * --if-modified-since): what a page's request carries. */
    char  *if_etag;           /* If-None-Match: the ETag it had, or NULL */
    char  *if_modified;       /* If-Modified-Since: an HTTP-date, or NULL */
    int    skip;              /* --recrawl-older: fetched lately, so neither
                               * fetched nor given a row; the store admits the
                               * links it kept of it */
};

/* Returns 1 when result r is a transient failure, worth another try: no
 * connection, a time out, a reset or a response cut short, or HTTP 408,
 * 429, 500, 502, 503 or 504 (with or without --fail); else 0. */
int job_transient(const struct crawl_result *r);

/* Returns a zeroed job, or NULL when out of memory. */
struct crawl_job *job_new(void);

/* Frees a job and everything its result owns. NULL is fine. */
void job_free(struct crawl_job *j);

/* Records in j a failure decided before any fetch, with reason why
 * (copied); the job keeps its place and gets its row in its turn. */
void job_fail_early(struct crawl_job *j, enum crawl_fail fail, const char *why);

/* Clears what a try left in j's result, its links and its body, for
 * another try; its attempts stay. */
void job_clear(struct crawl_job *j);

#endif

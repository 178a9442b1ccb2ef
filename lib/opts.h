/* opts.h: the options of a crawl, as the command line sets them. The core
 * reads them to set the run up; fetch reads the ones every transfer shares
 * (timeouts, redirects, size limit, TLS, proxy, cookies). */
#ifndef CRAWL_OPTS_H
#define CRAWL_OPTS_H

#include <regex.h>
#include <stddef.h>
#include <curl/curl.h>

struct html_rules;
struct fetch_stage;

enum crawl_reuse {
    CRAWL_REUSE_AUTO,   /* reuse unless every URL is in flight at once and none is https */
    CRAWL_REUSE_ON,
    CRAWL_REUSE_OFF
};

enum crawl_format { CRAWL_FMT_TABLE, CRAWL_FMT_JSONL, CRAWL_FMT_CSV };
enum crawl_order  { CRAWL_ORDER_INPUT, CRAWL_ORDER_COMPLETION };


struct crawl_opts {
    int    concurrency;       /* transfers in flight at most; 0: the model's default */
    double timeout;           /* seconds for a whole transfer */
    double connect_timeout;   /* seconds to connect */
    long   max_redirs;        /* redirects followed; 0 disables following */
    enum crawl_reuse reuse;
    const char *user_agent;
    struct curl_slist *headers;   /* extra request headers, owned by the caller */
    int    fail_http;         /* HTTP status >= 400 counts as a failure */
    curl_off_t max_size;      /* largest decoded body accepted, bytes; 0: no limit */
    long   buffer_size;       /* libcurl's receive buffer, bytes; 0: libcurl's default */
    int    insecure;          /* do not verify TLS certificates */
    const char *cacert;       /* CA certificates (PEM file) to verify with; NULL: the system's */
    const char *cookie_jar;   /* libcurl's cookie engine on, its jar read from
                               * and written to this file; NULL: off */
    const char *cookie;       /* "NAME=VALUE; ..." sent with every request; NULL: none */
    const char *proxy;        /* the proxy of every request (-x); "": none, even
                               * if the environment names one; NULL: the
                               * environment's (http_proxy, ...), if any */
    const char *noproxy;      /* hosts reached without the proxy, comma-separated
                               * as curl's --noproxy ("*": all); NULL: the
                               * environment's no_proxy */
    struct curl_slist *resolve;   /* "HOST:PORT:ADDR" entries: connect there
                               * instead of looking HOST up (CURLOPT_RESOLVE);
                               * owned by the caller */
    size_t stack_size;        /* coroutine stack bytes; 0: default */
    int    loops;             /* coro: event loops (threads) */
    int    procs;             /* procs: worker processes; 0: the online CPUs */
    double worker_timeout;    /* procs: seconds a worker may go unheard from
                               * before it is killed; 0: the default (10) */
    int    parse_threads;     /* coro, procs: threads that parse pages off the
                               * event loops; -1: the online CPUs the loops
                               * (procs: the worker processes) leave */
    double deadline;          /* seconds for the whole run; 0: none */
    int    retry;             /* more tries for a transient failure (--retry) */
    double retry_delay;       /* seconds: the backoff's base */
    double retry_max_delay;   /* seconds: the longest wait before a retry */

    /* Link following. */
    int    depth;             /* link hops followed from the listed URLs */
    long   max_pages;         /* pages fetched at most, listed ones included; 0: no bound */
    size_t max_queue;         /* jobs queued at most, in memory and the frontier's
                               * spill file; a link found past it is dropped */
    int    span_hosts;        /* follow links to other hosts than the listed URL's */
    const regex_t *include;   /* a followed link must match one of these, if any */
    size_t ninclude;
    const regex_t *exclude;   /* ... and none of these */
    size_t nexclude;
    int    canonical;         /* a URL's query arguments sorted by name for the
                               * seen set (--canonical) */
    const regex_t *strip_query;   /* query arguments whose whole name one of
                               * these matches are not in the seen set's key
                               * (--strip-query; REG_EXTENDED, not REG_NOSUB) */
    size_t nstrip_query;
    const char *links_out;    /* --links-out: every link of a parsed page and
                               * its verdict go to this file; NULL: none */
    const struct html_rules *rules; /* what to follow and extract; NULL: no parsing */
    int    robots;            /* obey robots.txt when following links */
    const char *robots_agent; /* the product token robots.txt is read for; NULL:
                                 the one user_agent starts with */
    int    per_host;          /* transfers in flight to one host at most; 0: no bound */
    double delay;             /* seconds between the starts of requests to one host */
    int    ignore_crawl_delay;  /* robots.txt's Crawl-delay does not space requests */
    int    auto_throttle;     /* each host's delay follows its latency and errors */
    int    sitemaps;          /* the listed hosts' sitemaps add their URLs at depth 0 */

    /* Keeping what was fetched. */
    const char *warc;         /* --warc: FILE.warc.gz, or NULL */
    long long warc_max_size;  /* a new file past this many bytes; 0: one file */
    const char *cdx;          /* --cdx: a CDXJ index of the WARC, or NULL */
    const char *warc_dedupe_cdx;  /* --warc-dedupe-cdx: an earlier crawl's CDXJ
                               * index, whose payloads are written as revisits */
    const char *warc_options; /* the command line, for the warcinfo record */
    int    warc_worker;       /* a procs worker's number, in its files' names; -1: none */
    const char *save_dir;     /* --save: every body as a file under it, or NULL */
    int    dedupe;            /* --dedupe: rows name the first page with their digest */
    int    digests;           /* rows carry each 2xx page's digest (on by default;
                               * off where no row shows it: the SHA-1 of a body
                               * is then not taken, unless --dedupe needs it) */
    /* The program's body stages (fetch_stage.h): the WARC writer, --save;
     * the core lists them, then its own (the decoder, the digest, the
     * parser), in the context of every process that fetches. */
    const struct fetch_stage *const *stages;
    int    nstages;           /* at most FETCH_STAGES_MAX - FETCH_STAGES_CORE */
};

/* The most stages a run's bodies pass through, and how many of them the
 * core may add to the program's. */
#define FETCH_STAGES_MAX  8
#define FETCH_STAGES_CORE 3

/* --max-queue's default: ten million links, some 1 GB of spill file at
 * 100-byte URLs, past any crawl that has a last page; an endless site
 * reaches it in minutes, and stops growing its file there. */
#define CRAWL_MAX_QUEUE 10000000

/* Fills o with the defaults of every option. */
void crawl_opts_init(struct crawl_opts *o);

#endif

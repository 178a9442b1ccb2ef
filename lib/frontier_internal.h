/* frontier_internal.h: what the frontier's files share (frontier.c: the
 * queues, hosts and admission; frontier_pace.c: each host's pace;
 * frontier_sitemap.c: --sitemaps) and nothing else includes. Every call is
 * made with the crawl's lock held. */
#ifndef CRAWL_FRONTIER_INTERNAL_H
#define CRAWL_FRONTIER_INTERNAL_H

#include "crawl_internal.h"
#include "hset.h"

struct robots;

struct pending {                /* a link waiting for its host's robots.txt */
    char *url;
    char *scope;
    int depth;
    struct pending *next;
};

enum robots_state { ROBOTS_NONE, ROBOTS_PENDING, ROBOTS_READY };

struct crawl_host {
    char *key;                  /* scheme://host:port */
    int running;
    double next_at;             /* earliest start of its next request: its
                                 * delay after the last, or the end of a
                                 * pause a 429 or 503 asked for */
    double delay;               /* seconds between its requests' starts: --delay,
                                 * raised to its Crawl-delay, moved by
                                 * --auto-throttle */
    double floor;               /* the least delay: --delay or Crawl-delay */
    double last_start;          /* when its last request started */
    int sampled;                /* --auto-throttle: a response set its delay */
    char *scope;                /* a listed URL's host name, when one is on it:
                                 * --sitemaps reads its sitemaps for it */
    enum robots_state robots_state;
    struct robots *robots;
    char *robots_why;           /* why its listed URLs fail robots.txt; NULL: its rules */
    struct crawl_job *robots_job;
    struct crawl_job *head, *tail;      /* queued jobs */
    struct pending *pend, *pend_tail;   /* links held back for robots.txt */
    struct crawl_host *ring_next, *ring_prev;   /* hosts with queued jobs */
    int in_ring;
};

struct frontier {
    int per_host_queues;
    int timed;                  /* a host may have to wait: pick reads the clock */
    int throttle;               /* --auto-throttle */
    double delay;               /* --delay, every host's first delay */
    int robots;                 /* fetch and obey robots.txt */
    int fetch_robots;           /* fetch it: to obey it, or for its Sitemap lines */
    int sitemaps;               /* --sitemaps */
    int follow;                 /* links are followed (--depth > 0) */
    char *agent;                /* robots.txt product token */
    struct crawl_job *head, *tail;      /* the one FIFO */
    struct crawl_job *rhead, *rtail;    /* robots jobs */
    struct crawl_job *fhead, *ftail;    /* jobs that failed before a fetch */
    struct hset hosts;          /* every host, by key */
    struct crawl_host *ring;    /* the next host to take a turn */
    size_t queued;              /* jobs in the queues above */
    size_t pending;             /* links held back for robots.txt */
    struct hset64 seen;         /* the URL hashes seen */
    size_t started;             /* pages handed out, for --max-pages */
    struct spool *spill;        /* links admitted past FRONTIER_MEM_JOBS, in order */
    uint64_t spill_at;          /* where the next one to read back starts */
    size_t spilled;             /* links waiting there */
    struct crawl_job **later;   /* retries waiting for their time: a binary
                                 * heap on not_before, soonest first */
    size_t nlater, later_cap;
};

/* Adds url to the seen set; returns 1 when it was new, 0 when seen before,
 * or CRAWL_ENOMEM. */
int frontier__seen_add(struct frontier *f, const char *url);

/* Returns the host called key (scheme://host:port), made on first use, or
 * NULL when out of memory. */
struct crawl_host *frontier__host_get(struct frontier *f, const char *key);

/* Puts job j at the end of host h's queue (h takes its turns). */
void frontier__host_enqueue(struct frontier *f, struct crawl_host *h, struct crawl_job *j);

/* Admits url as a page at depth, found from a listed URL of host scope
 * (NULL: its own host), when it passes scope, --include, --exclude, the
 * seen set, --max-pages and robots.txt. Returns 0 or CRAWL_ENOMEM. */
int frontier__admit(struct crawl *c, const char *scope, const char *url, int depth);

/* frontier_pace.c: what the answer to page job j (which ran) tells the
 * pace of its host h (a pause asked for, --auto-throttle). */
void frontier__observe(struct crawl *c, struct crawl_host *h, const struct crawl_job *j);

/* frontier_pace.c: h's robots.txt is parsed: its Crawl-delay applies. */
void frontier__crawl_delay(struct crawl *c, struct crawl_host *h);

/* frontier_sitemap.c: listed host h's robots.txt is in, read as r: its
 * sitemaps are queued (r's Sitemap lines', or /sitemap.xml). */
void frontier__sitemaps_start(struct crawl *c, struct crawl_host *h, const struct robots *r);

/* frontier_sitemap.c: sitemap job j is back: its URLs join the crawl. */
void frontier__sitemap_done(struct crawl *c, struct crawl_job *j);

#endif

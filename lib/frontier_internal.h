/* frontier_internal.h: what the frontier's files share (frontier.c: the
 * queues, hosts and admission; frontier_pace.c: each host's pace;
 * frontier_sitemap.c: --sitemaps; frontier_store.c: the queue, the seen set
 * and robots.txt in the --state store; frontier_spill.c: links past memory's
 * queue) and nothing else includes. Every call is made with the crawl's
 * lock held, but a refill's read (frontier_refill_read) and what
 * frontier_prepare calls (those say so). */
#ifndef CRAWL_FRONTIER_INTERNAL_H
#define CRAWL_FRONTIER_INTERNAL_H

#include <pthread.h>
#include <string.h>

#include "frontier.h"
#include "hset.h"
#include "url.h"

struct robots;
struct spool;

struct held_page;                /* a page read from the store (frontier_store.c) */
struct held_robots;             /* a host's robots.txt read with it */
struct spill_chunk;             /* links spilled (frontier_spill.c) */
struct spill_extent;
struct spill_seg;
struct held_link;

/* The spill: links admitted while memory's queue is full, oldest first in
 * files (fhead), then in full chunks in memory (mhead), then in the chunk
 * being filled (w). What the lock guards: w, w_parent, mhead, nmem, bytes
 * and dropped. The rest belongs to whoever holds the refill's claim: the
 * core's lock holder while none is claimed, and the claimer without the
 * lock while its read runs (frontier_refill_read). */
struct frontier_spill {
    struct spill_chunk *w;      /* the chunk links go to, or NULL */
    char *w_parent;             /* the parent of its last link (or NULL) */
    struct spill_chunk *mhead, *mtail;  /* full chunks, not yet in a file */
    size_t nmem;
    uint64_t bytes;             /* in chunks and files: frontier_counts */
    int dropped;                /* drained while a read was claimed */
    struct spill_extent *fhead, *ftail; /* the chunks in files, in order */
    size_t nfile;               /* the links in them */
    struct spill_seg *seg_w;    /* the file chunks are written to */
    /* The claim: chunks to read back from files (rhead), from memory
     * (rchunks), and to write (wchunks); the links read back (held), the
     * links it took off the spill (took) and of those, the ones lost
     * (lost); the change it makes to bytes (dbytes). */
    struct spill_extent *rhead;
    struct spill_chunk *rchunks, *wchunks;
    struct held_link *held, *held_tail;
    size_t took, lost;
    int64_t dbytes;
};

struct name {                   /* an input file name, kept for its jobs */
    char *s;
    struct name *next;
};

/* A link admitted and not yet started, kept as its fields until its turn
 * comes (a job is made of it then): in its host's queue (or the plain
 * one), or waiting for its host's robots.txt. One allocation: this, then
 * its strings, some 150 bytes against a job's 500 and its strings. */
struct qlink {
    struct job_qent qe;         /* qe.job is NULL */
    uint64_t mark;              /* its id in the --state store; 0: none */
    int depth;
    int hops;                   /* redirects that led to it */
    uint32_t scope;             /* offsets in s: the listed URL's host name, */
    uint32_t parent;            /* the page it was found on, its validators */
    uint32_t etag, modified;    /* (a recrawl's); 0: none but for scope */
    uint32_t path;              /* its path and query, kept while its host's
                                 * robots.txt is on its way, for its rules */
    char s[];                   /* the URL first, then those */
};

/* What a page's request carries from the store's record of its last
 * fetch (a recrawl): its validators, NULL for none. */
struct frontier_cond {
    const char *etag, *modified;
};

enum robots_state { ROBOTS_NONE, ROBOTS_PENDING, ROBOTS_READY };

/* How long a turn a shared store gave a host may wait for a job: past
 * it, the turn is let go and another asked for. */
#define FRONTIER_TURN_FRESH 0.01

struct crawl_host {
    char *key;                  /* scheme://host:port */
    int running;
    int starting;               /* handed out under a delay, not yet started */
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
    struct url_parts *maps;     /* --sitemaps: its sitemaps, split as its
                                 * robots.txt was read, kept until a URL of
                                 * it is listed */
    size_t nmaps;
    enum robots_state robots_state;
    struct robots *robots;
    char *robots_why;           /* why its listed URLs fail robots.txt; NULL: its rules */
    struct crawl_job *robots_job;
    struct job_qent *head, *tail;       /* queued jobs and links */
    struct job_qent *pend, *pend_tail;  /* links held back for robots.txt */
    struct crawl_host *ring_next, *ring_prev;   /* hosts with queued jobs */
    int in_ring;
    int turn;                   /* a shared store gave it a turn (its next
                                 * start), not yet taken by a job */
    double turn_at;             /* when the turn came */
    int turn_asked;             /* its turn is to be asked, or being asked */
};

struct frontier {
    struct frontier_conf conf;
    double (*now)(void);        /* conf.now, or clock_now */
    int limit;                  /* the run's transfers in flight at most; 0: all */
    double deadline_at;         /* --deadline's end (monotonic seconds); 0: none */
    const atomic_int *cancelled;  /* the core's: set once the crawl is cancelled */
    struct state *st;           /* --state, --frontier: the store, or NULL */
    struct crawl_host **turn_want;      /* hosts whose turn the server is to
                                         * give (frontier_turns_begin) */
    size_t nturn, turn_cap;
    int turn_on;                /* frontier_turns_begin has claimed them */
    int st_failed;              /* a call to the store failed since the core looked */
    size_t left;                /* links found and never fetched */
    size_t dropped;             /* links found past conf.max_queue, never queued */
    int    full_said;           /* frontier_queue_full has said so */
    size_t robots_fetched;      /* robots.txt files fetched */
    size_t robots_blocked;      /* links and URLs robots.txt kept from being fetched */
    int per_host_queues;
    int timed;                  /* a host may have to wait: pick reads the clock */
    int throttle;               /* --auto-throttle */
    double delay;               /* --delay, every host's first delay */
    int robots;                 /* fetch and obey robots.txt */
    int fetch_robots;           /* fetch it: to obey it, or for its Sitemap lines */
    int sitemaps;               /* --sitemaps */
    int follow;                 /* links are followed (--depth > 0) */
    char *agent;                /* robots.txt product token */
    struct job_qent *head, *tail;       /* the one FIFO (no host queues) */
    struct crawl_job *rhead, *rtail;    /* robots jobs */
    struct crawl_job *fhead, *ftail;    /* jobs that failed before a fetch */
    struct hset hosts;          /* every host, by key */
    struct crawl_host *ring;    /* the next host to take a turn */
    size_t queued;              /* jobs in the queues above */
    size_t pending;             /* links held back for robots.txt */
    struct hset64 seen;         /* the URL hashes seen */
    size_t started;             /* pages handed out, for --max-pages */
    size_t spilled;             /* links admitted past FRONTIER_MEM_JOBS, in
                                 * order, waiting in sp (frontier_spill.c) */
    struct frontier_spill sp;
    struct crawl_job **later;   /* retries waiting for their time: a binary
                                 * heap on not_before, soonest first */
    size_t nlater, later_cap;
    /* --state: the queue lives in the store; memory holds its head. */
    uint64_t st_cursor;         /* the last page id taken into memory */
    int st_more;                /* the store may hold queued pages past it */
    struct name *names;         /* input file names of listed pages loaded */
    double sh_poll_at;          /* --frontier: when to ask again after an empty lease */
    int sh_found;               /* --frontier: links sent since the last lease */
    int sh_paced;               /* --frontier: the last pick found jobs queued,
                                 * none of which could start yet */
    /* The store's pages being read into memory without the core's lock
     * (frontier_refill_begin .. frontier_refill_end): one read at a time. */
    struct {
        int on;                 /* a read is claimed and not yet ended */
        int deferred;           /* links were queued in the store during it */
        uint64_t after;         /* it reads pages with ids above this, */
        size_t max;             /* ... this many at most */
        int n;                  /* what state_queue_load returned */
        uint64_t last;          /* the last page id it read */
        size_t lost;            /* pages it could not copy (out of memory) */
        struct held_page *head, *tail;  /* the pages read, in id order */
        /* The hosts of the pages read (hashes of their keys) whose
         * robots.txt the store was asked for, and those it had, read in
         * this read: every host a store's page makes is made as its pages
         * are placed, so its rules are in by then. Only the read's claimer
         * touches them. */
        struct hset64 looked;
        struct held_robots *robots;
    } rf;
    uint64_t *st_seen;          /* URL hashes known to be in the store's seen
                                 * set, direct-mapped (FRONTIER_SEEN_CACHE) */
    /* Store pages dropped without a row (robots.txt, --max-pages), kept
     * until frontier_store_flush gives them to the store without the
     * core's lock. Their own lock, taken last (the core's or the sink's
     * held). */
    struct {
        pthread_mutex_t lock;
        uint64_t *v;
        size_t n, cap;
    } drops;
    int recrawl;                /* a recrawl pass: pages carry their validators */
    double due_before;          /* ... and those fetched after this (seconds
                                 * since 1970) are not due; 0: all are */
};

/* Links queued in memory at most (as jobs, or held back for robots.txt);
 * the ones found past it wait in a temporary file, in the order found, and
 * are read back as the queue drains. A queued job costs about 300 bytes
 * with its URL, so the bound keeps the queue near 10 MB however large the
 * site. */
#define FRONTIER_MEM_JOBS 32768

/* The spill's files hold about this many bytes each, and one is dropped
 * once every link in it is read back: a queue that never empties (an
 * endless site) then takes its own size on disk and a file more, instead
 * of every link it ever held. */
#define FRONTIER_SPILL_SEGMENT (4u << 20)

/* Slots of the --state crawl's cache of seen URL hashes: a link seen a
 * moment ago (a page's link to itself, to its parent) costs no store
 * lookup. 512 KiB, whatever the crawl's size. */
#define FRONTIER_SEEN_CACHE 65536

/* The bytes string s takes with its NUL; 0 for NULL. */
static inline size_t frontier__str_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Copies s to *w and moves *w past it; returns the copy (NULL for NULL):
 * the strings of a queued link or a page read are packed so, one
 * allocation each. */
static inline char *frontier__str_put(char **w, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *r = memcpy(*w, s, n);
    *w += n;
    return r;
}

/* Whether the core has cancelled the crawl. */
static inline int frontier__cancelled(const struct frontier *f)
{
    return f->cancelled && atomic_load(f->cancelled);
}

/* Latches a store call's failure for the core (frontier_store_failed). */
static inline void frontier__store_fail(struct frontier *f)
{
    f->st_failed = 1;
}

/* Adds url to the seen set; returns 1 when it was new, 0 when seen before,
 * or CRAWL_ENOMEM. */
int frontier__seen_add(struct frontier *f, const char *url);

/* Returns the host called key (scheme://host:port), made on first use,
 * or NULL when out of memory. Asks no store: a store's robots.txt comes
 * with the read that meets the host's pages (frontier_store.c). */
struct crawl_host *frontier__host_get(struct frontier *f, const char *key);

/* The host called key, whose hset_hash is k, or NULL when not made yet. */
struct crawl_host *frontier__host_find(struct frontier *f, const char *key, uint64_t k);

/* Puts job j at the end of host h's queue (h takes its turns). */
void frontier__host_enqueue(struct frontier *f, struct crawl_host *h, struct crawl_job *j);

/* ---- queues (frontier_queue.c) ---- */

/* Appends e to the queue (head, tail); puts it first; takes the first
 * (NULL when empty). */
void frontier__qpush(struct job_qent **head, struct job_qent **tail, struct job_qent *e);
void frontier__qpush_front(struct job_qent **head, struct job_qent **tail, struct job_qent *e);
struct job_qent *frontier__qpop(struct job_qent **head, struct job_qent **tail);

/* Returns a link's entry, found on page parent (or NULL) from a listed
 * URL of host scope, its request to carry cond's validators (NULL: none),
 * with its path (url_split's; NULL: not kept) for the robots.txt its host
 * waits for; NULL when out of memory. */
struct job_qent *frontier__qlink_new(const char *url, const char *scope, const char *parent,
                                     int depth, uint64_t mark, int hops,
                                     const struct frontier_cond *cond, const char *path);

/* The URL, the store id and the path kept for robots.txt (NULL: none) of
 * what e holds. */
const char *frontier__qent_url(const struct job_qent *e);
uint64_t frontier__qent_mark(const struct job_qent *e);
const char *frontier__qent_path(const struct job_qent *e);

/* Returns the job of e, made of a link's fields if e holds a link (a page
 * found: its row is numbered as it starts), and frees e but the job; NULL
 * when out of memory (e is freed). */
struct crawl_job *frontier__qent_job(struct job_qent *e);

/* Frees e and what it holds. */
void frontier__qent_free(struct job_qent *e);

/* Admits j's links at depth, as frontier_prepare left them or as fetch
 * found them, unless the crawl is being cancelled and cancelled_too is 0,
 * each with j's final URL for its parent; frees them, but those kept
 * with their verdicts (j->verdicts). */
void frontier__admit_links(struct frontier *f, struct crawl_job *j, int depth, int cancelled_too);

/* frontier_pace.c: what the answer to page job j (which ran) tells the
 * pace of its host h (a pause asked for, --auto-throttle). */
void frontier__observe(struct frontier *f, struct crawl_host *h, const struct crawl_job *j);

/* frontier_pace.c: h's robots.txt is parsed: its Crawl-delay applies. */
void frontier__crawl_delay(struct frontier *f, struct crawl_host *h);

/* frontier_sitemap.c: the sitemaps of host key (scheme://host:port) as
 * its robots.txt r names them (NULL: none read), or its /sitemap.xml when
 * it names none, split into *maps (malloc'd; *n of them, 0 when out of
 * memory). Needs no lock: frontier_prepare and a store's read call it. */
void frontier__sitemap_maps(const struct robots *r, const char *key, struct url_parts **maps,
                            size_t *n);

/* Frees the n sitemaps at v, as frontier__sitemap_maps made them. */
void frontier__maps_free(struct url_parts *v, size_t n);

/* Host h keeps the *n sitemaps at *maps (its robots.txt's) in place of
 * those it had, and *maps and *n are emptied. */
void frontier__maps_give(struct crawl_host *h, struct url_parts **maps, size_t *n);

/* frontier_sitemap.c: listed host h's robots.txt is in: the sitemaps it
 * keeps (h->maps) are queued, and freed. */
void frontier__sitemaps_start(struct frontier *f, struct crawl_host *h);

/* frontier_sitemap.c: sitemap job j is back: its URLs join the crawl. */
void frontier__sitemap_done(struct frontier *f, struct crawl_job *j);

/* Queues an admitted link p (found on page parent, or NULL; mark: its
 * store id, or 0; hops: the redirects that led to it) on its host, held
 * back while the host's robots.txt is on its way; its request carries
 * cond's validators (NULL: none). Returns JOB_LINK_ADMITTED (queued, or
 * held back), JOB_LINK_ROBOTS (robots.txt forbids it) or JOB_LINK_NOMEM. */
enum job_verdict frontier__place(struct frontier *f, const struct url_parts *p, const char *scope,
                                 const char *parent, int depth, uint64_t mark, int hops,
                                 const struct frontier_cond *cond);

/* Copies cond's validators (NULL: none) into job j's. 0 or CRAWL_ENOMEM. */
int frontier__cond_set(struct crawl_job *j, const struct frontier_cond *cond);

/* Sets h's rules from its robots.txt: fail (its failure class) and error
 * (its text, or NULL), status, and a 2xx body as parsed without the lock
 * (taken; NULL, out of memory: nothing is forbidden). */
void frontier__robots_rules(struct frontier *f, struct crawl_host *h, enum crawl_fail fail,
                            const char *error, long status, struct robots *parsed);

/* frontier_store.c: --state. */

/* Sends link p (found on page parent; hash: its seen-set key) to the
 * store's seen set and queue, unless the cache of hashes sent has it.
 * Needs no lock (frontier_prepare calls it): the store has its own, and
 * the cache is read and written atomically. Sets *sent when the store
 * took it (a shared one: when it was sent). Returns its verdict:
 * JOB_LINK_ADMITTED, JOB_LINK_SEEN or JOB_LINK_STORE. Memory's queue takes
 * it only by reading the store back (frontier__store_sent). */
enum job_verdict frontier__store_send(const struct frontier *f, const struct url_parts *p,
                                      const char *scope, const char *parent, int depth,
                                      uint64_t hash, int *sent);

/* What frontier__store_send did (sent: the store took pages; failed: a
 * call failed), told with the lock held: the next read looks for them, and
 * a failure is latched. */
void frontier__store_sent(struct frontier *f, int sent, int failed);

/* Frees the pages a store read holds that were never placed. */
void frontier__refill_free(struct frontier *f);

/* The store's part of frontier_refill_begin, _read and _end. */
int frontier__store_refill_begin(struct frontier *f);
/* 1 when a shared store's lease is due (frontier_refill_begin would
 * claim it). */
int frontier__store_lease_due(const struct frontier *f);
/* frontier_lease_at's part: when a shared store's lease comes due by
 * time alone, or 0. */
double frontier__store_lease_at(const struct frontier *f);
void frontier__store_refill_read(struct frontier *f);
int frontier__store_refill_end(struct frontier *f);

/* frontier_spill.c. Appends a link (found on page parent, or NULL; hops:
 * the redirects that led to it) to the spill; 0 or CRAWL_ENOMEM (the link
 * is lost, as when memory runs out). */
int frontier__spill_push(struct frontier *f, const char *url, const char *scope,
                         const char *parent, int depth, int hops);

/* The spill's part of frontier_refill_begin, _read and _end: reads the
 * oldest links back while the queues are less than half full, and writes
 * the chunks memory holds past SPILL_MEM_CHUNKS to a file. */
int frontier__spill_begin(struct frontier *f);
void frontier__spill_read(struct frontier *f);
int frontier__spill_end(struct frontier *f);

/* Counts every spilled link as left and forgets it (a read claimed now
 * finds its links dropped when it ends); frees everything. */
void frontier__spill_drop(struct frontier *f);
void frontier__spill_free(struct frontier *f);

/* Records robots job rj's outcome for its host, unless it was cancelled,
 * through the store's own lock (frontier_prepare, without the core's).
 * Returns 0, or -1 when the store failed (latched by frontier_done). */
int frontier__store_robots_save(const struct frontier *f, const struct crawl_job *rj);

/* Marks store page mark done without a row (robots.txt or --max-pages
 * dropped it): kept for frontier_store_flush (out of memory: at once). */
void frontier__store_drop(struct frontier *f, uint64_t mark);

#endif

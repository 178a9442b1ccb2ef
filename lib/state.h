/* state.h: the store of a crawl that outlives its process. --state FILE:
 * one LMDB file (state_lmdb.c) that holds the pages to fetch and their outcome (queued or done), the
 * hashes of the URLs seen, each host's robots.txt, the options the crawl
 * was started with and how far its output file was written; and, for a
 * recrawl (another pass over a finished crawl), each page's validators and
 * links as last fetched. Everything
 * changed since the last state_commit is one open transaction: a process
 * killed at any moment leaves the store as it was at that commit. Every
 * call is thread-safe (one lock of the store's own). */
#ifndef CRAWL_STATE_H
#define CRAWL_STATE_H

#include <stddef.h>
#include <stdint.h>

struct state;

/* What state_open found. */
enum state_phase {
    STATE_NEW,          /* an empty store: a new crawl */
    STATE_RESUMED,      /* a crawl that did not finish */
    STATE_FINISHED      /* a crawl that ran to its end */
};

/* A mark's top bit: the page was fetched (it counts towards --max-pages);
 * the rest of the mark is the page's id. */
#define STATE_FETCHED (UINT64_C(1) << 63)

/* A mark's next bit: its row is a failure (a shared store counts them). */
#define STATE_FAILED (UINT64_C(1) << 62)

/* The page id in a mark. */
#define STATE_ID (STATE_FAILED - 1)

struct state_valid;

/* A page as the store keeps it. Strings are borrowed; scope, source,
 * why and parent may be NULL. why: a listed line that is no URL to fetch,
 * and why; parent: the page a found one was found on. */
struct state_page {
    const char *url;
    const char *scope;
    const char *source;
    const char *why;
    const char *parent;
    const char *host;           /* the key the frontier paces its host by
                                 * (url_parts' key), or NULL: a shared store
                                 * groups pages by it */
    int depth;
    long line;
    uint64_t hash;              /* its seen-set key (frontier_seen_hash), the key of
                                 * its validators; 0: none */
    const struct state_valid *valid;    /* state_queue_load, in a recrawl pass:
                                 * the page's record (its links left out), or
                                 * NULL; ignored by the calls that queue */
    int host_handed;            /* state_queue_load of a shared store: this
                                 * lease took the page's host from another
                                 * holder, who let it go host_idle seconds
                                 * ago; ignored by the calls that queue */
    double host_idle;
};

/* What the store keeps of a page fetched whole or answered 304, for the
 * next pass (state_valid_put, state_valid_get). Strings are borrowed. */
struct state_valid {
    int64_t fetched_at;         /* when, in seconds since 1970 */
    const char *etag;           /* its ETag as sent, or NULL */
    const char *modified;       /* its Last-Modified, or NULL */
    int has_links;              /* its links are kept: it was parsed for them */
    const char *links;          /* ... each NUL-terminated, links_len bytes in
                                 * all (state_queue_load gives none) */
    size_t links_len;
};

/* What a shared store needs to know of the process that opens it. */
struct state_conf {
    const char *worker;         /* who writes this process's rows (host and
                                 * output file): a worker started again
                                 * with the same continues its output */
    const char *output_id;      /* what its output file is, whatever its name
                                 * (host:device:inode): two live workers may
                                 * not share one */
    double lease;               /* seconds a silent worker keeps its pages */
    double retry;               /* seconds a request to the server may take,
                                 * end to end (connecting again included) */
    long max_pages;             /* --max-pages over every worker; 0: none */
    int whole_hosts;            /* this worker keeps per-host rules (--per-host,
                                 * --delay, --auto-throttle): a host it leases a
                                 * page of is its alone until it lets it go */
    /* Asked while the store waits for the server: once it says yes, the
     * store gives a request only a moment more (NULL: never). */
    int (*cancelled)(void *data);
    void *cancel_data;
    /* Told what in the server's settings puts the crawl at risk (an
     * eviction policy, no persistence); NULL: nobody. */
    void (*warn)(const char *msg, void *data);
    void *warn_data;
};

/* What state_open returns when it opens nothing, and state_failure once a
 * call failed. */
enum {
    STATE_EREFUSED = -1,        /* not for this crawl: other options, in use by
                                 * another crawl, a file that cannot be opened */
    STATE_EUNREACHABLE = -2,    /* the server cannot be reached, or does not
                                 * answer within the time a request has */
    STATE_ELOST = -3,           /* the store lost this crawl's data or holds
                                 * another's: not crawl's, another format,
                                 * damaged, truncated, a write that failed */
    STATE_ELAPSED = -4,         /* a shared store gave this process's pages
                                 * to others (it fell silent past its lease)
                                 * and refused its last commit: nothing of
                                 * that commit was applied */
    STATE_EBACK = -5            /* a shared store went back to an older copy
                                 * of the crawl (a server restarted from one
                                 * that lacks its last writes): the commits
                                 * of this process it lacks are undone, their
                                 * pages to be fetched again */
};

/* Opens the store at path (a file, or redis://HOST:PORT/NAME), making it
 * when it is not there, for a crawl whose options are opts ("name=value"
 * lines; a store made before must hold the same). A file stays locked
 * against other processes until state_close; a file that is not a store
 * of crawl's of this format, whole, is refused before a byte of it is
 * written. Returns 0 with the store in *out and what it found in *phase,
 * or STATE_EREFUSED, STATE_EUNREACHABLE or STATE_ELOST with the reason in
 * why (size n). */
int state_open(struct state **out, const char *path, const char *opts,
               const struct state_conf *conf, enum state_phase *phase, char *why,
               size_t n);

/* 1 when path names a shared store (redis://). */
int state_is_shared(const char *path);

/* 1 when other processes take pages from st's queue: state_queue_load
 * leases pages (ignoring after), and they are this process's until
 * committed, dropped, or its lease runs out. */
int state_shared(const struct state *st);

/* The pages queued or leased by other processes at the last
 * state_queue_load of a shared store (while there are any, this process
 * waits for more rather than ending); 0 for a file. */
long state_elsewhere(struct state *st);

/* 1 when a shared store leases this process its hosts whole (conf's
 * whole_hosts): every page it leases is of a host no other process holds,
 * so per-host rules are kept in memory, with no state_host_take. */
int state_hosts_whole(const struct state *st);

/* A shared store's per-host bound: takes one of host's per_host slots
 * (0: no bound) and its next start, delay seconds after the last one any
 * process took. Returns 1 when taken, 0 with *wait set to the seconds to
 * wait, or -1. A file always returns 1. */
int state_host_take(struct state *st, const char *host, int per_host, double delay,
                    double *wait);

/* Gives back a slot state_host_take took. */
void state_host_give(struct state *st, const char *host);

/* Prints the progress of the shared crawl at url to fd: pages queued,
 * leased, done and failed, and the workers seen lately; waits at most
 * retry seconds for the server. Returns 0, or with the reason in why:
 * STATE_EREFUSED (a bad URL, fd not writable), STATE_EUNREACHABLE, or
 * STATE_ELOST (the server holds no such crawl, or part of one: why says
 * "no such crawl" for the first). */
int state_status(const char *url, double retry, int fd, char *why, size_t n);

/* Closes st, dropping what was not committed. NULL is fine. */
void state_close(struct state *st);

/* Adds a URL hash to the seen set. Returns 1 when it was new, 0 when seen
 * before, -1 on a store error. */
int state_seen_add(struct state *st, uint64_t hash);

/* Queues page p; its id (ids grow) goes to *id. Returns 0 or -1. */
int state_queue_add(struct state *st, const struct state_page *p, uint64_t *id);

/* state_seen_add and, when the hash was new, state_queue_add, with no
 * commit between them (a link seen is a link queued). Returns 1 with *id
 * set, 0 when seen before, or -1. */
int state_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id);

/* Calls fn for up to max queued pages (not done) with ids above after, in
 * id order, without the store's lock held (fn may not call the store).
 * Returns the number of pages passed, or -1. */
int state_queue_load(struct state *st, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data),
                     void *data);

/* Returns the number of pages queued and not done, or -1. */
long state_queue_left(struct state *st);

/* Marks the pages of marks[0..n) done (with STATE_FETCHED, fetched), records
 * that the output holds offset bytes, and commits everything changed since
 * the last commit. Returns 0 or -1. */
int state_commit(struct state *st, const uint64_t *marks, size_t n, uint64_t offset);

/* Marks page id done without a row (it will never be fetched), with the
 * next commit. Returns 0 or -1. */
int state_drop(struct state *st, uint64_t id);

/* Records host's robots.txt: the HTTP status, the failure class (0: none)
 * and the body. Returns 0 or -1. */
int state_robots_put(struct state *st, const char *host, long status, int fail,
                     const char *body, size_t len);

/* Looks up host's robots.txt. Returns 1 with *body (malloc'd, NUL-terminated,
 * the caller's) and the rest filled, 0 when the store has none, -1. */
int state_robots_get(struct state *st, const char *host, long *status, int *fail,
                     char **body, size_t *len);

/* A named integer of the crawl (the output's offset is "offset"). *v is
 * left alone when there is none. Returns 0 or -1. */
int state_get(struct state *st, const char *key, int64_t *v);
int state_set(struct state *st, const char *key, int64_t v);

/* Returns the pages done that were fetched in this pass, or -1. */
long state_fetched(struct state *st);

/* Records v as what the store keeps of the page whose URL has hash (NULL:
 * keeps nothing of it), with the next commit. Returns 0 or -1. */
int state_valid_put(struct state *st, uint64_t hash, const struct state_valid *v);

/* Looks up the record of the page whose URL has hash. Returns 1 with *v
 * filled, its strings in *buf (malloc'd, the caller's), 0 when there is
 * none, or -1. */
int state_valid_get(struct state *st, uint64_t hash, struct state_valid *v, char **buf);

/* Starts a new pass over a finished crawl (a recrawl): the seen set is
 * emptied, the last pass's listed pages are queued again (their hashes in
 * the new seen set), the crawl is not finished, its pass ("pass", 2 for
 * the first recrawl) goes up, its fetched pages count from 0, and it
 * records the pass's start ("pass_started", seconds since 1970) and older
 * (in ms, "pass_older"). Returns 1 with the pages queued in *n, 0 when the
 * crawl was not finished (a shared one another process recrawls now), or
 * -1. A file's is committed with the next commit; a shared store's at
 * once. */
int state_recrawl(struct state *st, double older, long *n);

/* The store's last error text. Once a call failed, a file store fails
 * every call that reads or writes it (what it holds can no longer be
 * trusted), and its error stays the first. */
const char *state_error(struct state *st);

/* After a call failed, what failed: STATE_EUNREACHABLE, STATE_ELOST,
 * STATE_ELAPSED or STATE_EBACK (a shared store fails every call after
 * that); a file
 * store's failures are all STATE_ELOST. 0 while nothing failed, or when a
 * call failed for want of memory. */
int state_failure(struct state *st);

/* Until when (clock_now's seconds) a shared store holds this process's
 * lease for sure: a page started later might be another process's by
 * then (its heartbeats unanswered: a stall, a cut cable), so none starts
 * until a heartbeat renews the lease or the store fails. 0: no bound (a
 * file store). */
double state_held_until(struct state *st);

/* fn(data) is called from a shared store's own thread (its heartbeat's)
 * when what state_held_until or state_failure says changed without a call
 * of the caller's: a heartbeat held the lease again after it had lapsed,
 * or latched a failure. The store holds none of its locks then, so fn may
 * take the caller's; the caller must not hold a lock fn takes when it
 * sets or clears fn, which waits for a call under way. NULL: nobody. A
 * file store never calls it. */
void state_on_change(struct state *st, void (*fn)(void *data), void *data);

/* After STATE_EBACK: the bytes of this process's output that the store's
 * older copy holds committed rows in (0 for any other store). */
uint64_t state_back_offset(struct state *st);

/* After STATE_ELAPSED: the bytes of this process's output that its last
 * commit the store applied holds rows in, asked of the server now (within
 * 2 s), since a commit may have been applied whose reply never came back
 * (the link lost after the server took it). Returns 0 with *offset set,
 * or -1: not a shared store, no commit of this process's with an offset,
 * or the server cannot be asked. */
int state_lapsed_offset(struct state *st, uint64_t *offset);

#endif

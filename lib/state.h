/* state.h: the store of a resumable crawl (--state FILE): one LMDB file
 * that holds the pages to fetch and their outcome (queued or done), the
 * hashes of the URLs seen, each host's robots.txt, the options the crawl
 * was started with and how far its output file was written. Everything
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

/* A page as the store keeps it. Strings are borrowed; scope, source and
 * why may be NULL. why: a listed line that is no URL to fetch, and why. */
struct state_page {
    const char *url;
    const char *scope;
    const char *source;
    const char *why;
    int depth;
    long line;
};

/* Opens the store at path, making it when it is not there, for a crawl
 * whose options are opts ("name=value" lines; a store made before must
 * hold the same). The file stays locked against other processes until
 * state_close. Returns 0 with the store in *out and what it found in
 * *phase, or -1 with the reason in why (size n): not a store, in use by
 * another crawl, other options. */
int state_open(struct state **out, const char *path, const char *opts,
               enum state_phase *phase, char *why, size_t n);

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

/* Returns the pages done that were fetched, or -1. */
long state_fetched(struct state *st);

/* The store's last error text. */
const char *state_error(struct state *st);

#endif

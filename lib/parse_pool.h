/* parse_pool.h: threads that parse pages for event loops, so that a loop
 * keeps fetching while the pages it fetched are parsed. A loop hands over
 * an item (its page, with the body kept whole) and gets it back on the
 * pool's thread through the item's own callback, which queues it for the
 * loop and wakes it. Items are the caller's memory: the pool allocates
 * nothing per page. */
#ifndef CRAWL_PARSE_POOL_H
#define CRAWL_PARSE_POOL_H

struct parse_item {
    void (*run)(struct parse_item *it);     /* on a pool thread */
    struct parse_item *next;                /* the pool's, while queued */
};

struct parse_pool;

/* The threads to start when the user gave no number: the online CPUs less
 * the threads (event loops, worker processes) that already use them; 0
 * when none is left. */
int parse_pool_default(int users);

/* Starts n threads (n >= 1). Returns the pool, or NULL with errno set when
 * not even one thread could start; fewer than n is no error. */
struct parse_pool *parse_pool_new(int n);

/* Returns the threads that run. */
int parse_pool_size(const struct parse_pool *p);

/* Queues it: a pool thread calls it->run(it), oldest first. */
void parse_pool_submit(struct parse_pool *p, struct parse_item *it);

/* Queues it as parse_pool_submit does and returns 0 while fewer items wait
 * than the pool has threads; else returns -1 and leaves it to the caller,
 * whose own thread is then better spent parsing than waiting. */
int parse_pool_offer(struct parse_pool *p, struct parse_item *it);

/* Runs every item queued to its end, then stops and joins the threads and
 * frees p. NULL is fine. */
void parse_pool_free(struct parse_pool *p);

#endif

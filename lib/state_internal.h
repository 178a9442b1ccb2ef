/* state_internal.h: what a store behind state.h provides (state_lmdb.c:
 * --state FILE; state_redis.c: --frontier redis://), and nothing else
 * includes. A store begins with struct state; state.c calls its
 * operations. An operation a store lacks is NULL: state.c answers for it
 * as a store of one process would. */
#ifndef CRAWL_STATE_INTERNAL_H
#define CRAWL_STATE_INTERNAL_H

#include "state.h"

struct state_ops {
    const char *(*error)(struct state *st);
    void (*close)(struct state *st);
    int (*get)(struct state *st, const char *key, int64_t *v);
    int (*set)(struct state *st, const char *key, int64_t v);
    int (*seen_add)(struct state *st, uint64_t hash);
    int (*queue_add)(struct state *st, const struct state_page *p, uint64_t *id);
    int (*admit)(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id);
    int (*queue_load)(struct state *st, uint64_t after, size_t max,
                      void (*fn)(uint64_t id, const struct state_page *p, void *data),
                      void *data);
    long (*queue_left)(struct state *st);
    long (*fetched)(struct state *st);
    int (*drop)(struct state *st, uint64_t id);
    int (*commit)(struct state *st, const uint64_t *marks, size_t n, uint64_t offset);
    int (*robots_put)(struct state *st, const char *host, long status, int fail,
                      const char *body, size_t len);
    int (*robots_get)(struct state *st, const char *host, long *status, int *fail,
                      char **body, size_t *len);
    int (*valid_put)(struct state *st, uint64_t hash, const struct state_valid *v);
    int (*valid_get)(struct state *st, uint64_t hash, struct state_valid *v, char **buf);
    int (*recrawl)(struct state *st, double older, long *n);
    int (*failure)(struct state *st);   /* NULL: STATE_ELOST */
    /* Shared stores only. */
    uint64_t (*back_offset)(struct state *st);
    int (*lapsed_offset)(struct state *st, uint64_t *offset);
    double (*held_until)(struct state *st);
    void (*on_change)(struct state *st, void (*fn)(void *data), void *data);
    long (*elsewhere)(struct state *st);
    int (*host_take)(struct state *st, const char *host, int per_host, double delay,
                     double *wait);
    void (*host_give)(struct state *st, const char *host);
};

struct state {
    const struct state_ops *ops;
    int shared;                 /* other processes take pages from its queue */
    int whole;                  /* a shared store's hosts are leased whole */
};

int state_lmdb_open(struct state **out, const char *path, const char *opts,
                    enum state_phase *phase, char *why, size_t n);
int state_redis_open(struct state **out, const char *url, const char *opts,
                     const struct state_conf *conf, enum state_phase *phase, char *why,
                     size_t n);

#endif

/* state.c: state.h's calls, passed to the store that is open: LMDB for a
 * file, Redis for a redis:// URL. */
#include <string.h>
#include <strings.h>

#include "state_internal.h"

int state_is_shared(const char *path)
{
    return strncasecmp(path, "redis://", 8) == 0;
}

int state_open(struct state **out, const char *path, const char *opts,
               const struct state_conf *conf, enum state_phase *phase, char *why, size_t n)
{
    if (state_is_shared(path))
        return state_redis_open(out, path, opts, conf, phase, why, n);
    return state_lmdb_open(out, path, opts, phase, why, n);
}

void state_close(struct state *st)
{
    if (st)
        st->ops->close(st);
}

const char *state_error(struct state *st)
{
    return st ? st->ops->error(st) : "out of memory";
}

int state_failure(struct state *st)
{
    if (!st)
        return 0;
    return st->ops->failure ? st->ops->failure(st) : STATE_ELOST;
}

double state_held_until(struct state *st)
{
    return st && st->ops->held_until ? st->ops->held_until(st) : 0;
}

void state_on_change(struct state *st, void (*fn)(void *data), void *data)
{
    if (st && st->ops->on_change)
        st->ops->on_change(st, fn, data);
}

uint64_t state_back_offset(struct state *st)
{
    return st && st->ops->back_offset ? st->ops->back_offset(st) : 0;
}

int state_lapsed_offset(struct state *st, uint64_t *offset)
{
    return st && st->ops->lapsed_offset ? st->ops->lapsed_offset(st, offset) : -1;
}

int state_shared(const struct state *st)
{
    return st && st->shared;
}

int state_hosts_whole(const struct state *st)
{
    return st && st->shared && st->whole;
}

int state_get(struct state *st, const char *key, int64_t *v)
{
    return st->ops->get(st, key, v);
}

int state_set(struct state *st, const char *key, int64_t v)
{
    return st->ops->set(st, key, v);
}

int state_seen_add(struct state *st, uint64_t hash)
{
    return st->ops->seen_add(st, hash);
}

int state_queue_add(struct state *st, const struct state_page *p, uint64_t *id)
{
    return st->ops->queue_add(st, p, id);
}

int state_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    return st->ops->admit(st, hash, p, id);
}

int state_queue_load(struct state *st, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data),
                     void *data)
{
    return st->ops->queue_load(st, after, max, fn, data);
}

long state_queue_left(struct state *st)
{
    return st->ops->queue_left(st);
}

long state_fetched(struct state *st)
{
    return st->ops->fetched(st);
}

int state_drop(struct state *st, uint64_t id)
{
    return st->ops->drop(st, id);
}

int state_commit(struct state *st, const uint64_t *marks, size_t n, uint64_t offset)
{
    return st->ops->commit(st, marks, n, offset);
}

int state_robots_put(struct state *st, const char *host, long status, int fail,
                     const char *body, size_t len)
{
    return st->ops->robots_put(st, host, status, fail, body, len);
}

int state_robots_get(struct state *st, const char *host, long *status, int *fail,
                     char **body, size_t *len)
{
    return st->ops->robots_get(st, host, status, fail, body, len);
}

long state_elsewhere(struct state *st)
{
    return st && st->ops->elsewhere ? st->ops->elsewhere(st) : 0;
}

int state_host_take(struct state *st, const char *host, int per_host, double delay,
                    double *wait)
{
    if (!st || !st->ops->host_take)
        return 1;
    return st->ops->host_take(st, host, per_host, delay, wait);
}

void state_host_give(struct state *st, const char *host)
{
    if (st && st->ops->host_give)
        st->ops->host_give(st, host);
}

int state_valid_put(struct state *st, uint64_t hash, const struct state_valid *v)
{
    return st->ops->valid_put(st, hash, v);
}

int state_valid_get(struct state *st, uint64_t hash, struct state_valid *v, char **buf)
{
    return st->ops->valid_get(st, hash, v, buf);
}

int state_recrawl(struct state *st, double older, long *n)
{
    return st->ops->recrawl(st, older, n);
}

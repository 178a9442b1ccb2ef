/* state_redis_settings.c: the --frontier server's settings that put a
 * shared crawl at risk, read once at the start and said as warnings: an
 * eviction policy that may drop the crawl's keys, and a server that keeps
 * nothing on disk. It reads CONFIG GET, and INFO where a managed server
 * has CONFIG renamed away; what neither says is not guessed at. Nothing
 * here refuses a server: a worker warned of its settings still crawls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_redis_internal.h"

/* What the server said of its settings; "" or -1: it did not say. */
struct settings {
    char policy[64];            /* maxmemory-policy */
    long long maxmemory;        /* bytes; 0: no limit */
    char save[256];             /* the RDB snapshot rules; "": none */
    int aof;                    /* appendonly: 1 yes, 0 no */
    int save_known;             /* save was read (INFO does not show it) */
};

/* One command on x. Returns its reply (an error reply too), or NULL when
 * the connection failed (*lost set). */
static redisReply *ask(redisContext *x, int argc, const char **argv, struct redis_wait *w,
                       int *lost)
{
    int rc = 0;
    redisReply *y = redis_call(x, argc, argv, NULL, w, &rc);
    if (!y)
        *lost = 1;
    return y;
}

/* CONFIG GET name's value into out. Returns 0, or -1 when the server
 * refuses CONFIG (renamed, not permitted to this user) or the connection
 * failed. */
static int config_get(redisContext *x, struct redis_wait *w, const char *name, char *out,
                      size_t n, int *lost)
{
    const char *argv[] = { "CONFIG", "GET", name };
    redisReply *y = ask(x, 3, argv, w, lost);
    int ok = y && y->type == REDIS_REPLY_ARRAY && y->elements == 2 &&
             y->element[1]->type == REDIS_REPLY_STRING;
    if (ok)
        snprintf(out, n, "%s", y->element[1]->str);
    if (y)
        freeReplyObject(y);
    return ok ? 0 : -1;
}

/* Reads s from CONFIG GET. Returns 0, or -1 when CONFIG does not answer. */
static int from_config(redisContext *x, struct redis_wait *w, struct settings *s, int *lost)
{
    char mem[32], aof[16];
    if (config_get(x, w, "maxmemory-policy", s->policy, sizeof s->policy, lost) != 0 ||
        config_get(x, w, "maxmemory", mem, sizeof mem, lost) != 0)
        return -1;
    s->maxmemory = strtoll(mem, NULL, 10);
    if (config_get(x, w, "appendonly", aof, sizeof aof, lost) == 0)
        s->aof = strcmp(aof, "yes") == 0;
    s->save_known = config_get(x, w, "save", s->save, sizeof s->save, lost) == 0;
    return 0;
}

/* The value of field name (its "name:" line) in INFO's text into out;
 * "" when the text has no such line. */
static void info_field(const char *text, const char *name, char *out, size_t n)
{
    size_t k = strlen(name);
    *out = '\0';
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, k) == 0 && p[k] == ':') {
            size_t len = strcspn(p + k + 1, "\r\n");
            snprintf(out, n, "%.*s", (int)len, p + k + 1);
            return;
        }
    }
}

/* INFO section's text into *out (the caller's, to freeReplyObject).
 * Returns 0, or -1 when INFO does not answer. */
static int info(redisContext *x, struct redis_wait *w, const char *section, redisReply **out,
                int *lost)
{
    const char *argv[] = { "INFO", section };
    redisReply *y = ask(x, 2, argv, w, lost);
    if (y && y->type == REDIS_REPLY_STRING) {
        *out = y;
        return 0;
    }
    if (y)
        freeReplyObject(y);
    return -1;
}

/* Reads s from INFO memory and INFO persistence, which show the policy,
 * the limit and whether the AOF is on, but not the snapshot rules.
 * Returns 0, or -1 when INFO does not say. */
static int from_info(redisContext *x, struct redis_wait *w, struct settings *s, int *lost)
{
    redisReply *y;
    char mem[32] = "", aof[8] = "";
    if (info(x, w, "memory", &y, lost) != 0)
        return -1;
    info_field(y->str, "maxmemory_policy", s->policy, sizeof s->policy);
    info_field(y->str, "maxmemory", mem, sizeof mem);
    freeReplyObject(y);
    if (!*s->policy || !*mem)
        return -1;
    s->maxmemory = strtoll(mem, NULL, 10);
    if (!*lost && info(x, w, "persistence", &y, lost) == 0) {
        info_field(y->str, "aof_enabled", aof, sizeof aof);
        freeReplyObject(y);
        if (*aof)
            s->aof = strcmp(aof, "1") == 0;
    }
    return 0;
}

/* The warning of s's eviction policy into msg, or "" when it cannot drop
 * the crawl's keys. Without a maxmemory the server never evicts. The
 * volatile-* policies evict keys with a time to live only: of the
 * crawl's, that is the seeding lock alone, held while a worker reads the
 * list in. */
static void policy_warning(const struct settings *s, char *msg, size_t n)
{
    *msg = '\0';
    if (!*s->policy || s->maxmemory <= 0 || strcmp(s->policy, "noeviction") == 0)
        return;
    if (strncmp(s->policy, "volatile-", 9) == 0)
        snprintf(msg, n, "the server's maxmemory-policy is %s, with maxmemory %lld bytes: it "
                 "may evict the seeding lock, this crawl's one key with a time to live, and "
                 "let a second worker read the list in again (a shared crawl needs "
                 "noeviction)", s->policy, s->maxmemory);
    else
        snprintf(msg, n, "the server's maxmemory-policy is %s, with maxmemory %lld bytes: it "
                 "may evict this crawl's keys when its memory is full (a shared crawl needs "
                 "noeviction)", s->policy, s->maxmemory);
}

int redis_check_settings(redisContext *x, struct redis_wait *w, int made,
                         void (*warn)(const char *msg, void *data), void *data)
{
    struct settings s = { .maxmemory = -1, .aof = -1 };
    char msg[400];
    int lost = 0;
    if (from_config(x, w, &s, &lost) != 0 && !lost) {
        s = (struct settings){ .maxmemory = -1, .aof = -1 };
        if (from_info(x, w, &s, &lost) != 0)
            s = (struct settings){ .maxmemory = -1, .aof = -1 };
    }
    if (lost)
        return -1;
    policy_warning(&s, msg, sizeof msg);
    if (*msg)
        warn(msg, data);
    if (made && s.save_known && !*s.save && s.aof == 0)
        warn("the server keeps nothing on disk (save \"\", appendonly no): if it "
             "restarts, this crawl is lost", data);
    return 0;
}

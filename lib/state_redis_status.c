/* state_redis_status.c: the --frontier server's address (its URL) and
 * --status, which reads a shared crawl's progress from it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state_redis_internal.h"

/* Reads redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME into r. Returns 0 or
 * -1 with why. */
int redis_parse_url(struct redis_addr *r, const char *url, char *why, size_t n)
{
    const char *h = url + 8, *slash = strchr(h, '/'), *colon;
    const char *at = memchr(h, '@', slash ? (size_t)(slash - h) : strlen(h));
    if (at) {
        const char *c = memchr(h, ':', (size_t)(at - h));
        if (!c)
            goto bad;
        size_t ul = (size_t)(c - h);
        const char *p = c + 1;
        size_t pl = (size_t)(at - p);
        if (ul >= sizeof r->user || pl >= sizeof r->pass || pl == 0)
            goto bad;
        memcpy(r->user, h, ul);
        r->user[ul] = '\0';
        memcpy(r->pass, p, pl);
        r->pass[pl] = '\0';
        h = at + 1;
    }
    const char *name = slash ? slash + 1 : "";
    size_t hl;
    r->port = 6379;
    if (*h == '[') {
        const char *rb = strchr(h, ']');
        if (!rb || (slash && rb > slash))
            goto bad;
        hl = (size_t)(rb - h - 1);
        h++;
        colon = rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = memchr(h, ':', slash ? (size_t)(slash - h) : strlen(h));
        hl = colon ? (size_t)(colon - h) : slash ? (size_t)(slash - h) : strlen(h);
    }
    if (hl == 0 || hl >= sizeof r->host)
        goto bad;
    memcpy(r->host, h, hl);
    r->host[hl] = '\0';
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || p < 1 || p > 65535 || (slash ? end != slash : *end != '\0'))
            goto bad;
        r->port = (int)p;
    }
    if (!*name || strlen(name) > 200 || name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
                                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                    "0123456789._-")] != '\0')
        goto bad;
    snprintf(r->prefix, sizeof r->prefix, "crawl:%s:", name);
    return 0;
bad:
    snprintf(why, n, "not redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME (NAME: letters, digits, "
             "'.', '_', '-')");
    return -1;
}

/* A reply's integer, from an integer or a number as text (0 otherwise). */
static long long num(const redisReply *y)
{
    if (!y)
        return 0;
    if (y->type == REDIS_REPLY_INTEGER)
        return y->integer;
    return y->type == REDIS_REPLY_STRING ? strtoll(y->str, NULL, 10) : 0;
}

/* Prints the status script's reply y for the crawl at r: {queued, the
 * server's time, the number of meta's entries, its names and values...,
 * then per worker its name, last heartbeat, committed bytes, pages held}. */
static void status_print(FILE *f, const struct redis_addr *r, const redisReply *y)
{
    long long queued = num(y->element[0]), t = num(y->element[1]);
    size_t nm = (size_t)num(y->element[2]), at = 3;
    long long leased = 0, done = 0, fetched = 0, failed = 0, dropped = 0, refused = 0;
    long long returned = 0, finished = 0, seeded = 0, seed_done = 0, pass = 1;
    for (size_t i = 0; i + 1 < nm && at + i + 1 < y->elements; i += 2) {
        const char *k = y->element[at + i]->str;
        long long v = num(y->element[at + i + 1]);
        if (!k)
            continue;
        if (!strcmp(k, "leased")) leased = v;
        else if (!strcmp(k, "done")) done = v;
        else if (!strcmp(k, "fetched")) fetched = v;
        else if (!strcmp(k, "failed")) failed = v;
        else if (!strcmp(k, "dropped")) dropped = v;
        else if (!strcmp(k, "refused")) refused = v;
        else if (!strcmp(k, "returned")) returned = v;
        else if (!strcmp(k, "finished")) finished = v;
        else if (!strcmp(k, "seed_n")) seeded = v;
        else if (!strcmp(k, "seed_done")) seed_done = v;
        else if (!strcmp(k, "pass")) pass = v;
    }
    at += nm;
    char pn[32] = "";
    if (pass > 1)
        snprintf(pn, sizeof pn, ", pass %lld", pass);
    fprintf(f, "crawl %.*s at %s:%d: %s%s\n", (int)strlen(r->prefix) - 7, r->prefix + 6, r->host,
            r->port, finished ? "finished" : !seed_done ? "seeding"
            : queued + leased ? "running" : "idle", pn);
    fprintf(f, "  listed    %lld%s\n", seeded, seed_done ? "" : " so far");
    fprintf(f, "  queued    %lld\n", queued);
    fprintf(f, "  leased    %lld\n", leased);
    fprintf(f, "  done      %lld (fetched %lld, failed %lld)\n", done, fetched, failed);
    fprintf(f, "  dropped   %lld (robots.txt, --max-pages)\n", dropped);
    fprintf(f, "  given back %lld (by workers that fell silent)\n", returned);
    fprintf(f, "  refused   %lld (rows of workers whose lease had lapsed, cut off)\n", refused);
    size_t nw = (y->elements - at) / 4;
    fprintf(f, "  workers   %zu\n", nw);
    for (size_t i = 0; i < nw; i++, at += 4) {
        const redisReply *w = y->element[at];
        fprintf(f, "    %.*s  seen %.1f s ago, %lld pages held, %lld bytes of rows committed\n",
                w->str ? (int)w->len : 1, w->str ? w->str : "?",
                (double)(t - num(y->element[at + 1])) / 1000, num(y->element[at + 3]),
                num(y->element[at + 2]));
    }
}

/* Asks the server at r for the crawl's figures, within retry seconds.
 * Returns the reply (an array), or NULL with a STATE_E... code in *rc and
 * the reason in why. */
static redisReply *status_ask(const struct redis_addr *r, double retry, int *rc, char *why,
                              size_t n)
{
    struct redis_wait w = { .grace = 0 };
    redisContext *x;
    redis_wait_begin(&w, retry);
    *rc = STATE_EUNREACHABLE;
    if (redis_connect(r, &w, &x, why, n) != 0)
        return NULL;
    const char *argv[] = { "EVAL", redis_lua_status, "1", r->prefix };
    int wrc;
    redisReply *y = redis_call(x, 4, argv, NULL, &w, &wrc);
    const char *e = y && y->type == REDIS_REPLY_ERROR ? y->str : NULL;
    if (!y) {
        redis_wait_text(wrc, &w, x, r, why, n);
    } else if (e && strstr(e, REDIS_NONE)) {
        snprintf(why, n, "no such crawl");
        *rc = STATE_ELOST;
    } else if (e && strstr(e, REDIS_LOST)) {
        snprintf(why, n, "the server lost this crawl's data (%s)",
                 strstr(e, REDIS_LOST) + strlen(REDIS_LOST));
        *rc = STATE_ELOST;
    } else if (y->type != REDIS_REPLY_ARRAY || y->elements < 3) {
        snprintf(why, n, "redis at %s:%d: %s", r->host, r->port, e ? e : "an unexpected reply");
        *rc = STATE_ELOST;
    } else {
        redisFree(x);
        return y;
    }
    if (y)
        freeReplyObject(y);
    redisFree(x);
    return NULL;
}

int state_status(const char *url, double retry, int fd, char *why, size_t n)
{
    struct redis_addr r = { 0 };
    if (redis_parse_url(&r, url, why, n) != 0)
        return STATE_EREFUSED;
    int arc;
    redisReply *y = status_ask(&r, retry > 0 ? retry : 30, &arc, why, n);
    if (!y)
        return arc;
    FILE *f = fdopen(dup(fd), "w");
    if (!f) {
        snprintf(why, n, "%s", strerror(errno));
        freeReplyObject(y);
        return STATE_EREFUSED;
    }
    status_print(f, &r, y);
    int rc = fclose(f) == 0 ? 0 : STATE_EREFUSED;
    if (rc)
        snprintf(why, n, "%s", strerror(errno));
    freeReplyObject(y);
    return rc;
}

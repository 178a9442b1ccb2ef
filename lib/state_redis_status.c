/* state_redis_status.c: the --frontier server's address (its URL, a
 * connection to it) and --status, which reads a shared crawl's progress
 * from it. */
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

/* Connects to r's server, logged in when its URL has a password. Returns
 * the connection, or NULL with the reason in err (size n). */
redisContext *redis_connect(const struct redis_addr *r, char *err, size_t n)
{
    struct timeval tv = { 2, 0 };
    redisContext *x = redisConnectWithTimeout(r->host, r->port, tv);
    if (!x || x->err) {
        snprintf(err, n, "cannot reach redis at %s:%d: %s", r->host, r->port,
                 x ? x->errstr : "out of memory");
        if (x)
            redisFree(x);
        return NULL;
    }
    tv.tv_sec = REPLY_TIMEOUT;
    redisSetTimeout(x, tv);
    if (*r->pass) {
        const char *argv[3] = { "AUTH" };
        int argc = 1;
        if (*r->user)
            argv[argc++] = r->user;
        argv[argc++] = r->pass;
        redisReply *y = redisCommandArgv(x, argc, argv, NULL);
        int ok = y && y->type == REDIS_REPLY_STATUS;
        if (!ok)
            snprintf(err, n, "redis at %s:%d refused the password: %s", r->host, r->port,
                     y && y->type == REDIS_REPLY_ERROR ? y->str : x->errstr);
        if (y)
            freeReplyObject(y);
        if (!ok) {
            redisFree(x);
            return NULL;
        }
    }
    return x;
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

int state_status(const char *url, int fd, char *why, size_t n)
{
    struct redis_addr r = { 0 };
    if (redis_parse_url(&r, url, why, n) != 0)
        return -1;
    redisContext *x = redis_connect(&r, why, n);
    if (!x)
        return -2;
    const char *argv[] = { "EVAL", redis_lua_status, "1", r.prefix };
    redisReply *y = redisCommandArgv(x, 4, argv, NULL);
    if (!y || y->type != REDIS_REPLY_ARRAY || y->elements < 3) {
        snprintf(why, n, "redis at %s:%d: %s", r.host, r.port,
                 y && y->type == REDIS_REPLY_ERROR ? y->str : x->err ? x->errstr : "no answer");
        if (y)
            freeReplyObject(y);
        redisFree(x);
        return -2;
    }
    long long queued = num(y->element[0]), t = num(y->element[1]);
    size_t nm = (size_t)num(y->element[2]), at = 3;
    long long leased = 0, done = 0, fetched = 0, failed = 0, dropped = 0, twice = 0;
    long long returned = 0, finished = 0, seeded = 0, seed_done = 0;
    int known = nm > 0;
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
        else if (!strcmp(k, "twice")) twice = v;
        else if (!strcmp(k, "returned")) returned = v;
        else if (!strcmp(k, "finished")) finished = v;
        else if (!strcmp(k, "seed_n")) seeded = v;
        else if (!strcmp(k, "seed_done")) seed_done = v;
    }
    at += nm;
    FILE *f = fdopen(dup(fd), "w");
    if (!f) {
        snprintf(why, n, "%s", strerror(errno));
        freeReplyObject(y);
        redisFree(x);
        return -1;
    }
    fprintf(f, "crawl %.*s at %s:%d: %s\n", (int)strlen(r.prefix) - 7, r.prefix + 6, r.host,
            r.port, !known ? "no such crawl" : finished ? "finished"
            : !seed_done ? "seeding" : queued + leased ? "running" : "idle");
    fprintf(f, "  listed    %lld%s\n", seeded, seed_done || !known ? "" : " so far");
    fprintf(f, "  queued    %lld\n", queued);
    fprintf(f, "  leased    %lld\n", leased);
    fprintf(f, "  done      %lld (fetched %lld, failed %lld)\n", done, fetched, failed);
    fprintf(f, "  dropped   %lld (robots.txt, --max-pages)\n", dropped);
    fprintf(f, "  given back %lld (by workers that fell silent)\n", returned);
    fprintf(f, "  fetched twice %lld\n", twice);
    size_t nw = (y->elements - at) / 4;
    fprintf(f, "  workers   %zu\n", nw);
    for (size_t i = 0; i < nw; i++, at += 4) {
        redisReply *w = y->element[at];
        fprintf(f, "    %.*s  seen %.1f s ago, %lld pages held, %lld bytes of rows committed\n",
                w->str ? (int)w->len : 1, w->str ? w->str : "?",
                (double)(t - num(y->element[at + 1])) / 1000, num(y->element[at + 3]),
                num(y->element[at + 2]));
    }
    int rc = fclose(f) == 0 ? 0 : -1;
    if (rc)
        snprintf(why, n, "%s", strerror(errno));
    freeReplyObject(y);
    redisFree(x);
    return rc;
}

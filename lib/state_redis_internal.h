/* state_redis_internal.h: what the files of the --frontier store share
 * (state_redis.c: the store; state_redis_lua.c: its scripts;
 * state_redis_status.c: the server's address and --status) and nothing
 * else includes. */
#ifndef CRAWL_STATE_REDIS_INTERNAL_H
#define CRAWL_STATE_REDIS_INTERNAL_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#include "state_internal.h"

/* Seconds to wait for one reply before the connection counts as lost. */
#define REPLY_TIMEOUT 10

/* A --frontier URL, read. */
struct redis_addr {
    char host[128];
    int port;
    char user[128], pass[256];  /* AUTH's; empty: none */
    char prefix[300];           /* crawl:NAME: */
};

/* Reads redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME into r. Returns 0 or
 * -1 with the reason in why (size n). */
int redis_parse_url(struct redis_addr *r, const char *url, char *why, size_t n);

/* Connects to r's server, logged in when its URL has a password. Returns
 * the connection, or NULL with the reason in err (size n). */
redisContext *redis_connect(const struct redis_addr *r, char *err, size_t n);

/* The scripts the store loads, by their index. */
enum { S_HELLO, S_BEAT, S_ADMIT, S_LEASE, S_COMMIT, S_HOST, S_GIVE, NSCRIPTS };
extern const char *const redis_scripts[NSCRIPTS];

/* Run with EVAL: a worker that ends gives back what it holds; the pages
 * queued or leased; --status's figures. */
extern const char redis_lua_bye[];
extern const char redis_lua_left[];
extern const char redis_lua_status[];

#endif

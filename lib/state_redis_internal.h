/* state_redis_internal.h: what the files of the --frontier store share
 * (state_redis.c: the store; state_redis_lua.c: its scripts;
 * state_redis_conn.c: a connection with a deadline on every wait;
 * state_redis_settings.c: the server's settings a shared crawl needs;
 * state_redis_status.c: the server's address and --status) and nothing
 * else includes. */
#ifndef CRAWL_STATE_REDIS_INTERNAL_H
#define CRAWL_STATE_REDIS_INTERNAL_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#include "state_internal.h"

/* A wait on the server's socket lasts at most this long before the
 * deadline and the cancellation are looked at again. */
#define REDIS_SLICE 0.1

/* Once the crawl is cancelled, a request gets this long more: enough for
 * a server that answers to take the last commit and the goodbye, little
 * enough that a stalled one does not hold up Ctrl-C. */
#define REDIS_GRACE 0.5

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

/* How long a request may wait for the server. until: the deadline, on
 * clock_now's clock, that the request began with (start); cancelled
 * (NULL: nothing cancels) is asked at least every REDIS_SLICE seconds,
 * and once it says yes the request has grace seconds more from when that
 * was first seen (or from its start, if later): cancel_at keeps that
 * moment from one request to the next. */
struct redis_wait {
    double start, until;
    double grace;
    double cancel_at;           /* 0: not cancelled yet */
    int (*cancelled)(void *data);
    void *data;
};

/* What a wait or a connection attempt ends with, besides 0. */
enum {
    RW_IO = -1,                 /* the connection failed: closed, reset, refused */
    RW_TIMEOUT = -2,            /* the deadline passed */
    RW_CANCELLED = -3,          /* cancelled, and its grace is over */
    RW_AUTH = -4                /* the server refused the password */
};

/* Starts a request of budget seconds on w (its cancellation kept). */
void redis_wait_begin(struct redis_wait *w, double budget);

/* Sleeps for seconds, or less when w's deadline or grace ends first.
 * Returns 0, RW_TIMEOUT or RW_CANCELLED. */
int redis_nap(struct redis_wait *w, double seconds);

/* Connects to r's server within w's time, logged in when its URL has a
 * password. Returns 0 with the connection in *out (the caller's, to
 * redisFree), or an RW_ code with the reason in err (size n). */
int redis_connect(const struct redis_addr *r, struct redis_wait *w, redisContext **out,
                  char *err, size_t n);

/* Sends what x has appended (redisAppendCommand...) within w's time.
 * Returns 0 or an RW_ code. */
int redis_flush(redisContext *x, struct redis_wait *w);

/* Reads the next reply into *out (the caller's) within w's time, sending
 * what is still unsent first. Returns 0 or an RW_ code. */
int redis_read(redisContext *x, redisReply **out, struct redis_wait *w);

/* One command (argv, lengths len; NULL: strlen of each) on x within w's
 * time. Returns its reply (an error reply too), or NULL with the RW_ code
 * in *rc. */
redisReply *redis_call(redisContext *x, int argc, const char **argv, const size_t *len,
                       struct redis_wait *w, int *rc);

/* The reason a request failed with code rc (RW_TIMEOUT: "no reply in N
 * s", N the budget; RW_CANCELLED; RW_IO with x's error) into err. */
void redis_wait_text(int rc, const struct redis_wait *w, const redisContext *x,
                     const struct redis_addr *r, char *err, size_t n);

/* Warns through warn (with data) of the settings of x's server that put
 * a shared crawl at risk: an eviction policy that may drop its keys, and,
 * when made (this worker made the crawl), a server that keeps nothing on
 * disk. Each is said once; settings the server does not show are not
 * warned of. Returns 0, or -1 when the connection failed. */
int redis_check_settings(redisContext *x, struct redis_wait *w, int made,
                         void (*warn)(const char *msg, void *data), void *data);

/* The scripts the store loads, by their index. */
enum {
    S_HELLO, S_BEAT, S_ADMIT, S_LEASE, S_COMMIT, S_HOST, S_GIVE, S_GET, S_SET,
    S_ROBOTS_GET, S_ROBOTS_PUT, S_LEFT, S_SEED, S_BYE, S_TYPES, S_VPUT, S_VGET, S_RECRAWL,
    NSCRIPTS
};
extern const char *const redis_scripts[NSCRIPTS];

/* Run with EVAL by --status: the crawl's figures, or an error reply. */
extern const char redis_lua_status[];

/* The error replies of the scripts that say the crawl cannot be trusted:
 * its data is lost (CRAWLLOST why), the keys are not a crawl's
 * (CRAWLFOREIGN why), this worker's lease lapsed (CRAWLREAPED), the
 * server went back to an older copy of the crawl, which lacks changes
 * this worker saw (CRAWLBACK OFFSET CHANGE SEEN: the bytes of the
 * worker's output the copy holds committed, the copy's change counter,
 * the worker's), the server holds no such crawl (CRAWLNONE, --status). */
#define REDIS_LOST "CRAWLLOST "
#define REDIS_FOREIGN "CRAWLFOREIGN "
#define REDIS_REAPED "CRAWLREAPED"
#define REDIS_NONE "CRAWLNONE"
#define REDIS_BACK "CRAWLBACK "

/* The format of a crawl's keys, its meta's "version": 2 kept no record
 * of listed pages nor of what a recrawl needs; 3 does (listed, v, vl); 4
 * leases hosts whole (ho, hq:HOST, wh:W, whn:W, meta's parked). A crawl
 * of another format is refused, left as it was. */
#define REDIS_FORMAT "4"

#endif

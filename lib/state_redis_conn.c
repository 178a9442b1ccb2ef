/* state_redis_conn.c: a connection to the --frontier server on which no
 * wait outlasts its request's deadline or ignores a cancellation. hiredis
 * is used for its protocol only: the socket is crawl's own, connected and
 * polled here in slices of REDIS_SLICE seconds, because hiredis's blocking
 * calls wait as long as the socket's timeout, give up with EAGAIN's text
 * and leave the context unusable after one, and cannot be interrupted. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "state_redis_internal.h"

void redis_wait_begin(struct redis_wait *w, double budget)
{
    w->start = clock_now();
    w->until = w->start + budget;
}

/* The moment w's request must end by, now being now: its deadline, or
 * its grace once it is cancelled. */
static double wait_end(struct redis_wait *w, double now)
{
    if (!w->cancel_at && w->cancelled && w->cancelled(w->data))
        w->cancel_at = now;
    if (!w->cancel_at)
        return w->until;
    double from = w->cancel_at > w->start ? w->cancel_at : w->start;
    return from + w->grace < w->until ? from + w->grace : w->until;
}

/* The code of a wait whose time ran out. */
static int wait_over(const struct redis_wait *w, double now)
{
    return w->cancel_at && now < w->until ? RW_CANCELLED : RW_TIMEOUT;
}

/* Waits until fd is ready for events (POLLIN, POLLOUT) or w's time runs
 * out. Returns 0 (ready, or in error: the next read or write says which),
 * RW_TIMEOUT, RW_CANCELLED or RW_IO. */
static int wait_fd(int fd, short events, struct redis_wait *w)
{
    for (;;) {
        double now = clock_now(), end = wait_end(w, now);
        if (now >= end)
            return wait_over(w, now);
        double left = end - now < REDIS_SLICE ? end - now : REDIS_SLICE;
        struct pollfd p = { .fd = fd, .events = events };
        int rc = poll(&p, 1, (int)(left * 1000) + 1);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return RW_IO;
    }
}

int redis_nap(struct redis_wait *w, double seconds)
{
    double at = clock_now() + seconds;
    for (;;) {
        double now = clock_now(), end = wait_end(w, now);
        if (now >= end)
            return wait_over(w, now);
        if (now >= at)
            return 0;
        double left = (at < end ? at : end) - now;
        if (left > REDIS_SLICE)
            left = REDIS_SLICE;
        struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

void redis_wait_text(int rc, const struct redis_wait *w, const redisContext *x,
                     const struct redis_addr *r, char *err, size_t n)
{
    if (rc == RW_TIMEOUT)
        snprintf(err, n, "no reply in %g s", w->until - w->start);
    else if (rc == RW_CANCELLED)
        snprintf(err, n, "interrupted before the server replied");
    else
        snprintf(err, n, "redis at %s:%d: %s", r->host, r->port,
                 x && x->err ? x->errstr : "the connection failed");
}

/* Connects one socket to ai within w's time. Returns the socket, or an
 * RW_ code with errno's text in err. */
static int connect_one(const struct addrinfo *ai, struct redis_wait *w, char *err, size_t n)
{
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                   ai->ai_protocol);
    if (s < 0) {
        snprintf(err, n, "%s", strerror(errno));
        return RW_IO;
    }
    int rc = connect(s, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno == EINPROGRESS ? 1 : -1;
    if (rc == 1) {
        int wrc = wait_fd(s, POLLOUT, w);
        if (wrc != 0) {
            close(s);
            return wrc;
        }
        int e = 0;
        socklen_t el = sizeof e;
        if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
            e = errno;
        rc = e ? -1 : 0;
        errno = e;
    }
    if (rc < 0) {
        snprintf(err, n, "%s", strerror(errno));
        close(s);
        return RW_IO;
    }
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    return s;
}

/* Logs in on x with r's password. Returns 0 or an RW_ code with why. */
static int auth(redisContext *x, const struct redis_addr *r, struct redis_wait *w, char *err,
                size_t n)
{
    const char *argv[3] = { "AUTH" };
    int argc = 1, rc = 0;
    if (*r->user)
        argv[argc++] = r->user;
    argv[argc++] = r->pass;
    redisReply *y = redis_call(x, argc, argv, NULL, w, &rc);
    if (!y) {
        redis_wait_text(rc, w, x, r, err, n);
        return rc;
    }
    int ok = y->type == REDIS_REPLY_STATUS;
    if (!ok)
        snprintf(err, n, "redis at %s:%d refused the password: %s", r->host, r->port,
                 y->type == REDIS_REPLY_ERROR ? y->str : "an unexpected reply");
    freeReplyObject(y);
    return ok ? 0 : RW_AUTH;
}

int redis_connect(const struct redis_addr *r, struct redis_wait *w, redisContext **out,
                  char *err, size_t n)
{
    char port[16], why[256] = "no address";
    snprintf(port, sizeof port, "%d", r->port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(r->host, port, &hints, &ai);
    if (g != 0) {
        snprintf(err, n, "cannot reach redis at %s:%d: %s", r->host, r->port,
                 g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        return RW_IO;
    }
    int s = RW_IO;
    for (struct addrinfo *a = ai; a && s == RW_IO; a = a->ai_next)
        s = connect_one(a, w, why, sizeof why);
    freeaddrinfo(ai);
    if (s < 0) {
        if (s == RW_IO)
            snprintf(err, n, "cannot reach redis at %s:%d: %s", r->host, r->port, why);
        else
            redis_wait_text(s, w, NULL, r, err, n);
        return s;
    }
    redisContext *x = redisConnectFd(s);
    if (!x || x->err) {
        snprintf(err, n, "cannot reach redis at %s:%d: out of memory", r->host, r->port);
        if (x)
            redisFree(x);
        else
            close(s);
        return RW_IO;
    }
    /* The socket is non-blocking: hiredis then takes EAGAIN for "later",
     * and this file does the waiting. */
    x->flags &= ~REDIS_BLOCK;
    int rc = *r->pass ? auth(x, r, w, err, n) : 0;
    if (rc != 0) {
        redisFree(x);
        return rc;
    }
    *out = x;
    return 0;
}

int redis_flush(redisContext *x, struct redis_wait *w)
{
    for (;;) {
        int done = 0;
        if (redisBufferWrite(x, &done) != REDIS_OK)
            return RW_IO;
        if (done)
            return 0;
        int rc = wait_fd(x->fd, POLLOUT, w);
        if (rc != 0)
            return rc;
    }
}

int redis_read(redisContext *x, redisReply **out, struct redis_wait *w)
{
    int rc = redis_flush(x, w);
    if (rc != 0)
        return rc;
    for (;;) {
        void *rep = NULL;
        if (redisGetReplyFromReader(x, &rep) != REDIS_OK)
            return RW_IO;
        if (rep) {
            *out = rep;
            return 0;
        }
        if ((rc = wait_fd(x->fd, POLLIN, w)) != 0)
            return rc;
        if (redisBufferRead(x) != REDIS_OK)
            return RW_IO;
    }
}

redisReply *redis_call(redisContext *x, int argc, const char **argv, const size_t *len,
                       struct redis_wait *w, int *rc)
{
    redisReply *y = NULL;
    if (redisAppendCommandArgv(x, argc, argv, len) != REDIS_OK) {
        *rc = RW_IO;
        return NULL;
    }
    *rc = redis_read(x, &y, w);
    return *rc ? NULL : y;
}

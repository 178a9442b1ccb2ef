/* multi_ev.h: libcurl's multi-socket API on a libev loop, for any model
 * that runs transfers on an event loop (curl's evhiperfifo.c shows the
 * shape): CURLMOPT_SOCKETFUNCTION starts, changes and stops an ev_io per
 * socket, CURLMOPT_TIMERFUNCTION arms one ev_timer per multi handle, and
 * every finished transfer is handed to the caller's callback. Transfers
 * are spread over several multi handles ("shards") of at most shard_cap
 * each: libcurl 7.88 keeps every connection to a host in one list that it
 * scans linearly, and hashes sockets into a fixed 911 slots, so one multi
 * handle with thousands of transfers to one host spends its time in those
 * scans (figures: scripts/results/tuning.txt). Up to shard_cap in flight
 * everything is in one shard, so that with reuse every transfer can find
 * every idle connection. One loop's thread only. */
#ifndef CRAWL_MULTI_EV_H
#define CRAWL_MULTI_EV_H

#include <ev.h>
#include <curl/curl.h>

#include "fetch.h"

struct multi_ev;

/* Called when transfer x (added with multi_ev_add) is done with outcome
 * rc; x has left its multi handle (its CURLMsg is gone: read nothing of
 * it), and may be added again from here (a redirect fetch follows). */
typedef void (*multi_ev_done_fn)(void *data, struct fetch_xfer *x, CURLcode rc);

/* Returns a new driver on loop ev, or NULL when out of memory or libcurl
 * cannot make a multi handle. in_flight_max: the transfers in flight at
 * most (0: no bound), and the idle connections each multi handle keeps
 * (0: libcurl's default, 4 a transfer). With a bound over shard_cap, the
 * shards it needs are made at once and each host has one of them as its
 * home (a hash of the URL's scheme and authority), where its transfers go
 * while it has room: a host's next transfer then finds the idle connection
 * its last one left, which another shard's cache does not hold. drained
 * (may be NULL) is called after each batch of done callbacks: room was
 * made. */
struct multi_ev *multi_ev_new(struct ev_loop *ev, int shard_cap, long in_flight_max,
                              multi_ev_done_fn done, void (*drained)(void *data),
                              void *data);

/* Removes what is still in m's multi handles and frees m. NULL is fine. */
void multi_ev_free(struct multi_ev *m);

/* Adds x's easy handle (fetch_prepare'd) to a shard with room, its job's
 * host's home shard when it has room. Returns 0, or CRAWL_ENOMEM. */
int multi_ev_add(struct multi_ev *m, struct fetch_xfer *x);

/* Takes x out of its multi handle before it is done (a cancelled crawl);
 * its done callback is not called. */
void multi_ev_remove(struct multi_ev *m, struct fetch_xfer *x);

/* Lets libcurl act now on the transfers added since the last call: each is
 * connected and its request sent, rather than all of them at the next
 * timer. Not from inside a done callback's transfer's own stack (a
 * coroutine): a transfer that ends in this call has its callback run. */
void multi_ev_poke(struct multi_ev *m);

#endif

/* procs.h: what the two sides of the procs model share (the
 * coordinator in mode_procs.c, the worker process in procs_worker.c). */
#ifndef CRAWL_PROCS_H
#define CRAWL_PROCS_H

#include <sys/types.h>

#include "crawl.h"
#include "strbuf.h"
#include "wire.h"

/* Frames on the socket: a 32-bit length, then that many bytes, the first of
 * which says what the frame is. Both ends are one machine: numbers go in
 * its own byte order. */
enum {
    MSG_START = 'S',        /* to a worker, first: its limit, and reuse */
    MSG_JOB = 'J',          /* to a worker: id, kind, depth, the hash of
                             * its scope, whether its host's pace waits for
                             * its start, URL */
    MSG_STARTED = 'T',      /* from a worker: that job's request is on its way */
    MSG_CANCEL = 'C',       /* to a worker: the crawl is cancelled, and why */
    MSG_RESULT = 'R',       /* from a worker: a finished job */
    MSG_WARN = 'W',         /* from a worker: a warning for stderr, and the
                             * key it is said once by (0: every time) */
    MSG_COOKIE = 'K',       /* from a worker, as it ends: a cookie of its jar */
    MSG_READY = 'Y',        /* from a worker: its threads are up, jobs may come */
    MSG_ALIVE = 'A',        /* from a worker, every PROCS_HEARTBEAT: it lives */
    MSG_END = 'E',          /* from a worker, as it ends: its threads, and
                             * whether its WARC failed */
};

/* Seconds between a worker's heartbeats (MSG_ALIVE), sent by a thread of
 * its own whatever its transfers do; the coordinator gives up a worker it
 * has not heard from for --worker-timeout (mode_procs.c). */
#define PROCS_HEARTBEAT 0.25

/* One field of a struct that crosses from the coordinator to a worker or
 * back (procs_wire.c): its name, where it is, and what happens to it. */
struct procs_field {
    const char *name;
    size_t offset, size, align;
    int kind;               /* PROCS_WIRE_* for a result, PROCS_OPT_* for an option */
};

enum {
    PROCS_WIRE_INT, PROCS_WIRE_F64, PROCS_WIRE_INSTANT, PROCS_WIRE_STR, PROCS_WIRE_ERROR,
    PROCS_WIRE_EXTRACTS, PROCS_WIRE_COUNT, PROCS_WIRE_LOCAL
};
enum { PROCS_OPT_KEEP, PROCS_OPT_OFF, PROCS_OPT_OWN };

/* Every field of struct crawl_result and of struct crawl_opts, in
 * declaration order (the unit tests check that they cover each struct). */
extern const struct procs_field procs_result_fields[];
extern const size_t procs_result_nfields;
extern const struct procs_field procs_opts_fields[];
extern const size_t procs_opts_nfields;

/* Appends result r to b, field by field as procs_result_fields says; t0
 * is the sending crawl's start (its times go as monotonic instants). */
void procs_result_put(struct strbuf *b, const struct crawl_result *r, double t0);

/* Reads what procs_result_put appended into r, whose strings it replaces
 * (r owns them after); t0 is the receiving crawl's start. A short frame
 * sets rd->bad, and what was read stays in r. */
void procs_result_get(struct wire_rd *rd, struct crawl_result *r, double t0);

/* Fills out with the options of a worker of a crawl with options in: as
 * they are, but those the coordinator's frontier applies off (the OFF
 * lines of procs_opts_fields). The OWN ones are the caller's to set. */
void procs_worker_opts(const struct crawl_opts *in, struct crawl_opts *out);

/* The body of worker idx, in the forked child: once MSG_START comes on fd,
 * runs model (the procs entry's worker: coro) on what comes in until the
 * coordinator shuts its side, then ends the process. c is the
 * coordinator's crawl (its options). Never returns. */
void procs_worker_main(struct crawl *c, const struct crawl_backend *model, int idx, int fd,
                       pid_t coordinator) __attribute__((noreturn));

#endif

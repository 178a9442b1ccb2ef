/* procs.h: what the two sides of the procs model share (the
 * coordinator in mode_procs.c, the worker process in procs_worker.c). */
#ifndef CRAWL_PROCS_H
#define CRAWL_PROCS_H

#include <sys/types.h>

#include "crawl.h"

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

/* The body of worker idx, in the forked child: once MSG_START comes on fd,
 * runs the coroutine model on what comes in until the coordinator shuts its
 * side, then ends the process. c is the coordinator's crawl (its options).
 * Never returns. */
void procs_worker_main(struct crawl *c, int idx, int fd, pid_t coordinator)
    __attribute__((noreturn));

#endif

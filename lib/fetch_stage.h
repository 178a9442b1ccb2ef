/* fetch_stage.h: body stages, what a transfer passes through besides being
 * counted and parsed. The WARC writer (stage_warc.c) and --save
 * (stage_mirror.c) are two; the options list the run's (crawl_opts.stages,
 * set by the program), and fetch runs them without naming any.
 *
 * A raw stage sees each response as it was sent: the request head, every
 * header line, the body with its content coding. With one in the run,
 * fetch turns libcurl's decoding off and decodes a copy itself (decode.c),
 * and follows redirects itself, so that every response of a chain passes
 * through (libcurl drops the body of a redirect it follows). A decoded
 * stage sees the body the row counts, of every response but a redirect
 * being followed. Raw stages run before decoded ones, each kind in the
 * order listed. A stage that fails says why (fetch_stage_fail): the first
 * reason is the transfer's failure, and its body goes no further. */
#ifndef CRAWL_FETCH_STAGE_H
#define CRAWL_FETCH_STAGE_H

#include <curl/curl.h>
#include <stddef.h>

#include "job.h"
#include "opts.h"

struct fetch_ctx;
struct fetch_xfer;

struct fetch_stage {
    const char *name;
    int    raw;                 /* sees responses as sent (above) */
    int    fds;                 /* descriptors a transfer of it may hold */
    /* The run, in each process that fetches: opens what the stage writes
     * to, its own in *conf. Returns 0, or CRAWL_EOUTPUT after a warning
     * (fetch_warn_once): then nothing is fetched. NULL: nothing to open. */
    int  (*run_open)(struct fetch_ctx *ctx, void **conf);
    /* Closes it. Returns 0, or CRAWL_EOUTPUT after a warning. */
    int  (*run_close)(struct fetch_ctx *ctx, void *conf);
    /* A transfer starts: its state in *st. Returns 0, or CRAWL_ENOMEM
     * after fetch_stage_fail. */
    int  (*open)(void *conf, struct fetch_xfer *x, void **st);
    /* Raw stages: the request head as sent, and each header line of each
     * response. May be NULL. */
    void (*request)(void *st, const char *p, size_t n);
    void (*header)(void *st, const char *p, size_t n);
    /* A response's body begins (at its first byte, or at its end when it
     * has none), with the response's status. Returns 0, or -1 after
     * fetch_stage_fail. May be NULL. */
    int  (*begin)(void *st, struct fetch_xfer *x, long status);
    /* n bytes of the body. Returns 0, or -1 after fetch_stage_fail. */
    int  (*body)(void *st, struct fetch_xfer *x, const char *p, size_t n);
    /* Raw stages: one response ended in rc, each of a chain fetch follows.
     * May be NULL. */
    void (*ended)(void *st, struct fetch_xfer *x, CURLcode rc);
    /* The transfer is over; ok: nothing failed it, no stage either. May be
     * NULL. */
    void (*finish)(void *st, struct fetch_xfer *x, int ok);
    void (*free)(void *st);
};

/* Fails x's transfer for a stage: the first reason given is kept (fail,
 * and fmt's text), later ones are not. */
void fetch_stage_fail(struct fetch_xfer *x, enum crawl_fail fail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The URL of the response x is reading: libcurl's effective one, else the
 * job's. */
const char *fetch_xfer_url(struct fetch_xfer *x);

/* Opens the run's stages (o->stages) on ctx, in order; on a failure those
 * opened are closed again. Returns 0 or CRAWL_EOUTPUT. */
int fetch_stages_open(struct fetch_ctx *ctx);

/* Closes them. Returns 0, or CRAWL_EOUTPUT when one said it failed. */
int fetch_stages_close(struct fetch_ctx *ctx);

#endif

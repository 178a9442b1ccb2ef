/* fetch_stage.h: body stages, the chain a transfer's body flows through
 * once fetch has it. The stages are listed in the run's context
 * (fetch_ctx.stages) by whoever builds it: the core lists the program's
 * own (crawl_opts.stages: the WARC writer, stage_warc.c; --save,
 * stage_mirror.c), then its own: the decoder (stage_decode.c), the row's
 * digest (stage_digest.c) and the page parser (stage_parse.c). fetch runs
 * them and names none of them.
 *
 * The chain is raw stages, then the decoder, then decoded stages, each
 * kind in the order listed; every call goes down it in that order, and
 * run_close back up. A raw stage sees each response as it was sent: the
 * request head, every header line, the body with its content coding. With
 * one in the run, fetch turns libcurl's decoding off, the decoder turns
 * the body as sent into the body the row counts (fetch_stage_pass), and
 * fetch follows redirects itself, so that every response of a chain
 * passes through (libcurl drops the body of a redirect it follows).
 * Without one the decoder is left out of the chain: libcurl decodes. fetch
 * counts the decoded body (its length, --max-size, a robots.txt's or a
 * sitemap's own reading) before the decoded stages see it: a decoded
 * stage sees the body the row counts, of every response but a redirect
 * being followed, and never a byte past --max-size. A stage that fails
 * says why (fetch_stage_fail): the first reason is the transfer's
 * failure, and its body goes no further.
 *
 * This is the per-byte path: a stage costs a chunk one indirect call (the
 * decoder, its decode.c sink's too), and no stage copies bytes it does
 * not keep. */
#ifndef CRAWL_FETCH_STAGE_H
#define CRAWL_FETCH_STAGE_H

#include <curl/curl.h>
#include <stddef.h>

#include "job.h"
#include "opts.h"

struct fetch_ctx;
struct fetch_xfer;

enum fetch_stage_kind {
    FETCH_STAGE_DECODED = 0,    /* the body as the row counts it */
    FETCH_STAGE_RAW,            /* responses as sent (above) */
    FETCH_STAGE_DECODER,        /* the body as sent in, decoded out: one a run */
};

struct fetch_stage {
    const char *name;
    enum fetch_stage_kind kind;
    int    fds;                 /* descriptors a transfer of it may hold */
    /* The run, in each process that fetches: opens what the stage writes
     * to, its own in *conf. Returns 0, or CRAWL_EOUTPUT after a warning
     * (fetch_warn_once): then nothing is fetched. NULL: nothing to open. */
    int  (*run_open)(struct fetch_ctx *ctx, void **conf);
    /* Closes it. Returns 0, or CRAWL_EOUTPUT after a warning. May be NULL. */
    int  (*run_close)(struct fetch_ctx *ctx, void *conf);
    /* A transfer starts: its state in *st. Left NULL, the stage takes no
     * part in this transfer: nothing else of it is called for it (the
     * parser for a robots.txt). The decoder takes part in every one.
     * Returns 0, or CRAWL_ENOMEM after fetch_stage_fail. */
    int  (*open)(void *conf, struct fetch_xfer *x, void **st);
    /* Raw stages: the request head as sent, and each header line of each
     * response. May be NULL. */
    void (*request)(void *st, const char *p, size_t n);
    void (*header)(void *st, const char *p, size_t n);
    /* A response's body begins (at its first byte, or at its end when it
     * has none), with the response's status; the response's head is all
     * in. Returns 0, or -1 after fetch_stage_fail. May be NULL. */
    int  (*begin)(void *st, struct fetch_xfer *x, long status);
    /* n bytes of the body; the decoder hands what it makes of them on
     * with fetch_stage_pass. Returns 0, or -1 after fetch_stage_fail (or
     * when fetch_stage_pass returned -1). */
    int  (*body)(void *st, struct fetch_xfer *x, const char *p, size_t n);
    /* Raw stages: one response ended in rc, each of a chain fetch follows.
     * May be NULL. */
    void (*ended)(void *st, struct fetch_xfer *x, CURLcode rc);
    /* The transfer is over, and x's job's result holds libcurl's outcome
     * (status, final URL, fail; a stage's failure is put in after every
     * finish). ok: nothing failed it, no stage either. Returns 0, or 1
     * when the stage puts work off (a page's parse, held for another
     * thread; only when the model gave x a budget for it, x->defer): its
     * state then lives on until later has run. May be NULL. */
    int  (*finish)(void *st, struct fetch_xfer *x, int ok);
    /* The work finish put off, run once by fetch_parse, on any thread:
     * it may touch st, x and x's job only. NULL for a stage that puts
     * nothing off. */
    void (*later)(void *st, struct fetch_xfer *x);
    void (*free)(void *st);
};

/* Fails x's transfer for a stage: the first reason given is kept (fail,
 * and fmt's text), later ones are not. */
void fetch_stage_fail(struct fetch_xfer *x, enum crawl_fail fail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The decoder's output: n decoded bytes of x's body, counted by fetch and
 * handed to the decoded stages. Returns 0, or -1 when the body is to go
 * no further (past --max-size, a stage failed, a robots.txt read to its
 * limit). */
int fetch_stage_pass(struct fetch_xfer *x, const char *p, size_t n);

/* The URL of the response x is reading: libcurl's effective one, else the
 * job's. */
const char *fetch_xfer_url(struct fetch_xfer *x);

/* Opens the stages listed in ctx (ctx->stages) into its chain, and each
 * one's run (run_open) in the chain's order; on a failure those opened
 * are closed again. Returns 0; CRAWL_EOUTPUT; or -EINVAL after a warning
 * when a raw stage is listed without a decoder, or two decoders are. */
int fetch_stages_open(struct fetch_ctx *ctx);

/* Closes them, the last opened first. Returns 0, or CRAWL_EOUTPUT when
 * one said it failed. */
int fetch_stages_close(struct fetch_ctx *ctx);

#endif

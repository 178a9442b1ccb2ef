/* fetch_keep.h: a transfer through the run's body stages (fetch_stage.h,
 * fetch_keep.c), shared by fetch.c and fetch_keep.c only. */
#ifndef CRAWL_FETCH_KEEP_H
#define CRAWL_FETCH_KEEP_H

#include "fetch.h"
#include "fetch_stage.h"

struct decode;

struct fetch_keep {
    void  *st[FETCH_STAGES_MAX]; /* each stage's state for the transfer */
    int    decided;           /* the response's first body byte was seen */
    int    skip;              /* a redirect that will be followed: its body
                               * goes to the raw stages only, never counted,
                               * parsed or saved */
    struct decode *dec;       /* undoes the content coding (a raw stage has
                               * bodies fetched as sent), or NULL */
    int    hops;              /* redirects followed by fetch itself */
    double hop_time;          /* the seconds they took */
    char  *refused;           /* the target of a redirect refused for its
                               * scheme, which the row names as final */
    enum crawl_fail fail;     /* why keeping failed the transfer, or NONE */
    char  *why;               /* ... in words */
};

/* Called by fetch_prepare: sets x up for the run's stages. Returns 0 or
 * CRAWL_ENOMEM (x then keeps nothing and fails). */
int keep_prepare(struct fetch_xfer *x);

/* The write callback's part: body bytes as libcurl gives them. Returns 0,
 * or -1 to stop the transfer. */
int keep_body(struct fetch_xfer *x, const char *p, size_t n);

/* fetch_follow's work: the raw stages see the response that ended in rc
 * and, when fetch follows redirects itself, the handle is set up for the
 * one it asks for. Returns 1 when the transfer is to run again. */
int keep_follow(struct fetch_xfer *x, CURLcode rc);

/* Called by fetch_finish once r is filled in: the stages finish (--save's
 * file renamed into place or removed), a stage's failure goes into r, and
 * x's keep is freed. */
void keep_finish(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r);

/* What the raw stages take of each header line (fetch.c's
 * CURLOPT_HEADERFUNCTION passes every line on; returns n * size), and of
 * what its CURLOPT_DEBUGFUNCTION is told: the request head. */
size_t keep_on_header(char *p, size_t size, size_t n, void *data);
int keep_on_debug(CURL *h, curl_infotype type, char *p, size_t n, void *data);

/* fetch.c's handling of decoded body bytes: counted, parsed, kept for
 * robots.txt. Returns 0, or -1 to stop the transfer. */
int fetch__decoded(struct fetch_xfer *x, const char *p, size_t n);

#endif

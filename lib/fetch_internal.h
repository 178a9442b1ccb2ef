/* fetch_internal.h: what fetch.c and fetch_stage.c (a transfer through the
 * body stages) share, and no one else. */
#ifndef CRAWL_FETCH_INTERNAL_H
#define CRAWL_FETCH_INTERNAL_H

#include "fetch.h"
#include "fetch_stage.h"

/* Called by fetch_prepare: x's stages open for the transfer. Returns 0 or
 * CRAWL_ENOMEM (a stage said why: the transfer fails at its first byte). */
int fetch__stages_prepare(struct fetch_xfer *x);

/* The write callback's part: body bytes as libcurl gives them, down the
 * chain. Returns 0, or -1 to stop the transfer. */
int fetch__stages_body(struct fetch_xfer *x, const char *p, size_t n);

/* What the raw stages take of each response header line (as the header
 * callback gets it), and of the request head (as the debug callback does). */
void fetch__stages_header(struct fetch_xfer *x, const char *p, size_t n);
void fetch__stages_request(struct fetch_xfer *x, const char *p, size_t n);

/* Called by fetch_finish once r holds libcurl's outcome rc: the stages
 * finish (--save's file renamed into place or removed, the digest, the
 * page's links), a stage's failure goes into r, and what they hold is
 * freed but for the work they put off. Returns 1 when some was put off
 * (fetch_parse runs it), else 0. */
int fetch__stages_finish(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r);

/* fetch.c's own reading of n decoded body bytes, before the decoded
 * stages see them: counted, held to --max-size, kept for a robots.txt,
 * fed to a sitemap's reader. Returns 0 (go on), 1 (pass them on, then
 * stop: a robots.txt or sitemap read as far as it will be) or -1 (stop
 * here). */
int fetch__take(struct fetch_xfer *x, const char *p, size_t n);

#endif

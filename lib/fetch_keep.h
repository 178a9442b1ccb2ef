/* fetch_keep.h: what fetch keeps of a transfer for --warc and --save
 * (fetch_keep.c), shared by fetch.c and fetch_keep.c only. */
#ifndef CRAWL_FETCH_KEEP_H
#define CRAWL_FETCH_KEEP_H

#include "fetch.h"
#include "mirror.h"

struct warc_capture;
struct decode;

struct fetch_keep {
    struct warc_capture *cap; /* --warc: the request and response as they go */
    struct mirror_file file;  /* --save: the decoded body's file */
    int    saving;            /* file is in use */
    int    decided;           /* the response's first body byte was seen */
    int    skip;              /* a redirect that will be followed: its body is
                               * archived, never counted, parsed or saved */
    struct decode *dec;       /* undoes the content coding (--warc fetches
                               * bodies as sent), or NULL */
    int    hops;              /* redirects followed by fetch itself (--warc) */
    double hop_time;          /* the seconds they took */
    char  *refused;           /* the target of a redirect refused for its
                               * scheme, which the row names as final */
    enum crawl_fail fail;     /* why keeping failed the transfer, or NONE */
    char  *why;               /* ... in words */
};

/* Called by fetch_prepare: sets x up to keep what c's options ask for.
 * Returns 0 or CRAWL_ENOMEM (x then keeps nothing and fails). */
int keep_prepare(struct fetch_xfer *x);

/* The write callback's part: body bytes as libcurl gives them. Returns 0,
 * or -1 to stop the transfer. */
int keep_body(struct fetch_xfer *x, const char *p, size_t n);

/* fetch_follow's work: archives the transfer that ended in rc and, with
 * --warc, sets the handle up for the redirect it asks for. Returns 1 when
 * the transfer is to run again. */
int keep_follow(struct fetch_xfer *x, CURLcode rc);

/* Called by fetch_finish once r is filled in: the file of --save is
 * renamed into place or removed, a failure of keeping goes into r, and
 * x's keep is freed. */
void keep_finish(struct fetch_xfer *x, CURLcode rc, struct crawl_result *r);

/* CURLOPT_HEADERFUNCTION and CURLOPT_DEBUGFUNCTION of a --warc crawl. */
size_t keep_on_header(char *p, size_t size, size_t n, void *data);
int keep_on_debug(CURL *h, curl_infotype type, char *p, size_t n, void *data);

/* fetch.c's handling of decoded body bytes: counted, parsed, kept for
 * robots.txt. Returns 0, or -1 to stop the transfer. */
int fetch__decoded(struct fetch_xfer *x, const char *p, size_t n);

#endif

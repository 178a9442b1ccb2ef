/* stage_warc.c: the WARC writer as a raw body stage (fetch_stage.h): each
 * transfer captures its request head, its response head and its body as
 * sent, and every response of a redirect chain is written as it ends. The
 * writer is opened by each process that fetches (a procs worker its own
 * file, FILE-wN.warc.gz). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "fetch.h"
#include "fetch_stage.h"
#include "stage.h"
#include "version.h"
#include "warc.h"

static int run_open(struct fetch_ctx *c, void **conf)
{
    const struct crawl_opts *o = c->opts;
    char software[256];
    struct warc_conf wc = {
        .path = o->warc, .worker = o->warc_worker, .max_size = (uint64_t)o->warc_max_size,
        .cdx = o->cdx, .software = crawl_version_line(software, sizeof software),
        .options = o->warc_options, .seen = c->seen,
    };
    char failed[4096] = "";
    struct warc *w = NULL;
    int rc = warc_open(&w, &wc, failed, sizeof failed);
    if (rc) {
        if (failed[0])
            fetch_warn_once(c, "%s: %s (the archive is not written)", failed, strerror(-rc));
        else
            fetch_warn_once(c, "--warc: cannot write %s: %s", o->warc, strerror(-rc));
        return CRAWL_EOUTPUT;
    }
    *conf = w;
    return 0;
}

static int run_close(struct fetch_ctx *c, void *conf)
{
    struct warc *w = conf;
    char *name = strdup(warc_file_name(w));
    int rc = warc_close(w);
    if (rc)
        fetch_warn_once(c, "--warc: %s: %s", name ? name : c->opts->warc, strerror(-rc));
    free(name);
    return rc ? CRAWL_EOUTPUT : 0;
}

/* A transfer's state: the writer and what it captured. */
struct capture {
    struct warc *w;
    struct warc_capture *cap;
};

static int open_capture(void *conf, struct fetch_xfer *x, void **st)
{
    struct capture *t = malloc(sizeof *t);
    if (t && !(t->cap = warc_capture_new())) {
        free(t);
        t = NULL;
    }
    if (!t) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--warc: out of memory");
        return CRAWL_ENOMEM;
    }
    t->w = conf;
    *st = t;
    return 0;
}

static void request(void *st, const char *p, size_t n)
{
    warc_capture_request(((struct capture *)st)->cap, p, n);
}

static void header(void *st, const char *p, size_t n)
{
    warc_capture_header(((struct capture *)st)->cap, p, n);
}

static int body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    int rc = warc_capture_body(((struct capture *)st)->cap, p, n);
    if (rc)
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--warc: spooling the body: %s", strerror(-rc));
    return rc ? -1 : 0;
}

/* Writes the records of the response that just ended with rc, and starts
 * the capture afresh for the next one of its chain. */
static void ended(void *st, struct fetch_xfer *x, CURLcode rc)
{
    struct capture *t = st;
    char *ip = NULL;
    const char *cut = NULL;
    if (!warc_capture_has_response(t->cap))
        return;
    curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_IP, &ip);
    if (rc != CURLE_OK)
        cut = x->too_large || x->robots_cut || rc == CURLE_FILESIZE_EXCEEDED ? "length"
            : rc == CURLE_OPERATION_TIMEDOUT ? "time"
            : rc == CURLE_WRITE_ERROR ? "unspecified" : "disconnect";
    int wr = warc_write(t->w, t->cap, fetch_xfer_url(x), ip, cut);
    if (wr)
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--warc: %s: %s", warc_file_name(t->w),
                         strerror(-wr));
    warc_capture_reset(t->cap);
}

static void free_capture(void *st)
{
    struct capture *t = st;
    warc_capture_free(t->cap);
    free(t);
}

const struct fetch_stage stage_warc = {
    .name = "warc",
    .kind = FETCH_STAGE_RAW,
    .fds = 1,                   /* the spooled body's file */
    .run_open = run_open,
    .run_close = run_close,
    .open = open_capture,
    .request = request,
    .header = header,
    .body = body,
    .ended = ended,
    .free = free_capture,
};

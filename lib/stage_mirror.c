/* stage_mirror.c: --save DIR as a decoded body stage (fetch_stage.h): the
 * body of each 2xx response, as the row counts it, written to its file
 * under DIR (mirror.h) and renamed into place once the transfer succeeded,
 * removed otherwise. */
#include <stdlib.h>
#include <string.h>

#include "fetch.h"
#include "fetch_stage.h"
#include "mirror.h"
#include "opts.h"
#include "stage.h"

struct saving {
    const char *dir;
    struct mirror_file file;
    int    on;                  /* file is in use */
};

static int open_saving(void *conf, struct fetch_xfer *x, void **st)
{
    struct saving *s = calloc(1, sizeof *s);
    if (!s) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--save: out of memory");
        return CRAWL_ENOMEM;
    }
    s->dir = x->ctx->opts->save_dir;
    s->file.fd = -1;
    *st = s;
    return 0;
}

static int begin(void *st, struct fetch_xfer *x, long status)
{
    struct saving *s = st;
    if (status < 200 || status >= 300)
        return 0;
    const char *url = fetch_xfer_url(x);
    int rc = mirror_begin(&s->file, url);
    if (rc) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--save: no file for %s: %s", url, strerror(-rc));
        return -1;
    }
    s->on = 1;
    return 0;
}

static int body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    struct saving *s = st;
    if (!s->on)
        return 0;
    int rc = mirror_write(&s->file, s->dir, p, n);
    if (rc)
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--save: %s/%s: %s", s->dir, s->file.rel,
                         strerror(-rc));
    return rc ? -1 : 0;
}

/* The file being written is removed, unfinished. */
static void drop(struct saving *s)
{
    mirror_abort(&s->file, s->dir);
    mirror_end(&s->file);
    s->on = 0;
}

static int finish(void *st, struct fetch_xfer *x, int ok)
{
    struct saving *s = st;
    if (!s->on)
        return 0;
    if (!ok) {
        drop(s);
        return 0;
    }
    int e = mirror_commit(&s->file, s->dir);
    if (e)
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "--save: %s/%s: %s", s->dir,
                         s->file.rel ? s->file.rel : "", strerror(-e));
    mirror_end(&s->file);
    s->on = 0;
    return 0;
}

static void free_saving(void *st)
{
    struct saving *s = st;
    if (s->on)
        drop(s);
    free(s);
}

const struct fetch_stage stage_mirror = {
    .name = "save",
    .kind = FETCH_STAGE_DECODED,
    .fds = 1,                   /* the file being written */
    .open = open_saving,
    .begin = begin,
    .body = body,
    .finish = finish,
    .free = free_saving,
};

/* mode_seq.c: the sequential model (the article's spider_normal.py): one
 * easy handle, one URL after another. */
#include "crawl.h"
#include "fetch.h"

static int seq_run(struct crawl *c)
{
    struct fetch_xfer x = {0};
    struct crawl_job *job;
    int rc;

    crawl_set_threads(c, 1);
    while ((rc = crawl_take_wait(c, &job)) == 1) {
        /* The handle is made for the first job, or again for the next one
         * after memory ran out: a job without one fails as in every model,
         * and the crawl goes on. */
        if (!x.easy && !(x.easy = fetch_easy_new(crawl_fetch_ctx(c), NULL))) {
            crawl_fail_nomem(c, job);
            continue;
        }
        fetch_perform(&x, crawl_fetch_ctx(c), job, 0);
        crawl_done(c, job);
    }
    if (x.easy)
        curl_easy_cleanup(x.easy);
    return rc;
}

const struct crawl_backend crawl_backend_seq = {
    .name = "seq",
    .summary = "sequential: one URL after another on one easy handle",
    .manual = "Sequential: one URL after another on one libcurl easy handle.",
    .default_concurrency = 1,
    .max_concurrency = 1,
    .fds_per_transfer = 3,      /* a blocking transfer: its socket, its multi's wakeup pair */
    .run = seq_run,
};

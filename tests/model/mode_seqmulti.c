/* mode_seqmulti.c: a sixth model, kept under tests/ to show that a model
 * is one file and one registry entry (make check-model builds crawl with
 * it and runs the tests of every model on that build). Sequential, one URL
 * after another, each run on a multi handle that the model polls itself,
 * so that the core's waker (curl_multi_wakeup) ends a wait at once: a
 * cancelled crawl abandons its transfer without waiting for libcurl's
 * progress callback. */
#include "crawl.h"
#include "fetch.h"

/* The most a poll waits when neither a socket, libcurl's timer nor the
 * waker says anything: a bound, not a rhythm. */
#define POLL_MS 1000

/* The core's waker: the poll returns. */
static void wake(void *data)
{
    curl_multi_wakeup(data);
}

/* Runs x's transfer on multi until it is done or the crawl is cancelled.
 * Returns its outcome. */
static CURLcode run_one(struct crawl *c, CURLM *multi, struct fetch_xfer *x)
{
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    if (curl_multi_add_handle(multi, x->easy) != CURLM_OK)
        return rc;
    for (int done = 0; !done;) {
        int running, left;
        curl_multi_perform(multi, &running);
        CURLMsg *m;
        while ((m = curl_multi_info_read(multi, &left)))
            if (m->msg == CURLMSG_DONE) {
                rc = m->data.result;
                done = 1;
            }
        if (!done && crawl_is_cancelled(c)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (!done)
            curl_multi_poll(multi, NULL, 0, POLL_MS, NULL);
    }
    curl_multi_remove_handle(multi, x->easy);
    return rc;
}

static int seqmulti_run(struct crawl *c)
{
    struct fetch_ctx *ctx = crawl_fetch_ctx(c);
    struct fetch_xfer x = { 0 };
    struct crawl_job *job;
    CURLM *multi = curl_multi_init();
    int rc = CRAWL_ENOMEM;
    if (!multi)
        goto out;
    crawl_set_threads(c, 1);
    crawl_set_waker(c, wake, multi);
    while ((rc = crawl_take_wait(c, &job)) == 1) {
        CURLcode r;
        /* Made for the first job, or again after memory ran out. */
        if (!x.easy && !(x.easy = fetch_easy_new(ctx, NULL))) {
            crawl_fail_nomem(c, job);
            continue;
        }
        fetch_prepare(&x, ctx, job, 0);
        while (fetch_follow(&x, r = run_one(c, multi, &x)))
            if (crawl_is_cancelled(c)) {
                r = CURLE_ABORTED_BY_CALLBACK;  /* between two hops */
                break;
            }
        fetch_finish(&x, r);        /* no parse is held back: x.defer is NULL */
        crawl_done(c, job);
    }
    crawl_set_waker(c, NULL, NULL);
out:
    if (x.easy)
        curl_easy_cleanup(x.easy);
    if (multi)
        curl_multi_cleanup(multi);
    return rc;
}

const struct crawl_backend crawl_backend_seqmulti = {
    .name = "seqmulti",
    .summary = "sequential on a multi handle of its own, woken at once when cancelled",
    .manual = "A model kept to show a model is one file: sequential, each transfer run "
              "on a multi handle the model polls, which the core wakes when the crawl "
              "is cancelled.",
    .default_concurrency = 1,
    .max_concurrency = 1,
    .fds_per_transfer = 3,      /* its socket and the multi's wakeup pair */
    .run = seqmulti_run,
};

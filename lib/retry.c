/* retry.c: the rules of --retry. Which failures are transient is decided
 * on the result's failure class and status alone, so that a result relayed
 * from another process (procs) is judged as one fetched here. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "clock.h"
#include "hooks.h"
#include "retry.h"

double retry_wait(double base, double cap, int attempt, double retry_after, double u)
{
    if (retry_after >= 0)
        return retry_after < cap ? retry_after : cap;
    double top = base * ldexp(1.0, attempt > 1 ? (attempt < 60 ? attempt - 1 : 60) : 0);
    if (top > cap)
        top = cap;
    return u * top;
}

/* ---- the hook ------------------------------------------------------------- */

struct retry_hook {
    pthread_mutex_t lock;       /* guards rng: jobs come back on any thread */
    uint64_t rng;               /* the waits' jitter (xorshift64*) */
};

/* A uniform draw in [0, 1). */
static double draw(struct retry_hook *r)
{
    pthread_mutex_lock(&r->lock);
    uint64_t x = r->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->rng = x;
    pthread_mutex_unlock(&r->lock);
    return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

/* The back hook: a transient failure with tries left goes back to its
 * queue instead of to its row. fetch kept Retry-After only where it
 * applies (429, 503). A robots.txt is asked for once: a host whose
 * robots.txt fails is taken as forbidding all (RFC 9309, 2.3.1.4), and
 * asking again would be the request it has just refused. */
static int retry_back(void *data, struct crawl *c, struct crawl_job *job)
{
    const struct crawl_opts *o = crawl_options(c);
    if (job->kind == JOB_ROBOTS || job->failed_early || job->unrun || job->res.attempts > o->retry ||
        !job_transient(&job->res) || crawl_is_cancelled(c))
        return 0;
    double at = clock_now() + retry_wait(o->retry_delay, o->retry_max_delay, job->res.attempts,
                                         job->res.retry_after, draw(data));
    /* No wait outlasts the run: --deadline cancels what still waits. */
    double t0 = crawl_started(c);
    if (o->deadline > 0 && t0 > 0 && at > t0 + o->deadline)
        at = t0 + o->deadline;
    crawl_retry(c, job, at);
    return 1;
}

static void retry_free(void *data)
{
    struct retry_hook *r = data;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

int retry_attach(struct crawl *c)
{
    struct retry_hook *r = calloc(1, sizeof *r);
    if (!r)
        return CRAWL_ENOMEM;
    pthread_mutex_init(&r->lock, NULL);
    r->rng = ((uint64_t)time(NULL) << 20) ^ (uint64_t)(uintptr_t)r ^ 0x9e3779b97f4a7c15ULL;
    static const struct crawl_hook hook = { .back = retry_back, .free = retry_free };
    crawl_hook(c, CRAWL_HOOK_RETRY, &hook, r);
    return 0;
}

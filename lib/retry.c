/* retry.c: the rules of --retry. Which failures are transient is decided
 * on the result's failure class and status alone, so that a result relayed
 * from another process (procs) is judged as one fetched here. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "clock.h"
#include "crawl_internal.h"
#include "frontier.h"
#include "html.h"
#include "retry.h"

int retry_after_applies(long status)
{
    return status == 429 || status == 503;
}

int retry_after_parse(const char *v, time_t now, double *secs)
{
    while (*v == ' ' || *v == '\t')
        v++;
    if (isdigit((unsigned char)*v)) {
        char *end;
        double s = strtod(v, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        /* delay-seconds is 1*DIGIT: no sign, point or exponent. */
        for (const char *p = v; p < end; p++)
            if (!isdigit((unsigned char)*p) && *p != ' ' && *p != '\t')
                return -1;
        if (*end)
            return -1;
        *secs = s;
        return 0;
    }
    /* libcurl's date parser reads the three forms RFC 9110, 5.6.7 lists. */
    time_t t = curl_getdate(v, NULL);
    if (t == -1)
        return -1;
    *secs = t > now ? (double)(t - now) : 0;
    return 0;
}

double retry_wait(double base, double cap, int attempt, double retry_after, double u)
{
    if (retry_after >= 0)
        return retry_after < cap ? retry_after : cap;
    double top = base * ldexp(1.0, attempt > 1 ? (attempt < 60 ? attempt - 1 : 60) : 0);
    if (top > cap)
        top = cap;
    return u * top;
}

/* ---- the core's side ------------------------------------------------------ */

/* A uniform draw in [0, 1) from the crawl's xorshift64*; the lock is held. */
static double draw(struct crawl *c)
{
    uint64_t x = c->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    c->rng = x;
    return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

int crawl__retry_later(struct crawl *c, struct crawl_job *job)
{
    const struct crawl_opts *o = c->opts;
    if (c->relay || job->failed_early || job->unrun ||
        job->res.attempts > o->retry || !job_transient(&job->res) ||
        atomic_load(&c->cancel.why))
        return 0;
    pthread_mutex_lock(&c->lock);
    double ra = retry_after_applies(job->res.status) ? job->res.retry_after : -1;
    double at = clock_now() +
                retry_wait(o->retry_delay, o->retry_max_delay, job->res.attempts, ra, draw(c));
    /* No wait outlasts the run: --deadline cancels what still waits. */
    if (o->deadline > 0 && c->t0 > 0 && at > c->t0 + o->deadline)
        at = c->t0 + o->deadline;
    frontier_observe(c->fr, job);
    job_clear(job);
    c->running--;
    c->retries++;
    frontier_retry(c->fr, job, at);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return 1;
}

/* frontier_pace.c: the pace of each host: when its next request may
 * start. --delay spaces a host's requests; robots.txt's Crawl-delay raises
 * that (unless --ignore-crawl-delay); a 429 or 503 with Retry-After pauses
 * the host, not the crawl; --auto-throttle moves the delay with what each
 * answer shows (polite.c holds its rule). pick() in frontier.c holds a
 * host's jobs back until its next_at. */
#include "clock.h"
#include "frontier_internal.h"
#include "frontier.h"
#include "polite.h"
#include "robots.h"

/* What a host's answer to page job j (which ran) tells its pacing: a 429
 * or 503 with Retry-After pauses the host, not the crawl, for as long as
 * it asks, at most --retry-max-delay and never past --deadline; with
 * --auto-throttle its latency and outcome set the host's delay. */
void frontier__observe(struct frontier *f, struct crawl_host *h, const struct crawl_job *j)
{
    const struct frontier_conf *o = &f->conf;
    const struct crawl_result *r = &j->res;
    if (j->unrun || r->fail == CRAWL_FAIL_CANCELLED)
        return;
    /* fetch reads Retry-After only where it applies (429, 503). */
    if (r->retry_after >= 0) {
        double at = f->now() + (r->retry_after < o->retry_max_delay ? r->retry_after
                                                                       : o->retry_max_delay);
        if (f->deadline_at > 0 && at > f->deadline_at)
            at = f->deadline_at;
        if (at > h->next_at)
            h->next_at = at;
        f->timed = 1;
    }
    if (f->throttle) {
        double latency = r->time_ttfb > 0 ? r->time_ttfb : r->time_total;
        h->delay = polite_throttle(h->delay, latency, job_transient(r), h->floor,
                                   POLITE_MAX_DELAY);
        h->sampled = 1;
        if (h->last_start + h->delay > h->next_at)
            h->next_at = h->last_start + h->delay;
        f->timed = 1;
    }
}

void frontier_observe(struct frontier *f, const struct crawl_job *j)
{
    if (j->host && j->kind == JOB_PAGE)
        frontier__observe(f, j->host, j);
}

/* The longest Crawl-delay honoured, in seconds (as --delay's bound): a
 * file that asks for a day between requests gets an hour. */
#define FRONTIER_CRAWL_DELAY_MAX 3600.0

/* Crawl-delay: the host's requests are spaced by it, from the start of its
 * robots.txt request on, unless --ignore-crawl-delay; --delay stays the
 * floor, and --auto-throttle never goes below it. */
void frontier__crawl_delay(struct frontier *f, struct crawl_host *h)
{
    double d = robots_crawl_delay(h->robots);
    if (d <= 0 || f->conf.ignore_crawl_delay)
        return;
    if (d > FRONTIER_CRAWL_DELAY_MAX)
        d = FRONTIER_CRAWL_DELAY_MAX;
    if (d > h->floor)
        h->floor = d;
    if (h->delay < h->floor)
        h->delay = h->floor;
    if (h->last_start + h->delay > h->next_at)
        h->next_at = h->last_start + h->delay;
    f->timed = 1;
}

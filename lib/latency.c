/* latency.c: the percentiles of the fetched URLs' times, from histograms
 * of 1%-wide buckets that cost the same for ten URLs as for ten million.
 * The core counts each fetched URL here, with its lock held. */
#include <math.h>

#include "crawl_internal.h"

void crawl__hist_add(struct crawl_hist *h, double seconds)
{
    double us = seconds * 1e6;
    long k = us > 1 ? lround(floor(log(us) / log(1.01))) : 0;
    if (k >= CRAWL_HIST_BUCKETS)
        k = CRAWL_HIST_BUCKETS - 1;
    h->b[k]++;
    h->n++;
    if (seconds > h->max)
        h->max = seconds;
}

double crawl_latency_ms(const struct crawl *c, enum crawl_time which, double q)
{
    const struct crawl_hist *h = &c->hist[which == CRAWL_TIME_TTFB];
    if (h->n == 0)
        return 0;
    double max = h->max * 1000.0;
    if (q >= 1)
        return max;
    size_t rank = (size_t)ceil(q * (double)h->n), seen = 0;
    if (rank == 0)
        rank = 1;
    for (int k = 0; k < CRAWL_HIST_BUCKETS; k++) {
        seen += h->b[k];
        if (seen >= rank) {
            /* The bucket's middle may lie past the largest time in it. */
            double v = pow(1.01, k + 0.5) / 1000.0;
            return v < max ? v : max;
        }
    }
    return max;
}

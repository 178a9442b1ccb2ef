/* hist.c: times in 1%-wide buckets, and their percentiles (hist.h). */
#include <math.h>

#include "hist.h"

void hist_add(struct hist *h, double seconds)
{
    double us = seconds * 1e6;
    long k = us > 1 ? lround(floor(log(us) / log(1.01))) : 0;
    if (k >= HIST_BUCKETS)
        k = HIST_BUCKETS - 1;
    h->b[k]++;
    h->n++;
    if (seconds > h->max)
        h->max = seconds;
}

double hist_quantile_ms(const struct hist *h, double q)
{
    if (h->n == 0)
        return 0;
    double max = h->max * 1000.0;
    if (q >= 1)
        return max;
    size_t rank = (size_t)ceil(q * (double)h->n), seen = 0;
    if (rank == 0)
        rank = 1;
    for (int k = 0; k < HIST_BUCKETS; k++) {
        seen += h->b[k];
        if (seen >= rank) {
            /* The bucket's middle may lie past the largest time in it. */
            double v = pow(1.01, k + 0.5) / 1000.0;
            return v < max ? v : max;
        }
    }
    return max;
}

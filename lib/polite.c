/* polite.c: --auto-throttle's rule. After Scrapy's AutoThrottle, whose
 * target is the latency divided by a target concurrency: here that
 * concurrency is 1, so a host sees about one request of the crawl at a
 * time, whatever -c allows. Where Scrapy only refuses to lower the delay
 * after an error response, an error here doubles it, so that a host that
 * struggles (503s, resets, time-outs) is given air at once rather than
 * after its latency grows. */
#include "polite.h"

double polite_throttle(double delay, double latency, int error, double floor, double max)
{
    double next;
    if (latency < 0)
        latency = 0;
    if (error) {
        next = 2 * delay;
        if (next < POLITE_ERROR_DELAY)
            next = POLITE_ERROR_DELAY;
        if (next < latency)
            next = latency;
    } else {
        next = (delay + latency) / 2;
        if (next < latency)
            next = latency;
    }
    if (next > max)
        next = max;
    if (next < floor)
        next = floor;
    return next;
}

/* polite.h: how long to wait between requests to one host when the crawl
 * adapts to it (--auto-throttle). A pure function: the frontier keeps each
 * host's delay and calls it as each response comes back. */
#ifndef CRAWL_POLITE_H
#define CRAWL_POLITE_H

/* The longest delay --auto-throttle sets between two requests to a host,
 * in seconds (Scrapy's AUTOTHROTTLE_MAX_DELAY). */
#define POLITE_MAX_DELAY 60.0

/* The least delay after an error: a host that fails fast (a refused
 * connection, an instant 503) is not hammered at the speed it fails. */
#define POLITE_ERROR_DELAY 0.5

/* Returns a host's next delay in seconds, from its delay now and one
 * response: its latency (seconds to the first byte, or to the failure)
 * and whether it was an error (a transient failure: no connection, a time
 * out, a reset, or HTTP 408, 429, 500, 502, 503, 504). A success moves the
 * delay halfway to the latency, and never below it (one request in flight
 * to the host, on average); an error doubles it, to POLITE_ERROR_DELAY at
 * least, and to the latency. The result lies within [floor, max]. */
double polite_throttle(double delay, double latency, int error, double floor, double max);

#endif

/* validators.h: conditional requests for a list crawled without a store.
 * --validators FILE keeps each URL's validators (its ETag and
 * Last-Modified) from one run to the next: read before the run, each
 * listed URL's request carries them (If-None-Match, If-Modified-Since),
 * and written after it with what the responses said; --if-modified-since
 * DATE gives every URL the file does not name that one date. The file, one
 * line a URL:
 *
 *   URL ETAG LAST-MODIFIED
 *
 * fields separated by one space: the URL as listed, the ETag as the server
 * sent it (quotes and W/ included; an entity tag holds no space), and the
 * rest of the line the Last-Modified (an HTTP-date, which does); "-" for a
 * validator the response did not have. Lines starting with # and blank
 * lines are skipped. */
#ifndef CRAWL_VALIDATORS_H
#define CRAWL_VALIDATORS_H

#include <stddef.h>
#include <time.h>

struct crawl_hook;
struct validators;

/* Room for an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", 29 bytes). */
#define VALIDATORS_DATE 64

/* Parses date s: an HTTP-date in any of RFC 9110's three forms (5.6.7),
 * or an ISO-8601 date, YYYY-MM-DD (midnight UTC) or YYYY-MM-DDTHH:MM[:SS]
 * with Z or an offset (+HH:MM, -HHMM) or none (UTC); a space may stand for
 * the T. Returns 0 with the time in *t, or -1. */
int validators_parse_date(const char *s, time_t *t);

/* Writes t as an IMF-fixdate (RFC 9110, 5.6.7) into out, which has room
 * for VALIDATORS_DATE bytes. Returns out. */
char *validators_format_date(time_t t, char *out);

/* Makes the validators of a run: those of file path when it names one
 * (NULL: none; a file that is not there is an empty one, the first run's),
 * and since, the If-Modified-Since of every listed URL the file has no
 * validator for (an HTTP-date; NULL: none). A line that cannot be read is
 * told to warn as "PATH:LINE: what is wrong", left out, and the rest read.
 * Returns 0 with the table in *out, or -errno with the reason in why (size
 * n) when the file cannot be read. */
int validators_open(struct validators **out, const char *path, const char *since,
                    void (*warn)(const char *msg, void *data), void *data, char *why,
                    size_t n);

/* The hook that makes v work, attached with v as its data: a listed job's
 * request gets its URL's validators; each page's row notes what its
 * response said (a 2xx's replace the URL's, a 304 keeps those it had, any
 * other outcome leaves them as they were). Thread-safe. */
const struct crawl_hook *validators_hook(void);

/* Writes v to its file (through a temporary one and a rename: the file is
 * whole, the old or the new, whatever happens), a line a URL in the order
 * of their bytes, whatever order the rows came in. A table made without a
 * file writes nothing. Returns 0, or -errno with the reason in why (size
 * n). */
int validators_write(struct validators *v, char *why, size_t n);

/* Frees v. NULL is fine. */
void validators_free(struct validators *v);

#endif

/* urllist.h: reading URL lists, one URL a line, into a crawl's jobs. */
#ifndef CRAWL_URLLIST_H
#define CRAWL_URLLIST_H

#include <stdio.h>
#include "crawl.h"

/* Longest URL accepted, in bytes; a longer line is reported and fails. */
#define URLLIST_MAX_URL 8192

/* Reads every line of f and adds one job per URL to c. Blank lines and
 * lines starting with '#' are skipped; white space, CR and a UTF-8 byte
 * order mark are trimmed. A line that is not a URL crawl fetches is added as
 * a failed job and reported on err as "NAME:LINE: reason". name must outlive
 * c. Returns the number of bad lines (>= 0), CRAWL_EINPUT on a read error
 * (errno set), or CRAWL_ENOMEM. */
int urllist_read(struct crawl *c, FILE *f, const char *name, FILE *err);

/* Adds one URL given on the command line (argument number argn) the same
 * way. Returns 0, 1 when it was bad (and reported), or CRAWL_ENOMEM. */
int urllist_add_arg(struct crawl *c, const char *url, long argn, FILE *err);

struct urllist;

/* Makes an empty sequence of URL sources whose bad lines are reported on
 * err. Returns NULL when out of memory. */
struct urllist *urllist_new(FILE *err);

/* Appends list f, called name (both must outlive l), read as the crawl
 * needs its lines; f is closed when read when close_it is set. Returns 0
 * or CRAWL_ENOMEM. */
int urllist_add_file(struct urllist *l, FILE *f, const char *name, int close_it);

/* Appends a URL given as argument number argn (url must outlive l).
 * Returns 0 or CRAWL_ENOMEM. */
int urllist_add_url(struct urllist *l, const char *url, long argn);

/* crawl_input_fn over a urllist (data): adds up to want jobs from the
 * sources in order. A stream gives what it has within 100 ms and the call
 * returns 1; once the crawl is cancelled, streams are not read further. A
 * read error is reported on err as "crawl: NAME: reason" and ends the input
 * with CRAWL_EINPUT. */
int urllist_input(struct crawl *c, size_t want, void *data);

/* Returns 1 when a source still to be read is a pipe or a terminal, whose
 * lines come when they come. */
int urllist_streams(const struct urllist *l);

/* Returns the number of bad lines read so far. */
int urllist_bad(const struct urllist *l);

/* Frees l and closes the lists it was to close. */
void urllist_free(struct urllist *l);

/* Writes at most n-1 bytes of s (of length len) to out as printable text:
 * control bytes become \xNN and a long text ends in "...". Returns out. */
char *urllist_printable(const char *s, size_t len, char *out, size_t n);

#endif

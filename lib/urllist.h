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

/* Writes at most n-1 bytes of s (of length len) to out as printable text:
 * control bytes become \xNN and a long text ends in "...". Returns out. */
char *urllist_printable(const char *s, size_t len, char *out, size_t n);

#endif

/* urllist.h: URL lists, one URL a line, read as their reader needs them.
 * Every line that could be meant as a URL is handed on, trimmed and made
 * printable, with its list's name and its number; what becomes of it is
 * the taker's business (the core makes it a job). A bad line is reported
 * on err as "NAME:LINE: reason: text". Nothing here knows the crawl. */
#ifndef CRAWL_URLLIST_H
#define CRAWL_URLLIST_H

#include <stddef.h>
#include <stdio.h>

#include "errors.h"

/* Longest URL accepted, in bytes; a longer line is reported and fails. */
#define URLLIST_MAX_URL 8192

/* Who takes the lines read, and when to stop reading a stream. */
struct urllist_taker {
    /* Takes one line: text (NUL-terminated, valid during the call only; a
     * control or invalid byte shown as \xNN) from list source ("argument"
     * for a URL given as one) at line (the argument's number). *why is
     * NULL, or why the list refuses the line whatever it holds (longer
     * than URLLIST_MAX_URL, a NUL byte; text is then its first 255 bytes),
     * which the taker records as a bad line. Returns 0 when the line was
     * taken as a URL, 1 when as a bad line (*why set to the reason), or a
     * negative code (CRAWL_ENOMEM), which ends the reading. */
    int (*take)(void *data, const char *text, const char *source, long line,
                const char **why);
    /* Returns nonzero once the reading is cancelled: a pipe or a terminal
     * is then read no further, though the lines already read from it are
     * taken. NULL: never. */
    int (*cancelled)(void *data);
};

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

/* Hands up to want more lines of l's sources, in order, to t->take (with
 * data); blank lines and lines starting with '#' are skipped, white space,
 * CR and a UTF-8 byte order mark trimmed. A stream gives what it has
 * within 100 ms. Returns 1 while more may follow, 0 once every source is
 * read, or a negative code, after which nothing more is read: the taker's,
 * or CRAWL_EINPUT on a read error (reported on err as "crawl: NAME:
 * reason", errno set). */
int urllist_next(struct urllist *l, size_t want, const struct urllist_taker *t, void *data);

/* Returns 1 when a source still to be read is a pipe or a terminal, whose
 * lines come when they come. */
int urllist_streams(const struct urllist *l);

/* Makes a read of a stream that waits for lines (urllist_next) return at
 * once (or the next one, when none waits): the reading is to end (a
 * cancel, the end of the run), which the taker's data says by then. Any
 * thread may call it; it only writes a byte to a pipe. */
void urllist_wake(struct urllist *l);

/* Returns the number of bad lines read so far. */
int urllist_bad(const struct urllist *l);

/* Frees l and closes the lists it was to close. */
void urllist_free(struct urllist *l);

/* Writes at most n-1 bytes of s (of length len) to out as printable text:
 * control bytes become \xNN and a long text ends in "...". Returns out. */
char *urllist_printable(const char *s, size_t len, char *out, size_t n);

#endif

/* robots.h: robots.txt (RFC 9309): which paths a crawler may fetch. */
#ifndef CRAWL_ROBOTS_H
#define CRAWL_ROBOTS_H

#include <stddef.h>

struct robots;

/* Parses a robots.txt body (len bytes, need not be NUL-terminated) for the
 * crawler whose product token is agent (e.g. "crawl"): the groups naming
 * agent apply, else the "*" groups. Returns the rules, freed with
 * robots_free, or NULL when out of memory. */
struct robots *robots_parse(const char *body, size_t len, const char *agent);

/* Returns rules that allow everything (allow = 1: no robots.txt, a 4xx) or
 * nothing (allow = 0: the server failed, RFC 9309's "unreachable"); NULL
 * when out of memory. */
struct robots *robots_all(int allow);

/* Returns 1 when path (the URL's path and query, starting with '/') may be
 * fetched: the longest matching rule decides, Allow winning a tie; '*' in a
 * rule matches any run of characters and a final '$' anchors the end. */
int robots_allowed(const struct robots *r, const char *path);

void robots_free(struct robots *r);

#endif

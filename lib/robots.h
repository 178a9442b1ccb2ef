/* robots.h: robots.txt (RFC 9309): which paths a crawler may fetch, and
 * what a crawler's product token is. */
#ifndef CRAWL_ROBOTS_H
#define CRAWL_ROBOTS_H

#include <stddef.h>

struct robots;

/* Returns the length of the product token s starts with: its letters,
 * '-' and '_' (RFC 9309, 2.2.1); 5 for "crawl/0.1.0", 0 for "1bot". */
size_t robots_token_len(const char *s);

/* Returns 1 when agent is a product token and nothing else ("crawl",
 * "my-bot"), 0 otherwise ("", "crawl/1.0", "my bot"). */
int robots_agent_valid(const char *agent);

/* Parses a robots.txt body (len bytes, need not be NUL-terminated; UTF-8,
 * a byte order mark skipped; lines end in CR, LF or CRLF) for the crawler
 * whose product token is agent (e.g. "crawl"): the groups whose user-agent
 * lines start with that token, in any case, apply, else the "*" groups
 * (an empty agent: only those). Returns the rules, freed with robots_free,
 * or NULL when out of memory. */
struct robots *robots_parse(const char *body, size_t len, const char *agent);

/* Returns rules that allow everything (allow = 1: no robots.txt, a 4xx) or
 * nothing (allow = 0: the server failed, RFC 9309's "unreachable"); NULL
 * when out of memory. */
struct robots *robots_all(int allow);

/* Returns 1 when path may be fetched: the URL's path and query, starting
 * with '/', as url_split gives it (its escapes in the form rules are
 * brought to: url_norm_escapes). The longest matching rule decides, Allow
 * winning a tie; '*' in a rule matches any run of characters and a final
 * '$' anchors the end. */
int robots_allowed(const struct robots *r, const char *path);

/* Returns the Crawl-delay of the group that applies, in seconds (the
 * first such line of the group; a fraction allowed), or -1 when it has
 * none. */
double robots_crawl_delay(const struct robots *r);

/* Points *urls at the URLs of the file's Sitemap lines, in order, as
 * written (at most 1,000), owned by r; returns how many. */
size_t robots_sitemaps(const struct robots *r, char *const **urls);

void robots_free(struct robots *r);

#endif

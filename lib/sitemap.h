/* sitemap.h: a sitemap (sitemaps.org protocol 0.9) read as it arrives: a
 * urlset gives page URLs, a sitemap index the URLs of more sitemaps. The
 * body may be gzip-compressed (a .xml.gz file); the protocol's limits
 * hold: 50,000 URLs and 50 MiB, uncompressed, a file. Streaming with
 * libxml2's SAX2 push parser and zlib: no tree is built, and memory holds
 * the URLs found, not the file. */
#ifndef CRAWL_SITEMAP_H
#define CRAWL_SITEMAP_H

#include <stddef.h>

/* The protocol's limits on one file. */
#define SITEMAP_MAX_URLS  50000
#define SITEMAP_MAX_BYTES (50L * 1024 * 1024)

struct sitemap;

/* Returns a new reader for the sitemap at url (for libxml2's messages),
 * or NULL when out of memory. Free it with sitemap_free. */
struct sitemap *sitemap_new(const char *url);

/* Reads the next len bytes of the body as they came (gzip or not). Returns
 * 0 while more is welcome; 1 once reading is over (a limit reached, or the
 * XML broken: what came before counts, the rest would be ignored); or -1
 * when out of memory. */
int sitemap_feed(struct sitemap *s, const char *data, size_t len);

/* Ends the body. Returns 0, or -1 when out of memory. */
int sitemap_end(struct sitemap *s);

/* Returns 1 when the file was a sitemap index, else 0 (a urlset, or
 * neither). */
int sitemap_is_index(const struct sitemap *s);

/* Takes the URLs found (<loc> of <url> in a urlset, of <sitemap> in an
 * index), in order: *urls becomes the caller's (each string and the array),
 * the reader keeps none. Returns how many. */
size_t sitemap_take(struct sitemap *s, char ***urls);

/* Returns why part of the file was not read (a limit, broken XML, not a
 * sitemap), a text owned by s, or NULL when it was read whole. */
const char *sitemap_problem(const struct sitemap *s);

void sitemap_free(struct sitemap *s);

#endif

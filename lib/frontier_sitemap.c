/* frontier_sitemap.c: --sitemaps. When a listed host's robots.txt is in,
 * the sitemaps its Sitemap lines name (or /sitemap.xml) are queued as
 * internal jobs on their hosts, paced as pages are; fetch.c reads each as
 * it arrives (sitemap.c), and the URLs it gives join the crawl here. The
 * sitemaps' URLs are split without the core's lock, with the robots.txt
 * or the index that names them (frontier_prepare, a store's read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontier_internal.h"
#include "frontier.h"
#include "robots.h"
#include "url.h"

/* Queues a sitemap job for p (split), read for the listed URLs of host
 * scope; level 0 for a sitemap robots.txt names (or /sitemap.xml), 1 for
 * one an index lists. Each sitemap is read once. Returns 0 or
 * CRAWL_ENOMEM. */
static int sitemap_queue(struct frontier *f, const struct url_parts *p, const char *scope,
                         int level)
{
    /* Seen apart from the pages: a page and a sitemap may share a URL. */
    size_t n = strlen(p->norm) + 3;
    char *key = malloc(n);
    struct crawl_host *h = NULL;
    struct crawl_job *j = NULL;
    int rc;
    if (!key)
        return CRAWL_ENOMEM;
    snprintf(key, n, "\1S%s", p->norm);
    if ((rc = frontier__seen_add(f, key)) <= 0)
        goto out;
    rc = CRAWL_ENOMEM;
    if (!(h = frontier__host_get(f, p->key)) || !(j = job_new()) ||
        !(j->url = strdup(p->href)) || !(j->scope = strdup(scope)))
        goto out;
    j->kind = JOB_SITEMAP;
    j->depth = level;
    frontier__host_enqueue(f, h, j);
    j = NULL;
    rc = 0;
out:
    job_free(j);
    free(key);
    return rc;
}

void frontier__maps_free(struct url_parts *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        url_parts_free(&v[i]);
    free(v);
}

void frontier__maps_give(struct crawl_host *h, struct url_parts **maps, size_t *n)
{
    frontier__maps_free(h->maps, h->nmaps);
    h->maps = *maps;
    h->nmaps = *n;
    *maps = NULL;
    *n = 0;
}

void frontier__sitemap_maps(const struct robots *r, const char *key, struct url_parts **maps,
                            size_t *n)
{
    char *const *urls;
    size_t nu = robots_sitemaps(r, &urls);
    *n = 0;
    if (!(*maps = calloc(nu ? nu : 1, sizeof **maps)))
        return;
    for (size_t i = 0; i < nu; i++)
        if (url_split(urls[i], &(*maps)[*n]) == 0)
            (*n)++;     /* not an http(s) URL, or out of memory: skipped */
    if (nu == 0) {
        size_t len = strlen(key) + sizeof "/sitemap.xml";
        char *u = malloc(len);
        if (u) {
            snprintf(u, len, "%s/sitemap.xml", key);
            if (url_split(u, &(*maps)[0]) == 0)
                *n = 1;
            free(u);
        }
    }
    if (*n == 0) {
        free(*maps);
        *maps = NULL;
    }
}

void frontier__sitemaps_start(struct frontier *f, struct crawl_host *h)
{
    for (size_t i = 0; i < h->nmaps; i++)
        sitemap_queue(f, &h->maps[i], h->scope, 0);
    frontier__maps_free(h->maps, h->nmaps);
    h->maps = NULL;
    h->nmaps = 0;
}

/* A sitemap job is back: its page URLs join the crawl at depth 0, under
 * the rules a link's pass (scope, --include, --exclude, the seen set,
 * robots.txt, --max-pages), or went to the store already
 * (frontier_prepare); the sitemaps an index lists (split by
 * frontier_prepare) are read next. */
void frontier__sitemap_done(struct frontier *f, struct crawl_job *j)
{
    if (j->stored)
        frontier__store_sent(f, j->stored == 2, j->store_rc != 0);
    else
        frontier__admit_links(f, j, 0, 0);
    for (size_t i = 0; i < j->nmaps && !frontier__cancelled(f); i++)
        sitemap_queue(f, &j->maps[i], j->scope, 1);
    frontier__maps_free(j->maps, j->nmaps);
    j->maps = NULL;
    j->nmaps = 0;
    free(j->body);
    j->body = NULL;
}

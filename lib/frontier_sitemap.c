/* frontier_sitemap.c: --sitemaps. When a listed host's robots.txt is in,
 * the sitemaps its Sitemap lines name (or /sitemap.xml) are queued as
 * internal jobs on their hosts, paced as pages are; fetch.c reads each as
 * it arrives (sitemap.c), and the URLs it gives join the crawl here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontier_internal.h"
#include "frontier.h"
#include "robots.h"
#include "url.h"

/* Queues a sitemap job for url, read for the listed URLs of host scope;
 * level 0 for a sitemap robots.txt names (or /sitemap.xml), 1 for one an
 * index lists. Each sitemap is read once. Returns 0 or CRAWL_ENOMEM. */
static int sitemap_queue(struct frontier *f, const char *url, const char *scope, int level)
{
    struct url_parts p;
    int rc = url_split(url, &p);
    if (rc != 0)
        return rc == CRAWL_ENOMEM ? rc : 0;     /* not an http(s) URL: skipped */
    /* Seen apart from the pages: a page and a sitemap may share a URL. */
    size_t n = strlen(p.norm) + 3;
    char *key = malloc(n);
    struct crawl_host *h = NULL;
    struct crawl_job *j = NULL;
    if (!key) {
        rc = CRAWL_ENOMEM;
        goto out;
    }
    snprintf(key, n, "\1S%s", p.norm);
    if ((rc = frontier__seen_add(f, key)) <= 0)
        goto out;
    rc = CRAWL_ENOMEM;
    if (!(h = frontier__host_get(f, p.key)) || !(j = job_new()) || !(j->url = strdup(p.href)) ||
        !(j->scope = strdup(scope)))
        goto out;
    j->kind = JOB_SITEMAP;
    j->depth = level;
    frontier__host_enqueue(f, h, j);
    j = NULL;
    rc = 0;
out:
    job_free(j);
    free(key);
    url_parts_free(&p);
    return rc;
}

/* The robots.txt of listed host h is in: its Sitemap lines are read, or
 * /sitemap.xml when it has none. */
void frontier__sitemaps_start(struct frontier *f, struct crawl_host *h, const struct robots *r)
{
    char *const *urls;
    size_t n = robots_sitemaps(r, &urls);
    for (size_t i = 0; i < n; i++)
        sitemap_queue(f, urls[i], h->scope, 0);
    if (n == 0) {
        size_t len = strlen(h->key) + sizeof "/sitemap.xml";
        char *u = malloc(len);
        if (u) {
            snprintf(u, len, "%s/sitemap.xml", h->key);
            sitemap_queue(f, u, h->scope, 0);
            free(u);
        }
    }
}

/* A sitemap job is back: its page URLs join the crawl at depth 0, under
 * the rules a link's pass (scope, --include, --exclude, the seen set,
 * robots.txt, --max-pages); the sitemaps an index lists are read next,
 * unless the index was itself listed in one (the protocol nests no
 * deeper). */
void frontier__sitemap_done(struct frontier *f, struct crawl_job *j)
{
    frontier__admit_links(f, j, 0, 0);
    for (char *line = j->body, *nl; line && *line && j->depth == 0 && !frontier__cancelled(f);
         line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break;
        *nl = '\0';
        sitemap_queue(f, line, j->scope, 1);
    }
    free(j->body);
    j->body = NULL;
}

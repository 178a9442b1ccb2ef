/* bench_url.c: what the URL module costs per link, the work a page's link
 * takes on its way into the frontier: url_clean and url_resolve against the
 * page's base (lib/html.c), then url_split (lib/frontier.c's admission). Two sets of links: a page's
 * worth of the usual kinds (relative, absolute, query, fragment, other
 * schemes), and every case of testdata/wpt/urltestdata.json with an http(s)
 * base or input. Prints the median of 5 runs in nanoseconds per link; it
 * asserts nothing (scripts/bench-url.sh runs it). Uses only calls that every
 * version of url.h has had, so that older trees can be measured with it.
 * Run from the top of the tree, or give the data file's path. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "url.h"

struct link {
    char *href, *base;
    struct url_base *b;         /* made before the timing: a page makes its base once */
};

static struct link *links;
static size_t nlinks, caplinks;

static void add(const char *href, const char *base)
{
    if (nlinks == caplinks) {
        caplinks = caplinks ? 2 * caplinks : 256;
        links = realloc(links, caplinks * sizeof *links);
    }
    links[nlinks].href = strdup(href);
    links[nlinks].base = base ? strdup(base) : NULL;
    nlinks++;
}

/* A page's links: what the fixture's generated pages and ordinary sites
 * hold, in about the proportions a crawl meets them. */
static void page_links(void)
{
    static const char *const forms[] = {
        "/graph/1000/10/%d", "../10/%d", "item-%d.html", "./sub/%d/", "/search?q=w%d&page=2",
        "https://www.example.com/dir/%d#section", "//cdn.example.net/img/%d.png",
        "#top%d", "?sort=%d", "https://other.example.org/a/b/c/%d?x=1&y=2",
        "mailto:page-%d@example.invalid", "javascript:void(%d)",
        "/caf\xc3\xa9/%d", "http://EXAMPLE.com:80/%%7e/%d", "  /spaced %d.html  ",
    };
    char buf[256];
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof buf, forms[i % (sizeof forms / sizeof *forms)], i);
        add(buf, "https://www.example.com/dir/page.html?x=1");
    }
}

static int http(const char *s)
{
    return s && (strncasecmp(s, "http:", 5) == 0 || strncasecmp(s, "https:", 6) == 0);
}

static int wpt_links(const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, JSON_ALLOW_NUL, &err), *c;
    size_t i;
    if (!root) {
        fprintf(stderr, "bench_url: %s:%d: %s\n", path, err.line, err.text);
        return -1;
    }
    json_array_foreach(root, i, c) {
        const char *in = json_string_value(json_object_get(c, "input"));
        const char *base = json_string_value(json_object_get(c, "base"));
        const char *t = in;
        if (!in)
            continue;
        while (t && *t && (unsigned char)*t <= 0x20)
            t++;
        if (http(base) || http(t))
            add(in, base);
    }
    json_decref(root);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One pass over links[from, to): returns the links that made a URL. */
static size_t pass(size_t from, size_t to)
{
    size_t made = 0;
    for (size_t i = from; i < to; i++) {
        char *href = NULL, *url = NULL;
        struct url_parts p;
        if (url_clean(links[i].href, &href) == 0 && href &&
            url_resolve(links[i].b, href, &url) == 0 && url && url_split(url, &p) == 0) {
            made++;
            url_parts_free(&p);
        }
        free(url);
        free(href);
    }
    return made;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Times [from, to) over enough rounds for about 0.2 s; prints the median
 * of 5 such runs. */
static void measure(const char *name, size_t from, size_t to)
{
    double runs[5];
    size_t n = to - from, made = pass(from, to), rounds = 1;
    double t0 = now();
    pass(from, to);
    double once = now() - t0;
    if (once > 0)
        rounds = (size_t)(0.2 / once) + 1;
    for (int r = 0; r < 5; r++) {
        t0 = now();
        for (size_t k = 0; k < rounds; k++)
            pass(from, to);
        runs[r] = (now() - t0) / (double)(rounds * n) * 1e9;
    }
    qsort(runs, 5, sizeof *runs, cmp);
    printf("%-34s %6zu links %6zu URLs %9.0f ns/link (%.0f-%.0f)\n", name, n, made,
           runs[2], runs[0], runs[4]);
}

int main(int argc, char **argv)
{
    const char *data = argc > 1 ? argv[1] : "testdata/wpt/urltestdata.json";
    page_links();
    size_t page = nlinks;
    if (wpt_links(data) != 0)
        return 1;
    for (size_t i = 0; i < nlinks; i++)
        url_base_new(links[i].base, NULL, &links[i].b);
    printf("%-34s %6s %12s %17s\n", "set", "", "", "median of 5 (min-max)");
    measure("a page's links", 0, page);
    measure("urltestdata.json http(s) cases", page, nlinks);
    return 0;
}

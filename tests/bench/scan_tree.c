/* scan_tree.c: what the link scanner costs on a tree of real pages, away
 * from the network: every .html file under a folder is read into memory,
 * then each round parses all of them as a crawl does (lib/html.c with the
 * default rules, fed in pieces of 16 KiB as libcurl hands a body over) and
 * takes their links. Prints the files, the links a round and the fastest
 * and median round's seconds; it asserts nothing (scripts/bench-scan.sh
 * runs it). Uses only calls that every version of html.h has had, so that
 * older trees can be measured with it.
 *   scan_tree [DIR [ROUNDS]]   (default /usr/share/doc/python3.11/html, 15) */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "html.h"

#define PIECE 16384
#define MAX_ROUNDS 100

struct page {
    char *url, *body;
    size_t len;
};

static struct page *pages;
static size_t npages, cappages;
static size_t root_len;

static int add(const char *path, const struct stat *st, int type, struct FTW *w)
{
    size_t n = strlen(path);
    if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".html") != 0)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    if (npages == cappages) {
        cappages = cappages ? 2 * cappages : 512;
        if (!(pages = realloc(pages, cappages * sizeof *pages)))
            return -1;
    }
    struct page *p = &pages[npages];
    p->body = malloc((size_t)st->st_size + 1);
    p->len = p->body ? fread(p->body, 1, (size_t)st->st_size, f) : 0;
    fclose(f);
    if (!p->body || asprintf(&p->url, "http://127.0.0.1/docs%s", path + root_len) < 0)
        return -1;
    npages++;
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/usr/share/doc/python3.11/html";
    int rounds = argc > 2 ? atoi(argv[2]) : 15;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "scan_tree: ROUNDS is 1 to %d\n", MAX_ROUNDS);
        return 2;
    }
    root_len = strlen(dir);
    if (nftw(dir, add, 16, FTW_PHYS) != 0 || npages == 0) {
        fprintf(stderr, "scan_tree: no .html file read under %s\n", dir);
        return 1;
    }
    html_global_init();
    struct html_rules *rules;
    char err[256];
    if (html_rules_new(NULL, NULL, 0, &rules, err, sizeof err) != 0) {
        fprintf(stderr, "scan_tree: %s\n", err);
        return 1;
    }
    double t[MAX_ROUNDS];
    size_t links = 0;
    for (int k = 0; k < rounds; k++) {
        double start = now();
        links = 0;
        for (size_t i = 0; i < npages; i++) {
            struct html_page *pg = html_page_new(rules, pages[i].url);
            if (!pg)
                return 1;
            for (size_t at = 0; at < pages[i].len; at += PIECE)
                html_page_feed(pg, pages[i].body + at,
                               pages[i].len - at < PIECE ? pages[i].len - at : PIECE);
            struct html_links l;
            memset(&l, 0, sizeof l);
            html_page_finish(pg, pages[i].url, &l);
            links += l.nlinks;
            html_links_free(&l);
            html_page_free(pg);
        }
        t[k] = now() - start;
    }
    qsort(t, (size_t)rounds, sizeof *t, by_value);
    printf("%zu files, %zu links a round, %d rounds: fastest %.4f s, median %.4f s\n", npages,
           links, rounds, t[0], t[rounds / 2]);
    html_rules_free(rules);
    return 0;
}

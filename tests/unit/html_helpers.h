/* html_helpers.h: what the HTML module's unit tests share: reading test
 * pages, building rules, collecting links and extracts. Included by
 * test_html.c and test_html_rules.c only. */
#ifndef CRAWL_TEST_HTML_HELPERS_H
#define CRAWL_TEST_HTML_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "crawl.h"
#include "html.h"
#include "strbuf.h"

#define PAGE_URL "http://example.com/dir/page.html?p=1"

/* ---- helpers ---------------------------------------------------------- */

struct body {
    char *data;
    size_t len;
};

static __attribute__((unused)) struct body read_body(const char *path)
{
    struct body b = { NULL, 0 };
    FILE *f = fopen(path, "rb");
    long n;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    b.data = malloc((size_t)n + 1);
    assert_non_null(b.data);
    b.len = fread(b.data, 1, (size_t)n, f);
    assert_int_equal(b.len, (size_t)n);
    fclose(f);
    return b;
}

static __attribute__((unused)) struct html_rules *rules(const char *follow, const char *const *extract, int n)
{
    struct html_rules *r = NULL;
    char err[256];

    assert_int_equal(html_rules_new(follow, extract, n, &r, err, sizeof err), 0);
    assert_non_null(r);
    return r;
}

/* Parses data fed in pieces of step bytes (0: all at once), charset (NULL:
 * none) given as the HTTP Content-Type's. Returns html_page_finish's
 * result, with the page's output in *out. */
static __attribute__((unused)) int parse_steps(const struct html_rules *r, const char *url, const char *final,
                       const char *charset, const char *data, size_t len, size_t step,
                       struct html_links *out)
{
    struct html_page *p = html_page_new(r, url);
    int rc;

    assert_non_null(p);
    if (charset)
        assert_int_equal(html_page_set_charset(p, charset, strlen(charset)), 0);
    if (step == 0)
        step = len ? len : 1;
    for (size_t off = 0; off < len; off += step)
        assert_int_equal(html_page_feed(p, data + off, len - off < step ? len - off : step), 0);
    rc = html_page_finish(p, final, out);
    html_page_free(p);
    return rc;
}

static __attribute__((unused)) int parse_in_steps(const struct html_rules *r, const char *url, const char *final,
                          const char *data, size_t len, size_t step, struct html_links *out)
{
    return parse_steps(r, url, final, NULL, data, len, step, out);
}

/* Parses an HTML text with the default rules against url. */
static __attribute__((unused)) void parse_text(const char *html, const char *url, struct html_links *out)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    assert_int_equal(parse_in_steps(r, url, NULL, html, strlen(html), 0, out), 0);
    html_rules_free(r);
}

static __attribute__((unused)) void parse_file(const struct html_rules *r, const char *path, const char *url,
                       const char *final, size_t step, struct html_links *out)
{
    struct body b = read_body(path);
    assert_int_equal(parse_in_steps(r, url, final, b.data, b.len, step, out), 0);
    free(b.data);
}

static __attribute__((unused)) void assert_links(const struct html_links *l, const char *const *want, size_t n)
{
    for (size_t i = 0; i < l->nlinks && i < n; i++)
        if (strcmp(l->links[i], want[i]) != 0)
            fail_msg("link %zu: got \"%s\", want \"%s\"", i, l->links[i], want[i]);
    if (l->nlinks != n) {
        for (size_t i = 0; i < l->nlinks; i++)
            print_message("  got %s\n", l->links[i]);
        fail_msg("got %zu links, want %zu", l->nlinks, n);
    }
}

#define ASSERT_LINKS(l, ...) do { \
        static const char *const want_[] = { __VA_ARGS__ }; \
        assert_links((l), want_, sizeof want_ / sizeof want_[0]); \
    } while (0)

static __attribute__((unused)) void assert_extract(const struct html_links *l, size_t i, const char *name, const char *value)
{
    if (i >= l->nextracts)
        fail_msg("no value %zu (%zu values)", i, l->nextracts);
    assert_string_equal(l->extracts[i].name, name);
    assert_string_equal(l->extracts[i].value, value);
}

static __attribute__((unused)) int same_links(const struct html_links *a, const struct html_links *b)
{
    if (a->nlinks != b->nlinks || a->nextracts != b->nextracts || a->truncated != b->truncated)
        return 0;
    for (size_t i = 0; i < a->nlinks; i++)
        if (strcmp(a->links[i], b->links[i]) != 0)
            return 0;
    for (size_t i = 0; i < a->nextracts; i++)
        if (strcmp(a->extracts[i].name, b->extracts[i].name) != 0 ||
            strcmp(a->extracts[i].value, b->extracts[i].value) != 0)
            return 0;
    return 1;
}

static const char *const fixtures[] = {
    "testdata/html/links.html",        "testdata/html/base.html",
    "testdata/html/base-relative.html", "testdata/html/base-late.html",
    "testdata/html/broken.html",       "testdata/html/latin1.html",
    "testdata/html/utf8-bom.html",     "testdata/html/utf16le-bom.html",
    "testdata/html/binary.bin",        "testdata/html/bad-encoding.html",
    "testdata/site/cinema/index.html", "testdata/site/cinema/film/1.html",
};
#define NFIXTURES (sizeof fixtures / sizeof fixtures[0])
static __attribute__((unused)) struct body bodies[NFIXTURES];     /* the fixtures' bytes, read by main */

/* Reads the test pages, runs tests (n of them) and frees the pages. */
static __attribute__((unused)) int run_html_tests(const struct CMUnitTest *tests, size_t n)
{
    int rc;

    html_global_init();
    for (size_t i = 0; i < NFIXTURES; i++)
        bodies[i] = read_body(fixtures[i]);
    rc = _cmocka_run_group_tests("html", tests, n, NULL, NULL);
    for (size_t i = 0; i < NFIXTURES; i++)
        free(bodies[i].data);
    html_global_cleanup();
    return rc;
}

#endif

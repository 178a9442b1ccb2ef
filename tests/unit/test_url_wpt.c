/* test_url_wpt.c: the WHATWG URL test data (testdata/wpt/urltestdata.json,
 * from web-platform-tests; testdata/wpt/README.md names its source) run
 * through the path a page's links take in lib/html.c: the page URL made a
 * base by url_base_new, the href cleaned by url_clean (url_clean_n, which
 * url_clean calls, so that inputs holding NUL bytes come through whole) and
 * resolved by url_resolve. Every case with an http(s) base or an absolute http(s) input
 * must give what a browser gives: the data's href without its fragment, or
 * no link when the data says failure or the result is of another scheme.
 * Run from the top of the tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>

#include "crawl.h"
#include "url.h"

#define DATA "testdata/wpt/urltestdata.json"

/* Cases crawl would answer differently on purpose, each with its reason
 * (input, base or NULL, why). There are none: every case gives the
 * browser's answer. An entry whose case passes fails the test, so the list
 * cannot outlive its reasons. */
static const struct {
    const char *input, *base, *why;
} exceptions[] = {
    { NULL, NULL, NULL },
};

/* Is s, trimmed and without tabs and newlines as the URL parser takes it,
 * an absolute http or https URL by its scheme? */
static int http_input(const char *s, size_t n)
{
    char scheme[8];
    size_t k = 0;

    while (n > 0 && (unsigned char)*s <= 0x20) {
        s++;
        n--;
    }
    for (size_t i = 0; i < n && k < sizeof scheme - 1; i++)
        if (s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            scheme[k++] = s[i];
    scheme[k] = '\0';
    return strncasecmp(scheme, "http:", 5) == 0 || strncasecmp(scheme, "https:", 6) == 0;
}

static int http_url(const char *s)
{
    return s && (strncmp(s, "http:", 5) == 0 || strncmp(s, "https:", 6) == 0);
}

/* Writes s[0..n) to f with bytes outside printable ASCII escaped. */
static void put_escaped(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '\\')
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

static const char *exception_for(const char *input, size_t n, const char *base)
{
    for (size_t i = 0; exceptions[i].input; i++)
        if (strlen(exceptions[i].input) == n && memcmp(exceptions[i].input, input, n) == 0 &&
            (exceptions[i].base == base ||
             (base && exceptions[i].base && strcmp(exceptions[i].base, base) == 0)))
            return exceptions[i].why;
    return NULL;
}

/* Resolves one case as a page's link; returns the link (malloc'd) or NULL. */
static char *resolve(const char *input, size_t n, const char *base)
{
    struct url_base *b = NULL;
    char *href = NULL, *link = NULL;

    assert_int_equal(url_base_new(base, NULL, &b), 0);
    assert_int_equal(url_clean_n(input, n, &href), 0);
    if (href)
        assert_int_equal(url_resolve(b, href, &link), 0);
    free(href);
    url_base_free(b);
    return link;
}

static void every_case_with_an_http_base_or_input_resolves_as_in_a_browser(void **state)
{
    json_error_t jerr;
    json_t *root = json_load_file(DATA, JSON_ALLOW_NUL, &jerr), *c;
    size_t i, total = 0, passed = 0, excepted = 0, failed = 0;

    if (!root)
        fail_msg("%s:%d: %s", DATA, jerr.line, jerr.text);
    assert_true(json_is_array(root));
    json_array_foreach(root, i, c) {
        json_t *jin = json_object_get(c, "input"), *jbase = json_object_get(c, "base");
        if (!json_is_object(c) || !json_is_string(jin))
            continue;           /* a comment */
        const char *input = json_string_value(jin);
        size_t n = json_string_length(jin);
        const char *base = json_is_string(jbase) ? json_string_value(jbase) : NULL;
        if (!http_url(base) && !http_input(input, n))
            continue;
        total++;

        const char *href = json_string_value(json_object_get(c, "href"));
        char *want = NULL;
        if (!json_is_true(json_object_get(c, "failure")) && http_url(href)) {
            want = strdup(href);
            assert_non_null(want);
            want[strcspn(want, "#")] = '\0';
        }
        char *got = resolve(input, n, base);
        int same = want ? got && strcmp(got, want) == 0 : !got;
        const char *why = exception_for(input, n, base);

        if (same && !why) {
            passed++;
        } else if (!same && why) {
            excepted++;
        } else {
            failed++;
            fprintf(stderr, "%s: input \"", same ? "passes, but listed as an exception" : "differs");
            put_escaped(stderr, input, n);
            fprintf(stderr, "\" base %s: got %s, want %s\n", base ? base : "(none)",
                    got ? got : "no link", want ? want : "no link");
        }
        free(want);
        free(got);
    }
    json_decref(root);
    printf("urltestdata.json: %zu cases with an http(s) base or input: %zu pass, "
           "%zu known exceptions, %zu fail\n", total, passed, excepted, failed);
    assert_true(total > 400);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case_with_an_http_base_or_input_resolves_as_in_a_browser),
    };
    return cmocka_run_group_tests_name("url_wpt", tests, NULL, NULL);
}

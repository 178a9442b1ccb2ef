/* Unit tests for the sitemap reader: urlsets and indexes, white space and
 * CDATA around a <loc>, namespace prefixes, bodies fed in any pieces,
 * gzip-compressed ones, the protocol's 50,000-URL and 50 MiB limits, and
 * what is not a sitemap. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sitemap.h"

#define URLSET "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"

/* Feeds body in pieces of `piece` bytes (0: whole), ends it, and returns
 * the reader; *urls gets its URLs. */
static struct sitemap *read_all(const char *body, size_t len, size_t piece, char ***urls,
                                size_t *n)
{
    struct sitemap *s = sitemap_new("http://h/s.xml");
    assert_non_null(s);
    if (piece == 0)
        piece = len ? len : 1;
    for (size_t at = 0; at < len; at += piece)
        if (sitemap_feed(s, body + at, len - at < piece ? len - at : piece) != 0)
            break;
    assert_int_equal(sitemap_end(s), 0);
    *n = sitemap_take(s, urls);
    return s;
}

static void free_urls(char **urls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(urls[i]);
    free(urls);
}

static void test_a_urlset_gives_its_locs_trimmed_in_any_pieces(void **state)
{
    static const char body[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" URLSET "\n"
        "<url><loc>http://h/a</loc><lastmod>2024-01-01</lastmod></url>\n"
        "<url><priority>0.3</priority><loc>\n   http://h/b?x=1&amp;y=2  \n</loc></url>\n"
        "<url><loc><![CDATA[http://h/c]]></loc></url>\n"
        "<url><loc></loc></url><other><loc>http://h/not</loc></other>\n"
        "</urlset>\n";
    for (size_t piece = 0; piece <= 7; piece++) {
        char **urls;
        size_t n;
        struct sitemap *s = read_all(body, sizeof body - 1, piece, &urls, &n);
        assert_int_equal(n, 3);
        assert_string_equal(urls[0], "http://h/a");
        assert_string_equal(urls[1], "http://h/b?x=1&y=2");
        assert_string_equal(urls[2], "http://h/c");
        assert_false(sitemap_is_index(s));
        assert_null(sitemap_problem(s));
        free_urls(urls, n);
        sitemap_free(s);
    }
}

static void test_an_index_gives_its_sitemaps(void **state)
{
    static const char body[] =
        "<sm:sitemapindex xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
        "<sm:sitemap><sm:loc>http://h/1.xml</sm:loc></sm:sitemap>"
        "<sm:sitemap><sm:loc>http://h/2.xml.gz</sm:loc><sm:lastmod>2024</sm:lastmod></sm:sitemap>"
        "<sm:url><sm:loc>http://h/page</sm:loc></sm:url>"
        "</sm:sitemapindex>";
    char **urls;
    size_t n;
    struct sitemap *s = read_all(body, sizeof body - 1, 0, &urls, &n);
    assert_true(sitemap_is_index(s));
    assert_int_equal(n, 2);
    assert_string_equal(urls[0], "http://h/1.xml");
    assert_string_equal(urls[1], "http://h/2.xml.gz");
    free_urls(urls, n);
    sitemap_free(s);
}

/* Returns body gzip-compressed (malloc'd), its length in *out_len. */
static char *gzip(const char *body, size_t len, size_t *out_len)
{
    z_stream z = { 0 };
    size_t cap = compressBound((uLong)len) + 64;
    char *out = malloc(cap);
    assert_non_null(out);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)body;
    z.avail_in = (uInt)len;
    z.next_out = (unsigned char *)out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static void test_a_gzip_file_is_read_through_zlib_in_any_pieces(void **state)
{
    static const char body[] = URLSET "<url><loc>http://h/z1</loc></url>"
                               "<url><loc>http://h/z2</loc></url></urlset>";
    size_t glen;
    char *gz = gzip(body, sizeof body - 1, &glen);
    for (size_t piece = 0; piece <= 5; piece++) {
        char **urls;
        size_t n;
        struct sitemap *s = read_all(gz, glen, piece, &urls, &n);
        assert_int_equal(n, 2);
        assert_string_equal(urls[1], "http://h/z2");
        assert_null(sitemap_problem(s));
        free_urls(urls, n);
        sitemap_free(s);
    }
    free(gz);
}

static void test_past_50000_urls_the_rest_is_ignored(void **state)
{
    size_t cap = 64 * 50010 + 256, len = 0;
    char *body = malloc(cap);
    assert_non_null(body);
    len += (size_t)sprintf(body, URLSET);
    for (int i = 1; i <= 50010; i++)
        len += (size_t)sprintf(body + len, "<url><loc>http://h/%d</loc></url>\n", i);
    len += (size_t)sprintf(body + len, "</urlset>");
    char **urls;
    size_t n;
    struct sitemap *s = read_all(body, len, 4096, &urls, &n);
    assert_int_equal(n, SITEMAP_MAX_URLS);
    assert_string_equal(urls[n - 1], "http://h/50000");
    assert_string_equal(sitemap_problem(s), "more than 50,000 URLs: the rest ignored");
    free_urls(urls, n);
    sitemap_free(s);
    free(body);
}

static void test_past_50_mib_uncompressed_the_rest_is_ignored(void **state)
{
    size_t pad = (size_t)SITEMAP_MAX_BYTES, len = 0;
    char *body = malloc(pad + 256);
    assert_non_null(body);
    len += (size_t)sprintf(body, URLSET "<url><loc>http://h/1</loc></url>");
    memset(body + len, ' ', pad);
    len += pad;
    len += (size_t)sprintf(body + len, "<url><loc>http://h/2</loc></url></urlset>");
    size_t glen;
    char *gz = gzip(body, len, &glen);
    assert_true(glen < 1024 * 1024);    /* small on the wire: the limit is on what it holds */
    char **urls;
    size_t n;
    struct sitemap *s = read_all(gz, glen, 65536, &urls, &n);
    assert_int_equal(n, 1);
    assert_string_equal(urls[0], "http://h/1");
    assert_string_equal(sitemap_problem(s), "over 50 MiB: the rest ignored");
    free_urls(urls, n);
    sitemap_free(s);
    free(gz);
    free(body);
}

static void test_what_is_not_a_sitemap_gives_nothing_and_says_why(void **state)
{
    static const struct { const char *body, *problem; size_t n; } cases[] = {
        { "<html><body><loc>http://h/x</loc></body></html>",
          "not a sitemap (no urlset or sitemapindex)", 0 },
        { "not found\n", "not a sitemap (not XML)", 0 },
        { "", "not a sitemap (not XML)", 0 },
        { URLSET "<url><loc>http://h/ok</loc></url><url><loc>http://h/x</url>",
          "not well-formed XML at line 1: the rest ignored", 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char **urls;
        size_t n;
        struct sitemap *s = read_all(cases[i].body, strlen(cases[i].body), 0, &urls, &n);
        assert_int_equal(n, cases[i].n);
        assert_non_null(sitemap_problem(s));
        assert_string_equal(sitemap_problem(s), cases[i].problem);
        free_urls(urls, n);
        sitemap_free(s);
    }
}

static void test_a_loc_of_2048_characters_or_more_is_skipped(void **state)
{
    char body[8192];
    char loc[2100];
    memset(loc, 'a', sizeof loc - 1);
    loc[sizeof loc - 1] = '\0';
    snprintf(body, sizeof body, URLSET "<url><loc>http://h/%s</loc></url>"
             "<url><loc>http://h/short</loc></url></urlset>", loc);
    char **urls;
    size_t n;
    struct sitemap *s = read_all(body, strlen(body), 0, &urls, &n);
    assert_int_equal(n, 1);
    assert_string_equal(urls[0], "http://h/short");
    free_urls(urls, n);
    sitemap_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_urlset_gives_its_locs_trimmed_in_any_pieces),
        cmocka_unit_test(test_an_index_gives_its_sitemaps),
        cmocka_unit_test(test_a_gzip_file_is_read_through_zlib_in_any_pieces),
        cmocka_unit_test(test_past_50000_urls_the_rest_is_ignored),
        cmocka_unit_test(test_past_50_mib_uncompressed_the_rest_is_ignored),
        cmocka_unit_test(test_what_is_not_a_sitemap_gives_nothing_and_says_why),
        cmocka_unit_test(test_a_loc_of_2048_characters_or_more_is_skipped),
    };
    return cmocka_run_group_tests_name("sitemap", tests, NULL, NULL);
}

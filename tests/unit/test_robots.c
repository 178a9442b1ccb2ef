/* Unit tests for robots.txt: group selection by product token, longest
 * match, wildcards, percent-encoding, byte order marks and line ends; then
 * every case of Google's robots.txt test suite, as transcribed in
 * testdata/robots/google-robotstxt-cases.json (its README names the source).
 * Run from the top of the tree. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"
#include "url.h"

#define GOOGLE_CASES "testdata/robots/google-robotstxt-cases.json"

static struct robots *parse(const char *text)
{
    struct robots *r = robots_parse(text, strlen(text), "crawl");
    assert_non_null(r);
    return r;
}

static void test_star_group_applies_when_none_names_us(void **state)
{
    struct robots *r = parse("User-agent: *\nDisallow: /site/private/\n");
    assert_true(robots_allowed(r, "/site/index.html"));
    assert_false(robots_allowed(r, "/site/private/secret.html"));
    assert_true(robots_allowed(r, "/site/privatex"));
    robots_free(r);
}

static void test_a_group_naming_us_replaces_the_star_group(void **state)
{
    struct robots *r = parse("User-agent: *\nDisallow: /\n\n"
                             "User-agent: other\nUser-agent: CRAWL\nDisallow: /no\n");
    assert_true(robots_allowed(r, "/yes"));
    assert_false(robots_allowed(r, "/no/x"));
    robots_free(r);
}

static void test_longest_match_wins_and_allow_wins_ties(void **state)
{
    struct robots *r = parse("user-agent: *\ndisallow: /a\nallow: /a/b\n"
                             "disallow: /c/\nallow: /c/\n");
    assert_false(robots_allowed(r, "/a/x"));
    assert_true(robots_allowed(r, "/a/b/c"));
    assert_true(robots_allowed(r, "/c/d"));
    robots_free(r);
}

static void test_wildcards_and_end_anchor(void **state)
{
    struct robots *r = parse("User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp*/x\n");
    assert_false(robots_allowed(r, "/docs/a.pdf"));
    assert_true(robots_allowed(r, "/docs/a.pdf?x=1"));
    assert_false(robots_allowed(r, "/tmp123/x/y"));
    assert_true(robots_allowed(r, "/tmp/y"));
    robots_free(r);
}

static void test_empty_disallow_comments_and_garbage_are_harmless(void **state)
{
    struct robots *r = parse("# hello\n\x01\x02 garbage line\nUser-agent: * # all\n"
                             "Disallow:\nSitemap: http://x/s.xml\nCrawl-delay: 5\r\n");
    assert_true(robots_allowed(r, "/anything"));
    robots_free(r);
}

static void test_a_utf8_byte_order_mark_is_skipped(void **state)
{
    struct robots *r = parse("\xEF\xBB\xBFUser-agent: *\nDisallow: /private/\n");
    assert_false(robots_allowed(r, "/private/x"));
    assert_true(robots_allowed(r, "/public"));
    robots_free(r);
}

static void test_cr_lf_and_crlf_all_end_lines(void **state)
{
    static const char *const texts[] = {
        "User-agent: *\rDisallow: /private/\rDisallow: /tmp/\r",
        "User-agent: *\r\nDisallow: /private/\r\nDisallow: /tmp/",
        "User-agent: *\nDisallow: /private/\r\nDisallow: /tmp/\r",
        "\xEF\xBB\xBFUser-agent: *\r\rDisallow: /private/\n\rDisallow: /tmp/",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        struct robots *r = parse(texts[i]);
        assert_false(robots_allowed(r, "/private/x"));
        assert_false(robots_allowed(r, "/tmp/y"));
        assert_true(robots_allowed(r, "/public"));
        robots_free(r);
    }
}

static void test_a_cr_only_file_keeps_its_groups_apart(void **state)
{
    struct robots *r = parse("User-agent: other\rDisallow: /\r\rUser-agent: crawl\rDisallow: /no\r");
    assert_true(robots_allowed(r, "/yes"));
    assert_false(robots_allowed(r, "/no/x"));
    robots_free(r);
}

static void test_a_mark_alone_or_in_the_middle_is_not_a_rule(void **state)
{
    struct robots *r = robots_parse("\xEF\xBB", 2, "crawl");
    assert_non_null(r);
    assert_true(robots_allowed(r, "/x"));
    robots_free(r);
    /* Only a leading mark is skipped: one before a later line spoils it. */
    r = parse("User-agent: *\n\xEF\xBB\xBF" "Disallow: /private/\n");
    assert_true(robots_allowed(r, "/private/x"));
    robots_free(r);
}

static void test_a_leading_mark_cut_short_is_skipped_too(void **state)
{
    struct robots *r = parse("\xEF\xBBUser-agent: *\nDisallow: /private/\n");
    assert_false(robots_allowed(r, "/private/x"));
    robots_free(r);
    r = parse("\xEFUser-agent: *\nDisallow: /private/\n");
    assert_false(robots_allowed(r, "/private/x"));
    robots_free(r);
}

static void test_a_user_agent_line_names_its_product_token(void **state)
{
    static const char *const lines[] = {
        "crawl", "CRAWL", "crawl/1.0", "Crawl/0.1.0 (+https://example.org/bot)", "crawl bot", "crawl*",
        "crawl2",               /* the token stops at the digit, as in Google's parser */
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char text[256];
        snprintf(text, sizeof text, "User-agent: *\nDisallow: /\n\nUser-agent: %s\nDisallow: /no\n",
                 lines[i]);
        struct robots *r = parse(text);
        if (!robots_allowed(r, "/yes"))
            fail_msg("\"User-agent: %s\" is not taken as crawl's", lines[i]);
        assert_false(robots_allowed(r, "/no"));
        robots_free(r);
    }
    /* Another token, even one crawl's is a prefix of, is another crawler. */
    static const char *const others[] = { "crawler", "crawl_x", "my-crawl", "/crawl" };
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        char text[256];
        snprintf(text, sizeof text, "User-agent: *\nDisallow: /\n\nUser-agent: %s\nDisallow: /no\n",
                 others[i]);
        struct robots *r = parse(text);
        if (robots_allowed(r, "/yes"))
            fail_msg("\"User-agent: %s\" is taken as crawl's", others[i]);
        robots_free(r);
    }
}

static void test_product_tokens_are_letters_dashes_and_underscores(void **state)
{
    assert_int_equal(robots_token_len("crawl/0.1.0"), 5);
    assert_int_equal(robots_token_len("my_bot-2"), 7);
    assert_int_equal(robots_token_len("1bot"), 0);
    assert_true(robots_agent_valid("my-bot_x"));
    assert_false(robots_agent_valid("crawl/1.0"));
    assert_false(robots_agent_valid(""));
}

static void test_rules_and_paths_compare_with_one_spelling_of_escapes(void **state)
{
    /* Paths are url_split's; rules are brought to the same form. */
    struct robots *r = parse("User-agent: *\nDisallow: /\xc3\xa1\nDisallow: /%aa\n"
                             "Disallow: /%62%61%7A\nDisallow: /x%2fy\n");
    assert_false(robots_allowed(r, "/%C3%A1"));
    assert_false(robots_allowed(r, "/%AA"));
    assert_false(robots_allowed(r, "/baz"));
    assert_false(robots_allowed(r, "/x%2Fy"));
    assert_true(robots_allowed(r, "/x/y"));
    assert_true(robots_allowed(r, "/a"));
    robots_free(r);
}

/* ---- Google's test suite, as data ------------------------------------------ */

/* The body of a case: "robots", or the bytes of "robots_hex" (malloc'd in
 * *buf). */
static const char *case_body(json_t *c, char **buf, size_t *len)
{
    const char *hex = json_string_value(json_object_get(c, "robots_hex"));
    json_t *text = json_object_get(c, "robots");

    *buf = NULL;
    if (!hex) {
        assert_true(json_is_string(text));
        *len = json_string_length(text);
        return json_string_value(text);
    }
    *len = strlen(hex) / 2;
    *buf = malloc(*len + 1);
    assert_non_null(*buf);
    for (size_t i = 0; i < *len; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        (*buf)[i] = (char)v;
    }
    return *buf;
}

static json_t *google_cases(const char *key)
{
    json_error_t err;
    json_t *root = json_load_file(GOOGLE_CASES, 0, &err);
    if (!root)
        fail_msg("%s:%d: %s", GOOGLE_CASES, err.line, err.text);
    json_t *v = json_incref(json_object_get(root, key));
    json_decref(root);
    assert_true(json_is_array(v));
    return v;
}

static void test_every_case_of_googles_suite(void **state)
{
    json_t *cases = google_cases("cases"), *c;
    size_t i, failed = 0, differ = 0;

    json_array_foreach(cases, i, c) {
        char *buf;
        size_t len;
        const char *body = case_body(c, &buf, &len);
        const char *agent = json_string_value(json_object_get(c, "agent"));
        const char *url = json_string_value(json_object_get(c, "url"));
        struct url_parts p;
        struct robots *r = robots_parse(body, len, agent);

        assert_non_null(r);
        assert_int_equal(url_split(url, &p), 0);
        int got = robots_allowed(r, p.path), want = json_is_true(json_object_get(c, "allowed"));
        if (got != want) {
            failed++;
            fprintf(stderr, "%s: agent %s, %s: got %s, want %s\n",
                    json_string_value(json_object_get(c, "test")), agent, url,
                    got ? "allowed" : "disallowed", want ? "allowed" : "disallowed");
        }
        if (json_object_get(c, "google")) {
            differ++;
            assert_non_null(json_string_value(json_object_get(c, "why")));
        }
        url_parts_free(&p);
        robots_free(r);
        free(buf);
    }
    printf("%s: %zu cases, %zu as crawl expects (%zu of them where Google's "
           "parser answers otherwise, each with its reason), %zu fail\n",
           GOOGLE_CASES, json_array_size(cases), json_array_size(cases) - failed, differ, failed);
    json_decref(cases);
    assert_int_equal(failed, 0);
}

static void test_googles_product_tokens_paths_and_patterns(void **state)
{
    json_t *v, *c;
    size_t i;

    v = google_cases("agent_tokens");
    json_array_foreach(v, i, c) {
        const char *agent = json_string_value(json_object_get(c, "agent"));
        if (robots_agent_valid(agent) != json_is_true(json_object_get(c, "valid")))
            fail_msg("product token \"%s\"", agent);
    }
    json_decref(v);

    v = google_cases("paths");
    json_array_foreach(v, i, c) {
        struct url_parts p;
        assert_int_equal(url_split(json_string_value(json_object_get(c, "url")), &p), 0);
        assert_string_equal(p.path, json_string_value(json_object_get(c, "path")));
        url_parts_free(&p);
    }
    json_decref(v);

    v = google_cases("patterns");
    json_array_foreach(v, i, c) {
        json_t *in = json_object_get(c, "pattern");
        char *out = NULL;
        assert_int_equal(url_norm_escapes(json_string_value(in), json_string_length(in), &out), 0);
        assert_string_equal(out, json_string_value(json_object_get(c, "normal")));
        free(out);
    }
    json_decref(v);
}

static void test_all_and_nothing(void **state)
{
    struct robots *yes = robots_all(1), *no = robots_all(0);
    assert_true(robots_allowed(yes, "/x"));
    assert_false(robots_allowed(no, "/x"));
    assert_false(robots_allowed(no, "/"));
    robots_free(yes);
    robots_free(no);
}

static void test_many_stars_do_not_take_exponential_time(void **state)
{
    struct robots *r = parse("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*b$\n");
    char path[4096];
    memset(path, 'a', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    assert_true(robots_allowed(r, path));
    robots_free(r);
}

static void test_crawl_delay_belongs_to_the_group_that_applies(void **state)
{
    struct robots *r = parse("User-agent: other\nCrawl-delay: 9\n\nUser-agent: *\n"
                             "Crawl-delay: 2.5\nCrawl-delay: 7\nDisallow: /x\n");
    assert_true(robots_crawl_delay(r) == 2.5);
    assert_false(robots_allowed(r, "/x"));
    robots_free(r);
    r = parse("User-agent: *\nCrawl-delay: 3\nUser-agent: crawl\nCrawl-delay: 1\n");
    assert_true(robots_crawl_delay(r) == 1);
    robots_free(r);
    r = parse("User-agent: *\nCrawl-delay: soon\nCrawl-delay: -1\nDisallow: /a\n");
    assert_true(robots_crawl_delay(r) == -1);
    robots_free(r);
    assert_true(robots_crawl_delay(NULL) == -1);
}

static void test_sitemap_lines_are_kept_whatever_their_group(void **state)
{
    struct robots *r = parse("Sitemap: http://h/a.xml\nUser-agent: other\nDisallow: /\n"
                             "sitemap:http://h/b.xml.gz # second\nSITEMAP:   \nUser-agent: *\n"
                             "Disallow: /p\n");
    char *const *urls;
    assert_int_equal(robots_sitemaps(r, &urls), 2);
    assert_string_equal(urls[0], "http://h/a.xml");
    assert_string_equal(urls[1], "http://h/b.xml.gz");
    assert_false(robots_allowed(r, "/p"));
    assert_true(robots_allowed(r, "/q"));
    robots_free(r);
    r = robots_all(1);
    assert_int_equal(robots_sitemaps(r, &urls), 0);
    robots_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_star_group_applies_when_none_names_us),
        cmocka_unit_test(test_a_group_naming_us_replaces_the_star_group),
        cmocka_unit_test(test_longest_match_wins_and_allow_wins_ties),
        cmocka_unit_test(test_wildcards_and_end_anchor),
        cmocka_unit_test(test_empty_disallow_comments_and_garbage_are_harmless),
        cmocka_unit_test(test_a_utf8_byte_order_mark_is_skipped),
        cmocka_unit_test(test_cr_lf_and_crlf_all_end_lines),
        cmocka_unit_test(test_a_cr_only_file_keeps_its_groups_apart),
        cmocka_unit_test(test_a_mark_alone_or_in_the_middle_is_not_a_rule),
        cmocka_unit_test(test_a_leading_mark_cut_short_is_skipped_too),
        cmocka_unit_test(test_a_user_agent_line_names_its_product_token),
        cmocka_unit_test(test_product_tokens_are_letters_dashes_and_underscores),
        cmocka_unit_test(test_rules_and_paths_compare_with_one_spelling_of_escapes),
        cmocka_unit_test(test_all_and_nothing),
        cmocka_unit_test(test_many_stars_do_not_take_exponential_time),
        cmocka_unit_test(test_crawl_delay_belongs_to_the_group_that_applies),
        cmocka_unit_test(test_sitemap_lines_are_kept_whatever_their_group),
        cmocka_unit_test(test_every_case_of_googles_suite),
        cmocka_unit_test(test_googles_product_tokens_paths_and_patterns),
    };
    return cmocka_run_group_tests_name("robots", tests, NULL, NULL);
}

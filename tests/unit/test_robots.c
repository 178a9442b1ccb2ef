/* Unit tests for robots.txt: group selection, longest match, wildcards,
 * byte order marks and line ends. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "robots.h"

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
        cmocka_unit_test(test_all_and_nothing),
        cmocka_unit_test(test_many_stars_do_not_take_exponential_time),
    };
    return cmocka_run_group_tests_name("robots", tests, NULL, NULL);
}

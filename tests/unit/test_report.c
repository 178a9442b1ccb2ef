/* Unit tests for the output: the article's row, JSON and CSV quoting, and
 * the orders rows come in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "crawl.h"
#include "report.h"

static void row_for(curl_off_t len, char *buf, size_t n)
{
    struct crawl_job j;
    memset(&j, 0, sizeof j);
    j.url = "u";
    j.res.length = len;
    report_row(&j, buf, n);
}

/* The expected strings are what Python prints for
 * "Length: {:^7d} URL: {}".format(n, "u"). */
static void test_row_centres_like_python(void **state)
{
    char buf[128];
    row_for(0, buf, sizeof buf);
    assert_string_equal(buf, "Length:    0    URL: u");
    row_for(227, buf, sizeof buf);
    assert_string_equal(buf, "Length:   227   URL: u");
    row_for(1024, buf, sizeof buf);
    assert_string_equal(buf, "Length:  1024   URL: u");
    row_for(12345, buf, sizeof buf);
    assert_string_equal(buf, "Length:  12345  URL: u");
    row_for(123456, buf, sizeof buf);
    assert_string_equal(buf, "Length: 123456  URL: u");
    row_for(1234567, buf, sizeof buf);
    assert_string_equal(buf, "Length: 1234567 URL: u");
    row_for(12345678, buf, sizeof buf);
    assert_string_equal(buf, "Length: 12345678 URL: u");
}

static void test_failed_row_shows_error_and_reason(void **state)
{
    struct crawl_job j;
    char buf[256];
    memset(&j, 0, sizeof j);
    j.url = "http://127.0.0.1:1/";
    j.res.fail = CRAWL_FAIL_CONNECT;
    j.res.error = "Couldn't connect to server";
    report_row(&j, buf, sizeof buf);
    assert_string_equal(buf, "Length:  error  URL: http://127.0.0.1:1/ (Couldn't connect to server)");
}

static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    fn(f, s);
    fclose(f);
    return out;
}

static void test_json_strings_are_escaped_and_valid_utf8(void **state)
{
    char *s = capture(report_json_str, "a\"b\\c\n\x01");
    assert_string_equal(s, "\"a\\\"b\\\\c\\u000a\\u0001\"");
    free(s);
    s = capture(report_json_str, "caf\xc3\xa9 \xff!");
    assert_string_equal(s, "\"caf\xc3\xa9 \\ufffd!\"");
    free(s);
    s = capture(report_json_str, NULL);
    assert_string_equal(s, "null");
    free(s);
}

static void test_csv_fields_are_quoted_when_needed(void **state)
{
    char *s = capture(report_csv_str, "plain");
    assert_string_equal(s, "plain");
    free(s);
    s = capture(report_csv_str, "a,b \"q\"");
    assert_string_equal(s, "\"a,b \"\"q\"\"\"");
    free(s);
}

static void test_use_time_has_two_decimals(void **state)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    report_use_time(f, 2.0456);
    fclose(f);
    assert_string_equal(out, "Use time: 2.05s\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_centres_like_python),
        cmocka_unit_test(test_failed_row_shows_error_and_reason),
        cmocka_unit_test(test_json_strings_are_escaped_and_valid_utf8),
        cmocka_unit_test(test_csv_fields_are_quoted_when_needed),
        cmocka_unit_test(test_use_time_has_two_decimals),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}

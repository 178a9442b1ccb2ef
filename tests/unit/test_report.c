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
#include "html.h"
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

static char *format(const struct crawl_job *j, enum crawl_format fmt, unsigned cols)
{
    struct strbuf b = {0};
    report_format(&b, j, fmt, cols);
    return b.data;
}

/* A fetched page over a reused plain-http connection, with links and one
 * extract rule that found two values. */
static void fetched(struct crawl_job *j, struct html_extract *ex)
{
    memset(j, 0, sizeof *j);
    j->url = "http://h/a";
    j->source = "list.txt";
    j->line = 3;
    j->res.final_url = "http://h/a";
    j->res.status = 200;
    j->res.length = 42;
    j->res.wire_bytes = 40;
    j->res.attempts = 1;
    j->res.worker = 7;
    j->res.start = 0.25;
    j->res.time_dns = 0.000010;
    j->res.time_ttfb = 0.002;
    j->res.time_total = 0.003;
    j->res.nlinks = 5;
    j->res.digest = "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5";
    ex[0].name = "t";
    ex[0].value = "x,y";
    ex[1].name = "t";
    ex[1].value = "\"q\"";
    j->res.extracts = ex;
    j->res.nextracts = 2;
}

static void test_json_row_has_every_column_in_order_with_nulls(void **state)
{
    struct crawl_job j;
    struct html_extract ex[2];
    fetched(&j, ex);
    char *s = format(&j, CRAWL_FMT_JSONL, REPORT_LINKS | REPORT_EXTRACT);
    assert_string_equal(s,
        "{\"url\":\"http://h/a\",\"source\":\"list.txt\",\"line\":3,\"depth\":0,"
        "\"final_url\":\"http://h/a\",\"status\":200,\"length\":42,\"wire_bytes\":40,"
        "\"redirects\":0,\"attempts\":1,\"worker\":7,\"start_s\":0.250000,"
        "\"time_dns_s\":0.000010,\"time_connect_s\":null,\"time_tls_s\":null,"
        "\"time_ttfb_s\":0.002000,\"time_total_s\":0.003000,\"links\":5,\"fail\":null,"
        "\"error\":null,\"extract\":{\"t\":[\"x,y\",\"\\\"q\\\"\"]},\"parent\":null,"
        "\"digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\",\"duplicate_of\":null,\"not_modified\":false}\n");
    free(s);
    /* Without parsing or --extract, links and extract do not apply. */
    s = format(&j, CRAWL_FMT_JSONL, 0);
    assert_non_null(strstr(s, ",\"links\":null,\"fail\":null,\"error\":null,\"extract\":null,"
                              "\"parent\":null,\"digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\",\"duplicate_of\":null,"
                              "\"not_modified\":false}\n"));
    free(s);
    /* A page found on another: its parent, after extract. */
    j.line = 0;
    j.depth = 1;
    j.parent = "http://h/from?x=\"1\"";
    s = format(&j, CRAWL_FMT_JSONL, 0);
    assert_non_null(strstr(s, ",\"extract\":null,\"parent\":\"http://h/from?x=\\\"1\\\"\","
                              "\"digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\",\"duplicate_of\":null,\"not_modified\":false}\n"));
    free(s);
    s = format(&j, CRAWL_FMT_CSV, 0);
    assert_non_null(strstr(s, ",,,,\"http://h/from?x=\"\"1\"\"\",sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5,,false\n"));
    free(s);
}

/* --dedupe: a duplicate names its first page; one at that page's own URL
 * was not parsed (fetch.c), so links and extract do not apply to it. */
static void test_a_duplicate_at_its_first_pages_url_has_no_links_or_extract(void **state)
{
    struct crawl_job j;
    struct html_extract ex[2];
    fetched(&j, ex);
    j.res.duplicate_of = "http://h/first";
    char *s = format(&j, CRAWL_FMT_JSONL, REPORT_LINKS | REPORT_EXTRACT);
    assert_non_null(strstr(s, ",\"links\":5,"));
    assert_non_null(strstr(s, "\"extract\":{\"t\""));
    assert_non_null(strstr(s, ",\"duplicate_of\":\"http://h/first\",\"not_modified\":false}\n"));
    free(s);
    j.res.duplicate_of = "http://h/a";
    j.res.nextracts = 0;
    s = format(&j, CRAWL_FMT_JSONL, REPORT_LINKS | REPORT_EXTRACT);
    assert_non_null(strstr(s, ",\"links\":null,\"fail\":null,\"error\":null,\"extract\":null,"
                              "\"parent\":null,\"digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\","
                              "\"duplicate_of\":\"http://h/a\",\"not_modified\":false}\n"));
    free(s);
}

static void test_csv_row_matches_the_json_columns(void **state)
{
    struct crawl_job j;
    struct html_extract ex[2];
    fetched(&j, ex);
    char *s = format(&j, CRAWL_FMT_CSV, REPORT_LINKS | REPORT_EXTRACT);
    assert_string_equal(s,
        "http://h/a,list.txt,3,0,http://h/a,200,42,40,0,1,7,0.250000,0.000010,,,0.002000,"
        "0.003000,5,,,\"{\"\"t\"\":[\"\"x,y\"\",\"\"\\\"\"q\\\"\"\"\"]}\",,"
        "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5,,false\n");
    free(s);
}

static void test_a_line_that_never_ran_has_no_status_worker_or_times(void **state)
{
    struct crawl_job j;
    memset(&j, 0, sizeof j);
    j.url = "not a url";
    j.source = "-";
    j.line = 2;
    j.res.fail = CRAWL_FAIL_INPUT;
    j.res.error = "bad";
    char *s = format(&j, CRAWL_FMT_JSONL, REPORT_LINKS);
    assert_string_equal(s,
        "{\"url\":\"not a url\",\"source\":\"-\",\"line\":2,\"depth\":0,\"final_url\":null,"
        "\"status\":null,\"length\":0,\"wire_bytes\":0,\"redirects\":0,\"attempts\":0,"
        "\"worker\":null,\"start_s\":null,\"time_dns_s\":null,\"time_connect_s\":null,"
        "\"time_tls_s\":null,\"time_ttfb_s\":null,\"time_total_s\":null,\"links\":null,"
        "\"fail\":\"input\",\"error\":\"bad\",\"extract\":null,\"parent\":null,"
        "\"digest\":null,\"duplicate_of\":null,\"not_modified\":null}\n");
    free(s);
    s = format(&j, CRAWL_FMT_CSV, REPORT_LINKS);
    assert_string_equal(s, "not a url,-,2,0,,,0,0,0,0,,,,,,,,,input,bad,,,,,\n");
    free(s);
    /* A page found by following a link has no source and no line. */
    j.line = 0;
    j.depth = 1;
    s = format(&j, CRAWL_FMT_CSV, 0);
    assert_string_equal(s, "not a url,,,1,,,0,0,0,0,,,,,,,,,input,bad,,,,,\n");
    free(s);
}

/* A 304 to a conditional request: not modified, no body, so no length;
 * not parsed, so neither links nor extract. */
static void test_a_304_row_is_not_modified_with_no_length(void **state)
{
    struct crawl_job j;
    struct html_extract ex[2];
    fetched(&j, ex);
    j.res.status = 304;
    j.res.not_modified = 1;
    j.res.length = 0;
    j.res.wire_bytes = 0;
    j.res.nlinks = 0;
    j.res.nextracts = 0;
    j.res.digest = NULL;      /* no body: nothing to digest */
    char *s = format(&j, CRAWL_FMT_JSONL, REPORT_LINKS | REPORT_EXTRACT);
    assert_non_null(strstr(s, "\"status\":304,\"length\":null,\"wire_bytes\":0,"));
    assert_non_null(strstr(s, "\"links\":null,\"fail\":null,\"error\":null,\"extract\":null,"
                              "\"parent\":null,\"digest\":null,\"duplicate_of\":null,"
                              "\"not_modified\":true}\n"));
    free(s);
    s = format(&j, CRAWL_FMT_CSV, REPORT_LINKS | REPORT_EXTRACT);
    assert_string_equal(s, "http://h/a,list.txt,3,0,http://h/a,304,,0,0,1,7,0.250000,0.000010,,,"
                           "0.002000,0.003000,,,,,,,,true\n");
    free(s);
}

/* The row's numbers are written without printf: each must be the text
 * printf's "%lld" and "%.6f" write, for every value a row can hold,
 * halves of a microsecond and values printf alone writes included. */
static void test_row_numbers_are_what_printf_writes(void **state)
{
    static const double fixed[] = {
        0, 1e-7, 4.99e-7, 5e-7, 5.01e-7, 1e-6, 0.0000015, 0.0000025, 0.1234565, 0.9999995,
        0.99999949, 1, 2.5e-6, 123.4567895, 999999.9999995, 1e6, 3.2e9, 4.5e15, -1.5, -0.0000004,
    };
    static const long long ints[] = { 0, 7, 10, 99, 100, 123456789, -1, -10, INT64_MAX, INT64_MIN };
    struct crawl_job j;
    struct html_extract ex[2];
    char want[64], *s;
    unsigned seed = 12345;
    for (size_t i = 0; i < 4000; i++) {
        fetched(&j, ex);
        double v;
        if (i < sizeof fixed / sizeof fixed[0]) {
            v = fixed[i];
        } else {
            seed = seed * 1103515245 + 12345;
            /* microseconds and their halves, then anything up to 10^4 s */
            v = i % 2 ? (seed % 100000000) / 1e6 + (i % 4 == 1 ? 5e-7 : 0)
                      : (seed / 65536.0) * (seed % 7 + 1) / 3e5;
        }
        j.res.time_total = v;
        j.res.length = ints[i % (sizeof ints / sizeof ints[0])];
        s = format(&j, CRAWL_FMT_JSONL, 0);
        snprintf(want, sizeof want, "\"time_total_s\":%.6f,", v);
        if (!strstr(s, want))
            fail_msg("%.17g: %s is not in %s", v, want, s);
        snprintf(want, sizeof want, "\"length\":%lld,", (long long)j.res.length);
        assert_non_null(strstr(s, want));
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_centres_like_python),
        cmocka_unit_test(test_a_304_row_is_not_modified_with_no_length),
        cmocka_unit_test(test_failed_row_shows_error_and_reason),
        cmocka_unit_test(test_json_strings_are_escaped_and_valid_utf8),
        cmocka_unit_test(test_csv_fields_are_quoted_when_needed),
        cmocka_unit_test(test_use_time_has_two_decimals),
        cmocka_unit_test(test_json_row_has_every_column_in_order_with_nulls),
        cmocka_unit_test(test_csv_row_matches_the_json_columns),
        cmocka_unit_test(test_a_duplicate_at_its_first_pages_url_has_no_links_or_extract),
        cmocka_unit_test(test_a_line_that_never_ran_has_no_status_worker_or_times),
        cmocka_unit_test(test_row_numbers_are_what_printf_writes),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}

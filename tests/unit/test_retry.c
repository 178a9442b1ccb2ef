/* Unit tests for --retry's rules: which failures are tried again, the
 * Retry-After header's two forms, and the backoff's bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fetch.h"
#include "retry.h"

/* 2026-11-30 12:00:00 UTC, a Monday. */
#define NOW ((time_t)1796040000)

static void test_retry_after_reads_delay_seconds(void **state)
{
    double s = -1;
    assert_int_equal(fetch_retry_after_parse("120", NOW, &s), 0);
    assert_true(s == 120);
    assert_int_equal(fetch_retry_after_parse(" 0 ", NOW, &s), 0);
    assert_true(s == 0);
}

static void test_retry_after_reads_the_three_http_date_forms(void **state)
{
    double s = -1;
    assert_int_equal(fetch_retry_after_parse("Mon, 30 Nov 2026 12:00:05 GMT", NOW, &s), 0);
    assert_true(s == 5);
    assert_int_equal(fetch_retry_after_parse("Monday, 30-Nov-26 12:01:00 GMT", NOW, &s), 0);
    assert_true(s == 60);
    assert_int_equal(fetch_retry_after_parse("Mon Nov 30 12:00:02 2026", NOW, &s), 0);
    assert_true(s == 2);
}

static void test_retry_after_in_the_past_means_now(void **state)
{
    double s = -1;
    assert_int_equal(fetch_retry_after_parse("Sun, 29 Nov 2026 12:00:00 GMT", NOW, &s), 0);
    assert_true(s == 0);
}

static void test_retry_after_that_is_neither_form_is_refused(void **state)
{
    double s = 7;
    assert_int_equal(fetch_retry_after_parse("-5", NOW, &s), -1);
    assert_int_equal(fetch_retry_after_parse("1.5", NOW, &s), -1);
    assert_int_equal(fetch_retry_after_parse("10 seconds", NOW, &s), -1);
    assert_int_equal(fetch_retry_after_parse("soon", NOW, &s), -1);
    assert_int_equal(fetch_retry_after_parse("", NOW, &s), -1);
    assert_true(s == 7);
}

static void test_backoff_doubles_and_draws_below_its_ceiling(void **state)
{
    /* u = 1 - epsilon shows the ceiling: base * 2^(attempt-1). */
    double u = 0.999999;
    assert_true(retry_wait(1, 30, 1, -1, u) < 1 && retry_wait(1, 30, 1, -1, u) > 0.999);
    assert_true(retry_wait(1, 30, 2, -1, u) < 2 && retry_wait(1, 30, 2, -1, u) > 1.999);
    assert_true(retry_wait(1, 30, 4, -1, u) < 8 && retry_wait(1, 30, 4, -1, u) > 7.99);
    assert_true(retry_wait(0.5, 30, 3, -1, 0.5) == 1.0);
    assert_true(retry_wait(1, 30, 1, -1, 0) == 0);
}

static void test_backoff_is_capped_by_the_max_delay(void **state)
{
    assert_true(retry_wait(1, 30, 10, -1, 0.999999) <= 30);
    assert_true(retry_wait(1, 30, 10, -1, 0.999999) > 29.99);
    assert_true(retry_wait(1, 30, 1000, -1, 0.5) == 15);
}

static void test_retry_after_replaces_the_backoff_and_is_capped(void **state)
{
    assert_true(retry_wait(1, 30, 3, 2, 0.1) == 2);
    assert_true(retry_wait(1, 30, 1, 0, 0.9) == 0);
    assert_true(retry_wait(1, 30, 1, 3600, 0.1) == 30);
}

static int transient(enum crawl_fail fail, long status)
{
    struct crawl_result r;
    memset(&r, 0, sizeof r);
    r.fail = fail;
    r.status = status;
    return job_transient(&r);
}

static void test_transient_failures_are_connect_timeout_recv_and_six_statuses(void **state)
{
    assert_true(transient(CRAWL_FAIL_CONNECT, 0));
    assert_true(transient(CRAWL_FAIL_TIMEOUT, 0));
    assert_true(transient(CRAWL_FAIL_RECV, 0));
    static const long yes[] = { 408, 429, 500, 502, 503, 504 };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        assert_true(transient(CRAWL_FAIL_NONE, yes[i]));
        assert_true(transient(CRAWL_FAIL_HTTP, yes[i]));    /* --fail */
    }
}

static void test_permanent_failures_are_not_retried(void **state)
{
    static const long no[] = { 200, 301, 400, 403, 404, 410, 501, 505 };
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_false(transient(CRAWL_FAIL_NONE, no[i]));
    assert_false(transient(CRAWL_FAIL_DNS, 0));
    assert_false(transient(CRAWL_FAIL_TLS, 0));
    assert_false(transient(CRAWL_FAIL_TOO_LARGE, 200));
    assert_false(transient(CRAWL_FAIL_CANCELLED, 0));
    assert_false(transient(CRAWL_FAIL_INPUT, 0));
    /* A body cut off over --max-size is no 503 to wait out. */
    assert_false(transient(CRAWL_FAIL_TOO_LARGE, 503));
}

static void test_retry_after_counts_on_429_and_503_only(void **state)
{
    assert_true(fetch_retry_after_applies(429));
    assert_true(fetch_retry_after_applies(503));
    assert_false(fetch_retry_after_applies(500));
    assert_false(fetch_retry_after_applies(301));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_after_reads_delay_seconds),
        cmocka_unit_test(test_retry_after_reads_the_three_http_date_forms),
        cmocka_unit_test(test_retry_after_in_the_past_means_now),
        cmocka_unit_test(test_retry_after_that_is_neither_form_is_refused),
        cmocka_unit_test(test_backoff_doubles_and_draws_below_its_ceiling),
        cmocka_unit_test(test_backoff_is_capped_by_the_max_delay),
        cmocka_unit_test(test_retry_after_replaces_the_backoff_and_is_capped),
        cmocka_unit_test(test_transient_failures_are_connect_timeout_recv_and_six_statuses),
        cmocka_unit_test(test_permanent_failures_are_not_retried),
        cmocka_unit_test(test_retry_after_counts_on_429_and_503_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the trace's events: which slices a result gives, where
 * its phases start and end, and the tracks they go on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static struct crawl_job job(double start, double total, double end)
{
    struct crawl_job j;
    memset(&j, 0, sizeof j);
    j.url = "http://a.test/x";
    j.seq = 7;
    j.res.start = start;
    j.res.time_total = total;
    j.res.end = end;
    j.res.status = 200;
    j.res.length = 100;
    j.res.worker = 3;
    return j;
}

static int has(const struct strbuf *b, const char *s)
{
    return b->data && strstr(b->data, s) != NULL;
}

static size_t count(const struct strbuf *b, const char *s)
{
    size_t n = 0;
    for (const char *p = b->data; p && (p = strstr(p, s)); p++)
        n++;
    return n;
}

static void test_a_job_never_fetched_gives_no_event(void **state)
{
    struct crawl_job j = job(0, 0, 0);
    struct strbuf b = {0};
    trace_format(&b, &j, 1000, 0);
    assert_int_equal(b.len, 0);
    sb_free(&b);
}

static void test_phases_follow_libcurls_times_and_stay_inside_the_transfer(void **state)
{
    /* 12 ms by libcurl's clock, but the result was taken 11.5 ms after
     * the start: the slice ends there, and the body with it. */
    struct crawl_job j = job(1.0, 0.012, 1.0115);
    j.res.time_dns = 0.001;
    j.res.time_connect = 0.002;
    j.res.time_ttfb = 0.010;
    struct strbuf b = {0};
    trace_format(&b, &j, 1000, 0);
    assert_true(has(&b, "\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":1000,\"tid\":3,"
                        "\"ts\":1000000,\"dur\":11500"));
    assert_true(has(&b, "\"name\":\"dns\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":1000,"
                        "\"tid\":3,\"ts\":1000000,\"dur\":1000}"));
    assert_true(has(&b, "\"name\":\"connect\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":1000,"
                        "\"tid\":3,\"ts\":1001000,\"dur\":1000}"));
    assert_false(has(&b, "\"tls\""));
    assert_true(has(&b, "\"name\":\"waiting for the first byte\",\"cat\":\"phase\",\"ph\":\"X\","
                        "\"pid\":1000,\"tid\":3,\"ts\":1002000,\"dur\":8000}"));
    assert_true(has(&b, "\"name\":\"body\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":1000,"
                        "\"tid\":3,\"ts\":1010000,\"dur\":1500}"));
    assert_true(has(&b, "\"status\":200,\"length\":100,\"worker\":3,\"row\":7"));
    assert_int_equal(count(&b, "},\n"), 5);
    sb_free(&b);
}

static void test_a_transfer_without_a_first_byte_waits_to_its_end_and_says_why(void **state)
{
    struct crawl_job j = job(0.5, 0.030, 0.6);
    j.res.time_dns = 0.001;
    j.res.status = 0;
    j.res.fail = CRAWL_FAIL_TIMEOUT;
    j.res.error = "Operation timed out";
    struct strbuf b = {0};
    trace_format(&b, &j, 1000, 0);
    assert_true(has(&b, "\"name\":\"waiting for the first byte\",\"cat\":\"phase\",\"ph\":\"X\","
                        "\"pid\":1000,\"tid\":3,\"ts\":501000,\"dur\":29000}"));
    assert_false(has(&b, "\"body\""));
    assert_true(has(&b, "\"fail\":\"timeout\",\"error\":\"Operation timed out\""));
    sb_free(&b);
}

static void test_a_worker_process_has_a_track_of_its_own_and_counters_go_there(void **state)
{
    struct crawl_job j = job(0.25, 0.1, 0.35);
    j.res.worker = 2 * 1000000 + 4;
    j.res.flight_start = 3;
    j.res.flight_end = 2;
    j.res.conns_start = 1;
    j.res.conns_end = 2;
    struct strbuf b = {0};
    trace_format(&b, &j, 5000, 1);
    assert_true(has(&b, "\"ph\":\"X\",\"pid\":5003,\"tid\":2000004,\"ts\":250000,\"dur\":100000"));
    assert_true(has(&b, "{\"name\":\"transfers in flight\",\"ph\":\"C\",\"pid\":5003,"
                        "\"ts\":250000,\"args\":{\"transfers\":3}}"));
    assert_true(has(&b, "{\"name\":\"transfers in flight\",\"ph\":\"C\",\"pid\":5003,"
                        "\"ts\":350000,\"args\":{\"transfers\":2}}"));
    assert_true(has(&b, "{\"name\":\"connections open\",\"ph\":\"C\",\"pid\":5003,"
                        "\"ts\":350000,\"args\":{\"connections\":2}}"));
    sb_free(&b);
}

static void test_a_queued_job_waits_on_the_models_queue_track_until_it_starts(void **state)
{
    struct crawl_job j = job(0.4, 0.1, 0.5);
    j.res.queued = 0.1;
    struct strbuf b = {0};
    trace_format(&b, &j, 3000, 0);
    assert_true(has(&b, "{\"name\":\"queued\",\"cat\":\"queue\",\"ph\":\"b\",\"id\":7,"
                        "\"pid\":3000,\"tid\":0,\"ts\":100000}"));
    assert_true(has(&b, "{\"name\":\"queued\",\"cat\":\"queue\",\"ph\":\"e\",\"id\":7,"
                        "\"pid\":3000,\"tid\":0,\"ts\":400000}"));
    assert_true(has(&b, "\"queued_ms\":300.000"));
    sb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_job_never_fetched_gives_no_event),
        cmocka_unit_test(test_phases_follow_libcurls_times_and_stay_inside_the_transfer),
        cmocka_unit_test(test_a_transfer_without_a_first_byte_waits_to_its_end_and_says_why),
        cmocka_unit_test(test_a_worker_process_has_a_track_of_its_own_and_counters_go_there),
        cmocka_unit_test(test_a_queued_job_waits_on_the_models_queue_track_until_it_starts),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}

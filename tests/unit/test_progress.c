/* Unit tests for the progress line: what it says from the published
 * counters, its percent and ETA, and that it fits the terminal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "progress.h"

static void set(struct crawl_live *l, const char *mode, size_t done, size_t failed,
                size_t queued, size_t total, long xfers)
{
    memset(l, 0, sizeof *l);
    strcpy(l->mode, mode);
    atomic_store(&l->done, done);
    atomic_store(&l->failed, failed);
    atomic_store(&l->queued, queued);
    atomic_store(&l->total, total);
    atomic_store(&l->transfers, xfers);
    atomic_store(&l->t0_ns, 100LL * 1000000000LL);     /* started at t = 100 s */
}

static void test_nothing_before_the_run_starts(void **state)
{
    struct crawl_live l;
    memset(&l, 0, sizeof l);
    char buf[256] = "x";
    assert_int_equal(progress_format(&l, 5.0, 80, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

static void test_the_model_counts_percent_rate_and_eta(void **state)
{
    struct crawl_live l;
    set(&l, "pool", 250, 3, 40, 1000, 10);
    char buf[256];
    size_t n = progress_format(&l, 110.0, 200, buf, sizeof buf);
    assert_string_equal(buf, "pool: 250/1000 (25%) done, 10 in flight, 40 queued, 3 failed, "
                             "25/s, 10.0s, ETA 30.0s");
    assert_int_equal(n, strlen(buf));
}

static void test_no_total_no_percent_and_long_runs_in_minutes(void **state)
{
    struct crawl_live l;
    set(&l, "coro", 5000, 0, 900, 0, 100);
    char buf[256];
    progress_format(&l, 100.0 + 125.0, 200, buf, sizeof buf);
    assert_string_equal(buf, "coro: 5000 done, 100 in flight, 900 queued, 0 failed, 40/s, 2m05s");
}

static void test_the_line_fits_a_narrow_terminal(void **state)
{
    struct crawl_live l;
    set(&l, "procs", 1, 0, 0, 2, 1);
    char buf[256];
    size_t n = progress_format(&l, 101.0, 40, buf, sizeof buf);
    assert_int_equal(n, 39);
    assert_int_equal(strlen(buf), 39);
    assert_memory_equal(buf, "procs: 1/2 (50%) done, 1 in flight, 0 q", 39);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_before_the_run_starts),
        cmocka_unit_test(test_the_model_counts_percent_rate_and_eta),
        cmocka_unit_test(test_no_total_no_percent_and_long_runs_in_minutes),
        cmocka_unit_test(test_the_line_fits_a_narrow_terminal),
    };
    return cmocka_run_group_tests_name("progress", tests, NULL, NULL);
}

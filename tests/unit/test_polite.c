/* Unit tests for --auto-throttle's rule: a success moves a host's delay
 * halfway to its latency and never below it, an error doubles it, and the
 * delay stays within its floor (--delay, Crawl-delay) and its ceiling. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "polite.h"

#define near(a, b) assert_true((a) - (b) < 1e-9 && (b) - (a) < 1e-9)

static void test_a_first_success_sets_the_delay_to_the_latency(void **state)
{
    near(polite_throttle(0, 0.2, 0, 0, POLITE_MAX_DELAY), 0.2);
}

static void test_a_faster_answer_brings_the_delay_halfway_down(void **state)
{
    near(polite_throttle(1.0, 0.2, 0, 0, POLITE_MAX_DELAY), 0.6);
    near(polite_throttle(0.6, 0.2, 0, 0, POLITE_MAX_DELAY), 0.4);
}

static void test_a_slower_answer_raises_the_delay_to_its_latency_at_once(void **state)
{
    near(polite_throttle(0.2, 3.0, 0, 0, POLITE_MAX_DELAY), 3.0);
}

static void test_an_error_doubles_the_delay_from_half_a_second(void **state)
{
    near(polite_throttle(0, 0.001, 1, 0, POLITE_MAX_DELAY), POLITE_ERROR_DELAY);
    near(polite_throttle(0.5, 0.001, 1, 0, POLITE_MAX_DELAY), 1.0);
    near(polite_throttle(1.0, 4.0, 1, 0, POLITE_MAX_DELAY), 4.0);
}

static void test_the_delay_stays_between_floor_and_ceiling(void **state)
{
    near(polite_throttle(0, 0.01, 0, 0.3, POLITE_MAX_DELAY), 0.3);
    near(polite_throttle(40, 0.01, 1, 0, POLITE_MAX_DELAY), POLITE_MAX_DELAY);
    near(polite_throttle(0, 100, 0, 0, POLITE_MAX_DELAY), POLITE_MAX_DELAY);
    near(polite_throttle(0, -1, 0, 0, POLITE_MAX_DELAY), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_first_success_sets_the_delay_to_the_latency),
        cmocka_unit_test(test_a_faster_answer_brings_the_delay_halfway_down),
        cmocka_unit_test(test_a_slower_answer_raises_the_delay_to_its_latency_at_once),
        cmocka_unit_test(test_an_error_doubles_the_delay_from_half_a_second),
        cmocka_unit_test(test_the_delay_stays_between_floor_and_ceiling),
    };
    return cmocka_run_group_tests_name("polite", tests, NULL, NULL);
}

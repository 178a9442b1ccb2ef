/* test_future.c: the single-assignment future: set, wait, cancel, timed
 * wait, and waking waiters from other threads. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "future.h"

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int token;   /* its address is a value no future would produce by chance */

static void test_new_future_is_pending(void **state)
{
    struct future *f = future_new();
    void *v = &token;

    assert_non_null(f);
    assert_int_equal(future_done(f), 0);
    assert_int_equal(future_cancelled(f), 0);
    assert_int_equal(future_wait_for(f, 0, &v), -ETIMEDOUT);
    assert_ptr_equal(v, &token);   /* untouched on timeout */
    future_free(f);
}

static void test_set_then_wait_returns_value(void **state)
{
    struct future *f = future_new();

    assert_int_equal(future_set(f, &token), 0);
    assert_int_equal(future_done(f), 1);
    assert_int_equal(future_cancelled(f), 0);
    assert_ptr_equal(future_wait(f), &token);
    assert_ptr_equal(future_wait(f), &token);   /* waiting again is fine */
    future_free(f);
}

static void test_set_null_is_a_value_not_a_cancel(void **state)
{
    struct future *f = future_new();

    assert_int_equal(future_set(f, NULL), 0);
    assert_int_equal(future_done(f), 1);
    assert_int_equal(future_cancelled(f), 0);
    assert_null(future_wait(f));
    future_free(f);
}

struct delayed_set {
    struct future *f;
    long delay_ms;
    void *value;
    int cancel;   /* cancel instead of set */
    int rc;
};

static void *delayed_set_main(void *data)
{
    struct delayed_set *d = data;

    sleep_ms(d->delay_ms);
    d->rc = d->cancel ? future_cancel(d->f) : future_set(d->f, d->value);
    return NULL;
}

static void test_wait_blocks_until_set_from_another_thread(void **state)
{
    struct delayed_set d = { future_new(), 100, &token, 0, -1 };
    pthread_t t;
    long start, waited;
    void *v;

    assert_non_null(d.f);
    start = now_ms();
    assert_int_equal(pthread_create(&t, NULL, delayed_set_main, &d), 0);
    v = future_wait(d.f);
    waited = now_ms() - start;
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_ptr_equal(v, &token);
    assert_int_equal(d.rc, 0);
    assert_true(waited >= 90);   /* it really waited for the setter */
    future_free(d.f);
}

static void test_double_set_returns_ealready_and_keeps_first_value(void **state)
{
    struct future *f = future_new();
    int other;

    assert_int_equal(future_set(f, &token), 0);
    assert_int_equal(future_set(f, &other), -EALREADY);
    assert_int_equal(future_cancel(f), -EALREADY);
    assert_int_equal(future_cancelled(f), 0);
    assert_ptr_equal(future_wait(f), &token);
    future_free(f);
}

static void test_cancel_completes_with_null(void **state)
{
    struct future *f = future_new();
    void *v = &token;

    assert_int_equal(future_cancel(f), 0);
    assert_int_equal(future_done(f), 1);
    assert_int_equal(future_cancelled(f), 1);
    assert_null(future_wait(f));
    assert_int_equal(future_wait_for(f, 0, &v), 0);
    assert_null(v);
    assert_int_equal(future_cancel(f), -EALREADY);
    assert_int_equal(future_set(f, &token), -EALREADY);
    assert_null(future_wait(f));
    future_free(f);
}

static void test_cancel_from_another_thread_wakes_waiter(void **state)
{
    struct delayed_set d = { future_new(), 50, NULL, 1, -1 };
    pthread_t t;

    assert_int_equal(pthread_create(&t, NULL, delayed_set_main, &d), 0);
    assert_null(future_wait(d.f));
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(d.rc, 0);
    assert_int_equal(future_cancelled(d.f), 1);
    future_free(d.f);
}

static void test_wait_for_times_out_on_pending_future(void **state)
{
    struct future *f = future_new();
    void *v = &token;
    long start, waited;

    start = now_ms();
    assert_int_equal(future_wait_for(f, 150, &v), -ETIMEDOUT);
    waited = now_ms() - start;
    assert_ptr_equal(v, &token);
    assert_true(waited >= 150);
    assert_true(waited < 5000);
    assert_int_equal(future_done(f), 0);
    future_free(f);
}

static void test_wait_for_with_negative_timeout_does_not_wait(void **state)
{
    struct future *f = future_new();
    long start = now_ms();

    assert_int_equal(future_wait_for(f, -1, NULL), -ETIMEDOUT);
    assert_true(now_ms() - start < 100);
    future_free(f);
}

static void test_wait_for_returns_value_set_during_the_wait(void **state)
{
    struct delayed_set d = { future_new(), 50, &token, 0, -1 };
    pthread_t t;
    void *v = NULL;

    assert_int_equal(pthread_create(&t, NULL, delayed_set_main, &d), 0);
    assert_int_equal(future_wait_for(d.f, 10000, &v), 0);
    assert_ptr_equal(v, &token);
    assert_int_equal(pthread_join(t, NULL), 0);
    future_free(d.f);
}

static void test_wait_for_on_complete_future_returns_at_once(void **state)
{
    struct future *f = future_new();
    void *v = NULL;

    future_set(f, &token);
    assert_int_equal(future_wait_for(f, 0, &v), 0);
    assert_ptr_equal(v, &token);
    assert_int_equal(future_wait_for(f, 1000, NULL), 0);   /* value may be NULL */
    future_free(f);
}

#define NWAITERS 16

static void *waiter_main(void *data)
{
    return future_wait(data);
}

static void test_set_wakes_every_waiter(void **state)
{
    struct future *f = future_new();
    pthread_t t[NWAITERS];
    void *v;
    int i;

    for (i = 0; i < NWAITERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, waiter_main, f), 0);
    sleep_ms(20);
    assert_int_equal(future_set(f, &token), 0);
    for (i = 0; i < NWAITERS; i++) {
        assert_int_equal(pthread_join(t[i], &v), 0);
        assert_ptr_equal(v, &token);
    }
    future_free(f);
}

#define NRACERS 8

struct racer {
    struct future *f;
    pthread_barrier_t *go;
    intptr_t id;
    int rc;
};

static void *racer_main(void *data)
{
    struct racer *r = data;

    pthread_barrier_wait(r->go);
    r->rc = future_set(r->f, (void *)r->id);
    return NULL;
}

static void test_concurrent_sets_exactly_one_wins(void **state)
{
    struct racer r[NRACERS];
    pthread_t t[NRACERS];
    pthread_barrier_t go;
    struct future *f = future_new();
    int i, wins = 0;
    intptr_t winner = -1;

    pthread_barrier_init(&go, NULL, NRACERS);
    for (i = 0; i < NRACERS; i++) {
        r[i] = (struct racer){ f, &go, i + 1, 1 };
        assert_int_equal(pthread_create(&t[i], NULL, racer_main, &r[i]), 0);
    }
    for (i = 0; i < NRACERS; i++) {
        pthread_join(t[i], NULL);
        if (r[i].rc == 0) {
            wins++;
            winner = r[i].id;
        } else {
            assert_int_equal(r[i].rc, -EALREADY);
        }
    }
    pthread_barrier_destroy(&go);
    assert_int_equal(wins, 1);
    assert_int_equal((intptr_t)future_wait(f), winner);
    future_free(f);
}

static void test_free_null_is_harmless(void **state)
{
    future_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_future_is_pending),
        cmocka_unit_test(test_set_then_wait_returns_value),
        cmocka_unit_test(test_set_null_is_a_value_not_a_cancel),
        cmocka_unit_test(test_wait_blocks_until_set_from_another_thread),
        cmocka_unit_test(test_double_set_returns_ealready_and_keeps_first_value),
        cmocka_unit_test(test_cancel_completes_with_null),
        cmocka_unit_test(test_cancel_from_another_thread_wakes_waiter),
        cmocka_unit_test(test_wait_for_times_out_on_pending_future),
        cmocka_unit_test(test_wait_for_with_negative_timeout_does_not_wait),
        cmocka_unit_test(test_wait_for_returns_value_set_during_the_wait),
        cmocka_unit_test(test_wait_for_on_complete_future_returns_at_once),
        cmocka_unit_test(test_set_wakes_every_waiter),
        cmocka_unit_test(test_concurrent_sets_exactly_one_wins),
        cmocka_unit_test(test_free_null_is_harmless),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_parse_pool.c: the parse threads of the event loops: every item runs
 * once, off the submitting thread, oldest first with one thread; offers
 * are refused once as many items wait as there are threads; freeing runs
 * what is queued; the default size. Items record what they see under a
 * lock and the main thread asserts (cmocka is not thread-safe). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "parse_pool.h"

struct rec {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ran;                    /* items run */
    int order[64];              /* their ids, in the order they ran */
    int on_main;                /* items run on the main thread */
    int gate_open;              /* items wait while 0 */
    int waiting;                /* items blocked at the gate */
    pthread_t main;
};

struct item {
    struct parse_item it;       /* first: the pool hands this back */
    struct rec *r;
    int id;
    int gated;
};

static void run(struct parse_item *pi)
{
    struct item *x = (struct item *)pi;
    struct rec *r = x->r;
    pthread_mutex_lock(&r->lock);
    if (x->gated) {
        r->waiting++;
        pthread_cond_broadcast(&r->cond);
        while (!r->gate_open)
            pthread_cond_wait(&r->cond, &r->lock);
    }
    if (r->ran < 64)
        r->order[r->ran] = x->id;
    r->ran++;
    if (pthread_equal(pthread_self(), r->main))
        r->on_main++;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void rec_init(struct rec *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    r->main = pthread_self();
}

static void rec_fini(struct rec *r)
{
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
}

static void item_init(struct item *x, struct rec *r, int id, int gated)
{
    memset(x, 0, sizeof *x);
    x->it.run = run;
    x->r = r;
    x->id = id;
    x->gated = gated;
}

static void wait_ran(struct rec *r, int n)
{
    pthread_mutex_lock(&r->lock);
    while (r->ran < n)
        pthread_cond_wait(&r->cond, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

static void test_every_item_runs_once_off_the_submitting_thread(void **state)
{
    enum { N = 10000 };
    struct rec r;
    struct item *v = calloc(N, sizeof *v);
    assert_non_null(v);
    rec_init(&r);
    struct parse_pool *p = parse_pool_new(3);
    assert_non_null(p);
    assert_int_equal(parse_pool_size(p), 3);
    for (int i = 0; i < N; i++) {
        item_init(&v[i], &r, i, 0);
        parse_pool_submit(p, &v[i].it);
    }
    wait_ran(&r, N);
    parse_pool_free(p);
    assert_int_equal(r.ran, N);
    assert_int_equal(r.on_main, 0);
    rec_fini(&r);
    free(v);
}

static void test_one_thread_runs_items_oldest_first(void **state)
{
    struct rec r;
    struct item v[50];
    rec_init(&r);
    struct parse_pool *p = parse_pool_new(1);
    assert_non_null(p);
    for (int i = 0; i < 50; i++) {
        item_init(&v[i], &r, i, 0);
        parse_pool_submit(p, &v[i].it);
    }
    parse_pool_free(p);         /* runs what is queued, then joins */
    assert_int_equal(r.ran, 50);
    for (int i = 0; i < 50; i++)
        assert_int_equal(r.order[i], i);
    rec_fini(&r);
}

static void test_offers_are_refused_while_as_many_wait_as_there_are_threads(void **state)
{
    struct rec r;
    struct item v[8];
    rec_init(&r);
    struct parse_pool *p = parse_pool_new(2);
    assert_non_null(p);
    /* Both threads held at the gate: nothing waits in the queue yet. */
    for (int i = 0; i < 2; i++) {
        item_init(&v[i], &r, i, 1);
        assert_int_equal(parse_pool_offer(p, &v[i].it), 0);
    }
    pthread_mutex_lock(&r.lock);
    while (r.waiting < 2)
        pthread_cond_wait(&r.cond, &r.lock);
    pthread_mutex_unlock(&r.lock);
    /* Two may wait, one per thread; the third is the caller's. */
    for (int i = 2; i < 5; i++)
        item_init(&v[i], &r, i, 0);
    assert_int_equal(parse_pool_offer(p, &v[2].it), 0);
    assert_int_equal(parse_pool_offer(p, &v[3].it), 0);
    assert_int_equal(parse_pool_offer(p, &v[4].it), -1);
    pthread_mutex_lock(&r.lock);
    r.gate_open = 1;
    pthread_cond_broadcast(&r.cond);
    pthread_mutex_unlock(&r.lock);
    wait_ran(&r, 4);
    /* Once they have run, offers are taken again. */
    assert_int_equal(parse_pool_offer(p, &v[4].it), 0);
    parse_pool_free(p);
    assert_int_equal(r.ran, 5);
    assert_int_equal(r.on_main, 0);
    rec_fini(&r);
}

static void test_sizes_and_the_default(void **state)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    errno = 0;
    assert_null(parse_pool_new(0));
    assert_int_equal(errno, EINVAL);
    assert_int_equal(parse_pool_size(NULL), 0);
    parse_pool_free(NULL);
    assert_int_equal(parse_pool_default(0), (int)cpus);
    assert_int_equal(parse_pool_default(1), (int)(cpus - 1));
    assert_int_equal(parse_pool_default((int)cpus), 0);
    assert_int_equal(parse_pool_default((int)cpus + 5), 0);
    assert_int_equal(parse_pool_default(-1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_runs_once_off_the_submitting_thread),
        cmocka_unit_test(test_one_thread_runs_items_oldest_first),
        cmocka_unit_test(test_offers_are_refused_while_as_many_wait_as_there_are_threads),
        cmocka_unit_test(test_sizes_and_the_default),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

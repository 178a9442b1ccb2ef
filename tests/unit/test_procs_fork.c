/* Unit tests: a procs crawl whose workers cannot all be forked goes on
 * with those that could, every URL with its row, and says why naming
 * fork; with none, every URL fails with a row. Linked with
 * -Wl,--wrap=fork, so that a fork fails as it does when the process limit
 * is reached (EAGAIN), whoever runs the test. And the memory figure of a
 * procs run: each process's own peak resident set, summed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <curl/curl.h>

#include "crawl.h"
#include "hooks.h"
#include "model.h"

static int forks_left = -1;     /* forks that succeed before the rest fail; -1: all do */

pid_t __real_fork(void);

pid_t __wrap_fork(void)
{
    if (forks_left == 0) {
        errno = EAGAIN;
        return -1;
    }
    if (forks_left > 0)
        forks_left--;
    return __real_fork();
}

struct seen {
    pthread_mutex_t lock;
    int rows;
    char errors[8][96];         /* the rows' error texts, by input line */
    char warned[512];           /* the warnings, one a line */
};

static void keep_row(void *data, struct crawl *c, struct crawl_job *j)
{
    (void)c;
    struct seen *s = data;
    pthread_mutex_lock(&s->lock);
    s->rows++;
    if (j->line >= 1 && j->line <= 8)
        snprintf(s->errors[j->line - 1], sizeof s->errors[0], "%s",
                 j->res.error ? j->res.error : "(none)");
    pthread_mutex_unlock(&s->lock);
}

static void keep_warning(const char *msg, uint64_t once, void *data)
{
    (void)once;
    struct seen *s = data;
    pthread_mutex_lock(&s->lock);
    size_t n = strlen(s->warned);
    snprintf(s->warned + n, sizeof s->warned - n, "%s\n", msg);
    pthread_mutex_unlock(&s->lock);
}

/* Runs --mode=procs --procs nprocs on three URLs of a port nothing listens
 * on, with `forks` forks that succeed; fills s, and *rss_kb with the run's
 * memory figure unless rss_kb is NULL. Returns crawl_run's code. */
static int run(int nprocs, int forks, struct seen *s, long *rss_kb)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    struct crawl_opts o;
    crawl_opts_init(&o);
    o.procs = nprocs;
    o.connect_timeout = 5;
    struct crawl *c = crawl_new(&o);
    assert_non_null(c);
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(c, CRAWL_HOOK_OUTPUT, &rows, s);
    crawl_on_warn(c, keep_warning, s);
    for (int i = 0; i < 3; i++) {
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1:1/u%d", i);
        assert_int_equal(crawl_add(c, url, "-", i + 1, NULL), 0);
    }
    forks_left = forks;
    int rc = crawl_run(c, crawl_backend_find("procs"));
    forks_left = -1;
    struct crawl_summary sum;
    crawl_get_summary(c, &sum);
    if (rss_kb)
        *rss_kb = sum.rss_peak_kb;
    crawl_free(c);
    return rc;
}

static void test_no_worker_forked_every_url_fails_with_a_row_and_fork_is_named(void **state)
{
    (void)state;
    struct seen s;
    assert_int_equal(run(2, 0, &s, NULL), 0);
    assert_int_equal(s.rows, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(s.errors[i], "no worker process could be started");
    assert_string_equal(s.warned, "no worker process could be started: fork: Resource "
                                  "temporarily unavailable; every URL fails\n");
}

static void test_one_worker_of_three_forked_it_fetches_every_url(void **state)
{
    (void)state;
    struct seen s;
    assert_int_equal(run(3, 1, &s, NULL), 0);
    assert_int_equal(s.rows, 3);
    for (int i = 0; i < 3; i++)     /* fetched: refused, not "no worker" */
        assert_non_null(strstr(s.errors[i], "onnect"));
    assert_string_equal(s.warned, "only 1 of 3 worker processes could be started: fork: "
                                  "Resource temporarily unavailable\n");
}

/* Out of processes with two workers forked: one is given back, for the
 * threads the coordinator and its workers still start. */
static void test_out_of_processes_one_worker_is_given_back_for_the_threads(void **state)
{
    (void)state;
    struct seen s;
    assert_int_equal(run(4, 2, &s, NULL), 0);
    assert_int_equal(s.rows, 3);
    for (int i = 0; i < 3; i++)
        assert_non_null(strstr(s.errors[i], "onnect"));
    assert_string_equal(s.warned, "only 1 of 4 worker processes could be started: fork: "
                                  "Resource temporarily unavailable\n");
}

/* The figure is each process's peak as the kernel kept it (getrusage,
 * wait4), not what was resident at the moments someone looked: a peak the
 * coordinator reached before the run, and gave back, still counts, and
 * each worker counts whole. The test runs first, so that the children
 * reaped are this run's workers alone. */
static void test_procs_memory_is_each_process_s_own_peak_summed(void **state)
{
    (void)state;
    size_t big = 48u << 20;
    char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 1, big);
    munmap(p, big);
    struct rusage before, self, kids;
    assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
    struct seen s;
    long kb = 0;
    assert_int_equal(run(2, -1, &s, &kb), 0);
    assert_int_equal(s.rows, 3);
    assert_int_equal(getrusage(RUSAGE_SELF, &self), 0);
    assert_int_equal(getrusage(RUSAGE_CHILDREN, &kids), 0);
    /* kids: the larger worker's peak; the coordinator's lies between its
     * peak before the run and its peak after. */
    assert_true(kb >= before.ru_maxrss + kids.ru_maxrss);
    assert_true(kb <= self.ru_maxrss + 2 * kids.ru_maxrss);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_procs_memory_is_each_process_s_own_peak_summed),
        cmocka_unit_test(test_no_worker_forked_every_url_fails_with_a_row_and_fork_is_named),
        cmocka_unit_test(test_one_worker_of_three_forked_it_fetches_every_url),
        cmocka_unit_test(test_out_of_processes_one_worker_is_given_back_for_the_threads),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}

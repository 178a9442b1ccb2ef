/* Unit tests: a failed result always says why, even when its error text
 * cannot be copied. Linked with -Wl,--wrap=strdup, so that the core's
 * copies can be made to fail as they do when memory is short. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawl_internal.h"
#include "fetch.h"

static int fail_copies;         /* __wrap_strdup returns NULL while set */

char *__real_strdup(const char *s);

char *__wrap_strdup(const char *s)
{
    if (fail_copies) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strdup(s);
}

struct fixture {
    struct crawl_opts o;
    struct crawl c;
    struct crawl_job *job;
    enum crawl_fail row_fail;   /* what the job's row said: the core frees */
    char row_error[128];        /* the job once its row is out */
};

static void keep_row(void *data, struct crawl *c, struct crawl_job *j)
{
    struct fixture *f = data;
    f->row_fail = j->res.fail;
    snprintf(f->row_error, sizeof f->row_error, "%s", j->res.error ? j->res.error : "(null)");
}

/* A crawl of one URL, its job taken as a model would take it. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    crawl_opts_init(&f->o);
    if (crawl__init(&f->c, &f->o) != 0)
        return -1;
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(&f->c, CRAWL_HOOK_OUTPUT, &rows, f);
    if (
        crawl_add(&f->c, "http://127.0.0.1:1/x", "-", 1, NULL) != 0 ||
        crawl_take(&f->c, &f->job, NULL) != 1)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fail_copies = 0;
    crawl__fini(&f->c);      /* frees what was copied, and only that */
    free(f);
    return 0;
}

static void test_a_thread_that_cannot_start_says_so_without_memory(void **state)
{
    struct fixture *f = *state;
    fail_copies = 1;
    crawl_fail(&f->c, f->job, CRAWL_FAIL_THREAD, "cannot start a thread: %s", strerror(EAGAIN));
    fail_copies = 0;
    assert_int_equal(f->row_fail, CRAWL_FAIL_THREAD);
    assert_string_equal(f->row_error, "no thread could be started");
    assert_int_equal(f->c.nfailed, 1);
}

static void test_a_failed_fetch_says_why_without_memory(void **state)
{
    struct fixture *f = *state;
    struct fetch_xfer x = { .ctx = crawl_fetch_ctx(&f->c), .job = f->job };
    x.easy = curl_easy_init();
    assert_non_null(x.easy);
    fail_copies = 1;
    fetch_finish(&x, CURLE_COULDNT_CONNECT);
    fail_copies = 0;
    assert_int_equal(f->job->res.fail, CRAWL_FAIL_CONNECT);
    assert_string_equal(f->job->res.error, "could not connect");
    /* A later result replaces the static text, which is not freed. */
    fetch_finish(&x, CURLE_OPERATION_TIMEDOUT);
    assert_int_equal(f->job->res.fail, CRAWL_FAIL_TIMEOUT);
    assert_string_equal(f->job->res.error, "Timeout was reached");
    curl_easy_cleanup(x.easy);
    crawl_done(&f->c, f->job);
}

static void test_every_failure_class_has_a_static_text(void **state)
{
    for (int k = CRAWL_FAIL_INPUT; k <= CRAWL_FAIL_OTHER; k++) {
        struct crawl_result r = { .error = NULL };
        fail_copies = 1;
        job_error_set(&r, (enum crawl_fail)k, "details");
        fail_copies = 0;
        assert_int_equal(r.fail, k);
        assert_non_null(r.error);
        assert_true(strlen(r.error) > 0);
        assert_string_not_equal(r.error, "details");
        job_error_free(r.error);
    }
}

static void test_a_copied_text_is_a_copy_and_is_freed(void **state)
{
    char text[] = "Couldn't connect to server";
    struct crawl_result r = { .error = NULL };
    job_error_set(&r, CRAWL_FAIL_CONNECT, text);
    text[0] = 'X';
    assert_string_equal(r.error, "Couldn't connect to server");
    job_error_set(&r, CRAWL_FAIL_RECV, "Connection reset by peer");
    assert_int_equal(r.fail, CRAWL_FAIL_RECV);
    assert_string_equal(r.error, "Connection reset by peer");
    job_error_free(r.error);
    job_error_free(NULL);
}

static void test_every_error_code_has_a_text_of_its_own(void **state)
{
    /* The store's: a file or server that lost the crawl's data, or holds
     * another's (exit 8), apart from one that is merely not this crawl's. */
    assert_string_equal(crawl_strerror(CRAWL_ESTORE),
                        "the store lost or does not hold this crawl's data");
    assert_string_equal(crawl_strerror(CRAWL_ESTATE),
                        "the state file cannot be used for this crawl");
    for (int a = CRAWL_ENOMEM; a <= CRAWL_ESTORE; a++) {
        assert_string_not_equal(crawl_strerror(a), "unknown error");
        for (int b = CRAWL_ENOMEM; b < a; b++)
            assert_string_not_equal(crawl_strerror(a), crawl_strerror(b));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_thread_that_cannot_start_says_so_without_memory,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_fetch_says_why_without_memory,
                                        setup, teardown),
        cmocka_unit_test(test_every_failure_class_has_a_static_text),
        cmocka_unit_test(test_every_error_code_has_a_text_of_its_own),
        cmocka_unit_test(test_a_copied_text_is_a_copy_and_is_freed),
    };
    curl_global_init(CURL_GLOBAL_ALL);
    int rc = cmocka_run_group_tests_name("errors", tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}

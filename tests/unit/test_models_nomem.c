/* Unit tests: a job whose transfer cannot be set up for want of memory
 * gets the same row in every model of the registry: failed, class other,
 * "out of memory", never run; and every listed URL its one row. Linked
 * with -Wl,--wrap=curl_easy_init, so that every easy handle the models ask
 * for fails as libcurl's allocation does (a procs worker is a fork of this
 * program, and fails the same way). */
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
#include <curl/curl.h>

#include "crawl.h"
#include "hooks.h"
#include "model.h"

#define NURLS 6

CURL *__wrap_curl_easy_init(void);

CURL *__wrap_curl_easy_init(void)
{
    errno = ENOMEM;
    return NULL;
}

struct seen {
    pthread_mutex_t lock;
    int rows;
    char row[NURLS][128];       /* each row, by input line: what the row says */
};

static void keep_row(void *data, struct crawl *c, struct crawl_job *j)
{
    (void)c;
    struct seen *s = data;
    pthread_mutex_lock(&s->lock);
    s->rows++;
    if (j->line >= 1 && j->line <= NURLS && !s->row[j->line - 1][0])
        snprintf(s->row[j->line - 1], sizeof s->row[0], "%s, %s, status %ld, attempts %d",
                 job_fail_name(j->res.fail), j->res.error ? j->res.error : "(none)",
                 j->res.status, j->res.attempts);
    else
        snprintf(s->row[0], sizeof s->row[0], "a second row of line %ld", j->line);
    pthread_mutex_unlock(&s->lock);
}

static void keep_warning(const char *msg, uint64_t once, void *data)
{
    (void)msg, (void)once, (void)data;
}

/* Runs model b, four transfers at once (procs: two workers), on NURLS
 * URLs none of which is ever fetched; fills s. Returns crawl_run's code. */
static int run(const struct crawl_backend *b, struct seen *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    struct crawl_opts o;
    crawl_opts_init(&o);
    o.concurrency = 4;
    o.procs = 2;
    struct crawl *c = crawl_new(&o);
    assert_non_null(c);
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(c, CRAWL_HOOK_OUTPUT, &rows, s);
    crawl_on_warn(c, keep_warning, s);
    for (int i = 0; i < NURLS; i++) {
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1:1/u%d", i);
        assert_int_equal(crawl_add(c, url, "-", i + 1, NULL), 0);
    }
    int rc = crawl_run(c, b);
    crawl_free(c);
    pthread_mutex_destroy(&s->lock);
    return rc;
}

/* What run(b) came to, in one line: its code, its rows, and what each row
 * says when they all say the same (else line 1's and "..."). */
static void outcome(const struct crawl_backend *b, char *buf, size_t n)
{
    struct seen s;
    int rc = run(b, &s);
    int same = 1;
    for (int i = 1; i < NURLS; i++)
        same = same && strcmp(s.row[i], s.row[0]) == 0;
    snprintf(buf, n, "%s: run %d, %d rows, %s%s\n", b->name, rc, s.rows, s.row[0],
             same ? "" : ", ...");
}

static void test_a_job_out_of_memory_has_one_row_of_one_text_and_class_in_every_model(void **state)
{
    (void)state;
    char got[2048] = "", want[2048] = "";
    for (int k = 0; crawl_backends[k]; k++) {
        size_t g = strlen(got), w = strlen(want);
        outcome(crawl_backends[k], got + g, sizeof got - g);
        snprintf(want + w, sizeof want - w,
                 "%s: run 0, %d rows, other, out of memory, status 0, attempts 0\n",
                 crawl_backends[k]->name, NURLS);
    }
    assert_string_equal(got, want);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_job_out_of_memory_has_one_row_of_one_text_and_class_in_every_model),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}

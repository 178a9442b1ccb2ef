/* Unit tests for the core without a network: jobs are taken with
 * crawl_take and handed back with crawl_done as a model would, with the
 * links a page "gave" filled in by hand, so that the frontier's admission,
 * scope, de-duplication, --max-pages, per-host turns and robots.txt, and the
 * one-row-per-job promise under threads, are checked on exact values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crawl_internal.h"
#include "fetch.h"
#include "frontier.h"
#include "nofile.h"
#include "state_internal.h"

#define MAX_ROWS 4096

struct t {
    struct crawl_opts o;
    struct crawl c;
    char *rows[MAX_ROWS];       /* URLs of the rows, in the order written */
    size_t n;
    pthread_mutex_t lock;
};

static void keep_row(void *data, struct crawl *c, struct crawl_job *j)
{
    struct t *t = data;
    pthread_mutex_lock(&t->lock);
    if (t->n < MAX_ROWS)
        t->rows[t->n++] = strdup(j->url);
    pthread_mutex_unlock(&t->lock);
}

static struct t *t_new(void (*opts)(struct crawl_opts *))
{
    struct t *t = calloc(1, sizeof *t);
    crawl_opts_init(&t->o);
    t->o.user_agent = "crawl/test";
    if (opts)
        opts(&t->o);
    pthread_mutex_init(&t->lock, NULL);
    assert_int_equal(crawl__init(&t->c, &t->o), 0);
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(&t->c, CRAWL_HOOK_OUTPUT, &rows, t);
    return t;
}

static void t_free(struct t *t)
{
    crawl__fini(&t->c);
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i]);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Gives job j the links in the NULL-terminated list. */
static void give_links(struct crawl_job *j, const char *const *links)
{
    size_t n = 0;
    while (links[n])
        n++;
    j->links = calloc(n ? n : 1, sizeof *j->links);
    for (size_t i = 0; i < n; i++)
        j->links[i] = strdup(links[i]);
    j->nlinks = n;
}

static int has_row(const struct t *t, const char *url)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->rows[i], url) == 0)
            return 1;
    return 0;
}

/* Takes the next job; it must be url (NULL: the crawl must be over). */
static struct crawl_job *take(struct t *t, const char *url)
{
    struct crawl_job *j = NULL;
    int rc = crawl_take(&t->c, &j, NULL);
    if (!url) {
        assert_int_not_equal(rc, 1);
        return NULL;
    }
    assert_int_equal(rc, 1);
    assert_string_equal(j->url, url);
    return j;
}

static void follow2(struct crawl_opts *o)
{
    o->depth = 2;
    o->robots = 0;
}

static void test_links_are_admitted_once_within_depth_and_scope(void **state)
{
    struct t *t = t_new(follow2);
    crawl_add(&t->c, "http://a.test/", "-", 1, NULL);
    struct crawl_job *j = take(t, "http://a.test/");
    give_links(j, (const char *const[]){
        "http://a.test/x", "http://a.test/x", "http://a.test:80/y#frag",
        "http://b.test/other-host", "http://a.test/", NULL });
    crawl_done(&t->c, j);
    j = take(t, "http://a.test/x");
    give_links(j, (const char *const[]){ "http://a.test/deeper", "http://a.test/y", NULL });
    crawl_done(&t->c, j);
    j = take(t, "http://a.test/y");
    crawl_done(&t->c, j);
    j = take(t, "http://a.test/deeper");
    /* Depth 2 reached: its links are not followed. */
    give_links(j, (const char *const[]){ "http://a.test/too-deep", NULL });
    crawl_done(&t->c, j);
    take(t, NULL);
    assert_int_equal(t->n, 4);
    assert_int_equal(t->c.nrows, 4);
    assert_false(has_row(t, "http://b.test/other-host"));
    t_free(t);
}

static void follow_bounded(struct crawl_opts *o)
{
    o->depth = 5;
    o->robots = 0;
    o->max_pages = 3;
}

static void test_max_pages_counts_pages_started_and_the_rest_are_left(void **state)
{
    struct t *t = t_new(follow_bounded);
    crawl_add(&t->c, "http://a.test/", "-", 1, NULL);
    struct crawl_job *j = take(t, "http://a.test/");
    give_links(j, (const char *const[]){ "http://a.test/1", "http://a.test/2", "http://a.test/3",
                                         "http://a.test/4", NULL });
    crawl_done(&t->c, j);
    crawl_done(&t->c, take(t, "http://a.test/1"));
    crawl_done(&t->c, take(t, "http://a.test/2"));
    take(t, NULL);
    assert_int_equal(t->n, 3);
    /* /3 and /4 were dropped when their turn came after the bound. */
    struct crawl_summary s;
    crawl_get_summary(&t->c, &s);
    assert_int_equal(s.queued_left, 2);
    t_free(t);
}

static void follow_queue2(struct crawl_opts *o)
{
    o->depth = 5;
    o->robots = 0;
    o->max_queue = 2;
}

static void count_warn(const char *msg, uint64_t once, void *data)
{
    int *n = data;
    (*n)++;
    assert_non_null(strstr(msg, "--max-queue 2 reached"));
}

static void test_max_queue_drops_links_past_it_counts_them_and_warns_once(void **state)
{
    struct t *t = t_new(follow_queue2);
    int warned = 0;
    crawl_on_warn(&t->c, count_warn, &warned);
    crawl_add(&t->c, "http://a.test/", "-", 1, NULL);
    struct crawl_job *j = take(t, "http://a.test/");
    give_links(j, (const char *const[]){ "http://a.test/1", "http://a.test/2", "http://a.test/3",
                                         "http://a.test/4", "http://a.test/3", "http://a.test/1",
                                         NULL });
    crawl_done(&t->c, j);
    assert_int_equal(warned, 1);
    /* A link seen before is not counted; one dropped is not remembered. */
    struct crawl_summary s;
    crawl_get_summary(&t->c, &s);
    assert_int_equal(s.queue_dropped, 3);      /* /3, /4, /3 */
    /* Room for one: /5 is queued, /4 and /6 dropped, and nothing more said. */
    j = take(t, "http://a.test/1");
    give_links(j, (const char *const[]){ "http://a.test/5", "http://a.test/4",
                                         "http://a.test/6", NULL });
    crawl_done(&t->c, j);
    assert_int_equal(warned, 1);
    /* Room again: /4, dropped twice, is queued now; /5 is seen. */
    j = take(t, "http://a.test/2");
    give_links(j, (const char *const[]){ "http://a.test/4", "http://a.test/5", NULL });
    crawl_done(&t->c, j);
    crawl_done(&t->c, take(t, "http://a.test/5"));
    crawl_done(&t->c, take(t, "http://a.test/4"));
    take(t, NULL);
    crawl_get_summary(&t->c, &s);
    assert_int_equal(t->n, 5);
    assert_int_equal(s.queue_dropped, 5);
    assert_int_equal(s.queued_left, 0);
    struct frontier_counts fc;
    frontier_counts(t->c.fr, &fc);
    assert_int_equal(fc.seen, 5);              /* the pages queued, and only them */
    t_free(t);
}

static void follow_queue0(struct crawl_opts *o)
{
    o->depth = 1;
    o->robots = 0;
    o->max_queue = 0;
}

static void test_max_queue_0_and_the_default_drop_nothing(void **state)
{
    struct crawl_opts d;
    crawl_opts_init(&d);
    assert_true(d.max_queue >= 1000000);
    struct t *t = t_new(follow_queue0);
    crawl_add(&t->c, "http://a.test/", "-", 1, NULL);
    struct crawl_job *j = take(t, "http://a.test/");
    const char *links[101];
    char buf[100][32];
    for (int i = 0; i < 100; i++) {
        snprintf(buf[i], sizeof buf[i], "http://a.test/%d", i);
        links[i] = buf[i];
    }
    links[100] = NULL;
    give_links(j, links);
    crawl_done(&t->c, j);
    struct crawl_summary s;
    crawl_get_summary(&t->c, &s);
    assert_int_equal(s.queue_dropped, 0);
    assert_int_equal(crawl_queued(&t->c), 100);
    t_free(t);
}

static void follow_far(struct crawl_opts *o)
{
    o->depth = 5;
    o->robots = 0;
}

static void test_a_long_spilled_queue_comes_back_in_order_and_its_file_shrinks(void **state)
{
    /* 200,000 links of one page: 32,768 in memory, the rest (7 MB) in the
     * spill file, read back as the queue drains; the part read back is cut
     * off the file once it is 4 MiB and half of it. */
    enum { N = 200000 };
    struct t *t = t_new(follow_far);
    crawl_add(&t->c, "http://a.test/", "-", 1, NULL);
    struct crawl_job *j = take(t, "http://a.test/");
    j->links = calloc(N, sizeof *j->links);
    for (int i = 0; i < N; i++)
        assert_true(asprintf(&j->links[i], "http://a.test/page/%07d", i) > 0);
    j->nlinks = N;
    crawl_done(&t->c, j);
    struct frontier_counts fc;
    frontier_counts(t->c.fr, &fc);
    uint64_t most = fc.spill_bytes;
    assert_true(most > (6u << 20));
    int shrank = 0;
    char want[64];
    for (int i = 0; i < N; i++) {
        snprintf(want, sizeof want, "http://a.test/page/%07d", i);
        j = take(t, want);
        j->depth = 5;           /* its links are not followed: none given */
        crawl_done(&t->c, j);
        frontier_counts(t->c.fr, &fc);
        if (fc.spill_bytes > most)
            most = fc.spill_bytes;
        else if (fc.spill_bytes < most && fc.spill_bytes > 0)
            shrank = 1;
    }
    take(t, NULL);
    assert_true(shrank);
    frontier_counts(t->c.fr, &fc);
    assert_int_equal(fc.spill_bytes, 0);
    assert_int_equal(t->c.nrows, N + 1);
    t_free(t);
}

static void per_host(struct crawl_opts *o)
{
    o->per_host = 1;
}

static void test_per_host_bound_lets_other_hosts_take_turns(void **state)
{
    struct t *t = t_new(per_host);
    crawl_add(&t->c, "http://a.test/1", "-", 1, NULL);
    crawl_add(&t->c, "http://a.test/2", "-", 2, NULL);
    crawl_add(&t->c, "http://b.test/1", "-", 3, NULL);
    struct crawl_job *a1 = take(t, "http://a.test/1");
    /* a.test has its one transfer: b.test goes next, then nothing. */
    struct crawl_job *b1 = take(t, "http://b.test/1");
    struct crawl_job *none = NULL;
    assert_int_equal(crawl_take(&t->c, &none, NULL), CRAWL_EAGAIN);
    crawl_done(&t->c, a1);
    struct crawl_job *a2 = take(t, "http://a.test/2");
    crawl_done(&t->c, b1);
    crawl_done(&t->c, a2);
    take(t, NULL);
    assert_int_equal(t->n, 3);
    t_free(t);
}

static void robots_on(struct crawl_opts *o)
{
    o->depth = 1;
    o->robots = 1;
}

static void test_robots_txt_goes_first_and_forbidden_urls_fail_in_their_turn(void **state)
{
    struct t *t = t_new(robots_on);
    crawl_add(&t->c, "http://a.test/ok", "-", 1, NULL);
    crawl_add(&t->c, "http://a.test/private/no", "-", 2, NULL);
    struct crawl_job *r = take(t, "http://a.test:80/robots.txt");
    assert_int_equal(r->kind, JOB_ROBOTS);
    /* Nothing of the host starts before its robots.txt is in. */
    struct crawl_job *none = NULL;
    assert_int_equal(crawl_take(&t->c, &none, NULL), CRAWL_EAGAIN);
    const char body[] = "User-agent: *\nDisallow: /private/\n";
    r->body = strdup(body);
    r->body_len = sizeof body - 1;
    r->res.status = 200;
    crawl_done(&t->c, r);
    struct crawl_job *ok = take(t, "http://a.test/ok");
    give_links(ok, (const char *const[]){ "http://a.test/private/link", "http://a.test/public", NULL });
    crawl_done(&t->c, ok);
    crawl_done(&t->c, take(t, "http://a.test/public"));
    take(t, NULL);
    /* The forbidden listed URL has its (failed) row; the forbidden link none. */
    assert_int_equal(t->n, 3);
    assert_true(has_row(t, "http://a.test/private/no"));
    assert_false(has_row(t, "http://a.test/private/link"));
    assert_int_equal(t->c.nfailed, 1);
    struct crawl_summary s;
    crawl_get_summary(&t->c, &s);
    assert_int_equal(s.robots_blocked, 2);
    t_free(t);
}

static void test_bad_lines_give_rows_in_their_turn_without_a_fetch(void **state)
{
    struct t *t = t_new(NULL);
    crawl_add(&t->c, "http://a.test/1", "-", 1, NULL);
    crawl_add(&t->c, "ftp://a.test/2", "-", 2, NULL);
    crawl_add_failed(&t->c, "bad\\x00", "-", 3, "contains a NUL byte");
    struct crawl_job *j = take(t, "http://a.test/1");
    assert_int_equal(t->n, 2);          /* the bad lines were finished on the way */
    crawl_done(&t->c, j);
    take(t, NULL);
    assert_int_equal(t->c.nrows, 3);
    assert_int_equal(t->c.nfailed, 2);
    assert_int_equal(t->c.nseq, 3);
    t_free(t);
}

/* ---- threads ---------------------------------------------------------------- */

static void *worker(void *arg)
{
    struct t *t = arg;
    struct crawl_job *j;
    int k = 0;
    while (crawl_take_wait(&t->c, &j) == 1) {
        if (k++ % 3 == 0)
            crawl_fail(&t->c, j, CRAWL_FAIL_OTHER, "failed by test %d", k);
        else
            crawl_done(&t->c, j);
    }
    return NULL;
}

static void test_every_job_gives_one_row_when_threads_take_and_give_back(void **state)
{
    struct t *t = t_new(NULL);
    char url[64];
    for (int i = 0; i < 3000; i++) {
        snprintf(url, sizeof url, "http://h%d.test/%d", i % 7, i);
        crawl_add(&t->c, url, "-", i + 1, NULL);
    }
    pthread_t tid[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&tid[i], NULL, worker, t);
    for (int i = 0; i < 8; i++)
        pthread_join(tid[i], NULL);
    assert_int_equal(t->n, 3000);
    assert_int_equal(t->c.nrows, 3000);
    assert_int_equal(t->c.running, 0);
    assert_true(t->c.nfailed > 0 && t->c.nfailed < 3000);
    t_free(t);
}

static int input_calls;

/* crawl_input_fn: ten URLs a call, 100 in all. */
static int ten_more(struct crawl *c, size_t want, void *data)
{
    int *next = data;
    char url[64];
    input_calls++;
    for (int k = 0; k < 10 && *next < 100; k++, (*next)++) {
        snprintf(url, sizeof url, "http://a.test/%d", *next);
        crawl_add(c, url, "-", *next + 1, NULL);
    }
    return *next < 100;
}

static void test_lists_are_read_as_the_crawl_needs_them(void **state)
{
    struct t *t = t_new(NULL);
    int next = 0;
    crawl_set_input(&t->c, ten_more, &next, 0);
    struct crawl_job *j;
    assert_int_equal(crawl_take(&t->c, &j, NULL), 1);
    /* No limit known to the core here: it reads all it can, in order. */
    assert_string_equal(j->url, "http://a.test/0");
    crawl_done(&t->c, j);
    int n = 1;
    while (crawl_take(&t->c, &j, NULL) == 1) {
        char want[64];
        snprintf(want, sizeof want, "http://a.test/%d", n++);
        assert_string_equal(j->url, want);
        crawl_done(&t->c, j);
    }
    assert_int_equal(n, 100);
    assert_int_equal(t->n, 100);
    t_free(t);
}

struct relayed {
    uint64_t id;
    enum crawl_job_kind kind;
    size_t nlinks;
    enum crawl_fail fail;
    char body[32];
};
static struct relayed relayed[16];
static size_t nrelayed;

static int keep_relay(void *data, struct crawl *c, struct crawl_job *j)
{
    struct relayed *r = &relayed[nrelayed++];
    r->id = j->seq;
    r->kind = j->kind;
    r->nlinks = j->nlinks;
    r->fail = j->res.fail;
    snprintf(r->body, sizeof r->body, "%s", j->body ? j->body : "");
    crawl_release(c, j);
    return 1;
}

static int run_nothing(struct crawl *c)
{
    return 0;
}

static void test_a_relay_gets_every_job_whole_and_applies_no_rules(void **state)
{
    static const struct crawl_backend idle = {
        .name = "idle", .fds_per_transfer = 1, .run = run_nothing,
    };
    struct t *t = t_new(follow2);
    static const struct crawl_hook relay = { .back = keep_relay };
    crawl_hook(&t->c, CRAWL_HOOK_RELAY, &relay, NULL);
    assert_int_equal(
        crawl_push_job(&t->c, JOB_ROBOTS, "http://a.test/robots.txt", 0, 7, 0, NULL, NULL), 0);
    assert_int_equal(crawl_push_job(&t->c, JOB_PAGE, "http://a.test/x", 1, 8, 0, NULL, NULL), 0);
    /* The same URL again: de-duplication is the coordinator's. */
    assert_int_equal(crawl_push_job(&t->c, JOB_PAGE, "http://a.test/x", 1, 9, 0, NULL, NULL), 0);
    struct crawl_job *j = take(t, "http://a.test/robots.txt");
    assert_int_equal(j->kind, JOB_ROBOTS);
    j->body = strdup("User-agent: *");
    j->body_len = strlen(j->body);
    crawl_done(&t->c, j);
    j = take(t, "http://a.test/x");
    assert_int_equal(j->seq, 8);           /* not renumbered, though discovered */
    give_links(j, (const char *const[]){ "http://a.test/y", "http://a.test/z", NULL });
    crawl_done(&t->c, j);
    /* The links went to the relay, not into the queue. */
    assert_int_equal(crawl_queued(&t->c), 1);
    assert_int_equal(
        crawl_push_job(&t->c, JOB_ROBOTS, "http://b.test/robots.txt", 0, 10, 0, NULL, NULL), 0);
    /* Jobs that never ran reach the relay too, cancelled, robots jobs
     * included. */
    crawl_cancel(&t->c, CRAWL_CANCEL_SIGNAL);
    assert_int_equal(crawl_run(&t->c, &idle), 0);
    assert_int_equal(nrelayed, 4);
    assert_int_equal(relayed[0].id, 7);
    assert_string_equal(relayed[0].body, "User-agent: *");
    assert_int_equal(relayed[1].id, 8);
    assert_int_equal(relayed[1].nlinks, 2);
    assert_int_equal(relayed[1].fail, CRAWL_FAIL_NONE);
    assert_int_equal(relayed[2].id, 9);
    assert_int_equal(relayed[2].fail, CRAWL_FAIL_CANCELLED);
    assert_int_equal(relayed[3].id, 10);
    assert_int_equal(relayed[3].kind, JOB_ROBOTS);
    assert_int_equal(relayed[3].fail, CRAWL_FAIL_CANCELLED);
    /* No row and no count of the relaying crawl's own. */
    assert_int_equal(t->n, 0);
    assert_int_equal(t->c.nrows, 0);
    assert_int_equal(t->c.running, 0);
    t_free(t);
}

/* 100 fetched URLs taking 1 to 100 ms, first bytes at half that, and one
 * failed URL that is not counted. */
static void test_percentiles_of_total_and_first_byte_times_are_ordered_and_exact_at_the_max(void **state)
{
    struct t *t = t_new(NULL);
    char url[64];
    assert_true(crawl_latency_ms(&t->c, CRAWL_TIME_TOTAL, 0.5) == 0);
    for (int i = 1; i <= 101; i++) {
        snprintf(url, sizeof url, "http://a.test/%d", i);
        crawl_add(&t->c, url, "-", i, NULL);
    }
    for (int i = 1; i <= 101; i++) {
        snprintf(url, sizeof url, "http://a.test/%d", i);
        struct crawl_job *j = take(t, url);
        if (i == 101) {
            j->res.time_total = 9;
            job_error_set(&j->res, CRAWL_FAIL_TIMEOUT, "timed out");
        } else {
            j->res.time_total = i / 1000.0;
            j->res.time_ttfb = i / 2000.0;
        }
        crawl_done(&t->c, j);
    }
    static const double q[] = { 0.50, 0.90, 0.99 };
    for (int k = 0; k < 3; k++) {
        double want = q[k] * 100;
        double v = crawl_latency_ms(&t->c, CRAWL_TIME_TOTAL, q[k]);
        assert_true(v > want * 0.99 && v < want * 1.01);
        v = crawl_latency_ms(&t->c, CRAWL_TIME_TTFB, q[k]);
        assert_true(v > want / 2 * 0.99 && v < want / 2 * 1.01);
    }
    assert_true(crawl_latency_ms(&t->c, CRAWL_TIME_TOTAL, 1) == 100.0);
    assert_true(crawl_latency_ms(&t->c, CRAWL_TIME_TTFB, 1) == 50.0);
    t_free(t);
}

/* One URL: every percentile is its time, none above the max (a bucket's
 * middle may lie past it). */
static void test_percentiles_of_one_url_never_pass_its_time(void **state)
{
    struct t *t = t_new(NULL);
    crawl_add(&t->c, "http://a.test/", "-", 1, NULL);
    struct crawl_job *j = take(t, "http://a.test/");
    j->res.time_total = 0.0123;
    j->res.time_ttfb = 0.0100;
    crawl_done(&t->c, j);
    double p50 = crawl_latency_ms(&t->c, CRAWL_TIME_TOTAL, 0.5);
    double p99 = crawl_latency_ms(&t->c, CRAWL_TIME_TOTAL, 0.99);
    double max = crawl_latency_ms(&t->c, CRAWL_TIME_TOTAL, 1);
    assert_true(max == 12.3);
    assert_true(p50 <= p99 && p99 <= max && p50 > 12.3 * 0.99);
    assert_true(crawl_latency_ms(&t->c, CRAWL_TIME_TTFB, 0.99) <= 10.0);
    t_free(t);
}

struct said {
    char text[512];             /* the warnings said, one a line */
    uint64_t once[8];           /* the key each was said with */
    int n;
};

static void keep_said(const char *msg, uint64_t once, void *data)
{
    struct said *s = data;
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof s->text - len, "%s\n", msg);
    if (s->n < 8)
        s->once[s->n] = once;
    s->n++;
}

static void test_a_warning_said_once_is_said_once_per_text_whatever_its_format(void **state)
{
    struct t *t = t_new(NULL);
    struct said s = {0};
    crawl_on_warn(&t->c, keep_said, &s);
    /* One format, two texts: both said, each once. */
    crawl_warn_once(&t->c, "state: %s", "disk full");
    crawl_warn_once(&t->c, "state: %s", "read-only");
    crawl_warn_once(&t->c, "state: %s", "disk full");
    /* One text, other formats and ways in: said already. */
    crawl_warn_once(&t->c, "%s: %s", "state", "read-only");
    fetch_warn_once(crawl_fetch_ctx(&t->c), "%s", "state: disk full");
    /* Relayed by a worker with the key it was said with: once over all. */
    crawl_warn_relayed(&t->c, s.once[0], "state: disk full");
    /* A new text, from fetch first, then from here and relayed. */
    fetch_warn_once(crawl_fetch_ctx(&t->c), "--warc: %s", "cannot write x.warc");
    crawl_warn_once(&t->c, "--warc: cannot write %s", "x.warc");
    crawl_warn_relayed(&t->c, s.once[2], "--warc: cannot write x.warc");
    assert_string_equal(s.text, "state: disk full\nstate: read-only\n"
                                "--warc: cannot write x.warc\n");
    assert_int_equal(s.n, 3);
    /* Keys are never 0 (relayed as "every time"), and differ by text. */
    assert_true(s.once[0] != 0 && s.once[1] != 0 && s.once[0] != s.once[1]);
    t_free(t);
}

static void count_said(const char *msg, uint64_t once, void *data)
{
    (*(int *)data)++;
}

/* Many texts said once each, a page's warnings say (the parser's name
 * their page), are each said once however often they come: none is said
 * again once some table of them fills. */
static void test_five_thousand_texts_said_once_each_are_never_said_again(void **state)
{
    struct t *t = t_new(NULL);
    int n = 0;
    crawl_on_warn(&t->c, count_said, &n);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 5000; i++)
            crawl_warn_once(&t->c, "http://a.test/%d: elements nested too deep", i);
    assert_int_equal(n, 5000);
    t_free(t);
}

/* A model that takes jobs until the core says no more, sleeping 20 ms on
 * each as a fetch would: it never sees a signal. */
static int run_slowly(struct crawl *c)
{
    struct crawl_job *j;
    int rc;
    while ((rc = crawl_take_wait(c, &j)) == 1) {
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
        crawl_done(c, j);
    }
    return rc;
}

static void deadline_100ms(struct crawl_opts *o)
{
    o->deadline = 0.1;
}

static void test_the_deadline_cancels_the_run_on_the_cores_own_clock_without_a_signal(void **state)
{
    static const struct crawl_backend slow = {
        .name = "slow", .fds_per_transfer = 1, .default_concurrency = 1, .run = run_slowly,
    };
    struct t *t = t_new(deadline_100ms);
    char url[64];
    for (int i = 0; i < 100; i++) {
        snprintf(url, sizeof url, "http://a.test/%d", i);
        assert_int_equal(crawl_add(&t->c, url, "-", i + 1, NULL), 0);
    }
    assert_int_equal(crawl_is_cancelled(&t->c), 0);
    assert_int_equal(crawl_run(&t->c, &slow), 0);
    assert_int_equal(crawl_is_cancelled(&t->c), CRAWL_CANCEL_DEADLINE);
    /* About 5 pages in 100 ms; every one of the 100 has its row. */
    assert_true(t->c.wall < 0.5);
    assert_int_equal(t->n, 100);
    assert_int_equal(t->c.nrows, 100);
    assert_true(t->c.nfailed >= 90);
    t_free(t);
}

/* What a feature attached for the run alone sees of it. */
struct run_calls {
    char seen[16];              /* p: prepare, s: start, r: a row, t: stop */
    size_t n;
    int stop_rc;
    int model_ran;              /* the model had run when start was told */
};

static void note(struct run_calls *r, char what)
{
    if (r->n + 1 < sizeof r->seen)
        r->seen[r->n++] = what;
}

static void on_prepare(void *data, struct crawl *c) { note(data, 'p'); }
static void on_start(void *data, struct crawl *c) { note(data, 's'); }
static void on_row(void *data, struct crawl *c, struct crawl_job *j) { note(data, 'r'); }

static void on_stop(void *data, struct crawl *c, int rc)
{
    struct run_calls *r = data;
    note(r, 't');
    r->stop_rc = rc;
}

static int run_model_prepared;

static int prepare_model(struct crawl *c)
{
    run_model_prepared++;
    return 0;
}

static int run_two(struct crawl *c)
{
    struct crawl_job *j;
    int rc;
    while ((rc = crawl_take_wait(c, &j)) == 1)
        crawl_done(c, j);
    return rc;
}

/* A hook's prepare comes once, before the model's own set-up, however
 * often the crawl is prepared; start before the model runs, stop after it
 * with its status, each once. */
static void test_a_hook_is_told_the_runs_prepare_start_and_stop_once_each_in_order(void **state)
{
    static const struct crawl_backend two = {
        .name = "two", .fds_per_transfer = 1, .default_concurrency = 1,
        .run = run_two, .prepare = prepare_model,
    };
    struct t *t = t_new(NULL);
    struct run_calls r = { 0 };
    static const struct crawl_hook hook = {
        .prepare = on_prepare, .start = on_start, .row = on_row, .stop = on_stop,
    };
    crawl_hook(&t->c, CRAWL_HOOK_DIGESTS, &hook, &r);
    assert_int_equal(crawl_add(&t->c, "http://a.test/1", "-", 1, NULL), 0);
    assert_int_equal(crawl_add(&t->c, "http://a.test/2", "-", 2, NULL), 0);
    run_model_prepared = 0;
    assert_int_equal(crawl_prepare(&t->c, &two), 0);
    assert_string_equal(r.seen, "p");
    assert_int_equal(run_model_prepared, 1);
    r.stop_rc = -1;
    assert_int_equal(crawl_run(&t->c, &two), 0);
    assert_string_equal(r.seen, "psrrt");
    assert_int_equal(r.stop_rc, 0);
    assert_int_equal(run_model_prepared, 1);
    assert_int_equal(t->n, 2);
    t_free(t);
}

/* The descriptors this process's table holds now (FDSize in
 * /proc/self/status), or -1. */
static long fd_table_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "FDSize: %ld", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static void two_thousand_at_once(struct crawl_opts *o)
{
    o->concurrency = 2000;
}

/* Prepared while the process has one thread, a run's descriptor table
 * holds its transfers in flight and the spare, up to the open-file limit;
 * a model of processes leaves that to its workers. */
static void test_prepare_grows_the_descriptor_table_to_the_transfers_in_flight(void **state)
{
    static const struct crawl_backend procs = {
        .name = "procs", .fds_per_transfer = 1, .processes = 1, .run = run_two,
    };
    static const struct crawl_backend three = {
        .name = "three", .fds_per_transfer = 3, .run = run_two,
    };
    long before = fd_table_size();
    if (before < 0)
        skip();
    struct t *t = t_new(two_thousand_at_once);
    assert_int_equal(crawl_prepare(&t->c, &procs), 0);
    assert_int_equal(fd_table_size(), before);
    t_free(t);
    t = t_new(two_thousand_at_once);
    assert_int_equal(crawl_prepare(&t->c, &three), 0);
    size_t nofile = nofile_raise();
    size_t want = 2000 * 3 + 64 + nofile / 100;
    if (want > nofile)
        want = nofile;
    if ((size_t)before >= want)
        skip();         /* nothing left to grow */
    assert_true((size_t)fd_table_size() >= want);
    t_free(t);
}

/* A store whose queue cannot be read. */
static const char *broken_error(struct state *st)
{
    return "disk gone";
}

static int broken_load(struct state *st, uint64_t after, size_t max,
                       void (*fn)(uint64_t id, const struct state_page *p, void *data), void *data)
{
    return -5;
}

static void broken_close(struct state *st)
{
}

/* What a warning found: its text, and whether the core's lock was free. */
struct said_where {
    struct crawl *c;
    int n, unlocked;
    char text[128];
};

static void say_where(const char *msg, uint64_t once, void *data)
{
    struct said_where *s = data;
    s->n++;
    if (pthread_mutex_trylock(&s->c->lock) == 0) {
        s->unlocked++;
        pthread_mutex_unlock(&s->c->lock);
    }
    snprintf(s->text, sizeof s->text, "%s", msg);
}

/* A store that fails as a job is taken stops the crawl at once, and says
 * why once the core's lock is let go: the warning, written to stderr by
 * the program, is never written with the lock held. */
static void test_a_store_error_met_taking_a_job_is_said_after_the_lock_is_let_go(void **state)
{
    static const struct state_ops broken = {
        .error = broken_error, .queue_load = broken_load, .close = broken_close,
    };
    static struct state st = { .ops = &broken };
    struct t *t = t_new(NULL);
    frontier_use_store(t->c.fr, &st, 0);
    struct said_where s = { .c = &t->c };
    crawl_on_warn(&t->c, say_where, &s);
    take(t, NULL);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.unlocked, 1);
    assert_string_equal(s.text, "state: disk gone");
    assert_int_equal(crawl_frontier_lost(&t->c), CRAWL_ESTORE);
    assert_int_equal(crawl_is_cancelled(&t->c), CRAWL_CANCEL_STORE);
    take(t, NULL);
    assert_int_equal(s.n, 1);
    t_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links_are_admitted_once_within_depth_and_scope),
        cmocka_unit_test(test_max_pages_counts_pages_started_and_the_rest_are_left),
        cmocka_unit_test(test_max_queue_drops_links_past_it_counts_them_and_warns_once),
        cmocka_unit_test(test_max_queue_0_and_the_default_drop_nothing),
        cmocka_unit_test(test_a_long_spilled_queue_comes_back_in_order_and_its_file_shrinks),
        cmocka_unit_test(test_per_host_bound_lets_other_hosts_take_turns),
        cmocka_unit_test(test_robots_txt_goes_first_and_forbidden_urls_fail_in_their_turn),
        cmocka_unit_test(test_bad_lines_give_rows_in_their_turn_without_a_fetch),
        cmocka_unit_test(test_every_job_gives_one_row_when_threads_take_and_give_back),
        cmocka_unit_test(test_lists_are_read_as_the_crawl_needs_them),
        cmocka_unit_test(test_a_relay_gets_every_job_whole_and_applies_no_rules),
        cmocka_unit_test(test_percentiles_of_total_and_first_byte_times_are_ordered_and_exact_at_the_max),
        cmocka_unit_test(test_percentiles_of_one_url_never_pass_its_time),
        cmocka_unit_test(test_the_deadline_cancels_the_run_on_the_cores_own_clock_without_a_signal),
        cmocka_unit_test(test_a_warning_said_once_is_said_once_per_text_whatever_its_format),
        cmocka_unit_test(test_five_thousand_texts_said_once_each_are_never_said_again),
        cmocka_unit_test(test_a_hook_is_told_the_runs_prepare_start_and_stop_once_each_in_order),
        cmocka_unit_test(test_a_store_error_met_taking_a_job_is_said_after_the_lock_is_let_go),
        cmocka_unit_test(test_prepare_grows_the_descriptor_table_to_the_transfers_in_flight),
    };
    return cmocka_run_group_tests_name("crawl", tests, NULL, NULL);
}

/* Unit tests for the frontier on a clock of the test's own: the order jobs
 * come out in, hosts' turns, every pacing rule (--delay, Crawl-delay,
 * Retry-After and its bounds, --per-host), the retries' heap, which links
 * are admitted (depth, scope, --include, --exclude, seen once, --max-pages,
 * robots.txt), each link's verdict (--links-out) and a found page's
 * parent, the sitemaps of --sitemaps (which are queued, for whose pages,
 * how deep an index nests, which of their URLs join), the canonical key
 * of --canonical and --strip-query, the spill that takes links past the
 * memory bound and gives them back in order, a store's errors, latched
 * for the core to read once, and the spill and the store's queue read into
 * memory in claimed steps without the lock, links admitted meanwhile from
 * another thread. What is called with the core's lock held splits no URL
 * (url_split is wrapped and counted): a listed URL comes split, what waits
 * for robots.txt keeps its path, a sitemap's URL is split with the
 * robots.txt or the index that names it, a redirect's target with its
 * page, and a --canonical key is made with the split. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontier.h"
#include "frontier_internal.h"
#include "job.h"
#include "state_internal.h"
#include "url.h"

static double fake_now;

/* The frontier's calls of url_split and url_canonical (the Makefile links
 * them wrapped), from any thread. */
static atomic_int splits, canons;

int __real_url_split(const char *url, struct url_parts *p);
int __wrap_url_split(const char *url, struct url_parts *p)
{
    splits++;
    return __real_url_split(url, p);
}

int __real_url_canonical(const char *url, int sort, const regex_t *strip, size_t nstrip,
                         char **out);
int __wrap_url_canonical(const char *url, int sort, const regex_t *strip, size_t nstrip,
                         char **out)
{
    canons++;
    return __real_url_canonical(url, sort, strip, nstrip, out);
}

static double fake_clock(void)
{
    return fake_now;
}

static struct frontier *make(struct frontier_conf conf)
{
    conf.now = fake_clock;
    if (conf.retry_max_delay == 0)
        conf.retry_max_delay = 600;
    fake_now = 1000;
    struct frontier *f = frontier_new(&conf);
    assert_non_null(f);
    frontier_start(f, 0, 0, NULL);
    return f;
}

static struct crawl_job *job(const char *url)
{
    struct crawl_job *j = job_new();
    assert_non_null(j);
    j->url = strdup(url);
    j->res.retry_after = -1;        /* as fetch leaves a job with none */
    return j;
}

/* Queues listed url as the core does: split as it is checked, and its
 * seen-set key made, before the lock is taken, when the frontier keys it. */
static void push(struct frontier *f, const char *url)
{
    struct url_parts p;
    const char *why;
    int split = frontier_splits_listed(f);
    assert_int_equal(url_validate_split(url, &why, split ? &p : NULL), 0);
    if (split)
        assert_int_equal(frontier_key_listed(f, &p), 0);
    assert_int_equal(frontier_push(f, job(url), split ? &p : NULL), 0);
    if (split)
        url_parts_free(&p);
}

/* Takes the next job, which must be url's (NULL: none may start now). */
static struct crawl_job *take(struct frontier *f, const char *url, double *wake)
{
    double w = 0;
    frontier_refill(f);
    struct crawl_job *j = frontier_pick(f, &w);
    if (wake)
        *wake = w;
    if (!url) {
        if (j)
            fail_msg("expected nothing, got %s", j->url);
        return NULL;
    }
    if (!j)
        fail_msg("expected %s, got nothing", url);
    assert_string_equal(j->url, url);
    return j;
}

/* The end of a page job, as the core does it: links prepared without the
 * lock (prepared) or left to frontier_done, then the job freed. */
static void done(struct frontier *f, struct crawl_job *j, int prepared)
{
    if (prepared)
        frontier_prepare(f, j);
    frontier_done(f, j);
    if (j->kind != JOB_ROBOTS)
        job_free(j);
}

static void give_links(struct crawl_job *j, const char *const *links, size_t n)
{
    j->links = calloc(n, sizeof *j->links);
    assert_non_null(j->links);
    for (size_t i = 0; i < n; i++)
        j->links[i] = strdup(links[i]);
    j->nlinks = n;
}

static void test_a_plain_list_comes_out_in_the_order_it_went_in(void **state)
{
    struct frontier *f = make((struct frontier_conf){ 0 });
    push(f, "http://a/1");
    push(f, "http://b/1");
    push(f, "http://a/2");
    assert_int_equal(frontier_queued(f), 3);
    done(f, take(f, "http://a/1", NULL), 0);
    done(f, take(f, "http://b/1", NULL), 0);
    done(f, take(f, "http://a/2", NULL), 0);
    take(f, NULL, NULL);
    assert_int_equal(frontier_queued(f), 0);
    frontier_free(f);
}

static void test_hosts_take_turns_and_per_host_bounds_each_one(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .per_host = 2 });
    push(f, "http://a/1");
    push(f, "http://a/2");
    push(f, "http://a/3");
    push(f, "http://b/1");
    struct crawl_job *a1 = take(f, "http://a/1", NULL);
    struct crawl_job *b1 = take(f, "http://b/1", NULL);
    struct crawl_job *a2 = take(f, "http://a/2", NULL);
    /* a has two in flight, b none left: nothing may start. */
    double wake;
    take(f, NULL, &wake);
    assert_true(wake == 0);         /* nothing waits for a time, only for a slot */
    done(f, b1, 0);
    take(f, NULL, NULL);
    done(f, a1, 0);
    struct crawl_job *a3 = take(f, "http://a/3", NULL);
    done(f, a2, 0);
    done(f, a3, 0);
    frontier_free(f);
}

static void test_a_delay_runs_from_when_the_request_went_out(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .delay = 1.0 });
    push(f, "http://a/1");
    push(f, "http://a/2");
    push(f, "http://b/1");
    double wake;
    struct crawl_job *a1 = take(f, "http://a/1", NULL);
    /* Until a/1's request goes out, a hands out nothing; b is its own. */
    struct crawl_job *b1 = take(f, "http://b/1", NULL);
    take(f, NULL, &wake);
    fake_now += 0.25;               /* the model took a quarter second to start it */
    frontier_started(f, a1);
    take(f, NULL, &wake);
    assert_true(wake == 1001.25);
    fake_now = 1001.2;
    take(f, NULL, NULL);
    fake_now = 1001.25;
    struct crawl_job *a2 = take(f, "http://a/2", NULL);
    done(f, a1, 0);
    done(f, b1, 0);
    done(f, a2, 0);
    frontier_free(f);
}

static void test_a_retry_after_pauses_its_host_and_not_the_others(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .per_host = 4 });
    push(f, "http://a/1");
    push(f, "http://a/2");
    push(f, "http://b/1");
    struct crawl_job *a1 = take(f, "http://a/1", NULL);
    a1->res.status = 429;
    a1->res.retry_after = 5;
    done(f, a1, 0);
    double wake;
    done(f, take(f, "http://b/1", NULL), 0);
    take(f, NULL, &wake);
    assert_true(wake == 1005);
    fake_now = 1005;
    done(f, take(f, "http://a/2", NULL), 0);
    frontier_free(f);
}

static void test_a_pause_lasts_at_most_retry_max_delay_and_never_past_the_deadline(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .per_host = 4, .retry_max_delay = 2 });
    push(f, "http://a/1");
    push(f, "http://a/2");
    push(f, "http://c/1");
    push(f, "http://c/2");
    struct crawl_job *a1 = take(f, "http://a/1", NULL);
    a1->res.retry_after = 100;
    done(f, a1, 0);
    double wake;
    struct crawl_job *c1 = take(f, "http://c/1", NULL);
    frontier_start(f, 0, 1001, NULL);       /* --deadline one second from now */
    c1->res.retry_after = 100;
    done(f, c1, 0);
    take(f, NULL, &wake);
    assert_true(wake == 1001);              /* c's pause, cut at the deadline */
    fake_now = 1001;
    done(f, take(f, "http://c/2", NULL), 0);
    take(f, NULL, &wake);
    assert_true(wake == 1002);              /* a's, cut at --retry-max-delay */
    fake_now = 1002;
    done(f, take(f, "http://a/2", NULL), 0);
    frontier_free(f);
}

static void test_retries_wait_apart_and_come_back_soonest_first(void **state)
{
    struct frontier *f = make((struct frontier_conf){ 0 });
    push(f, "http://a/1");
    push(f, "http://a/2");
    push(f, "http://a/3");
    push(f, "http://a/4");
    struct crawl_job *j1 = take(f, "http://a/1", NULL);
    struct crawl_job *j2 = take(f, "http://a/2", NULL);
    struct crawl_job *j3 = take(f, "http://a/3", NULL);
    frontier_retry(f, j1, 1003);
    frontier_retry(f, j2, 1001);
    frontier_retry(f, j3, 1002);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.queued, 4);
    assert_int_equal(n.delayed, 3);
    done(f, take(f, "http://a/4", NULL), 0);
    double wake;
    take(f, NULL, &wake);
    assert_true(wake == 1001);
    /* Two come due at once: the one due first goes first. */
    fake_now = 1002.5;
    done(f, take(f, "http://a/2", NULL), 0);
    done(f, take(f, "http://a/3", NULL), 0);
    take(f, NULL, &wake);
    assert_true(wake == 1003);
    fake_now = 1003;
    done(f, take(f, "http://a/1", NULL), 0);
    frontier_counts(f, &n);
    assert_int_equal(n.queued, 0);
    assert_int_equal(n.delayed, 0);
    frontier_free(f);
}

/* Found links in both ways of admitting them: prepared before the core's
 * lock, or by frontier_done itself. */
static void links_are_held_to_depth_scope_include_exclude_and_seen_once(int prepared)
{
    regex_t ex;
    assert_int_equal(regcomp(&ex, "skip", REG_EXTENDED | REG_NOSUB), 0);
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .exclude = &ex, .nexclude = 1 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    static const char *const links[] = {
        "http://a/x", "http://b/y", "http://a/x#part", "http://a/skip/1", "mailto:z@a",
        "http://A:80/x", "http://a/", "http://a/z",
    };
    give_links(p, links, sizeof links / sizeof *links);
    done(f, p, prepared);
    struct crawl_job *x = take(f, "http://a/x", NULL);
    assert_int_equal(x->depth, 1);
    static const char *const deeper[] = { "http://a/w" };
    give_links(x, deeper, 1);
    done(f, x, prepared);
    struct crawl_job *z = take(f, "http://a/z", NULL);
    struct crawl_job *w = take(f, "http://a/w", NULL);
    assert_int_equal(w->depth, 2);
    static const char *const deepest[] = { "http://a/v" };
    give_links(w, deepest, 1);      /* depth 2 is the last: not followed */
    done(f, w, prepared);
    done(f, z, prepared);
    take(f, NULL, NULL);
    frontier_free(f);
    regfree(&ex);
}

static void test_found_links_are_admitted_once_by_the_rules_prepared_or_not(void **state)
{
    links_are_held_to_depth_scope_include_exclude_and_seen_once(1);
    links_are_held_to_depth_scope_include_exclude_and_seen_once(0);
}

static void test_span_hosts_and_include_decide_other_hosts_and_paths(void **state)
{
    regex_t in;
    assert_int_equal(regcomp(&in, "/keep", REG_EXTENDED | REG_NOSUB), 0);
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .span_hosts = 1,
                                                      .include = &in, .ninclude = 1 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    static const char *const links[] = { "http://a/drop", "http://b/keep", "http://a/keep" };
    give_links(p, links, 3);
    done(f, p, 1);
    done(f, take(f, "http://b/keep", NULL), 1);
    done(f, take(f, "http://a/keep", NULL), 1);
    take(f, NULL, NULL);
    frontier_free(f);
    regfree(&in);
}

static void test_max_pages_counts_listed_pages_and_drops_later_links_as_left(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .max_pages = 3 });
    push(f, "http://a/");
    push(f, "http://a/listed");
    struct crawl_job *p = take(f, "http://a/", NULL);
    static const char *const links[] = { "http://a/1", "http://a/2", "http://a/3" };
    give_links(p, links, 3);
    done(f, p, 1);
    done(f, take(f, "http://a/listed", NULL), 1);
    done(f, take(f, "http://a/1", NULL), 1);
    take(f, NULL, NULL);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.started, 3);
    assert_int_equal(n.left, 2);
    assert_int_equal(n.queued, 0);
    frontier_free(f);
}

/* The end of page job j, as done() does it, after which *out (size n)
 * holds its links' verdicts as --links-out gives them, "reason" or "ok"
 * each, one space apart; j is freed. */
static void done_verdicts(struct frontier *f, struct crawl_job *j, int prepared, char *out,
                          size_t n)
{
    if (prepared)
        frontier_prepare(f, j);
    frontier_done(f, j);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < j->nverdicts && o < n; i++) {
        const char *why = job_verdict_reason(j->verdicts[i].verdict);
        if (!why && j->verdicts[i].verdict != JOB_LINK_ADMITTED)
            why = "UNDECIDED";
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? " " : "", why ? why : "ok");
    }
    job_free(j);
}

/* Robots job r back with status st and body. */
static void robots_back_job(struct frontier *f, struct crawl_job *r, long st, const char *body)
{
    assert_non_null(r);
    assert_int_equal(r->kind, JOB_ROBOTS);
    r->res.status = st;
    r->body = strdup(body);
    r->body_len = strlen(body);
    done(f, r, 1);
}

/* A robots job back with status st and body. */
static void robots_back(struct frontier *f, long st, const char *body)
{
    struct crawl_job *r = frontier_pick(f, NULL);
    assert_non_null(r);
    assert_int_equal(r->kind, JOB_ROBOTS);
    r->res.status = st;
    r->body = strdup(body);
    r->body_len = strlen(body);
    done(f, r, 1);
}

static void test_robots_txt_goes_first_holds_its_host_and_fails_what_it_forbids(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1 });
    push(f, "http://a/open");
    push(f, "http://a/private/1");
    struct crawl_job *r = frontier_pick(f, NULL);
    assert_string_equal(r->url, "http://a:80/robots.txt");
    take(f, NULL, NULL);            /* the host waits for its rules */
    r->res.status = 200;
    r->body = strdup("User-agent: *\nDisallow: /private\n");
    r->body_len = strlen(r->body);
    done(f, r, 1);
    struct crawl_job *bad = take(f, "http://a/private/1", NULL);
    assert_true(bad->failed_early);
    assert_int_equal(bad->res.fail, CRAWL_FAIL_ROBOTS);
    done(f, bad, 1);
    struct crawl_job *ok = take(f, "http://a/open", NULL);
    static const char *const links[] = { "http://a/private/2", "http://a/fine" };
    give_links(ok, links, 2);
    done(f, ok, 1);
    done(f, take(f, "http://a/fine", NULL), 1);
    take(f, NULL, NULL);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.robots_fetched, 1);
    assert_int_equal(n.robots_blocked, 2);
    frontier_free(f);
}

static void test_an_unreachable_robots_txt_forbids_its_host_and_says_why(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1 });
    push(f, "http://a/1");
    robots_back(f, 503, "");
    struct crawl_job *j = take(f, "http://a/1", NULL);
    assert_int_equal(j->res.fail, CRAWL_FAIL_ROBOTS);
    assert_string_equal(j->res.error, "robots.txt unreachable (503): host treated as disallowed");
    done(f, j, 1);
    frontier_free(f);
}

static void test_crawl_delay_spaces_the_host_from_its_robots_request_unless_ignored(void **state)
{
    for (int ignore = 0; ignore <= 1; ignore++) {
        struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1,
                                                          .ignore_crawl_delay = ignore });
        push(f, "http://a/1");
        push(f, "http://a/2");
        robots_back(f, 200, "User-agent: *\nCrawl-delay: 3\n");
        double wake;
        if (!ignore) {
            take(f, NULL, &wake);
            assert_true(wake == 1003);  /* three seconds after robots.txt's request */
            fake_now = 1003;
        }
        struct crawl_job *j1 = take(f, "http://a/1", NULL);
        frontier_started(f, j1);
        wake = 0;
        struct crawl_job *j2 = frontier_pick(f, &wake);
        if (ignore) {
            assert_non_null(j2);
        } else {
            assert_null(j2);
            assert_true(wake == 1006);
            fake_now = 1006;
            j2 = take(f, "http://a/2", NULL);
        }
        done(f, j1, 1);
        done(f, j2, 1);
        frontier_free(f);
    }
}

/* A robots.txt request that went out late (a thread started late, on a
 * loaded machine): the Crawl-delay it brings runs from when it went out. */
static void test_crawl_delay_runs_from_when_the_robots_request_went_out(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1 });
    push(f, "http://a/1");
    struct crawl_job *r = frontier_pick(f, NULL);
    assert_non_null(r);
    assert_int_equal(r->kind, JOB_ROBOTS);
    fake_now = 1000.5;
    frontier_started(f, r);
    fake_now = 1001;
    r->res.status = 200;
    r->body = strdup("User-agent: *\nCrawl-delay: 3\n");
    r->body_len = strlen(r->body);
    done(f, r, 1);
    double wake;
    take(f, NULL, &wake);
    assert_true(wake == 1003.5);
    fake_now = 1003.5;
    done(f, take(f, "http://a/1", NULL), 1);
    frontier_free(f);
}

/* --auto-throttle: the delay a host's first answer sets runs from when
 * that request went out, not from when it was picked. */
static void test_a_throttled_delay_runs_from_when_the_first_request_went_out(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .auto_throttle = 1 });
    push(f, "http://a/1");
    push(f, "http://a/2");
    struct crawl_job *a = take(f, "http://a/1", NULL);
    assert_true(a->pace_start);
    /* Alone until it is answered, and sent 0.25 s after it was picked. */
    take(f, NULL, NULL);
    fake_now = 1000.25;
    frontier_started(f, a);
    fake_now = 1000.375;
    a->res.status = 503;
    a->res.time_total = 0.125;
    done(f, a, 1);
    double wake;
    take(f, NULL, &wake);
    assert_true(wake == 1000.75);
    fake_now = 1000.75;
    done(f, take(f, "http://a/2", NULL), 1);
    frontier_free(f);
}

static void verdicts_are_given_in_page_order(int prepared)
{
    regex_t ex;
    assert_int_equal(regcomp(&ex, "skip", REG_EXTENDED | REG_NOSUB), 0);
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .robots = 1, .exclude = &ex,
                                                      .nexclude = 1, .verdicts = 1 });
    push(f, "http://a/");
    robots_back(f, 200, "User-agent: *\nDisallow: /private\n");
    struct crawl_job *p = take(f, "http://a/", NULL);
    p->res.final_url = strdup("http://a/home");
    static const char *const links[] = {
        "http://a/x", "http://b/y", "http://a/x#part", "http://a/skip/1", "mailto:z@a",
        "http://a/private/1", "http://a/", "http://a/z",
    };
    give_links(p, links, sizeof links / sizeof *links);
    char v[256];
    done_verdicts(f, p, prepared, v, sizeof v);
    assert_string_equal(v, "ok out of scope seen excluded not http robots seen ok");
    /* A found page's parent is the final URL of the page it was found on. */
    struct crawl_job *x = take(f, "http://a/x", NULL);
    assert_string_equal(x->parent, "http://a/home");
    static const char *const deeper[] = { "http://a/w", "http://a/z" };
    give_links(x, deeper, 2);
    done_verdicts(f, x, prepared, v, sizeof v);
    assert_string_equal(v, "ok seen");
    struct crawl_job *z = take(f, "http://a/z", NULL);
    assert_string_equal(z->parent, "http://a/home");
    done(f, z, prepared);
    struct crawl_job *w = take(f, "http://a/w", NULL);
    assert_string_equal(w->parent, "http://a/x");      /* no redirect: its URL */
    static const char *const deepest[] = { "http://a/v", "http://b/v" };
    give_links(w, deepest, 2);          /* depth 2 is the last: not followed */
    done_verdicts(f, w, prepared, v, sizeof v);
    assert_string_equal(v, "depth depth");
    take(f, NULL, NULL);
    frontier_free(f);
    regfree(&ex);
}

static void test_each_link_gets_its_verdict_in_page_order_prepared_or_not(void **state)
{
    verdicts_are_given_in_page_order(1);
    verdicts_are_given_in_page_order(0);
}

static void test_verdicts_say_max_pages_queue_full_and_cancelled(void **state)
{
    char v[256];
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .max_pages = 2, .verdicts = 1 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    static const char *const links[] = { "http://a/1", "http://a/2" };
    give_links(p, links, 2);
    done_verdicts(f, p, 1, v, sizeof v);
    assert_string_equal(v, "ok ok");    /* one page started: room for one more */
    struct crawl_job *one = take(f, "http://a/1", NULL);
    static const char *const more[] = { "http://a/3" };
    give_links(one, more, 1);
    done_verdicts(f, one, 1, v, sizeof v);
    assert_string_equal(v, "max pages");
    frontier_free(f);

    f = make((struct frontier_conf){ .depth = 1, .max_queue = 1, .verdicts = 1 });
    push(f, "http://a/");
    p = take(f, "http://a/", NULL);
    static const char *const many[] = { "http://a/1", "http://a/2", "http://a/", "http://a/1" };
    give_links(p, many, 4);
    done_verdicts(f, p, 1, v, sizeof v);
    assert_string_equal(v, "ok queue full seen seen");
    frontier_free(f);

    atomic_int cancelled = 1;
    f = make((struct frontier_conf){ .depth = 1, .verdicts = 1 });
    frontier_start(f, 0, 0, &cancelled);
    push(f, "http://a/");
    p = take(f, "http://a/", NULL);
    give_links(p, links, 2);
    done_verdicts(f, p, 0, v, sizeof v);
    assert_string_equal(v, "cancelled cancelled");
    take(f, NULL, NULL);
    frontier_free(f);
}

static void test_without_verdicts_links_are_not_kept(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    static const char *const links[] = { "http://a/1" };
    give_links(p, links, 1);
    frontier_prepare(f, p);
    frontier_done(f, p);
    assert_null(p->verdicts);
    assert_int_equal(p->nverdicts, 0);
    job_free(p);
    done(f, take(f, "http://a/1", NULL), 1);
    frontier_free(f);
}

static void test_a_link_held_for_robots_txt_keeps_its_parent(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1, .span_hosts = 1 });
    push(f, "http://a/");
    robots_back(f, 404, "");
    struct crawl_job *p = take(f, "http://a/", NULL);
    p->res.final_url = strdup("http://a/final");
    static const char *const links[] = { "http://b/1" };
    give_links(p, links, 1);
    done(f, p, 1);                  /* b/1 waits for b's robots.txt */
    robots_back(f, 404, "");
    struct crawl_job *b = take(f, "http://b/1", NULL);
    assert_string_equal(b->parent, "http://a/final");
    assert_null(b->source);
    done(f, b, 1);
    frontier_free(f);
}

/* ---- --sitemaps (frontier_sitemap.c) ------------------------------------ */

/* Takes the next job, which must be the sitemap at url, read for the
 * listed URLs of host scope at level depth (0: robots.txt named it, 1: an
 * index listed it). */
static struct crawl_job *take_sitemap(struct frontier *f, const char *url, const char *scope,
                                      int depth)
{
    struct crawl_job *s = take(f, url, NULL);
    assert_int_equal(s->kind, JOB_SITEMAP);
    assert_string_equal(s->scope, scope);
    assert_int_equal(s->depth, depth);
    return s;
}

/* Sitemap job s back, as fetch leaves it: the page URLs of a urlset in its
 * links, the sitemaps of an index in its body, one a line. */
static void sitemap_back(struct frontier *f, struct crawl_job *s, const char *const *links,
                         size_t n, const char *index)
{
    if (n)
        give_links(s, links, n);
    if (index)
        s->body = strdup(index);
    done(f, s, 1);
}

static void test_robots_txt_sitemap_lines_queue_each_sitemap_once_for_the_listed_host(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1 });
    push(f, "http://a/1");
    robots_back(f, 200,
                "User-agent: *\nDisallow: /private\n"
                "Sitemap: http://a/private/s1.xml\nSitemap: ftp://a/s.xml\n"
                "Sitemap: http://b/s2.xml\nSitemap: http://a/private/s1.xml\n");
    /* Each on its own host, a's in its turn after the listed page, read
     * for a's pages. */
    done(f, take(f, "http://a/1", NULL), 1);
    struct crawl_job *s2 = take_sitemap(f, "http://b/s2.xml", "a", 0);
    struct crawl_job *s1 = take_sitemap(f, "http://a/private/s1.xml", "a", 0);
    assert_false(s1->failed_early);
    take(f, NULL, NULL);            /* once each; ftp is no sitemap */
    sitemap_back(f, s1, NULL, 0, NULL);
    sitemap_back(f, s2, NULL, 0, NULL);
    take(f, NULL, NULL);
    frontier_free(f);
}

/* A sitemap on another listed host waits in its queue for that host's
 * robots.txt, and is kept when the rules come, whatever they say of its
 * path: the listed URLs the rules forbid fail. */
static void test_a_sitemap_waiting_for_its_hosts_robots_txt_is_kept_whatever_its_path(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1 });
    push(f, "http://a/1");
    push(f, "http://b/private/1");
    robots_back(f, 200, "Sitemap: http://b/private/s.xml\n");
    robots_back(f, 200, "User-agent: *\nDisallow: /private\n");
    struct crawl_job *bad = take(f, "http://b/private/1", NULL);
    assert_true(bad->failed_early);
    assert_int_equal(bad->res.fail, CRAWL_FAIL_ROBOTS);
    done(f, bad, 1);
    done(f, take(f, "http://a/1", NULL), 1);
    struct crawl_job *s = take_sitemap(f, "http://b/private/s.xml", "a", 0);
    assert_false(s->failed_early);
    done(f, s, 1);
    done(f, take_sitemap(f, "http://b/sitemap.xml", "b", 0), 1);
    take(f, NULL, NULL);
    frontier_free(f);
}

static void test_a_listed_host_without_sitemap_lines_has_its_sitemap_xml_read(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1 });
    push(f, "http://a/1");
    push(f, "http://b:8080/1");
    robots_back(f, 200, "User-agent: *\nDisallow: /x\n");
    robots_back(f, 404, "");
    done(f, take(f, "http://a/1", NULL), 1);
    done(f, take(f, "http://b:8080/1", NULL), 1);
    done(f, take_sitemap(f, "http://a/sitemap.xml", "a", 0), 1);
    done(f, take_sitemap(f, "http://b:8080/sitemap.xml", "b", 0), 1);
    take(f, NULL, NULL);
    frontier_free(f);
}

/* A sitemap's URLs are held to what a found link is, at depth 0: the
 * listed host's scope, --exclude, the seen set (the listed pages', and the
 * sitemap's own URL is no page seen), robots.txt. */
static void test_a_sitemaps_urls_join_at_depth_zero_held_to_scope_exclude_seen_and_robots(
    void **state)
{
    regex_t ex;
    assert_int_equal(regcomp(&ex, "skip", REG_EXTENDED | REG_NOSUB), 0);
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1,
                                                      .exclude = &ex, .nexclude = 1 });
    push(f, "http://a/1");
    robots_back(f, 200, "User-agent: *\nDisallow: /private\nSitemap: http://a/s.xml\n");
    done(f, take(f, "http://a/1", NULL), 1);
    struct crawl_job *s = take_sitemap(f, "http://a/s.xml", "a", 0);
    s->res.final_url = strdup("http://a/s.xml.gz");
    static const char *const urls[] = {
        "http://a/p1", "http://a/1", "http://b/p", "http://a/p1#top", "http://a/skip/1",
        "http://a/private/2", "mailto:x@a", "http://a/s.xml", "http://a/p2",
    };
    sitemap_back(f, s, urls, sizeof urls / sizeof *urls, NULL);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.queued, 3);
    assert_int_equal(n.robots_blocked, 1);
    const char *const want[] = { "http://a/p1", "http://a/s.xml", "http://a/p2" };
    for (size_t i = 0; i < 3; i++) {
        struct crawl_job *p = take(f, want[i], NULL);
        assert_int_equal(p->kind, JOB_PAGE);
        assert_int_equal(p->depth, 0);
        assert_true(p->found);
        assert_string_equal(p->parent, "http://a/s.xml.gz");
        done(f, p, 1);
    }
    take(f, NULL, NULL);
    frontier_free(f);
    regfree(&ex);
}

/* --max-pages: a sitemap's URLs are not admitted once the bound is
 * reached, and those admitted before it are dropped as left in their turn. */
static void test_max_pages_bounds_a_sitemaps_urls_as_it_bounds_links(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1,
                                                      .max_pages = 2 });
    push(f, "http://a/1");
    robots_back(f, 404, "");
    done(f, take(f, "http://a/1", NULL), 1);
    static const char *const urls[] = { "http://a/p1", "http://a/p2", "http://a/p3" };
    sitemap_back(f, take_sitemap(f, "http://a/sitemap.xml", "a", 0), urls, 3, NULL);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.queued, 3);  /* one page started of two: all three admitted */
    done(f, take(f, "http://a/p1", NULL), 1);
    take(f, NULL, NULL);
    frontier_counts(f, &n);
    assert_int_equal(n.started, 2);
    assert_int_equal(n.left, 2);
    assert_int_equal(n.queued, 0);
    frontier_free(f);

    /* The bound reached before the sitemap is back: none is admitted. */
    f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1, .max_pages = 1 });
    push(f, "http://a/1");
    robots_back(f, 404, "");
    done(f, take(f, "http://a/1", NULL), 1);
    sitemap_back(f, take_sitemap(f, "http://a/sitemap.xml", "a", 0), urls, 3, NULL);
    frontier_counts(f, &n);
    assert_int_equal(n.queued, 0);
    assert_int_equal(n.left, 0);
    take(f, NULL, NULL);
    frontier_free(f);
}

/* An index's sitemaps are read next, each once, for the same listed host;
 * an index an index lists is read for its pages, not its sitemaps (the
 * protocol nests no deeper). */
static void test_an_index_queues_its_sitemaps_once_and_no_deeper(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1 });
    push(f, "http://a/1");
    robots_back(f, 200, "Sitemap: http://a/index.xml\n");
    done(f, take(f, "http://a/1", NULL), 1);
    sitemap_back(f, take_sitemap(f, "http://a/index.xml", "a", 0), NULL, 0,
                 "http://a/s-1.xml\nhttp://a/index.xml\nhttp://b/s-2.xml\nhttp://a/s-1.xml\n"
                 "not a url\n");
    struct crawl_job *s1 = take_sitemap(f, "http://a/s-1.xml", "a", 1);
    struct crawl_job *s2 = take_sitemap(f, "http://b/s-2.xml", "a", 1);
    take(f, NULL, NULL);
    static const char *const urls[] = { "http://a/p" };
    sitemap_back(f, s1, urls, 1, "http://a/s-3.xml\n");
    sitemap_back(f, s2, NULL, 0, NULL);
    done(f, take(f, "http://a/p", NULL), 1);
    take(f, NULL, NULL);            /* s-3 is not read */
    frontier_free(f);
}

/* --no-robots: robots.txt is still asked for its Sitemap lines, and no
 * rule of it applies. */
static void test_without_robots_rules_the_sitemap_lines_are_read_and_nothing_is_forbidden(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .sitemaps = 1 });
    push(f, "http://a/private/1");
    robots_back(f, 200, "User-agent: *\nDisallow: /private\nSitemap: http://a/s.xml\n");
    struct crawl_job *j = take(f, "http://a/private/1", NULL);
    assert_false(j->failed_early);
    done(f, j, 1);
    static const char *const urls[] = { "http://a/private/2" };
    sitemap_back(f, take_sitemap(f, "http://a/s.xml", "a", 0), urls, 1, NULL);
    done(f, take(f, "http://a/private/2", NULL), 1);
    take(f, NULL, NULL);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.robots_fetched, 1);
    assert_int_equal(n.robots_blocked, 0);
    frontier_free(f);
}

/* A host a link reached first has its robots.txt in before a URL of it is
 * listed: its sitemaps are read when it is listed, and a host only linked
 * to has none read. */
static void test_a_host_listed_after_its_robots_txt_came_in_has_its_sitemaps_read_then(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1, .sitemaps = 1,
                                                      .span_hosts = 1 });
    push(f, "http://a/1");
    robots_back(f, 404, "");
    struct crawl_job *p = take(f, "http://a/1", NULL);
    static const char *const links[] = { "http://b/x" };
    give_links(p, links, 1);
    done(f, p, 1);                  /* b/x waits for b's robots.txt */
    robots_back(f, 200, "Sitemap: http://b/s.xml\n");
    done(f, take_sitemap(f, "http://a/sitemap.xml", "a", 0), 1);
    done(f, take(f, "http://b/x", NULL), 1);
    take(f, NULL, NULL);            /* b is no listed host yet */
    push(f, "http://b/listed");       /* its sitemap is queued first */
    done(f, take_sitemap(f, "http://b/s.xml", "b", 0), 1);
    done(f, take(f, "http://b/listed", NULL), 1);
    take(f, NULL, NULL);
    frontier_free(f);
}

/* A cancelled crawl admits no URL of a sitemap back, and queues none of an
 * index's sitemaps. */
static void test_a_cancelled_crawl_takes_nothing_from_a_sitemap_back(void **state)
{
    static atomic_int cancelled;
    atomic_store(&cancelled, 0);
    struct frontier *f = make((struct frontier_conf){ .robots = 1, .sitemaps = 1 });
    frontier_start(f, 0, 0, &cancelled);
    push(f, "http://a/1");
    robots_back(f, 404, "");
    done(f, take(f, "http://a/1", NULL), 1);
    struct crawl_job *s = take_sitemap(f, "http://a/sitemap.xml", "a", 0);
    atomic_store(&cancelled, 1);
    static const char *const urls[] = { "http://a/p" };
    sitemap_back(f, s, urls, 1, "http://a/s-1.xml\n");
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.queued, 0);
    frontier_free(f);
}

static void test_canonical_urls_are_one_page_and_strip_query_drops_arguments(void **state)
{
    regex_t utm;
    assert_int_equal(regcomp(&utm, "utm_.*", REG_EXTENDED), 0);
    static const char *const links[] = {
        "http://a/p?b=2&a=1", "http://a/p?a=1&b=2", "http://a/p?a=1&b=2&utm_source=z",
        "http://a/q?x&y", "http://a/p?a=1&b=2&utm",
    };
    char v[256];
    for (int canonical = 0; canonical <= 1; canonical++) {
        struct frontier *f = make((struct frontier_conf){
            .depth = 1, .verdicts = 1, .canonical = canonical, .strip = canonical ? &utm : NULL,
            .nstrip = canonical ? 1 : 0 });
        push(f, "http://a/q?y&x");
        struct crawl_job *p = take(f, "http://a/q?y&x", NULL);
        give_links(p, links, sizeof links / sizeof *links);
        done_verdicts(f, p, 1, v, sizeof v);
        assert_string_equal(v, canonical ? "ok seen seen seen ok" : "ok ok ok ok ok");
        /* A page is fetched as the page wrote it, whatever its key. */
        done(f, take(f, "http://a/p?b=2&a=1", NULL), 1);
        if (!canonical) {
            done(f, take(f, "http://a/p?a=1&b=2", NULL), 1);
            done(f, take(f, "http://a/p?a=1&b=2&utm_source=z", NULL), 1);
            done(f, take(f, "http://a/q?x&y", NULL), 1);
        }
        done(f, take(f, "http://a/p?a=1&b=2&utm", NULL), 1);
        take(f, NULL, NULL);
        /* The key itself. */
        uint64_t h1, h2;
        assert_int_equal(frontier_seen_hash(f, "http://a/p?b=2&a=1&utm_x=", &h1), 0);
        assert_int_equal(frontier_seen_hash(f, "http://a/p?a=1&b=2", &h2), 0);
        assert_int_equal(h1 == h2, canonical);
        assert_int_equal(frontier_seen_hash(f, "http://a/p", &h1), 0);
        assert_int_equal(h1, frontier_hash_url("http://a/p"));
        frontier_free(f);
    }
    regfree(&utm);
}

static void test_the_spill_file_takes_links_past_memory_and_gives_them_back_in_order(void **state)
{
    enum { N = 40000 };     /* past the frontier's in-memory bound (32,768) */
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .span_hosts = 1 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    p->links = calloc(N, sizeof *p->links);
    assert_non_null(p->links);
    for (size_t i = 0; i < N; i++) {
        char u[64];
        snprintf(u, sizeof u, "http://h%zu/p%zu", i % 7, i);
        p->links[i] = strdup(u);
    }
    p->nlinks = N;
    p->res.final_url = strdup("http://a/from");
    done(f, p, 1);
    assert_true(frontier_queued(f) < N);    /* the rest wait on disk */
    /* Hosts take turns, so the order to check is each host's own. */
    size_t next[7] = { 0 }, seen = 0;
    for (size_t i = 0; i < 7; i++)
        next[i] = i;
    struct crawl_job *j;
    while ((j = (frontier_refill(f), frontier_pick(f, NULL)))) {
        size_t h, k;
        assert_int_equal(sscanf(j->url, "http://h%zu/p%zu", &h, &k), 2);
        assert_int_equal(k, next[h]);
        assert_string_equal(j->parent, "http://a/from");   /* kept on disk too */
        next[h] += 7;
        seen++;
        done(f, j, 1);
    }
    assert_int_equal(seen, N);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.left, 0);
    assert_int_equal(n.queued, 0);
    frontier_free(f);
}

/* Gives page j n links "http://PREFIX/pI", with a final URL of its own. */
static void give_many(struct crawl_job *j, const char *prefix, size_t n, const char *final)
{
    j->links = calloc(n, sizeof *j->links);
    assert_non_null(j->links);
    for (size_t i = 0; i < n; i++) {
        char u[64];
        snprintf(u, sizeof u, "http://%s/p%zu", prefix, i);
        j->links[i] = strdup(u);
    }
    j->nlinks = n;
    j->res.final_url = strdup(final);
}

static void test_spilled_links_of_pages_in_turn_keep_each_its_own_parent(void **state)
{
    enum { A = 33000, B = 300 };    /* A's last 232, then all of B's, spilled */
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .span_hosts = 1 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    give_many(p, "a", A, "http://a/final");
    done(f, p, 1);
    struct crawl_job *first = take(f, "http://a/p0", NULL);
    give_many(first, "b", B, "http://a/p0-final");
    done(f, first, 1);
    size_t from_a = 1, from_b = 0;
    struct crawl_job *j;
    while ((j = (frontier_refill(f), frontier_pick(f, NULL)))) {
        int b = strncmp(j->url, "http://b/", 9) == 0;
        assert_string_equal(j->parent, b ? "http://a/p0-final" : "http://a/final");
        from_a += !b;
        from_b += b;
        done(f, j, 1);
    }
    assert_int_equal(from_a, A);
    assert_int_equal(from_b, B);
    frontier_free(f);
}

/* Takes the jobs memory holds now, without reading the spill, up to
 * "http://a/p<end - 1>": each must be "http://a/p<next>", in order.
 * Returns how many. */
static size_t take_memory(struct frontier *f, size_t *next, size_t end)
{
    struct crawl_job *j;
    size_t n = 0;
    while (*next < end && (j = frontier_pick(f, NULL))) {
        char want[64];
        snprintf(want, sizeof want, "http://a/p%zu", (*next)++);
        assert_string_equal(j->url, want);
        done(f, j, 1);
        n++;
    }
    return n;
}

static void test_links_admitted_during_a_spill_read_come_after_the_claimed_ones(void **state)
{
    enum { N = FRONTIER_MEM_JOBS + 20000, M = 100 };
    struct frontier *f = make((struct frontier_conf){ .depth = 2 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    give_many(p, "a", N, "http://a/");
    done(f, p, 1);
    assert_int_equal(frontier_queued(f), FRONTIER_MEM_JOBS);
    struct crawl_job *held = take(f, "http://a/p0", NULL);
    size_t next = 1;
    assert_int_equal(take_memory(f, &next, N), FRONTIER_MEM_JOBS - 1);
    /* The read is claimed: the claimed links and the chunks it writes out
     * belong to it, and links found meanwhile join the spill behind them. */
    assert_int_equal(frontier_refill_begin(f), 1);
    assert_int_equal(frontier_refilling(f), 1);
    assert_int_equal(frontier_refill_begin(f), 0);
    give_many(held, "a", M, "http://a/p0");
    for (size_t i = 0; i < M; i++) {
        free(held->links[i]);
        char u[64];
        snprintf(u, sizeof u, "http://a/q%zu", i);
        held->links[i] = strdup(u);
    }
    done(f, held, 1);
    frontier_refill_read(f);
    /* Whole chunks of a quarter of memory's bound were read and placed at
     * the end, more wait: the next read is due at once. */
    assert_int_equal(frontier_queued(f), 0);
    assert_int_equal(frontier_refill_end(f), 1);
    assert_in_range(frontier_queued(f), FRONTIER_MEM_JOBS / 4, FRONTIER_MEM_JOBS / 2 - 1);
    assert_int_equal(frontier_refilling(f), 0);
    assert_true(f->sp.nfile > 0);                   /* a file holds the rest */
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_true(n.spill_bytes > 0);
    /* Every spilled link once, in the order admitted, then the new ones. */
    while (next < N) {
        frontier_refill(f);
        size_t got = take_memory(f, &next, N);
        assert_true(got > 0);
    }
    for (size_t i = 0; i < M; i++) {
        char want[64];
        snprintf(want, sizeof want, "http://a/q%zu", i);
        done(f, take(f, want, NULL), 1);
    }
    take(f, NULL, NULL);
    frontier_counts(f, &n);
    assert_int_equal(n.left, 0);
    assert_int_equal(n.queued, 0);
    assert_int_equal(n.spill_bytes, 0);
    assert_true(f->sp.nfile == 0 && !f->sp.fhead);
    frontier_free(f);
}

static void test_a_drain_during_a_spill_read_counts_every_link_left_once(void **state)
{
    enum { N = FRONTIER_MEM_JOBS + 20000 };
    struct frontier *f = make((struct frontier_conf){ .depth = 2 });
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    give_many(p, "a", N, "http://a/");
    done(f, p, 1);
    struct crawl_job *held = take(f, "http://a/p0", NULL);
    size_t next = 1;
    take_memory(f, &next, N);
    assert_int_equal(frontier_refill_begin(f), 1);
    frontier_refill_read(f);
    /* Cancelled while the claimed links wait to be placed: they, the links
     * on disk and those in memory are all left, and counted so once. */
    assert_null(frontier_drain(f));
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.left, N - FRONTIER_MEM_JOBS);
    assert_int_equal(n.spill_bytes, 0);
    /* A page that was under way when the crawl was cancelled still ends. */
    static const char *const links[] = { "http://a/late" };
    give_links(held, links, 1);
    done(f, held, 1);
    assert_int_equal(frontier_refill_end(f), 0);
    frontier_counts(f, &n);
    assert_int_equal(n.left, N - FRONTIER_MEM_JOBS);
    done(f, take(f, "http://a/late", NULL), 1);
    take(f, NULL, NULL);
    assert_int_equal(frontier_refill_begin(f), 0);
    frontier_free(f);
}

/* A reader takes jobs and reads the spill as a model's thread does (the
 * read without the lock) while the test's thread admits links under it. */
struct spill_race {
    struct frontier *f;
    pthread_mutex_t mu;
    atomic_int producing;
    size_t links;               /* found on each page */
    size_t k, i;                /* the link due next: the i-th of page k */
    size_t taken;
    int bad;
};

static void *spill_reader(void *arg)
{
    struct spill_race *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        int producing = atomic_load(&r->producing);
        if (frontier_refill_begin(r->f)) {
            pthread_mutex_unlock(&r->mu);
            frontier_refill_read(r->f);
            pthread_mutex_lock(&r->mu);
            frontier_refill_end(r->f);
        }
        size_t got = 0;
        struct crawl_job *j;
        while ((j = frontier_pick(r->f, NULL))) {
            size_t k, i;
            /* One host: they come out in the order admitted, page by page. */
            if (sscanf(j->url, "http://a/k%zu-%zu", &k, &i) != 2 || k != r->k || i != r->i)
                r->bad = 1;
            if (++r->i == r->links) {
                r->k++;
                r->i = 0;
            }
            r->taken++;
            got++;
            frontier_done(r->f, j);
            job_free(j);
        }
        int idle = !got && !frontier_refilling(r->f) && !producing;
        pthread_mutex_unlock(&r->mu);
        if (idle)
            return NULL;
    }
}

static void test_links_admitted_while_another_thread_reads_the_spill_come_out_once_in_order(
    void **state)
{
    enum { PAGES = 4, LINKS = FRONTIER_MEM_JOBS + 8000 };   /* each page spills */
    struct frontier *f = make((struct frontier_conf){ .depth = 2 });
    struct crawl_job *page[PAGES];
    for (size_t k = 0; k < PAGES; k++) {
        char u[32];
        snprintf(u, sizeof u, "http://a/k%zu", k);
        push(f, u);
        page[k] = frontier_pick(f, NULL);
        assert_non_null(page[k]);
    }
    struct spill_race r = { .f = f, .producing = 1, .links = LINKS };
    pthread_mutex_init(&r.mu, NULL);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, spill_reader, &r), 0);
    for (size_t k = 0; k < PAGES; k++) {
        char prefix[16], final[32];
        snprintf(prefix, sizeof prefix, "a/k%zu-", k);
        snprintf(final, sizeof final, "http://a/k%zu", k);
        give_many(page[k], "a", LINKS, final);
        for (size_t i = 0; i < LINKS; i++) {    /* "http://a/kK-I" */
            char u[64];
            snprintf(u, sizeof u, "http://%s%zu", prefix, i);
            free(page[k]->links[i]);
            page[k]->links[i] = strdup(u);
        }
        frontier_prepare(f, page[k]);
        pthread_mutex_lock(&r.mu);
        frontier_done(f, page[k]);
        if (k == PAGES - 1)
            atomic_store(&r.producing, 0);
        pthread_mutex_unlock(&r.mu);
        job_free(page[k]);
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.bad, 0);
    assert_int_equal(r.taken, PAGES * LINKS);
    assert_int_equal(r.k, PAGES);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.left, 0);
    assert_int_equal(n.spill_bytes, 0);
    pthread_mutex_destroy(&r.mu);
    frontier_free(f);
}

/* A link waits as its fields (queued, or held for its host's robots.txt)
 * and comes out a whole job: its URL, scope, parent, depth and redirects,
 * numbered as it starts, its validators on its request. */
static void test_a_queued_link_comes_out_a_whole_job(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .robots = 1, .span_hosts = 1 });
    push(f, "http://a/");
    robots_back(f, 404, "");
    struct crawl_job *p = take(f, "http://a/", NULL);
    p->res.final_url = strdup("http://a/home");
    static const char *const links[] = { "http://a/x", "http://b/y" };
    give_links(p, links, 2);
    done(f, p, 1);
    /* b/y waits for b's robots.txt, which goes first. */
    robots_back(f, 404, "");
    const char *want[] = { "http://a/x", "http://b/y" };
    for (int i = 0; i < 2; i++) {
        struct crawl_job *j = take(f, want[i], NULL);
        assert_int_equal(j->kind, JOB_PAGE);
        assert_string_equal(j->scope, "a");
        assert_string_equal(j->parent, "http://a/home");
        assert_int_equal(j->depth, 1);
        assert_int_equal(j->hops, 0);
        assert_true(j->found && j->unnumbered);
        assert_null(j->if_etag);
        assert_non_null(j->host);
        done(f, j, 1);
    }
    take(f, NULL, NULL);
    frontier_free(f);

    /* Every field, validators too, through the entry alone. */
    struct frontier_cond cond = { "\"v1\"", "Tue, 01 Dec 2026 10:00:00 GMT" };
    struct job_qent *e = frontier__qlink_new("http://c/p", "c", NULL, 3, 42, 2, &cond, "/p");
    assert_non_null(e);
    assert_null(e->job);
    assert_string_equal(frontier__qent_url(e), "http://c/p");
    assert_int_equal(frontier__qent_mark(e), 42);
    assert_string_equal(frontier__qent_path(e), "/p");
    struct crawl_job *j = frontier__qent_job(e);
    assert_non_null(j);
    assert_string_equal(j->url, "http://c/p");
    assert_string_equal(j->scope, "c");
    assert_null(j->parent);
    assert_int_equal(j->depth, 3);
    assert_int_equal(j->mark, 42);
    assert_int_equal(j->hops, 2);
    assert_string_equal(j->if_etag, "\"v1\"");
    assert_string_equal(j->if_modified, "Tue, 01 Dec 2026 10:00:00 GMT");
    job_free(j);
}

static void test_drain_hands_back_every_queued_job_and_counts_links_as_left(void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1, .span_hosts = 1 });
    push(f, "http://a/1");
    push(f, "http://b/1");
    robots_back(f, 404, "");            /* a's: everything allowed */
    struct crawl_job *rb = frontier_pick(f, NULL);
    assert_string_equal(rb->url, "http://b:80/robots.txt");
    struct crawl_job *a1 = take(f, "http://a/1", NULL);
    static const char *const links[] = { "http://a/2", "http://b/2" };
    give_links(a1, links, 2);
    done(f, a1, 1);
    /* b's robots.txt is out: b/1 waits in b's queue, b/2 held back. */
    struct crawl_job *l = frontier_drain(f);
    size_t pages = 0;
    for (struct crawl_job *j = l, *jn; j; j = jn) {
        jn = j->qnext;
        pages++;
        job_free(j);
    }
    assert_int_equal(pages, 1);         /* b/1, listed: it gets its row */
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.left, 2);        /* a/2 queued, b/2 held for b's robots.txt */
    assert_int_equal(n.queued, 0);
    frontier_free(f);
}

/* A store of the test's own: pages admitted get ids; what the test asks
 * fails, with its error text. */
struct fake_store {
    struct state st;
    int fail_admit;             /* admit fails (-EIO) for URLs with "bad" */
    int fail_load;              /* the queue cannot be read */
    int loads;                  /* queue_load calls */
    uint64_t next_id;
};

static const char *fake_error(struct state *st)
{
    return "the fake store failed";
}

static int fake_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    struct fake_store *fs = (struct fake_store *)st;
    if (fs->fail_admit && strstr(p->url, "bad"))
        return -5;
    *id = ++fs->next_id;
    return 1;
}

static int fake_load(struct state *st, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data), void *data)
{
    struct fake_store *fs = (struct fake_store *)st;
    fs->loads++;
    return fs->fail_load ? -5 : 0;
}

static int fake_drop(struct state *st, uint64_t id)
{
    return 0;
}

static const struct state_ops fake_ops = {
    .error = fake_error, .admit = fake_admit, .queue_load = fake_load, .drop = fake_drop,
};

static void test_a_store_error_is_latched_for_the_core_to_read_once(void **state)
{
    struct fake_store fs = { .st = { .ops = &fake_ops }, .fail_admit = 1 };
    struct frontier *f = make((struct frontier_conf){ .depth = 1 });
    frontier_use_store(f, &fs.st, 0);
    assert_int_equal(frontier_store_failed(f), 0);
    push(f, "http://a/");
    struct crawl_job *p = take(f, "http://a/", NULL);
    assert_int_equal(fs.loads, 1);          /* the store's head was asked for */
    static const char *const links[] = { "http://a/good", "http://a/bad", "http://a/bad2" };
    give_links(p, links, 3);
    done(f, p, 1);
    /* Two failures, one latch: said once, then clear until the next. */
    assert_int_equal(frontier_store_failed(f), 1);
    assert_int_equal(frontier_store_failed(f), 0);
    assert_int_equal(fs.next_id, 1);        /* the good link is in the store */
    frontier_free(f);
}

static void test_a_store_that_cannot_be_read_is_latched_and_asked_no_more(void **state)
{
    struct fake_store fs = { .st = { .ops = &fake_ops }, .fail_load = 1 };
    struct frontier *f = make((struct frontier_conf){ .depth = 1 });
    frontier_use_store(f, &fs.st, 0);
    take(f, NULL, NULL);
    assert_int_equal(frontier_store_failed(f), 1);
    take(f, NULL, NULL);
    assert_int_equal(fs.loads, 1);
    assert_int_equal(frontier_store_failed(f), 0);
    frontier_free(f);
}

/* A store that keeps one robots.txt, or refuses to. */
struct robots_store {
    struct state st;
    int refuse;                 /* its put fails */
    int puts;
    long status;
    char body[128];
};

static int robots_store_put(struct state *st, const char *host, long status, int fail,
                            const char *body, size_t len)
{
    struct robots_store *rs = (struct robots_store *)st;
    rs->puts++;
    if (rs->refuse)
        return -5;
    rs->status = status;
    snprintf(rs->body, sizeof rs->body, "%.*s", (int)len, body ? body : "");
    return 0;
}

static int robots_store_get(struct state *st, const char *host, long *status, int *fail,
                            char **body, size_t *len)
{
    return 0;
}

static const struct state_ops robots_ops = {
    .error = fake_error, .admit = fake_admit, .queue_load = fake_load, .drop = fake_drop,
    .robots_put = robots_store_put, .robots_get = robots_store_get,
};

/* A fetched robots.txt is written to the store as it is prepared, outside
 * the core's lock; a refusal is latched once the job is done. */
static void test_a_robots_txt_is_stored_as_it_is_prepared_and_a_refusal_latched_when_done(
    void **state)
{
    for (int refuse = 0; refuse <= 1; refuse++) {
        struct robots_store rs = { .st = { .ops = &robots_ops }, .refuse = refuse };
        struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1 });
        frontier_use_store(f, &rs.st, 0);
        push(f, "http://a/open");
        struct crawl_job *r = frontier_pick(f, NULL);
        assert_string_equal(r->url, "http://a:80/robots.txt");
        r->res.status = 200;
        r->body = strdup("User-agent: *\nDisallow: /private\n");
        r->body_len = strlen(r->body);
        frontier_prepare(f, r);
        assert_int_equal(rs.puts, 1);
        if (!refuse) {
            assert_int_equal(rs.status, 200);
            assert_string_equal(rs.body, "User-agent: *\nDisallow: /private\n");
        }
        assert_int_equal(frontier_store_failed(f), 0);
        frontier_done(f, r);
        assert_int_equal(rs.puts, 1);       /* not written again */
        assert_int_equal(frontier_store_failed(f), refuse);
        done(f, take(f, "http://a/open", NULL), 1);
        frontier_free(f);
    }
}

/* A store whose queue holds pages 1..pages, "http://h/ID" at depth 1, and
 * one link admitted later (its URL kept). Its loader hands each page over
 * in a buffer it overwrites at once: what the frontier keeps, it copied. */
struct queue_store {
    struct state st;
    uint64_t pages;
    char *admitted;             /* the URL of page `pages`, when admitted */
    int bad;                    /* its pages are no URLs: none can be placed */
};

static int queue_admit(struct state *st, uint64_t hash, const struct state_page *p,
                       uint64_t *id)
{
    struct queue_store *qs = (struct queue_store *)st;
    free(qs->admitted);
    qs->admitted = strdup(p->url);
    *id = ++qs->pages;
    return 1;
}

static int queue_load(struct state *st, uint64_t after, size_t max,
                      void (*fn)(uint64_t id, const struct state_page *p, void *data), void *data)
{
    struct queue_store *qs = (struct queue_store *)st;
    char url[64], scope[8];
    int n = 0;
    for (uint64_t id = after + 1; id <= qs->pages && (size_t)n < max; id++, n++) {
        if (qs->bad)
            snprintf(url, sizeof url, "no URL %llu", (unsigned long long)id);
        else if (id == qs->pages && qs->admitted)
            snprintf(url, sizeof url, "%s", qs->admitted);
        else
            snprintf(url, sizeof url, "http://h/%llu", (unsigned long long)id);
        snprintf(scope, sizeof scope, "h");
        struct state_page p = { .url = url, .scope = scope, .depth = 1, .hash = id };
        fn(id, &p, data);
        memset(url, 'X', sizeof url - 1);
        memset(scope, 'X', sizeof scope - 1);
    }
    return n;
}

static const struct state_ops queue_ops = {
    .error = fake_error, .admit = queue_admit, .queue_load = queue_load, .drop = fake_drop,
};

static void test_a_store_read_is_claimed_once_and_a_link_queued_during_it_is_read_next(
    void **state)
{
    /* Memory reads the store's head until it is half full, a batch at a
     * time: the store may hold more. */
    const uint64_t batch = FRONTIER_MEM_JOBS / 2;
    struct queue_store qs = { .st = { .ops = &queue_ops }, .pages = batch };
    struct frontier *f = make((struct frontier_conf){ .depth = 2 });
    frontier_use_store(f, &qs.st, 0);
    assert_int_equal(frontier_refilling(f), 0);
    struct crawl_job *p = take(f, "http://h/1", NULL);
    assert_int_equal(frontier_queued(f), batch - 1);
    /* The next read is claimed: no other begins until it ends, and the
     * crawl is not over while it runs. */
    assert_int_equal(frontier_refill_begin(f), 1);
    assert_int_equal(frontier_refilling(f), 1);
    assert_int_equal(frontier_refill_begin(f), 0);
    frontier_refill_read(f);            /* the store has nothing past the batch */
    /* Page 1's link is queued in the store while the read is under way
     * (as another thread would, with the core's lock): memory leaves it to
     * the store, and the read that found nothing does not end the queue. */
    static const char *const links[] = { "http://h/new" };
    give_links(p, links, 1);
    done(f, p, 1);
    assert_int_equal(qs.pages, batch + 1);
    assert_int_equal(frontier_queued(f), batch - 1);
    frontier_refill_end(f);
    assert_int_equal(frontier_refilling(f), 0);
    /* Every page comes out once, in the store's order, its URL whole. */
    char want[64];
    for (uint64_t id = 2; id <= batch; id++) {
        snprintf(want, sizeof want, "http://h/%llu", (unsigned long long)id);
        struct crawl_job *j = take(f, want, NULL);
        assert_string_equal(j->scope ? j->scope : "h", "h");
        done(f, j, 0);
    }
    done(f, take(f, "http://h/new", NULL), 0);
    take(f, NULL, NULL);
    assert_int_equal(frontier_refill_begin(f), 0);      /* nothing more to read */
    free(qs.admitted);
    frontier_free(f);
}

static void test_a_store_read_that_placed_nothing_asks_for_the_next_at_once(void **state)
{
    /* A full batch of which no page becomes a job (no URL here; a host's
     * robots.txt forbidding them all, in a crawl): memory is empty, yet
     * the store may hold more, so the crawl is not over. */
    const uint64_t batch = FRONTIER_MEM_JOBS / 4;
    struct queue_store qs = { .st = { .ops = &queue_ops }, .pages = batch, .bad = 1 };
    struct frontier *f = make((struct frontier_conf){ .depth = 2 });
    frontier_use_store(f, &qs.st, 0);
    assert_int_equal(frontier_refill_begin(f), 1);
    frontier_refill_read(f);
    assert_int_equal(frontier_refill_end(f), 1);
    assert_int_equal(frontier_queued(f), 0);
    /* The next read starts past them, finds the end, and says so. */
    assert_int_equal(frontier_refill_begin(f), 1);
    frontier_refill_read(f);
    assert_int_equal(frontier_refill_end(f), 0);
    assert_int_equal(frontier_refill_begin(f), 0);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.left, batch);    /* each counted once */
    frontier_free(f);
}

/* A store that keeps every page sent to it, by hash once, and counts the
 * calls to its queue: what a --state file does. */
struct list_store {
    struct state st;
    char *url[16];
    uint64_t hash[16];
    uint64_t n;
    int admits, loads;
    uint64_t drops[16];
    int ndrops;
};

static int list_admit(struct state *st, uint64_t hash, const struct state_page *p, uint64_t *id)
{
    struct list_store *ls = (struct list_store *)st;
    ls->admits++;
    for (uint64_t i = 0; i < ls->n; i++)
        if (ls->hash[i] == hash)
            return 0;
    assert_true(ls->n < 16);
    ls->hash[ls->n] = hash;
    ls->url[ls->n] = strdup(p->url);
    *id = ++ls->n;
    return 1;
}

static int list_load(struct state *st, uint64_t after, size_t max,
                     void (*fn)(uint64_t id, const struct state_page *p, void *data), void *data)
{
    struct list_store *ls = (struct list_store *)st;
    int n = 0;
    ls->loads++;
    for (uint64_t id = after + 1; id <= ls->n && (size_t)n < max; id++, n++) {
        struct state_page p = { .url = ls->url[id - 1], .depth = 1, .hash = ls->hash[id - 1] };
        fn(id, &p, data);
    }
    return n;
}

static int list_drop(struct state *st, uint64_t id)
{
    struct list_store *ls = (struct list_store *)st;
    ls->drops[ls->ndrops++ % 16] = id;
    return 0;
}

static const struct state_ops list_ops = {
    .error = fake_error, .admit = list_admit, .queue_load = list_load, .drop = list_drop,
};

/* A page's links go to the store as it is prepared, without the core's
 * lock, each with its verdict; done, under the lock, asks the store
 * nothing. Memory takes them only by reading the store back, in the
 * store's order: two pages prepared in one order and done in the other
 * (two threads) lose none and repeat none. */
static void test_found_links_go_to_the_store_as_prepared_and_come_back_in_its_order(
    void **state)
{
    struct list_store ls = { .st = { .ops = &list_ops } };
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .verdicts = 1 });
    frontier_use_store(f, &ls.st, 0);
    push(f, "http://a/");
    push(f, "http://a/b");
    struct crawl_job *a = take(f, "http://a/", NULL);
    struct crawl_job *b = take(f, "http://a/b", NULL);
    static const char *const la[] = { "http://a/1", "http://a/2", "http://a/1" };
    static const char *const lb[] = { "http://a/3", "http://a/2", "mailto:x@a" };
    give_links(a, la, 3);
    give_links(b, lb, 3);
    frontier_prepare(f, a);
    frontier_prepare(f, b);
    assert_int_equal(ls.n, 3);              /* 1, 2, then 3 */
    int admits = ls.admits, loads = ls.loads;
    char got[128] = "";
    for (size_t i = 0; i < b->nverdicts; i++) {
        const char *why = job_verdict_reason(b->verdicts[i].verdict);
        if (!why && b->verdicts[i].verdict != JOB_LINK_ADMITTED)
            why = "UNDECIDED";
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s;", why ? why : "ok");
    }
    assert_string_equal(got, "ok;seen;not http;");
    frontier_done(f, b);
    frontier_done(f, a);
    assert_int_equal(ls.admits, admits);
    assert_int_equal(ls.loads, loads);
    assert_int_equal(frontier_queued(f), 0);
    job_free(a);
    job_free(b);
    done(f, take(f, "http://a/1", NULL), 1);
    done(f, take(f, "http://a/2", NULL), 1);
    done(f, take(f, "http://a/3", NULL), 1);
    take(f, NULL, NULL);
    for (uint64_t i = 0; i < ls.n; i++)
        free(ls.url[i]);
    frontier_free(f);
}

/* A page the frontier drops without a row (here --max-pages) reaches the
 * store only when the core flushes, without its lock, before a commit. */
static void test_a_dropped_page_reaches_the_store_when_flushed_not_under_the_lock(void **state)
{
    struct list_store ls = { .st = { .ops = &list_ops } };
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .max_pages = 2 });
    frontier_use_store(f, &ls.st, 0);
    assert_int_equal(frontier_store_flush(f), 0);
    push(f, "http://a/");
    push(f, "http://a/x");
    struct crawl_job *a = take(f, "http://a/", NULL);
    static const char *const la[] = { "http://a/1" };
    give_links(a, la, 1);
    done(f, a, 1);                      /* sent before the bound was reached */
    assert_int_equal(ls.n, 1);
    done(f, take(f, "http://a/x", NULL), 1);
    take(f, NULL, NULL);                /* read back, and dropped for --max-pages */
    assert_int_equal(ls.ndrops, 0);
    assert_int_equal(frontier_store_flush(f), 1);
    assert_int_equal(ls.ndrops, 1);
    assert_int_equal(ls.drops[0], 1);
    assert_int_equal(frontier_store_flush(f), 0);
    assert_int_equal(ls.ndrops, 1);
    for (uint64_t i = 0; i < ls.n; i++)
        free(ls.url[i]);
    frontier_free(f);
}

/* A store whose queue holds two found pages of host a, and a robots.txt for
 * it; it says in which step of a read the frontier asked for that. */
static int read_step;                  /* 1: reading, 2: placing */

struct kept_store {
    struct list_store ls;
    int robots_gets, got_in_step[3];
};

static int kept_robots_get(struct state *st, const char *host, long *status, int *fail,
                           char **body, size_t *len)
{
    struct kept_store *ks = (struct kept_store *)st;
    ks->robots_gets++;
    ks->got_in_step[read_step]++;
    if (strcmp(host, "http://a:80") != 0)
        return 0;
    *status = 200;
    *fail = 0;
    *body = strdup("User-agent: *\nDisallow: /private\n");
    *len = strlen(*body);
    return 1;
}

static int kept_robots_put(struct state *st, const char *host, long status, int fail,
                           const char *body, size_t len)
{
    return 0;
}

static const struct state_ops kept_ops = {
    .error = fake_error, .admit = list_admit, .queue_load = list_load, .drop = list_drop,
    .robots_get = kept_robots_get, .robots_put = kept_robots_put,
};

/* A host's robots.txt kept in the store is read as the store's pages of
 * the host are, without the core's lock, once; the host's rules are in
 * before its pages are placed, so none waits for a fetch of robots.txt. */
static void test_a_kept_robots_txt_is_read_with_its_hosts_pages_not_as_they_are_placed(
    void **state)
{
    struct kept_store ks = { .ls = { .st = { .ops = &kept_ops } } };
    struct state_page p = { .depth = 1 };
    uint64_t id;
    p.url = "http://a/open";
    p.hash = 1;
    list_admit(&ks.ls.st, 1, &p, &id);
    p.url = "http://a/private";
    p.hash = 2;
    list_admit(&ks.ls.st, 2, &p, &id);
    p.url = "http://b/x";
    p.hash = 3;
    list_admit(&ks.ls.st, 3, &p, &id);
    struct frontier *f = make((struct frontier_conf){ .depth = 2, .robots = 1 });
    frontier_use_store(f, &ks.ls.st, 0);
    assert_int_equal(frontier_refill_begin(f), 1);
    read_step = 1;
    frontier_refill_read(f);
    read_step = 2;
    frontier_refill_end(f);
    read_step = 0;
    assert_int_equal(ks.got_in_step[1], 2);     /* a's, and b's (none kept) */
    assert_int_equal(ks.got_in_step[2], 0);
    /* a has its rules: its open page goes first; b's robots.txt is fetched. */
    struct crawl_job *r = take(f, "http://b:80/robots.txt", NULL);
    done(f, take(f, "http://a/open", NULL), 1);
    robots_back_job(f, r, 404, "");
    done(f, take(f, "http://b/x", NULL), 1);
    take(f, NULL, NULL);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.robots_blocked, 1);
    assert_int_equal(n.robots_fetched, 1);
    assert_int_equal(ks.ls.ndrops, 0);          /* until flushed */
    assert_int_equal(frontier_store_flush(f), 1);
    assert_int_equal(ks.ls.ndrops, 1);
    assert_int_equal(ks.ls.drops[0], 2);
    assert_int_equal(ks.robots_gets, 2);
    for (uint64_t i = 0; i < ks.ls.n; i++)
        free(ks.ls.url[i]);
    frontier_free(f);
}

/* A listed URL comes split, as the core checks it before taking its lock:
 * frontier_push keys it by its host (and keeps its path while the host's
 * robots.txt is on its way) without splitting it again. A plain list's
 * URLs are not split at all. */
static void test_a_listed_url_comes_split_and_is_queued_without_another_split(void **state)
{
    const struct frontier_conf confs[] = {
        { .per_host = 1 }, { .delay = 1 }, { .depth = 1, .robots = 1 }, { .sitemaps = 1 },
    };
    for (size_t i = 0; i < sizeof confs / sizeof *confs; i++) {
        struct frontier *f = make(confs[i]);
        assert_int_equal(frontier_splits_listed(f), 1);
        struct url_parts p;
        assert_int_equal(url_split("http://A/x/../y?q", &p), 0);
        struct crawl_job *j = job("http://A/x/../y?q");
        splits = 0;
        assert_int_equal(frontier_push(f, j, &p), 0);
        assert_int_equal(splits, 0);
        url_parts_free(&p);
        int robots = confs[i].robots || confs[i].sitemaps;
        if (robots) {
            struct crawl_job *r = frontier_pick(f, NULL);
            assert_string_equal(r->url, "http://a:80/robots.txt");
        }
        assert_string_equal(j->host->key, "http://a:80");
        if (confs[i].robots)
            assert_string_equal(j->path, "/y?q");   /* kept for the rules to come */
        else
            assert_null(j->path);
        if (confs[i].depth || confs[i].sitemaps)
            assert_string_equal(j->scope, "a");
        if (!robots)
            done(f, take(f, "http://A/x/../y?q", NULL), 1);
        frontier_free(f);
    }
    struct frontier *f = make((struct frontier_conf){ 0 });
    assert_int_equal(frontier_splits_listed(f), 0);
    splits = 0;
    assert_int_equal(frontier_push(f, job("http://a/1"), NULL), 0);
    done(f, take(f, "http://a/1", NULL), 1);
    assert_int_equal(splits, 0);
    frontier_free(f);
}

/* When a host's robots.txt is in, the listed URLs queued for it and the
 * links held back for it are held to its rules by the paths they were
 * queued with, in the form rules are matched in (an escaped letter is the
 * letter): nothing is split under the core's lock, and the verdicts are
 * those of the rules. */
static void test_robots_txt_decides_what_waited_for_it_by_the_paths_kept_without_a_split(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1, .span_hosts = 1 });
    push(f, "http://a/");
    push(f, "http://b/private/1");
    push(f, "http://b/%70rivate/2");
    push(f, "http://b/open");
    struct crawl_job *ra = frontier_pick(f, NULL);
    assert_string_equal(ra->url, "http://a:80/robots.txt");
    struct crawl_job *rb = frontier_pick(f, NULL);
    assert_string_equal(rb->url, "http://b:80/robots.txt");
    robots_back_job(f, ra, 404, "");
    struct crawl_job *a = take(f, "http://a/", NULL);
    static const char *const links[] = { "http://b/private/3", "http://b/ok",
                                         "http://b/%70rivate/4" };
    give_links(a, links, 3);
    done(f, a, 1);                  /* held back for b's robots.txt, with their paths */
    rb->res.status = 200;
    rb->body = strdup("User-agent: *\nDisallow: /private\n");
    rb->body_len = strlen(rb->body);
    frontier_prepare(f, rb);        /* the body parsed, without the lock */
    splits = 0;
    frontier_done(f, rb);
    assert_int_equal(splits, 0);
    const char *failed[] = { "http://b/private/1", "http://b/%70rivate/2" };
    for (int i = 0; i < 2; i++) {
        struct crawl_job *j = take(f, failed[i], NULL);
        assert_true(j->failed_early);
        assert_int_equal(j->res.fail, CRAWL_FAIL_ROBOTS);
        assert_string_equal(j->res.error, "disallowed by robots.txt");
        assert_null(j->path);
        done(f, j, 1);
    }
    struct crawl_job *open = take(f, "http://b/open", NULL);
    assert_false(open->failed_early);
    assert_null(open->path);        /* used, and let go */
    done(f, open, 1);
    done(f, take(f, "http://b/ok", NULL), 1);
    take(f, NULL, NULL);
    assert_int_equal(splits, 0);
    struct frontier_counts n;
    frontier_counts(f, &n);
    assert_int_equal(n.robots_fetched, 2);
    assert_int_equal(n.robots_blocked, 4);
    assert_int_equal(n.left, 0);
    assert_int_equal(n.queued, 0);
    frontier_free(f);
}

/* --sitemaps: the sitemaps a robots.txt names are split as it is prepared
 * (a URL not http(s) skipped), those an index lists as the index is; the
 * core's lock then queues them, and a sitemap's pages, splitting
 * nothing. Each sitemap is read once. */
static void test_sitemaps_are_split_with_what_names_them_and_queued_without_a_split(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .sitemaps = 1 });
    push(f, "http://a/");
    struct crawl_job *r = frontier_pick(f, NULL);
    assert_string_equal(r->url, "http://a:80/robots.txt");
    r->res.status = 200;
    r->body = strdup("Sitemap: http://a/s1.xml\nSitemap: ftp://x/s\nSitemap: http://b/s2.xml\n");
    r->body_len = strlen(r->body);
    frontier_prepare(f, r);
    assert_int_equal(r->nmaps, 2);
    splits = 0;
    frontier_done(f, r);
    assert_int_equal(splits, 0);
    assert_null(r->maps);
    done(f, take(f, "http://a/", NULL), 1);
    struct crawl_job *s2 = take(f, "http://b/s2.xml", NULL);
    struct crawl_job *s1 = take(f, "http://a/s1.xml", NULL);
    assert_int_equal(s1->kind, JOB_SITEMAP);
    assert_int_equal(s1->depth, 0);
    assert_string_equal(s1->scope, "a");
    s1->body = strdup("http://a/s3.xml\nhttp://a/s3.xml\nnot a URL\n");
    static const char *const pages[] = { "http://a/p1" };
    give_links(s1, pages, 1);
    frontier_prepare(f, s1);
    assert_int_equal(s1->nmaps, 2);
    splits = 0;
    frontier_done(f, s1);
    job_free(s1);
    done(f, s2, 1);
    struct crawl_job *p1 = take(f, "http://a/p1", NULL);
    assert_int_equal(p1->kind, JOB_PAGE);
    assert_int_equal(p1->depth, 0);
    done(f, p1, 1);
    struct crawl_job *s3 = take(f, "http://a/s3.xml", NULL);
    assert_int_equal(s3->kind, JOB_SITEMAP);
    assert_int_equal(s3->depth, 1);
    done(f, s3, 1);
    take(f, NULL, NULL);
    assert_int_equal(splits, 0);
    frontier_free(f);
}

/* A host a link reached first keeps the sitemaps its robots.txt named,
 * split as it was prepared: they are read once a URL of it is listed,
 * and the listing splits nothing. */
static void test_a_host_listed_after_its_robots_txt_was_read_gets_the_sitemaps_it_kept(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .robots = 1, .span_hosts = 1,
                                                      .sitemaps = 1 });
    push(f, "http://a/");
    robots_back(f, 404, "");        /* a names none: its /sitemap.xml */
    struct crawl_job *a = take(f, "http://a/", NULL);
    static const char *const links[] = { "http://c/x" };
    give_links(a, links, 1);
    done(f, a, 1);
    robots_back(f, 200, "Sitemap: http://c/m.xml\n");
    struct crawl_host *c = frontier__host_get(f, "http://c:80");
    assert_int_equal(c->nmaps, 1);
    assert_string_equal(c->maps[0].href, "http://c/m.xml");
    splits = 0;
    push(f, "http://c/");
    assert_int_equal(splits, 0);
    assert_int_equal(c->nmaps, 0);
    const char *order[] = { "http://a/sitemap.xml", "http://c/x", "http://c/m.xml", "http://c/" };
    const enum crawl_job_kind kind[] = { JOB_SITEMAP, JOB_PAGE, JOB_SITEMAP, JOB_PAGE };
    for (int i = 0; i < 4; i++) {
        struct crawl_job *j = take(f, order[i], NULL);
        assert_int_equal(j->kind, kind[i]);
        done(f, j, 1);
    }
    take(f, NULL, NULL);
    frontier_free(f);
}

/* list_store's queue as listed pages, line ID each. */
static int listed_load(struct state *st, uint64_t after, size_t max,
                       void (*fn)(uint64_t id, const struct state_page *p, void *data), void *data)
{
    struct list_store *ls = (struct list_store *)st;
    int n = 0;
    ls->loads++;
    for (uint64_t id = after + 1; id <= ls->n && (size_t)n < max; id++, n++) {
        struct state_page p = { .url = ls->url[id - 1], .source = "list", .line = (long)id,
                                .hash = ls->hash[id - 1] };
        fn(id, &p, data);
    }
    return n;
}

static const struct state_ops listed_ops = {
    .error = fake_error, .admit = list_admit, .queue_load = listed_load, .drop = list_drop,
};

/* The listed pages a --state store holds are split as they are read,
 * without the core's lock, and placed on their hosts under it without a
 * split. */
static void test_listed_pages_of_a_store_are_split_as_read_and_placed_without_a_split(
    void **state)
{
    struct list_store ls = { .st = { .ops = &listed_ops } };
    const char *urls[] = { "http://h/1", "http://h/2", "http://g/3" };
    for (uint64_t i = 0; i < 3; i++) {
        struct state_page p = { .url = urls[i] };
        uint64_t id;
        list_admit(&ls.st, i + 1, &p, &id);
    }
    struct frontier *f = make((struct frontier_conf){ .per_host = 2 });
    frontier_use_store(f, &ls.st, 0);
    assert_int_equal(frontier_refill_begin(f), 1);
    splits = 0;
    frontier_refill_read(f);
    assert_int_equal(splits, 3);
    splits = 0;
    frontier_refill_end(f);
    assert_int_equal(splits, 0);
    const char *order[] = { "http://h/1", "http://g/3", "http://h/2" };
    const long line[] = { 1, 3, 2 };
    for (int i = 0; i < 3; i++) {
        struct crawl_job *j = frontier_pick(f, NULL);
        assert_non_null(j);
        assert_string_equal(j->url, order[i]);
        assert_int_equal(j->line, line[i]);
        assert_int_equal(j->mark, line[i]);
        assert_string_equal(j->source, "list");
        assert_non_null(j->host);
        done(f, j, 1);
    }
    assert_int_equal(splits, 0);
    take(f, NULL, NULL);
    for (uint64_t i = 0; i < ls.n; i++)
        free(ls.url[i]);
    frontier_free(f);
}

/* A page's redirect, handed to the frontier, is split and held to scope
 * as the page is prepared; the core's lock admits it without a split. */
static void test_a_redirects_target_is_split_as_prepared_and_admitted_without_a_split(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .max_redirs = 5 });
    push(f, "http://a/");
    push(f, "http://a/2");
    struct crawl_job *p = take(f, "http://a/", NULL);
    p->res.location = strdup("http://a/to");
    frontier_prepare(f, p);
    assert_string_equal(p->target->href, "http://a/to");
    splits = 0;
    frontier_done(f, p);
    assert_int_equal(splits, 0);
    assert_null(p->target);
    job_free(p);
    struct crawl_job *q = take(f, "http://a/2", NULL);
    q->res.location = strdup("http://b/away");     /* out of scope: dropped */
    frontier_prepare(f, q);
    assert_null(q->target->href);
    splits = 0;
    frontier_done(f, q);
    assert_int_equal(splits, 0);
    job_free(q);
    struct crawl_job *to = take(f, "http://a/to", NULL);
    assert_int_equal(to->hops, 1);
    assert_int_equal(to->depth, 0);
    assert_string_equal(to->parent, "http://a/");
    done(f, to, 1);
    take(f, NULL, NULL);
    frontier_free(f);
}

/* --canonical: the seen-set key of a listed URL and of a found link (its
 * query parsed and sorted) is made before the core's lock is taken; under
 * it, the key is only looked up. */
static void test_a_canonical_key_is_made_before_the_lock_and_only_looked_up_under_it(
    void **state)
{
    struct frontier *f = make((struct frontier_conf){ .depth = 1, .canonical = 1 });
    struct url_parts p;
    assert_int_equal(url_split("http://a/q?y&x", &p), 0);
    assert_int_equal(frontier_key_listed(f, &p), 0);
    assert_int_not_equal(p.seen, 0);
    canons = 0;
    assert_int_equal(frontier_push(f, job("http://a/q?y&x"), &p), 0);
    assert_int_equal(canons, 0);
    url_parts_free(&p);
    struct crawl_job *j = take(f, "http://a/q?y&x", NULL);
    static const char *const links[] = { "http://a/p?b=2&a=1", "http://a/p?a=1&b=2",
                                         "http://a/q?x&y" };
    give_links(j, links, 3);
    frontier_prepare(f, j);
    canons = 0;
    frontier_done(f, j);
    assert_int_equal(canons, 0);
    job_free(j);
    done(f, take(f, "http://a/p?b=2&a=1", NULL), 1);
    take(f, NULL, NULL);
    frontier_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_plain_list_comes_out_in_the_order_it_went_in),
        cmocka_unit_test(test_hosts_take_turns_and_per_host_bounds_each_one),
        cmocka_unit_test(test_a_delay_runs_from_when_the_request_went_out),
        cmocka_unit_test(test_a_retry_after_pauses_its_host_and_not_the_others),
        cmocka_unit_test(test_a_pause_lasts_at_most_retry_max_delay_and_never_past_the_deadline),
        cmocka_unit_test(test_retries_wait_apart_and_come_back_soonest_first),
        cmocka_unit_test(test_found_links_are_admitted_once_by_the_rules_prepared_or_not),
        cmocka_unit_test(test_span_hosts_and_include_decide_other_hosts_and_paths),
        cmocka_unit_test(test_max_pages_counts_listed_pages_and_drops_later_links_as_left),
        cmocka_unit_test(test_robots_txt_goes_first_holds_its_host_and_fails_what_it_forbids),
        cmocka_unit_test(test_an_unreachable_robots_txt_forbids_its_host_and_says_why),
        cmocka_unit_test(test_crawl_delay_spaces_the_host_from_its_robots_request_unless_ignored),
        cmocka_unit_test(test_crawl_delay_runs_from_when_the_robots_request_went_out),
        cmocka_unit_test(test_a_throttled_delay_runs_from_when_the_first_request_went_out),
        cmocka_unit_test(test_each_link_gets_its_verdict_in_page_order_prepared_or_not),
        cmocka_unit_test(test_verdicts_say_max_pages_queue_full_and_cancelled),
        cmocka_unit_test(test_without_verdicts_links_are_not_kept),
        cmocka_unit_test(test_a_link_held_for_robots_txt_keeps_its_parent),
        cmocka_unit_test(test_robots_txt_sitemap_lines_queue_each_sitemap_once_for_the_listed_host),
        cmocka_unit_test(
            test_a_sitemap_waiting_for_its_hosts_robots_txt_is_kept_whatever_its_path),
        cmocka_unit_test(test_a_listed_host_without_sitemap_lines_has_its_sitemap_xml_read),
        cmocka_unit_test(
            test_a_sitemaps_urls_join_at_depth_zero_held_to_scope_exclude_seen_and_robots),
        cmocka_unit_test(test_max_pages_bounds_a_sitemaps_urls_as_it_bounds_links),
        cmocka_unit_test(test_an_index_queues_its_sitemaps_once_and_no_deeper),
        cmocka_unit_test(
            test_without_robots_rules_the_sitemap_lines_are_read_and_nothing_is_forbidden),
        cmocka_unit_test(
            test_a_host_listed_after_its_robots_txt_came_in_has_its_sitemaps_read_then),
        cmocka_unit_test(test_a_cancelled_crawl_takes_nothing_from_a_sitemap_back),
        cmocka_unit_test(test_canonical_urls_are_one_page_and_strip_query_drops_arguments),
        cmocka_unit_test(test_the_spill_file_takes_links_past_memory_and_gives_them_back_in_order),
        cmocka_unit_test(test_spilled_links_of_pages_in_turn_keep_each_its_own_parent),
        cmocka_unit_test(test_links_admitted_during_a_spill_read_come_after_the_claimed_ones),
        cmocka_unit_test(test_a_drain_during_a_spill_read_counts_every_link_left_once),
        cmocka_unit_test(
            test_links_admitted_while_another_thread_reads_the_spill_come_out_once_in_order),
        cmocka_unit_test(test_a_queued_link_comes_out_a_whole_job),
        cmocka_unit_test(test_drain_hands_back_every_queued_job_and_counts_links_as_left),
        cmocka_unit_test(test_a_store_error_is_latched_for_the_core_to_read_once),
        cmocka_unit_test(test_a_store_that_cannot_be_read_is_latched_and_asked_no_more),
        cmocka_unit_test(test_a_robots_txt_is_stored_as_it_is_prepared_and_a_refusal_latched_when_done),
        cmocka_unit_test(test_a_store_read_is_claimed_once_and_a_link_queued_during_it_is_read_next),
        cmocka_unit_test(test_a_store_read_that_placed_nothing_asks_for_the_next_at_once),
        cmocka_unit_test(
            test_found_links_go_to_the_store_as_prepared_and_come_back_in_its_order),
        cmocka_unit_test(test_a_dropped_page_reaches_the_store_when_flushed_not_under_the_lock),
        cmocka_unit_test(
            test_a_kept_robots_txt_is_read_with_its_hosts_pages_not_as_they_are_placed),
        cmocka_unit_test(test_a_listed_url_comes_split_and_is_queued_without_another_split),
        cmocka_unit_test(
            test_robots_txt_decides_what_waited_for_it_by_the_paths_kept_without_a_split),
        cmocka_unit_test(
            test_sitemaps_are_split_with_what_names_them_and_queued_without_a_split),
        cmocka_unit_test(
            test_a_host_listed_after_its_robots_txt_was_read_gets_the_sitemaps_it_kept),
        cmocka_unit_test(
            test_listed_pages_of_a_store_are_split_as_read_and_placed_without_a_split),
        cmocka_unit_test(
            test_a_redirects_target_is_split_as_prepared_and_admitted_without_a_split),
        cmocka_unit_test(
            test_a_canonical_key_is_made_before_the_lock_and_only_looked_up_under_it),
    };
    return cmocka_run_group_tests_name("frontier", tests, NULL, NULL);
}

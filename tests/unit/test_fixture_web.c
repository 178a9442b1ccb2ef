/* test_fixture_web.c: unit tests of the synthetic web (fixture/web*.c): the
 * same options draw the same web and another seed another, robots.txt's
 * rules match as RFC 9309 says, hosts are found by name and address, every
 * page's path leads back to it, links stay within the web, and the
 * reachable set is printed and counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "web.h"

static struct web *make(unsigned hosts, uint64_t seed)
{
    struct fixture_web_opts o;
    struct web *w = NULL;
    fixture_web_opts_init(&o, hosts);
    o.seed = seed;
    o.pages = 8;
    assert_int_equal(web_new(&w, &o, 8080), 0);
    return w;
}

static void test_the_same_seed_draws_the_same_web_and_another_seed_another(void **state)
{
    struct web *a = make(200, 7), *b = make(200, 7), *c = make(200, 8);
    assert_int_equal(a->npages, b->npages);
    assert_memory_equal(a->hosts, b->hosts, 200 * sizeof *a->hosts);
    assert_memory_equal(a->cls, b->cls, a->npages);
    assert_true(a->npages != c->npages ||
                memcmp(a->hosts, c->hosts, 200 * sizeof *a->hosts) != 0);
    web_free(a);
    web_free(b);
    web_free(c);
}

static void test_every_kind_of_host_and_page_is_drawn(void **state)
{
    struct web *w = make(500, 1);
    unsigned robots[5] = { 0 }, speed[3] = { 0 }, cls[4] = { 0 }, delay = 0, sitemap = 0,
             dup = 0;
    for (uint32_t h = 0; h < 500; h++) {
        robots[w->hosts[h].robots]++;
        speed[w->hosts[h].speed]++;
        delay += w->hosts[h].crawl_delay_ms > 0;
        sitemap += w->hosts[h].sitemap;
        assert_true(w->hosts[h].latency_us <= 1000u * WEB_LATENCY_MAX * w->o.unit_ms);
    }
    for (uint64_t i = 0; i < w->npages; i++) {
        cls[w->cls[i] & WEB_CLASS_MASK]++;
        dup += (w->cls[i] & WEB_DUP) != 0;
    }
    for (int i = 0; i < 5; i++)
        assert_true(robots[i] > 0);
    for (int i = 0; i < 3; i++)
        assert_true(speed[i] > 0);
    for (int i = 0; i < 4; i++)
        assert_true(cls[i] > 0);
    assert_true(delay > 0 && sitemap > 0 && dup > 0);
    web_free(w);
}

/* Host 0 with rules of the test's own. */
static void set_rules(struct web *w, const char *const *rules, const int *allow, unsigned n)
{
    struct web_host *wh = &w->hosts[0];
    wh->robots = WEB_ROBOTS_SOME;
    wh->nrules = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        snprintf(wh->rules[i].pattern, sizeof wh->rules[i].pattern, "%s", rules[i]);
        wh->rules[i].allow = allow[i];
    }
}

static int allowed(struct web *w, const char *path)
{
    return web_allowed(w, 0, path, strlen(path), 0);
}

static void test_robots_rules_match_as_rfc_9309_says(void **state)
{
    struct web *w = make(10, 1);
    static const char *const rules[] = { "/private/", "/private/3$", "/p/1$", "/*?v=" };
    static const int allow[] = { 0, 1, 0, 0 };
    set_rules(w, rules, allow, 4);
    assert_int_equal(allowed(w, "/"), 1);
    assert_int_equal(allowed(w, "/private/2"), 0);
    assert_int_equal(allowed(w, "/private/3"), 1);      /* the longer match allows */
    assert_int_equal(allowed(w, "/private/30"), 0);     /* $: that path alone */
    assert_int_equal(allowed(w, "/p/1"), 0);
    assert_int_equal(allowed(w, "/p/10"), 1);
    assert_int_equal(allowed(w, "/p/1?v=2"), 0);        /* * matches any run */
    assert_int_equal(allowed(w, "/p/2?v=2"), 0);
    static const char *const tie[] = { "/a", "/a" };
    static const int tie_allow[] = { 0, 1 };
    set_rules(w, tie, tie_allow, 2);
    assert_int_equal(allowed(w, "/ab"), 1);             /* a tie: allow wins */
    w->hosts[0].robots = WEB_ROBOTS_5XX;
    assert_int_equal(allowed(w, "/"), 0);
    assert_int_equal(web_allowed(w, 0, "/", 1, 1), 1);  /* failed robots.txt allows */
    w->hosts[0].robots = WEB_ROBOTS_404;
    w->hosts[0].nrules = 0;
    assert_int_equal(allowed(w, "/private/2"), 1);
    web_free(w);
}

static void test_hosts_are_found_by_name_or_address_and_nothing_else(void **state)
{
    struct web *w = make(50, 1);
    static const struct { const char *s; long h; } cases[] = {
        { "h00042.web.test", 42 }, { "h00042.web.test:8080", 42 }, { "H00042.WEB.TEST", 42 },
        { "127.77.0.43", 42 }, { "127.77.0.43:80", 42 }, { "127.77.0.1", 0 },
        { "h00050.web.test", -1 }, { "127.77.0.51", -1 }, { "127.77.0.0", -1 },
        { "h00042.web.test.example", -1 }, { "h0042.web.test", -1 }, { "127.77.0.043", -1 },
        { "127.77.0", -1 }, { "localhost", -1 }, { "", -1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(web_host_of_name(w, cases[i].s, strlen(cases[i].s)), cases[i].h);
    char name[32];
    web_name(7, name, sizeof name);
    assert_string_equal(name, "h00007.web.test");
    web_free(w);
}

static int page_of(struct web *w, uint32_t h, const char *pathq, struct web_ref *r)
{
    const char *q = strchr(pathq, '?');
    size_t len = q ? (size_t)(q - pathq) : strlen(pathq);
    return web_page_at(w, h, pathq, len, q ? q + 1 : NULL, q ? strlen(q + 1) : 0, r);
}

static void test_every_page_is_found_at_its_path_and_no_other_spelling(void **state)
{
    struct web *w = make(30, 3);
    char path[32];
    for (uint32_t h = 0; h < 30; h++)
        for (uint32_t k = 0; k < w->hosts[h].npages; k++)
            for (int dup = 0; dup < 2; dup++) {
                struct web_ref r = { h, k, dup }, back;
                if (dup && !(web_class_of(w, h, k) & WEB_DUP))
                    continue;
                web_path(w, r, path, sizeof path);
                assert_int_equal(page_of(w, h, path, &back), 0);
                assert_int_equal(back.page, k);
                assert_int_equal(back.dup, dup);
            }
    struct web_ref r;
    assert_int_equal(page_of(w, 0, "/?a", &r), -1);
    assert_int_equal(page_of(w, 0, "/p/0", &r), -1);    /* page 0 is / */
    assert_int_equal(page_of(w, 0, "/p/01", &r), -1);
    assert_int_equal(page_of(w, 0, "/p/99999", &r), -1);
    assert_int_equal(page_of(w, 0, "/index.html", &r), -1);
    web_free(w);
}

static void test_links_stay_within_the_web_and_home_pages_make_a_ring(void **state)
{
    struct web *w = make(40, 5);
    struct web_ref links[WEB_LINKS_MAX];
    for (uint32_t h = 0; h < 40; h++) {
        size_t n = web_links(w, (struct web_ref){ h, 0, 0 }, links);
        assert_true(n >= 3 && n <= WEB_LINKS_MAX);
        int next = 0;
        for (size_t i = 0; i < n; i++)
            next |= links[i].host == (h + 1) % 40 && links[i].page == 0;
        assert_true(next);
        for (uint32_t k = 0; k < w->hosts[h].npages; k++) {
            n = web_links(w, (struct web_ref){ h, k, 0 }, links);
            for (size_t i = 0; i < n; i++) {
                assert_true(links[i].host < 40);
                assert_true(links[i].page < w->hosts[links[i].host].npages);
                assert_true(!links[i].dup ||
                            (web_class_of(w, links[i].host, links[i].page) & WEB_DUP));
            }
        }
    }
    web_free(w);
}

static void test_the_reachable_set_is_printed_and_counted_and_a_bad_seed_named(void **state)
{
    struct fixture_web_opts o;
    fixture_web_opts_init(&o, 20);
    o.pages = 5;
    char err[256], *buf = NULL, *seeds[] = { "http://h00001.web.test:8080/" },
         *bad[] = { "http://h00001.web.test:8081/" };
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    long n = fixture_web_reachable(&o, 8080, seeds, 1, 0, f, err, sizeof err);
    fclose(f);
    assert_true(n > 0);
    long lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    assert_int_equal(lines, n);
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(fixture_web_reachable(&o, 8080, bad, 1, 0, f, err, sizeof err), -1);
    fclose(f);
    assert_string_equal(err, "not a page of this web: 'http://h00001.web.test:8081/'");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_same_seed_draws_the_same_web_and_another_seed_another),
        cmocka_unit_test(test_every_kind_of_host_and_page_is_drawn),
        cmocka_unit_test(test_robots_rules_match_as_rfc_9309_says),
        cmocka_unit_test(test_hosts_are_found_by_name_or_address_and_nothing_else),
        cmocka_unit_test(test_every_page_is_found_at_its_path_and_no_other_spelling),
        cmocka_unit_test(test_links_stay_within_the_web_and_home_pages_make_a_ring),
        cmocka_unit_test(test_the_reachable_set_is_printed_and_counted_and_a_bad_seed_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

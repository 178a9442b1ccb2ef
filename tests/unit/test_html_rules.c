/* test_html_rules.c: the HTML module's --follow and --extract rules:
 * XPath selection and values, errors, silence on stderr, one rules object
 * shared by threads, and the bounds of the tree built for them. Reads pages
 * from testdata/ (run from the top of the tree, as tests/run.sh does). */
#include "html_helpers.h"

/* ---- follow and extract rules -------------------------------------------- */

#define CINEMA_URL "http://127.0.0.1:8080/site/cinema/index.html"
#define NFILMS     22      /* the films the cinema listing links to */

static void follow_xpath_selects_only_the_showing_soon_links(void **state)
{
    struct html_rules *r = rules("//div[@id=\"showing-soon\"]//a/@href", NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/site/cinema/index.html", CINEMA_URL, NULL, 0, &l);
    assert_int_equal(l.nlinks, NFILMS);
    for (size_t i = 0; i < NFILMS; i++) {
        char want[64];
        snprintf(want, sizeof want, "http://127.0.0.1:8080/site/cinema/film/%zu.html", i + 1);
        assert_string_equal(l.links[i], want);
    }
    assert_int_equal(l.nextracts, 0);
    html_links_free(&l);
    html_rules_free(r);
}

static void default_follow_takes_every_link_of_the_cinema_page(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/site/cinema/index.html", CINEMA_URL, NULL, 0, &l);
    /* Nav links too; mailto skipped; "#top" and "index.html" are the page. */
    assert_int_equal(l.nlinks, 3 + NFILMS);
    assert_string_equal(l.links[0], "http://127.0.0.1:8080/site/");
    assert_string_equal(l.links[1], "http://127.0.0.1:8080/site/about.html");
    assert_string_equal(l.links[2], CINEMA_URL);
    assert_string_equal(l.links[3], "http://127.0.0.1:8080/site/cinema/film/1.html");
    html_links_free(&l);
    html_rules_free(r);
}

static void follow_xpath_may_select_elements_and_strings(void **state)
{
    const char *html = "<p> /one </p><p>two</p><span data-next='three'></span>";
    struct html_rules *r = rules("//p", NULL, 0);
    struct html_links l;

    assert_int_equal(parse_in_steps(r, PAGE_URL, NULL, html, strlen(html), 0, &l), 0);
    ASSERT_LINKS(&l, "http://example.com/one", "http://example.com/dir/two");
    html_links_free(&l);
    html_rules_free(r);

    r = rules("string(//span/@data-next)", NULL, 0);
    assert_int_equal(parse_in_steps(r, PAGE_URL, NULL, html, strlen(html), 0, &l), 0);
    ASSERT_LINKS(&l, "http://example.com/dir/three");
    html_links_free(&l);
    html_rules_free(r);
}

static void extracts_give_raw_values_in_document_order(void **state)
{
    const char *extract[] = { "poster=//img/@src", "name=//h1", "date=//span[@class=\"date\"]" };
    struct html_rules *r = rules(NULL, extract, 3);
    struct html_links l;

    parse_file(r, "testdata/site/cinema/film/3.html",
               "http://127.0.0.1:8080/site/cinema/film/3.html", NULL, 0, &l);
    ASSERT_LINKS(&l, "http://127.0.0.1:8080/site/cinema/index.html",
                 "http://127.0.0.1:8080/site/");
    assert_int_equal(l.nextracts, 3);
    /* The poster stays as written: extracts are not resolved. */
    assert_extract(&l, 0, "poster", "/site/cinema/posters/3.jpg");
    assert_extract(&l, 1, "name", "Seven Bridges North");
    assert_extract(&l, 2, "date", "2025-07-18");
    html_links_free(&l);
    html_rules_free(r);
}

static void several_nodes_give_several_values_in_order(void **state)
{
    const char *extract[] = { "film=//div[@id='showing-soon']//li/a", "date=//span[@class='date']" };
    static const char *const films[] = {
        "The Lighthouse Keeper's Daughter", "Paper Moons Over Harlow", "Seven Bridges North",
        "The Quiet Orchard", "Neon Tide", "A Map of Small Hours", "Copperfield Station",
        "The Last Cartographer", "Winter in Valpara\xc3\xadso", "The Clockmaker's Apprentice",
        "Salt and Static", "Nine Lanterns", "Under the Viaduct", "A Season of Kites",
        "The Glass Orchestra", "Harbour Lights at Dawn", "Echoes of Ardmore",
        "The Long Way to Tallinn", "Iron Meadows", "Small Hours, Big City",
        "The Beekeeper's Ledger", "Northbound Night Train",
    };
    _Static_assert(sizeof films / sizeof films[0] == NFILMS, "a name for every film");
    struct html_rules *r = rules("//div[@id='showing-soon']//a/@href", extract, 2);
    struct html_links l;

    parse_file(r, "testdata/site/cinema/index.html", CINEMA_URL, NULL, 0, &l);
    assert_int_equal(l.nlinks, NFILMS);
    assert_int_equal(l.nextracts, 2 * NFILMS);
    for (size_t i = 0; i < NFILMS; i++)
        assert_extract(&l, i, "film", films[i]);
    assert_extract(&l, NFILMS, "date", "2025-07-04");
    assert_extract(&l, 2 * NFILMS - 1, "date", "2025-11-28");
    html_links_free(&l);
    html_rules_free(r);
}

static void string_number_and_boolean_extracts_give_one_value(void **state)
{
    const char *extract[] = { "title=string(//title)", "links=count(//a)", "poster=boolean(//img)",
                              "missing=string(//nothing)" };
    struct html_rules *r = rules(NULL, extract, 4);
    struct html_links l;

    parse_file(r, "testdata/site/cinema/index.html", CINEMA_URL, NULL, 0, &l);
    assert_int_equal(l.nextracts, 4);
    assert_extract(&l, 0, "title", "Odeon Lumi\xc3\xa8re: showing soon");
    assert_extract(&l, 1, "links", "28");
    assert_extract(&l, 2, "poster", "false");
    assert_extract(&l, 3, "missing", "");
    html_links_free(&l);
    html_rules_free(r);
}

static void element_text_is_trimmed_and_collapsed_but_attributes_are_not(void **state)
{
    const char *extract[] = { "p=//p", "t=//p/@title", "s=string(//p)" };
    const char *html = "<p title='  a  b '>\n  one\t\ttwo <b>three</b>\n\n four  </p><p>   </p>";
    struct html_rules *r = rules(NULL, extract, 3);
    struct html_links l;

    assert_int_equal(parse_in_steps(r, PAGE_URL, NULL, html, strlen(html), 0, &l), 0);
    assert_int_equal(l.nextracts, 4);
    assert_extract(&l, 0, "p", "one two three four");
    assert_extract(&l, 1, "p", "");
    assert_extract(&l, 2, "t", "  a  b ");
    /* A string result is given as XPath made it. */
    assert_extract(&l, 3, "s", "\n  one\t\ttwo three\n\n four  ");
    html_links_free(&l);
    html_rules_free(r);
}

static void unnamed_extracts_are_named_after_their_position(void **state)
{
    const char *extract[] = { "title=string(//title)", "//h1", " spaced = //p ", "//a[@href=\"x=y\"]" };
    struct html_rules *r = rules(NULL, extract, 4);

    assert_int_equal(html_rules_nextract(r), 4);
    assert_string_equal(html_rules_extract_name(r, 0), "title");
    assert_string_equal(html_rules_extract_name(r, 1), "extract2");
    assert_string_equal(html_rules_extract_name(r, 2), "spaced");
    assert_string_equal(html_rules_extract_name(r, 3), "extract4");
    assert_null(html_rules_extract_name(r, 4));
    assert_null(html_rules_extract_name(r, -1));
    html_rules_free(r);
}

static void bad_xpath_gives_an_error_message(void **state)
{
    struct html_rules *r = (struct html_rules *)1;
    char err[256];
    const char *bad[] = { "poster=//img[" };

    assert_int_equal(html_rules_new(NULL, bad, 1, &r, err, sizeof err), -EINVAL);
    assert_null(r);
    assert_string_equal(err, "extract \"poster\": bad XPath \"//img[\": Invalid expression at character 6");

    assert_int_equal(html_rules_new("//a[@", NULL, 0, &r, err, sizeof err), -EINVAL);
    assert_string_equal(err, "follow: bad XPath \"//a[@\": Invalid expression at character 5");

    /* Known only when evaluated: html_rules_new evaluates once to find out. */
    bad[0] = "nosuchfunction(//a)";
    assert_int_equal(html_rules_new(NULL, bad, 1, &r, err, sizeof err), -EINVAL);
    assert_string_equal(err, "extract \"extract1\": bad XPath \"nosuchfunction(//a)\": "
                             "Unregistered function at character 0");

    bad[0] = "title=";
    assert_int_equal(html_rules_new(NULL, bad, 1, &r, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "extract \"title\": bad XPath \"\""));

    /* A short buffer is cut, not overrun; none at all is fine. */
    assert_int_equal(html_rules_new("//a[", NULL, 0, &r, err, 8), -EINVAL);
    assert_string_equal(err, "follow:");
    assert_int_equal(html_rules_new("//a[", NULL, 0, &r, NULL, 0), -EINVAL);
}

/* ---- nothing on stderr ------------------------------------------------------ */

/* Everything that makes libxml2 talk: broken markup, an encoding that fails
 * to convert (reported with no parser context), bad and failing XPaths.
 * Returns the number of unexpected results; no cmocka assertion, as it also
 * runs on a thread of its own. */
static void *noisy_work(void *arg)
{
    const char *extract[] = { "t=//title", "n=number('x') div 0" };
    const char *bad[] = { "//a[", "nosuchfunction()", "$novar" };
    struct html_rules *r = NULL, *nr = NULL;
    struct html_links l;
    char err[128];
    intptr_t wrong = 0;

    if (html_rules_new(NULL, extract, 2, &r, err, sizeof err) != 0)
        return (void *)1;
    for (size_t i = 0; i < NFIXTURES; i++) {
        struct html_page *p = html_page_new(r, PAGE_URL);
        wrong += !p || html_page_feed(p, bodies[i].data, bodies[i].len) != 0;
        wrong += html_page_finish(p, NULL, &l) != 0;
        html_links_free(&l);
        html_page_free(p);
    }
    for (int i = 0; i < 3; i++)
        wrong += html_rules_new(bad[i], NULL, 0, &nr, err, sizeof err) != -EINVAL;
    html_rules_free(r);
    return (void *)wrong;
}

static void nothing_is_written_to_stderr(void **state)
{
    char path[] = "/tmp/test_html_stderr.XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    pthread_t t;
    struct stat st;
    void *wrong, *in_thread;

    assert_true(fd >= 0 && saved >= 0);
    fflush(stderr);
    assert_int_equal(dup2(fd, 2), 2);
    wrong = noisy_work(NULL);
    assert_int_equal(pthread_create(&t, NULL, noisy_work, NULL), 0);
    assert_int_equal(pthread_join(t, &in_thread), 0);
    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    assert_null(wrong);
    assert_null(in_thread);
    close(saved);
    assert_int_equal(fstat(fd, &st), 0);
    close(fd);
    unlink(path);
    assert_int_equal(st.st_size, 0);
}

static void bad_encoding_ends_the_page_quietly(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    /* libxml2 2.9 stops at bytes its converter rejects; what came before
     * them is kept, and that is no error. */
    parse_file(r, "testdata/html/bad-encoding.html", PAGE_URL, NULL, 0, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/before.html");
    html_links_free(&l);
    html_rules_free(r);
}

/* ---- threads ---------------------------------------------------------------- */

/* parse_in_steps without cmocka assertions, for threads. */
static int parse_quietly(const struct html_rules *r, const char *url, const char *data,
                         size_t len, size_t step, struct html_links *out)
{
    struct html_page *p = html_page_new(r, url);
    int rc;

    memset(out, 0, sizeof *out);
    if (!p)
        return CRAWL_ENOMEM;
    if (step == 0)
        step = len ? len : 1;
    for (size_t off = 0; off < len; off += step)
        if ((rc = html_page_feed(p, data + off, len - off < step ? len - off : step)) != 0)
            break;
    rc = html_page_finish(p, NULL, out);
    html_page_free(p);
    return rc;
}

#define NTHREADS 4
#define ROUNDS 25

struct worker {
    const struct html_rules *r;
    const char *path;
    struct body b;
    const char *url;
    struct html_links want;
    int failed;
};

static void *worker_run(void *arg)
{
    struct worker *w = arg;

    for (int i = 0; i < ROUNDS && !w->failed; i++) {
        struct html_links l;
        /* Mix pieces and wholes so that threads are mid-parse together. */
        if (parse_quietly(w->r, w->url, w->b.data, w->b.len, i % 2 ? 61 : 0, &l) != 0 ||
            !same_links(&l, &w->want))
            w->failed = 1;
        html_links_free(&l);
    }
    return NULL;
}

static void threads_share_one_rules_object(void **state)
{
    const char *extract[] = { "title=string(//title)", "date=//span[@class='date']",
                              "poster=//img/@src", "n=count(//a)", "upper=translate(//h1, 'abc', 'ABC')" };
    struct html_rules *r = rules("//div[@id='showing-soon']//a/@href | //nav/a/@href", extract, 5);
    struct worker w[NTHREADS] = {
        { .path = "testdata/site/cinema/index.html", .url = CINEMA_URL },
        { .path = "testdata/site/cinema/film/1.html", .url = "http://127.0.0.1:8080/site/cinema/film/1.html" },
        { .path = "testdata/site/cinema/film/2.html", .url = "http://127.0.0.1:8080/site/cinema/film/2.html" },
        { .path = "testdata/html/latin1.html", .url = PAGE_URL },
    };
    pthread_t t[NTHREADS];

    for (int i = 0; i < NTHREADS; i++) {
        w[i].r = r;
        w[i].b = read_body(w[i].path);
        parse_file(r, w[i].path, w[i].url, NULL, 0, &w[i].want);
        assert_true(w[i].want.nextracts > 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < NTHREADS; i++) {
        if (w[i].failed)
            fail_msg("%s: a thread got a different result", w[i].path);
        html_links_free(&w[i].want);
        free(w[i].b.data);
    }
    html_rules_free(r);
}

/* ---- depth and tree bounds ---------------------------------------------- */

/* A page with a link inside n nested <div>s, then a shallow one. */
static char *deep_page(size_t n)
{
    struct strbuf b = {0};
    sb_adds(&b, "<html><body>");
    for (size_t i = 0; i < n; i++)
        sb_adds(&b, "<div>");
    sb_adds(&b, "<a href=\"/deep\">deep</a>");
    for (size_t i = 0; i < n; i++)
        sb_adds(&b, "</div>");
    sb_adds(&b, "<p><a href=\"/shallow\">shallow</a></p></body></html>");
    assert_false(b.nomem);
    return b.data;
}

/* A page of n links, /1 to /n. */
static char *wide_page(size_t n)
{
    char *s = malloc(64 + 40 * n), *w = s;
    assert_non_null(s);
    w += sprintf(w, "<html><body>\n");
    for (size_t i = 1; i <= n; i++)
        w += sprintf(w, "<a href=\"/%zu\">%zu</a>\n", i, i);
    sprintf(w, "</body></html>\n");
    return s;
}

/* Parses text with rule follow, tree bounded at tree_max. */
static void parse_bounded(const char *follow, const char *text, size_t tree_max,
                          struct html_links *out)
{
    struct html_rules *r = rules(follow, NULL, 0);
    struct html_page *p = html_page_new(r, PAGE_URL);
    assert_non_null(p);
    html_page_set_tree_max(p, tree_max);
    assert_int_equal(html_page_feed(p, text, strlen(text)), 0);
    assert_int_equal(html_page_finish(p, NULL, out), 0);
    html_page_free(p);
    html_rules_free(r);
}

static void a_tree_too_deep_for_libxml2_says_it_stopped(void **state)
{
    struct html_links l;
    char *ok = deep_page(html_max_depth() - 2), *deep = deep_page(html_max_depth() + 50);

    assert_int_equal(html_max_depth(), 256);
    /* html and body, then the <div>s: the link at depth 257 is the last built. */
    parse_bounded("//div//a/@href | //p/a/@href", ok, 0, &l);
    assert_int_equal(l.stopped, HTML_STOP_NONE);
    ASSERT_LINKS(&l, "http://example.com/deep", "http://example.com/shallow");
    html_links_free(&l);
    parse_bounded("//div//a/@href | //p/a/@href", deep, 0, &l);
    assert_int_equal(l.stopped, HTML_STOP_DEPTH);
    assert_int_equal(l.nlinks, 0);
    html_links_free(&l);
    /* The default rule builds no tree, and has no such limit. */
    parse_bounded(NULL, deep, 0, &l);
    assert_int_equal(l.stopped, HTML_STOP_NONE);
    ASSERT_LINKS(&l, "http://example.com/deep", "http://example.com/shallow");
    html_links_free(&l);
    free(ok);
    free(deep);
}

static void the_tree_stops_growing_at_its_bound(void **state)
{
    struct html_links l;
    char *text = wide_page(5000);
    size_t len = strlen(text);

    parse_bounded("//body//a/@href", text, 0, &l);
    assert_int_equal(l.stopped, HTML_STOP_NONE);
    assert_int_equal(l.nlinks, 5000);
    html_links_free(&l);
    /* A bound of the body's size holds a few of its links: each costs
     * some 24 times its 20-odd bytes in nodes. */
    parse_bounded("//body//a/@href", text, len, &l);
    assert_int_equal(l.stopped, HTML_STOP_TREE);
    assert_true(l.nlinks > 0);
    assert_true(l.nlinks < 5000 / 10);
    assert_string_equal(l.links[0], "http://example.com/1");
    size_t some = l.nlinks;
    html_links_free(&l);
    parse_bounded("//body//a/@href", text, 4 * len, &l);
    assert_int_equal(l.stopped, HTML_STOP_TREE);
    assert_true(l.nlinks > 3 * some);
    html_links_free(&l);
    /* Streaming builds nothing to bound. */
    parse_bounded(NULL, text, len, &l);
    assert_int_equal(l.stopped, HTML_STOP_NONE);
    assert_int_equal(l.nlinks, 5000);
    html_links_free(&l);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(follow_xpath_selects_only_the_showing_soon_links),
        cmocka_unit_test(default_follow_takes_every_link_of_the_cinema_page),
        cmocka_unit_test(follow_xpath_may_select_elements_and_strings),
        cmocka_unit_test(extracts_give_raw_values_in_document_order),
        cmocka_unit_test(several_nodes_give_several_values_in_order),
        cmocka_unit_test(string_number_and_boolean_extracts_give_one_value),
        cmocka_unit_test(element_text_is_trimmed_and_collapsed_but_attributes_are_not),
        cmocka_unit_test(unnamed_extracts_are_named_after_their_position),
        cmocka_unit_test(bad_xpath_gives_an_error_message),
        cmocka_unit_test(nothing_is_written_to_stderr),
        cmocka_unit_test(bad_encoding_ends_the_page_quietly),
        cmocka_unit_test(threads_share_one_rules_object),
        cmocka_unit_test(a_tree_too_deep_for_libxml2_says_it_stopped),
        cmocka_unit_test(the_tree_stops_growing_at_its_bound),
    };

    return run_html_tests(tests, sizeof tests / sizeof tests[0]);
}

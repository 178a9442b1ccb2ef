/* test_html.c: link extraction: resolution and normalisation, <base href>,
 * broken markup, encodings and streaming one byte at a time (the rules are
 * in test_html_rules.c). Reads pages from testdata/ (run from the top of
 * the tree, as tests/run.sh does). */
#include "html_helpers.h"

/* ---- resolution and normalisation --------------------------------------- */

static void absolute_links_are_kept(void **state)
{
    struct html_links l;
    parse_text("<a href='http://example.org/abs'>a</a>"
               "<a href='https://secure.example.org/s?x=1'>b</a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.org/abs", "https://secure.example.org/s?x=1");
    assert_int_equal(l.nextracts, 0);
    assert_false(l.truncated);
    html_links_free(&l);
}

static void relative_links_resolve_against_the_page_url(void **state)
{
    struct html_links l;
    parse_text("<a href='a/b'></a><a href='../c'></a><a href='./d'></a>"
               "<a href='?q=1'></a><a href='//host.example.net/x'></a>"
               "<a href='/root'></a><a href='../../../../up'></a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/a/b", "http://example.com/c",
                 "http://example.com/dir/d", "http://example.com/dir/page.html?q=1",
                 "http://host.example.net/x", "http://example.com/root",
                 "http://example.com/up");
    html_links_free(&l);
}

static void protocol_relative_links_take_the_page_scheme(void **state)
{
    struct html_links l;
    parse_text("<a href='//host.example.net/x'></a>", "https://example.com/", &l);
    ASSERT_LINKS(&l, "https://host.example.net/x");
    html_links_free(&l);
}

static void fragments_are_dropped(void **state)
{
    struct html_links l;
    /* "#top" alone is the page itself, query included. */
    parse_text("<a href='#top'></a><a href='x#y'></a><a href='x#z'></a>"
               "<a href='/p?q=1#frag'></a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/page.html?p=1", "http://example.com/dir/x",
                 "http://example.com/p?q=1");
    html_links_free(&l);
}

static void empty_href_is_the_page_itself(void **state)
{
    struct html_links l;
    parse_text("<a href=''></a><a href></a><a>no href</a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/page.html?p=1");
    html_links_free(&l);
}

static void javascript_mailto_tel_data_and_other_schemes_are_skipped(void **state)
{
    struct html_links l;
    parse_text("<a href='javascript:void(0)'></a><a href=' JavaScript:alert(1)'></a>"
               "<a href='java\nscript:x()'></a>"
               "<a href='mailto:someone@example.com'></a><a href='tel:+441234567890'></a>"
               "<a href='data:text/html,hello'></a><a href='ftp://files.example.org/f'></a>"
               "<a href='HTTPS://ok.example.org/'></a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "https://ok.example.org/");
    html_links_free(&l);
}

static void duplicates_are_collapsed_in_first_seen_order(void **state)
{
    struct html_links l;
    parse_text("<a href='b'></a><a href='a'></a><a href='b'></a><a href='./a'></a>"
               "<a href='http://example.com/dir/b#x'></a><a href='HTTP://EXAMPLE.com:80/dir/a'></a>"
               "<a href='c'></a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/b", "http://example.com/dir/a",
                 "http://example.com/dir/c");
    html_links_free(&l);
}

static void scheme_and_host_are_lower_cased_and_default_port_removed(void **state)
{
    struct html_links l;
    parse_text("<a href='HTTP://WWW.Example.ORG:80/Path/Case'></a>"
               "<a href='https://example.org:443/'></a>"
               "<a href='http://example.org:8080'></a>"
               "<a href='https://example.org:80/'></a>", PAGE_URL, &l);
    /* The path keeps its case: it is the server's to interpret. */
    ASSERT_LINKS(&l, "http://www.example.org/Path/Case", "https://example.org/",
                 "http://example.org:8080/", "https://example.org:80/");
    html_links_free(&l);
}

static void dot_segments_go_and_escapes_stay_as_written(void **state)
{
    struct html_links l;
    /* As a browser requests them: the two spellings of the escapes are two
     * links here, and one page to the frontier's seen set (test_url). */
    parse_text("<a href='https://example.org/p/./q/../r'></a>"
               "<a href='http://example.org/%7e/x%2f'></a>"
               "<a href='http://example.org/%7E/x%2F'></a>"
               "<a href='caf\xc3\xa9.html'></a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "https://example.org/p/r", "http://example.org/%7e/x%2f",
                 "http://example.org/%7E/x%2F", "http://example.com/dir/caf%C3%A9.html");
    html_links_free(&l);
}

static void white_space_around_and_inside_hrefs(void **state)
{
    struct html_links l;
    parse_text("<a href='  \t spaced.html\n  '></a>"
               "<a href='sp ace.html?a b'></a>"
               "<a href='bro\nken\t.html'></a>"
               "<a href='q.html?x=\"<y>\"'></a>", PAGE_URL, &l);
    /* Like a browser: spaces become %20 in the query too, not '+'. */
    ASSERT_LINKS(&l, "http://example.com/dir/spaced.html",
                 "http://example.com/dir/sp%20ace.html?a%20b",
                 "http://example.com/dir/broken.html",
                 "http://example.com/dir/q.html?x=%22%3Cy%3E%22");
    html_links_free(&l);
}

static void unparsable_links_are_skipped(void **state)
{
    struct html_links l;
    parse_text("<a href='http://'></a><a href='http://exa mple.com/'></a>"
               "<a href='http://example.com:99999/'></a><a href='//'></a>"
               "<a href='ok.html'></a>", PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/ok.html");
    html_links_free(&l);
}

static void links_longer_than_the_limit_are_dropped(void **state)
{
    size_t n = HTML_MAX_URL + 100;
    char *html = malloc(n + 64), *w = html;
    struct html_links l;

    assert_non_null(html);
    w += sprintf(w, "<a href='/");
    memset(w, 'x', HTML_MAX_URL);
    w += HTML_MAX_URL;
    w += sprintf(w, "'></a><a href='/short'></a>");
    parse_text(html, PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.com/short");
    html_links_free(&l);
    free(html);
}

static void links_past_the_cap_are_dropped_and_flagged(void **state)
{
    size_t n = HTML_MAX_LINKS + 5;
    char *html = malloc(n * 32 + 1), *w = html;
    struct html_links l;

    assert_non_null(html);
    for (size_t i = 0; i < n; i++)
        w += sprintf(w, "<a href='/%zu'></a>", i);
    parse_text(html, PAGE_URL, &l);
    assert_int_equal(l.nlinks, HTML_MAX_LINKS);
    assert_true(l.truncated);
    assert_string_equal(l.links[0], "http://example.com/0");
    assert_string_equal(l.links[HTML_MAX_LINKS - 1], "http://example.com/9999");
    html_links_free(&l);
    free(html);
}

static void every_kind_of_link_in_the_links_page(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/html/links.html", PAGE_URL, NULL, 0, &l);
    ASSERT_LINKS(&l,
                 "http://example.org/abs", "https://secure.example.org/s?x=1",
                 "http://example.com/dir/a/b", "http://example.com/c",
                 "http://example.com/dir/d", "http://example.com/dir/page.html?q=1",
                 "http://host.example.net/x", "http://example.com/root",
                 "http://example.com/dir/page.html?p=1", "http://example.com/dir/x",
                 "http://www.example.org/Path/Case", "https://example.org/p/r",
                 "http://example.org:8080/", "http://example.org/%7e/x%2f",
                 "http://example.com/dir/spaced.html",
                 "http://example.com/dir/sp%20ace.html?a%20b");
    html_links_free(&l);
    html_rules_free(r);
}

/* ---- <base href> and redirects ------------------------------------------ */

static void base_href_replaces_the_page_url_as_base(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/html/base.html", PAGE_URL, NULL, 0, &l);
    /* The second <base> is ignored; "#frag" is the base itself. */
    ASSERT_LINKS(&l, "http://static.example.net/sub/dir/one.html",
                 "http://static.example.net/sub/two.html",
                 "http://static.example.net/three.html",
                 "https://other.example.org/four",
                 "http://static.example.net/sub/dir/");
    html_links_free(&l);
    html_rules_free(r);
}

static void relative_base_href_resolves_against_the_page_url(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/html/base-relative.html", PAGE_URL, NULL, 0, &l);
    ASSERT_LINKS(&l, "http://example.com/static/one.html",
                 "http://example.com/static/sub/two.html",
                 "http://example.com/three.html");
    html_links_free(&l);
    html_rules_free(r);
}

static void base_href_applies_to_links_before_it(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/html/base-late.html", PAGE_URL, NULL, 0, &l);
    ASSERT_LINKS(&l, "http://late.example.net/b/before.html",
                 "http://late.example.net/b/after.html");
    html_links_free(&l);
    html_rules_free(r);
}

static void base_href_of_another_scheme_leaves_only_absolute_links(void **state)
{
    struct html_links l;
    /* A browser resolves "a" against the javascript: URL, which fails. */
    parse_text("<base href='javascript:x()'><a href='a'></a><a href='http://example.org/abs'></a>",
               PAGE_URL, &l);
    ASSERT_LINKS(&l, "http://example.org/abs");
    html_links_free(&l);
}

static void redirect_changes_the_base(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;
    const char *html = "<a href='a/b'></a><a href='#top'></a><a href='/abs'></a>";

    assert_int_equal(parse_in_steps(r, "http://old.example.com/x/", "https://new.example.com/y/z.html",
                                    html, strlen(html), 0, &l), 0);
    ASSERT_LINKS(&l, "https://new.example.com/y/a/b", "https://new.example.com/y/z.html",
                 "https://new.example.com/abs");
    html_links_free(&l);

    /* A relative <base> resolves against the final URL too. */
    html = "<base href='../s/'><a href='a'></a>";
    assert_int_equal(parse_in_steps(r, "http://old.example.com/x/", "https://new.example.com/y/z/w.html",
                                    html, strlen(html), 0, &l), 0);
    ASSERT_LINKS(&l, "https://new.example.com/y/s/a");
    html_links_free(&l);
    html_rules_free(r);
}

static void without_an_http_page_url_only_absolute_links_resolve(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;
    const char *html = "<a href='rel'></a><a href='#x'></a><a href='http://example.org/'></a>";

    assert_int_equal(parse_in_steps(r, NULL, NULL, html, strlen(html), 0, &l), 0);
    ASSERT_LINKS(&l, "http://example.org/");
    html_links_free(&l);
    assert_int_equal(parse_in_steps(r, "file:///tmp/x.html", NULL, html, strlen(html), 0, &l), 0);
    ASSERT_LINKS(&l, "http://example.org/");
    html_links_free(&l);
    html_rules_free(r);
}

/* ---- markup, streaming and encodings ------------------------------------ */

static void broken_html_still_gives_its_links(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/html/broken.html", PAGE_URL, NULL, 0, &l);
    /* Unquoted, single-quoted, '<' inside a value (escaped), stray '<' in
     * text, unclosed cells, a repeated attribute (the first wins), upper-case
     * tags, and a last <a> the body ends inside. */
    ASSERT_LINKS(&l, "http://example.com/dir/unquoted.html",
                 "http://example.com/dir/stray%3Clt.html",
                 "http://example.com/dir/single.html", "http://example.com/dir/cell.html",
                 "http://example.com/dir/dup-attr.html", "http://example.com/dir/UPPER.html",
                 "http://example.com/dir/tail.html");
    html_links_free(&l);
    html_rules_free(r);
}

static void one_byte_at_a_time_gives_the_same_result(void **state)
{
    const char *extract[] = { "title=string(//title)", "h=//h1", "a=//a" };
    struct html_rules *modes[2] = { rules(NULL, NULL, 0), rules(NULL, extract, 3) };

    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < NFIXTURES; i++) {
            struct html_links whole, bytes, odd;
            parse_file(modes[m], fixtures[i], PAGE_URL, NULL, 0, &whole);
            parse_file(modes[m], fixtures[i], PAGE_URL, NULL, 1, &bytes);
            parse_file(modes[m], fixtures[i], PAGE_URL, NULL, 7, &odd);
            if (!same_links(&whole, &bytes) || !same_links(&whole, &odd))
                fail_msg("%s (%s): different result in small pieces", fixtures[i],
                         m ? "tree" : "stream");
            html_links_free(&whole);
            html_links_free(&bytes);
            html_links_free(&odd);
        }
    html_rules_free(modes[0]);
    html_rules_free(modes[1]);
}

static void default_rules_stream_and_tree_agree(void **state)
{
    const char *extract[] = { "x=1" };
    struct html_rules *stream = rules(NULL, NULL, 0);
    struct html_rules *tree = rules("//a/@href", extract, 1);

    /* The SAX callbacks and the XPath on the tree find the same <a href>. */
    for (size_t i = 0; i < NFIXTURES; i++) {
        struct html_links a, b;
        parse_file(stream, fixtures[i], PAGE_URL, NULL, 0, &a);
        parse_file(tree, fixtures[i], PAGE_URL, NULL, 0, &b);
        if (fixtures[i][strlen(fixtures[i]) - 1] != 'n')    /* binary.bin: no document */
            assert_int_equal(b.nextracts, 1);
        assert_links(&b, (const char *const *)a.links, a.nlinks);
        html_links_free(&a);
        html_links_free(&b);
    }
    html_rules_free(stream);
    html_rules_free(tree);
}

static void latin1_page_with_meta_charset_is_decoded(void **state)
{
    const char *extract[] = { "title=string(//title)", "h1=//h1" };
    struct html_rules *r = rules(NULL, extract, 2);
    struct html_links l;

    parse_file(r, "testdata/html/latin1.html", PAGE_URL, NULL, 0, &l);
    /* Values come back in UTF-8; links are UTF-8 percent-encoded. */
    ASSERT_LINKS(&l, "http://example.com/dir/caf%C3%A9.html", "http://example.com/%C3%BCber/");
    assert_int_equal(l.nextracts, 2);
    assert_extract(&l, 0, "title", "Caf\xc3\xa9 cr\xc3\xa8me");
    assert_extract(&l, 1, "h1", "Men\xc3\xba del d\xc3\xad" "a");
    html_links_free(&l);
    html_rules_free(r);
}

static void undeclared_page_is_utf8_until_a_byte_is_not(void **state)
{
    const char *extract[] = { "t=//title" };
    struct html_rules *r = rules(NULL, extract, 1);
    const char *utf8 = "<title>caf\xc3\xa9 \xe2\x82\xac</title>";
    const char *latin1 = "<title>caf\xe9 cr\xe8me</title>";
    struct html_links l;

    for (size_t step = 0; step < 2; step++) {
        assert_int_equal(parse_in_steps(r, PAGE_URL, NULL, utf8, strlen(utf8), step, &l), 0);
        assert_extract(&l, 0, "t", "caf\xc3\xa9 \xe2\x82\xac");
        html_links_free(&l);
        assert_int_equal(parse_in_steps(r, PAGE_URL, NULL, latin1, strlen(latin1), step, &l), 0);
        assert_extract(&l, 0, "t", "caf\xc3\xa9 cr\xc3\xa8me");
        html_links_free(&l);
    }
    html_rules_free(r);
}

static void utf8_bom_wins_over_meta_charset(void **state)
{
    const char *extract[] = { "title=string(//title)" };
    struct html_rules *r = rules(NULL, extract, 1);
    struct html_links l;

    /* The page says iso-8859-1 in a <meta> but starts with a UTF-8 BOM. */
    parse_file(r, "testdata/html/utf8-bom.html", PAGE_URL, NULL, 0, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/zo%C3%AB.html");
    assert_int_equal(l.nextracts, 1);
    assert_extract(&l, 0, "title", "Zo\xc3\xab's caf\xc3\xa9");
    html_links_free(&l);
    html_rules_free(r);
}

/* Parses text with charset cs set as the HTTP Content-Type's, fed in pieces
 * of step bytes (0: at once). */
static int parse_with_charset(const struct html_rules *r, const char *cs, const char *text,
                              size_t len, size_t step, struct html_links *out)
{
    return parse_steps(r, PAGE_URL, NULL, cs, text, len, step, out);
}

static void http_charset_decodes_the_page(void **state)
{
    const char *extract[] = { "t=//title" };
    struct html_rules *r = rules(NULL, extract, 1);
    /* "Дом" and a link to "/дом.html" in windows-1251, which the UTF-8 then
     * ISO-8859-1 guess would read as "Äîì". */
    const char *cp1251 = "<title>\xc4\xee\xec</title><a href=\"/\xe4\xee\xec.html\">x</a>";
    struct html_links l;

    for (size_t step = 0; step < 2; step++) {
        assert_int_equal(parse_with_charset(r, "windows-1251", cp1251, strlen(cp1251), step, &l), 0);
        assert_extract(&l, 0, "t", "\xd0\x94\xd0\xbe\xd0\xbc");
        ASSERT_LINKS(&l, "http://example.com/%D0%B4%D0%BE%D0%BC.html");
        html_links_free(&l);
    }
    /* Names are matched without regard to case. */
    assert_int_equal(parse_with_charset(r, "WINDOWS-1251", cp1251, strlen(cp1251), 0, &l), 0);
    assert_extract(&l, 0, "t", "\xd0\x94\xd0\xbe\xd0\xbc");
    html_links_free(&l);
    html_rules_free(r);
}

static void http_charset_wins_over_meta_and_bom_over_both(void **state)
{
    const char *extract[] = { "t=//title" };
    struct html_rules *r = rules(NULL, extract, 1);
    const char *meta = "<meta charset=\"iso-8859-1\"><title>caf\xc3\xa9</title>";
    const char *bom = "\xef\xbb\xbf<title>caf\xc3\xa9</title>";
    struct html_links l;

    /* The <meta> says ISO-8859-1, the HTTP header UTF-8: UTF-8 it is. */
    assert_int_equal(parse_with_charset(r, "utf-8", meta, strlen(meta), 0, &l), 0);
    assert_extract(&l, 0, "t", "caf\xc3\xa9");
    html_links_free(&l);
    /* A UTF-8 byte order mark beats an HTTP ISO-8859-1. */
    assert_int_equal(parse_with_charset(r, "iso-8859-1", bom, strlen(bom), 0, &l), 0);
    assert_extract(&l, 0, "t", "caf\xc3\xa9");
    html_links_free(&l);
    /* Without the header, the <meta> is obeyed: two Latin-1 characters. */
    assert_int_equal(parse_in_steps(r, PAGE_URL, NULL, meta, strlen(meta), 0, &l), 0);
    assert_extract(&l, 0, "t", "caf\xc3\x83\xc2\xa9");
    html_links_free(&l);
    html_rules_free(r);
}

static void unknown_or_odd_http_charsets_are_ignored(void **state)
{
    const char *extract[] = { "t=//title" };
    struct html_rules *r = rules(NULL, extract, 1);
    const char *latin1 = "<title>caf\xe9</title>";
    static const char *const names[] = {
        "no-such-charset", "utf-8\"; x", "a b", "x/../y",
        "a-charset-name-that-is-longer-than-forty-characters",
    };
    struct html_links l;

    /* Each is as if there were none: UTF-8, then ISO-8859-1. */
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        assert_int_equal(parse_with_charset(r, names[i], latin1, strlen(latin1), 0, &l), 0);
        assert_extract(&l, 0, "t", "caf\xc3\xa9");
        html_links_free(&l);
    }
    html_rules_free(r);
}

static void charset_is_set_once_and_before_the_body(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_page *p = html_page_new(r, PAGE_URL);

    assert_non_null(p);
    assert_int_equal(html_page_set_charset(p, "utf-8", 5), 0);
    assert_int_equal(html_page_set_charset(p, "utf-8", 5), -EINVAL);
    html_page_free(p);
    p = html_page_new(r, PAGE_URL);
    assert_int_equal(html_page_feed(p, "<html><body>", 12), 0);
    assert_int_equal(html_page_set_charset(p, "utf-8", 5), -EINVAL);
    html_page_free(p);
    html_rules_free(r);
}

static void utf16_page_with_bom_is_decoded(void **state)
{
    const char *extract[] = { "title=string(//title)" };
    struct html_rules *r = rules(NULL, extract, 1);
    struct html_links l;

    parse_file(r, "testdata/html/utf16le-bom.html", PAGE_URL, NULL, 0, &l);
    ASSERT_LINKS(&l, "http://example.com/dir/%CE%B1.html", "http://example.com/dir/utf16.html");
    assert_extract(&l, 0, "title", "\xce\x95\xce\xbb\xce\xbb\xce\xb7\xce\xbd\xce\xb9\xce\xba\xce\xac");
    html_links_free(&l);
    html_rules_free(r);
}

static void binary_body_gives_no_links_and_no_error(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_links l;

    parse_file(r, "testdata/html/binary.bin", PAGE_URL, NULL, 0, &l);
    assert_int_equal(l.nlinks, 0);
    assert_int_equal(l.nextracts, 0);
    assert_false(l.truncated);
    html_links_free(&l);
    html_rules_free(r);
}

static void empty_body_gives_nothing(void **state)
{
    const char *extract[] = { "title=string(//title)" };
    struct html_rules *modes[2] = { rules(NULL, NULL, 0), rules(NULL, extract, 1) };

    for (int m = 0; m < 2; m++) {
        struct html_links l;
        /* A body shorter than a byte order mark, and none at all. */
        assert_int_equal(parse_in_steps(modes[m], PAGE_URL, NULL, "<a", 2, 0, &l), 0);
        assert_int_equal(l.nlinks, 0);
        html_links_free(&l);
        assert_int_equal(parse_in_steps(modes[m], PAGE_URL, NULL, "", 0, 0, &l), 0);
        assert_int_equal(l.nlinks, 0);
        assert_int_equal(l.nextracts, 0);
        html_links_free(&l);
        html_rules_free(modes[m]);
    }
}

static void feeding_after_finish_is_harmless(void **state)
{
    struct html_rules *r = rules(NULL, NULL, 0);
    struct html_page *p = html_page_new(r, PAGE_URL);
    struct html_links l;

    assert_non_null(p);
    assert_int_equal(html_page_feed(p, "<a href='x'>", 12), 0);
    assert_int_equal(html_page_finish(p, NULL, &l), 0);
    ASSERT_LINKS(&l, "http://example.com/dir/x");
    html_links_free(&l);
    assert_int_equal(html_page_feed(p, "<a href='y'>", 12), 0);
    assert_int_equal(html_page_finish(p, NULL, &l), -EINVAL);
    assert_int_equal(l.nlinks, 0);
    html_page_free(p);
    html_page_free(NULL);
    html_rules_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(absolute_links_are_kept),
        cmocka_unit_test(relative_links_resolve_against_the_page_url),
        cmocka_unit_test(protocol_relative_links_take_the_page_scheme),
        cmocka_unit_test(fragments_are_dropped),
        cmocka_unit_test(empty_href_is_the_page_itself),
        cmocka_unit_test(javascript_mailto_tel_data_and_other_schemes_are_skipped),
        cmocka_unit_test(duplicates_are_collapsed_in_first_seen_order),
        cmocka_unit_test(scheme_and_host_are_lower_cased_and_default_port_removed),
        cmocka_unit_test(dot_segments_go_and_escapes_stay_as_written),
        cmocka_unit_test(white_space_around_and_inside_hrefs),
        cmocka_unit_test(unparsable_links_are_skipped),
        cmocka_unit_test(links_longer_than_the_limit_are_dropped),
        cmocka_unit_test(links_past_the_cap_are_dropped_and_flagged),
        cmocka_unit_test(every_kind_of_link_in_the_links_page),
        cmocka_unit_test(base_href_replaces_the_page_url_as_base),
        cmocka_unit_test(relative_base_href_resolves_against_the_page_url),
        cmocka_unit_test(base_href_applies_to_links_before_it),
        cmocka_unit_test(base_href_of_another_scheme_leaves_only_absolute_links),
        cmocka_unit_test(redirect_changes_the_base),
        cmocka_unit_test(without_an_http_page_url_only_absolute_links_resolve),
        cmocka_unit_test(broken_html_still_gives_its_links),
        cmocka_unit_test(one_byte_at_a_time_gives_the_same_result),
        cmocka_unit_test(default_rules_stream_and_tree_agree),
        cmocka_unit_test(latin1_page_with_meta_charset_is_decoded),
        cmocka_unit_test(undeclared_page_is_utf8_until_a_byte_is_not),
        cmocka_unit_test(utf8_bom_wins_over_meta_charset),
        cmocka_unit_test(utf16_page_with_bom_is_decoded),
        cmocka_unit_test(binary_body_gives_no_links_and_no_error),
        cmocka_unit_test(empty_body_gives_nothing),
        cmocka_unit_test(feeding_after_finish_is_harmless),
        cmocka_unit_test(http_charset_decodes_the_page),
        cmocka_unit_test(http_charset_wins_over_meta_and_bom_over_both),
        cmocka_unit_test(unknown_or_odd_http_charsets_are_ignored),
        cmocka_unit_test(charset_is_set_once_and_before_the_body),
    };

    return run_html_tests(tests, sizeof tests / sizeof tests[0]);
}

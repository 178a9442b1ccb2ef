/* test_url.c: the URL module: the message a listed URL fails with, href
 * cleaning, resolution against a page and its <base href> as a browser
 * resolves (the WHATWG URL Standard; test_url_wpt.c runs the standard's
 * own test data), the normal form the seen set keys on, host keys and the
 * lists of distinct links. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <regex.h>

#include "crawl.h"
#include "url.h"

#define PAGE_URL "http://example.com/dir/page.html?p=1"

/* ---- helpers ------------------------------------------------------------- */

static void assert_valid(const char *s)
{
    const char *why = "unset";
    if (url_validate(s, &why) != 0)
        fail_msg("\"%s\": %s", s, why ? why : "(no reason)");
    assert_null(why);
}

static void assert_invalid(const char *s, const char *want)
{
    const char *why = NULL;
    assert_int_equal(url_validate(s, &why), -EINVAL);
    assert_non_null(why);
    if (strcmp(why, want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", s, why, want);
}

/* Cleans href; returns the result (malloc'd) or NULL when it is skipped. */
static char *clean(const char *href)
{
    char *out = (char *)"unset";
    assert_int_equal(url_clean(href, &out), 0);
    return out;
}

static void assert_clean(const char *href, const char *want)
{
    char *got = clean(href);
    if (!want) {
        if (got)
            fail_msg("\"%s\": got \"%s\", want it skipped", href, got);
        return;
    }
    if (!got)
        fail_msg("\"%s\": skipped, want \"%s\"", href, want);
    assert_string_equal(got, want);
    free(got);
}

static struct url_base *base_of(const char *page, const char *base_href)
{
    struct url_base *b = (struct url_base *)&b;
    assert_int_equal(url_base_new(page, base_href, &b), 0);
    return b;
}

/* Resolves the raw href as a page would: cleaned, then resolved against b.
 * want NULL: no link. */
static void assert_resolves(const struct url_base *b, const char *href, const char *want)
{
    char *c = clean(href), *got = NULL;
    if (c) {
        assert_int_equal(url_resolve(b, c, &got), 0);
        free(c);
    }
    if (!want) {
        if (got)
            fail_msg("\"%s\": got \"%s\", want no link", href, got);
        return;
    }
    if (!got)
        fail_msg("\"%s\": no link, want \"%s\"", href, want);
    assert_string_equal(got, want);
    free(got);
}

static void assert_normal(const char *url, const char *want)
{
    char *got = NULL;
    assert_int_equal(url_normalise(url, &got), 0);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* ---- checking listed URLs ------------------------------------------------ */

static void http_and_https_urls_with_a_host_are_valid(void **state)
{
    assert_valid("http://example.com");
    assert_valid("https://example.com/a/b?c=d#e");
    assert_valid("HTTP://EXAMPLE.COM:8080/");
    assert_valid("hTTpS://[::1]:8443/x");
    assert_valid("http://user:pass@example.com/");
    assert_valid("http://b\xc3\xbc" "cher.example/caf\xc3\xa9");
}

static void an_empty_line_is_an_empty_url(void **state)
{
    assert_invalid("", "empty URL");
}

static void control_characters_are_named_before_anything_else(void **state)
{
    assert_invalid("http://example.com/\x01", "contains control characters");
    assert_invalid("http://example.com/a\tb", "contains control characters");
    assert_invalid("ftp://x/\x7f", "contains control characters");
}

static void a_url_without_a_scheme_says_so(void **state)
{
    static const char *const v[] = {
        "example.com/x", "127.0.0.1/no-scheme", "//127.0.0.1/protocol-relative",
        "1http://x/", "://x", "http//x", "ht tp://x",
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        assert_invalid(v[i], "not an absolute http or https URL (no scheme)");
}

static void every_scheme_but_http_and_https_is_unsupported(void **state)
{
    static const char *const v[] = {
        "file:///etc/passwd", "ftp://127.0.0.1/file.txt", "gopher://127.0.0.1/1",
        "javascript:alert(1)", "mailto:someone@example.invalid", "data:text/html,x",
        "httpx://example.com/", "http+unix://x/", "ws://example.com/",
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        assert_invalid(v[i], "unsupported scheme: only http and https are fetched");
}

static void spaces_are_named_once_the_scheme_is_right(void **state)
{
    assert_invalid("http://exa mple.com/", "contains spaces");
    assert_invalid("http://example.com/a b", "contains spaces");
    /* The scheme is looked at first. */
    assert_invalid("ftp://example.com/a b", "unsupported scheme: only http and https are fetched");
}

static void what_libcurl_refuses_is_malformed(void **state)
{
    assert_invalid("http:/one-slash", "malformed URL");
    assert_invalid("http:example.com", "malformed URL");
    assert_invalid("http://", "malformed URL");
    assert_invalid("http://example.com:99999/", "malformed URL");
    assert_invalid("http://[::1/", "malformed URL");
}

static void what_the_url_standard_refuses_is_malformed(void **state)
{
    assert_invalid("http://a|b/", "malformed URL");
    assert_invalid("http://256.256.256.256/", "malformed URL");
    assert_invalid("http://user@/x", "malformed URL");
}

/* ---- cleaning hrefs ------------------------------------------------------ */

static void white_space_is_trimmed_and_tabs_and_newlines_removed(void **state)
{
    assert_clean("  \t spaced.html\n  ", "spaced.html");
    assert_clean("bro\nken\t.html", "broken.html");
    assert_clean("a\r\nb", "ab");
}

static void the_fragment_goes_and_a_lone_fragment_leaves_nothing(void **state)
{
    assert_clean("x#y", "x");
    assert_clean("/p?q=1#frag#more", "/p?q=1");
    assert_clean("#top", "");
    assert_clean("", "");
}

static void cleaning_leaves_percent_encoding_to_the_parser(void **state)
{
    assert_clean("sp ace.html?a b", "sp ace.html?a b");
    assert_clean("q.html?x=\"<y>\"", "q.html?x=\"<y>\"");
    assert_clean("%7e%zz caf\xc3\xa9", "%7e%zz caf\xc3\xa9");
    /* Spaces and controls just before a fragment are no longer at the end
     * once it goes: they are kept, encoded, for the parser not to trim. */
    assert_clean("a b \x01#frag", "a b%20%01");
}

static void a_nul_byte_is_written_as_an_escape(void **state)
{
    char *out = NULL;
    assert_int_equal(url_clean_n("/a\0b?\0#\0", 8, &out), 0);
    assert_non_null(out);
    assert_string_equal(out, "/a%00b?%00");
    free(out);
    assert_int_equal(url_clean_n("\0\0 http://x/", 12, &out), 0);
    assert_string_equal(out, "http://x/");
    free(out);
}

static void only_http_and_https_schemes_survive_cleaning(void **state)
{
    assert_clean("javascript:void(0)", NULL);
    assert_clean(" JavaScript:alert(1)", NULL);
    assert_clean("java\nscript:x()", NULL);
    assert_clean("mailto:a@example.com", NULL);
    assert_clean("data:text/html,x", NULL);
    assert_clean("ftp://files.example.org/f", NULL);
    assert_clean("HTTPS://ok.example.org/", "HTTPS://ok.example.org/");
    /* No scheme: a relative reference, whatever follows. */
    assert_clean("1a:b", "1a:b");
    assert_clean("/x:y", "/x:y");
}

static void hrefs_longer_than_the_limit_are_skipped(void **state)
{
    char *s = malloc(URL_MAX + 2);
    assert_non_null(s);
    memset(s, 'x', URL_MAX);
    s[URL_MAX] = '\0';
    char *c = clean(s);
    assert_non_null(c);
    free(c);
    s[URL_MAX] = 'x';
    s[URL_MAX + 1] = '\0';
    assert_null(clean(s));
    /* Writing NUL bytes as escapes can take it past the limit too. */
    char *out = (char *)"unset";
    memset(s, '\0', URL_MAX);
    s[0] = 'a';
    s[URL_MAX - 1] = 'b';
    assert_int_equal(url_clean_n(s, URL_MAX, &out), 0);
    assert_null(out);
    free(s);
}

/* ---- resolving against a base -------------------------------------------- */

static void relative_references_resolve_against_the_page(void **state)
{
    struct url_base *b = base_of(PAGE_URL, NULL);
    assert_non_null(b);
    assert_resolves(b, "a/b", "http://example.com/dir/a/b");
    assert_resolves(b, "../c", "http://example.com/c");
    assert_resolves(b, "./d", "http://example.com/dir/d");
    assert_resolves(b, "/root", "http://example.com/root");
    assert_resolves(b, "../../../../up", "http://example.com/up");
    assert_resolves(b, "x/./y/../z", "http://example.com/dir/x/z");
    url_base_free(b);
}

static void queries_and_fragments_resolve_as_in_a_browser(void **state)
{
    struct url_base *b = base_of(PAGE_URL, NULL);
    assert_resolves(b, "?q=1", "http://example.com/dir/page.html?q=1");
    assert_resolves(b, "#top", "http://example.com/dir/page.html?p=1");
    assert_resolves(b, "", "http://example.com/dir/page.html?p=1");
    assert_resolves(b, "x#y", "http://example.com/dir/x");
    assert_resolves(b, "/p?a=1&b=2#f", "http://example.com/p?a=1&b=2");
    url_base_free(b);
}

static void absolute_references_ignore_the_base(void **state)
{
    struct url_base *b = base_of(PAGE_URL, NULL);
    assert_resolves(b, "http://example.org/abs", "http://example.org/abs");
    assert_resolves(b, "https://secure.example.org/s?x=1", "https://secure.example.org/s?x=1");
    assert_resolves(b, "HTTPS://OK.example.org", "https://ok.example.org/");
    url_base_free(b);
}

static void protocol_relative_references_take_the_base_scheme(void **state)
{
    struct url_base *b = base_of("https://example.com/", NULL);
    assert_resolves(b, "//host.example.net/x", "https://host.example.net/x");
    url_base_free(b);
    b = base_of(PAGE_URL, NULL);
    assert_resolves(b, "//HOST.example.net:80/x", "http://host.example.net/x");
    url_base_free(b);
}

static void references_that_make_no_url_give_no_link(void **state)
{
    struct url_base *b = base_of(PAGE_URL, NULL);
    assert_resolves(b, "http://", NULL);
    assert_resolves(b, "http://exa mple.com/", NULL);
    assert_resolves(b, "http://example.com:99999/", NULL);
    assert_resolves(b, "//", NULL);
    assert_resolves(b, "javascript:x()", NULL);
    assert_resolves(b, "ok.html", "http://example.com/dir/ok.html");
    url_base_free(b);
}

static void a_resolved_link_longer_than_the_limit_is_dropped(void **state)
{
    struct url_base *b = base_of("http://example.com/", NULL);
    size_t n = URL_MAX - strlen("http://example.com/");
    char *href = malloc(n + 2), *got = NULL;
    assert_non_null(href);
    memset(href, 'x', n);
    href[n] = '\0';
    assert_int_equal(url_resolve(b, href, &got), 0);
    assert_non_null(got);
    assert_int_equal(strlen(got), URL_MAX);
    free(got);
    href[n] = 'x';
    href[n + 1] = '\0';
    assert_int_equal(url_resolve(b, href, &got), 0);
    assert_null(got);
    free(href);
    url_base_free(b);
}

static void without_a_base_only_absolute_references_resolve(void **state)
{
    char *got = (char *)"unset";
    assert_int_equal(url_resolve(NULL, "rel", &got), 0);
    assert_null(got);
    assert_int_equal(url_resolve(NULL, "", &got), 0);
    assert_null(got);
    assert_resolves(NULL, "http://example.org/", "http://example.org/");
}

static void a_page_that_is_no_http_url_has_no_base(void **state)
{
    static const char *const v[] = {
        "file:///tmp/x.html", "ftp://example.com/", "not a url", "mailto:x@example.com",
    };
    assert_null(base_of(NULL, NULL));
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        assert_null(base_of(v[i], "http://example.org/"));
}

static void base_href_replaces_the_page_as_base(void **state)
{
    struct url_base *b = base_of(PAGE_URL, "http://static.example.net/sub/dir/");
    assert_resolves(b, "one.html", "http://static.example.net/sub/dir/one.html");
    assert_resolves(b, "../two.html", "http://static.example.net/sub/two.html");
    assert_resolves(b, "/three.html", "http://static.example.net/three.html");
    assert_resolves(b, "#frag", "http://static.example.net/sub/dir/");
    url_base_free(b);
}

static void a_relative_base_href_resolves_against_the_page(void **state)
{
    struct url_base *b = base_of(PAGE_URL, " ../static/ ");
    assert_resolves(b, "one.html", "http://example.com/static/one.html");
    url_base_free(b);
    b = base_of(PAGE_URL, "//cdn.example.net/x/");
    assert_resolves(b, "y", "http://cdn.example.net/x/y");
    url_base_free(b);
}

static void a_base_href_that_does_not_parse_leaves_the_page_as_base(void **state)
{
    static const char *const v[] = {
        "http://", "http://a b/", "", "#only-a-fragment", "   ",
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        struct url_base *b = base_of(PAGE_URL, v[i]);
        assert_resolves(b, "a", "http://example.com/dir/a");
        url_base_free(b);
    }
}

static void a_base_href_of_another_scheme_leaves_only_absolute_links(void **state)
{
    /* A browser takes it as the base; "a" against it is no http URL. */
    static const char *const v[] = { "javascript:x()", "ftp://example.org/", "mailto:x@example.org" };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        struct url_base *b = base_of(PAGE_URL, v[i]);
        assert_null(b);
        assert_resolves(b, "a", NULL);
        assert_resolves(b, "https://example.net/", "https://example.net/");
    }
}

/* ---- the normal form ----------------------------------------------------- */

static void scheme_and_host_are_lower_cased_but_not_the_path(void **state)
{
    assert_normal("HTTP://WWW.Example.ORG/Path/Case?Q=A", "http://www.example.org/Path/Case?Q=A");
    assert_normal("https://User:Pw@EXAMPLE.com/", "https://User:Pw@example.com/");
}

static void default_ports_are_removed_and_others_kept(void **state)
{
    assert_normal("http://example.org:80/", "http://example.org/");
    assert_normal("https://example.org:443/", "https://example.org/");
    assert_normal("https://example.org:80/", "https://example.org:80/");
    assert_normal("http://example.org:443/", "http://example.org:443/");
    assert_normal("http://example.org:8080", "http://example.org:8080/");
    assert_normal("http://[::1]:80/a", "http://[::1]/a");
}

static void the_fragment_is_dropped_and_dot_segments_removed(void **state)
{
    assert_normal("http://example.com/a#frag", "http://example.com/a");
    assert_normal("http://example.com/p/./q/../r?x#y", "http://example.com/p/r?x");
    assert_normal("http://example.com", "http://example.com/");
    assert_normal("http://example.com?x", "http://example.com/?x");
}

static void escapes_take_one_spelling_in_the_normal_form(void **state)
{
    /* Unreserved characters decoded, other escapes in upper case. */
    assert_normal("http://example.org/%7e/x%2f?%41%3d", "http://example.org/~/x%2F?A%3D");
    /* Bytes past ASCII encoded, and what the standard leaves literal but
     * a URI may not hold: '|', '^' in a query, '`', '{', '}'. */
    assert_normal("http://example.com/caf\xc3\xa9?q=\xc3\xa9", "http://example.com/caf%C3%A9?q=%C3%A9");
    assert_normal("http://example.com/a|b?c^`{}", "http://example.com/a%7Cb?c%5E%60%7B%7D");
    /* A space is %20 in the query too, never '+'; a '%' that starts no
     * escape is %25, so that "%3%63" is not taken for "%3c" once %63 is c. */
    assert_normal("http://example.com/a b?c d", "http://example.com/a%20b?c%20d");
    assert_normal("http://example.com/a\"<b>`", "http://example.com/a%22%3Cb%3E%60");
    assert_normal("http://example.com/%zz%4", "http://example.com/%25zz%254");
    assert_normal("http://example.com/?%3%63", "http://example.com/?%253c");
}

static void international_hosts_are_punycode_whatever_the_locale(void **state)
{
    /* No setlocale has run in this program: ICU reads UTF-8 as UTF-8. */
    assert_normal("http://b\xc3\xbc" "cher.example/", "http://xn--bcher-kva.example/");
    assert_normal("http://\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xbd\xa0\xe5\xa5\xbd", "http://xn--6qqa088eba/");
    assert_normal("https://fa\xc3\x9f.ExAmPlE/", "https://xn--fa-hia.example/");
    assert_normal("https://%e2%98%83.net/", "https://xn--n3h.net/");
}

static void non_http_urls_have_no_normal_form(void **state)
{
    static const char *const v[] = {
        "ftp://example.com/", "mailto:a@example.com", "file:///etc/passwd",
        "javascript:alert(1)", "relative/path", "http://", "",
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char *got = (char *)"unset";
        assert_int_equal(url_normalise(v[i], &got), -EINVAL);
        assert_null(got);
    }
}

static void a_normal_form_is_its_own_normal_form(void **state)
{
    static const char *const v[] = {
        "HTTP://WWW.Example.ORG:80/Path/./x/../Case?Q=%7e#f",
        "https://example.com/caf\xc3\xa9 x?a b\"<>`'{}|^",
        "http://[::1]:8080/%2f%zz%2E%2e/%7E", "http://example.com", "http://0x7f.1/?",
        "http://u%7e:p%40@b\xc3\xbc" "cher.example/a\\b", "http:/..?//u:p%63%3%63%30.01",
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char *once = NULL, *twice = NULL;
        assert_int_equal(url_normalise(v[i], &once), 0);
        assert_int_equal(url_normalise(once, &twice), 0);
        assert_string_equal(once, twice);
        free(once);
        free(twice);
    }
}

/* ---- the canonical form -------------------------------------------------- */

/* url_canonical of url, with sort and the strip patterns given (NULL
 * ended), is want. */
static void assert_canonical(const char *url, int sort, const char *const *pats,
                             const char *want)
{
    regex_t re[8];
    size_t n = 0;
    for (; pats && pats[n]; n++)
        assert_int_equal(regcomp(&re[n], pats[n], REG_EXTENDED), 0);
    char *got = NULL;
    assert_int_equal(url_canonical(url, sort, re, n, &got), 0);
    if (strcmp(got, want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", url, got, want);
    /* A canonical form is its own. */
    char *again = NULL;
    assert_int_equal(url_canonical(got, sort, re, n, &again), 0);
    assert_string_equal(again, got);
    free(again);
    free(got);
    for (size_t i = 0; i < n; i++)
        regfree(&re[i]);
}

static void arguments_sort_by_name_and_repeated_ones_keep_their_order(void **state)
{
    assert_canonical("http://h/p?b=2&a=1", 1, NULL, "http://h/p?a=1&b=2");
    assert_canonical("http://h/p?a=1&b=2", 1, NULL, "http://h/p?a=1&b=2");
    assert_canonical("http://h/p?b=2&a=9&b=1&a=3", 1, NULL, "http://h/p?a=9&a=3&b=2&b=1");
    /* A name that starts another sorts first; the name ends at '='. */
    assert_canonical("http://h/p?ab=1&a=2&a-b=3", 1, NULL, "http://h/p?a=2&a-b=3&ab=1");
    /* Without sort, the order is the page's. */
    assert_canonical("http://h/p?b=2&a=1", 0, NULL, "http://h/p?b=2&a=1");
}

static void blank_values_are_kept_and_a_bare_name_is_not_an_empty_value(void **state)
{
    assert_canonical("http://h/p?b=&a", 1, NULL, "http://h/p?a&b=");
    /* "a=" and "a" are two arguments, each kept as written, in their order. */
    assert_canonical("http://h/p?z&a=&a", 1, NULL, "http://h/p?a=&a&z");
    assert_canonical("http://h/p?z&a&a=", 1, NULL, "http://h/p?a&a=&z");
    assert_canonical("http://h/p?=1&a=2", 1, NULL, "http://h/p?=1&a=2");
    assert_canonical("http://h/p?a==b&a=c=d", 1, NULL, "http://h/p?a==b&a=c=d");
}

static void escaped_names_are_compared_as_written(void **state)
{
    /* '%' (0x25) before 'B' (0x42) before 'a' (0x61): nothing decoded. */
    assert_canonical("http://h/p?a=1&%62=2&B=3", 1, NULL, "http://h/p?%62=2&B=3&a=1");
    static const char *const b[] = { "b", NULL };
    assert_canonical("http://h/p?%62=2&b=3", 1, b, "http://h/p?%62=2");
}

static void empty_pieces_go_and_the_question_mark_with_the_last_argument(void **state)
{
    assert_canonical("http://h/p?&b=2&&a=1&", 1, NULL, "http://h/p?a=1&b=2");
    assert_canonical("http://h/p?&&", 1, NULL, "http://h/p");
    assert_canonical("http://h/p?", 1, NULL, "http://h/p");
    assert_canonical("http://h/p?", 0, NULL, "http://h/p");
    static const char *const sid[] = { "sid", "utm_.*", NULL };
    assert_canonical("http://h/p?sid=1&utm_source=x", 1, sid, "http://h/p");
    assert_canonical("http://h/p?sid=1&utm_source=x", 0, sid, "http://h/p");
    /* No query: the URL as it is. */
    assert_canonical("http://h/p", 1, sid, "http://h/p");
    assert_canonical("http://h/", 1, sid, "http://h/");
}

static void a_strip_pattern_must_match_the_whole_name(void **state)
{
    static const char *const pats[] = { "sid", "utm_.*", NULL };
    assert_canonical("http://h/p?side=1&sid=2&utm_source=z&xutm_a=3&Sid=4&sid", 1, pats,
                     "http://h/p?Sid=4&side=1&xutm_a=3");
    /* Without sort: stripped, in the page's order. */
    assert_canonical("http://h/p?side=1&sid=2&b=3&utm_medium=y&a", 0, pats,
                     "http://h/p?side=1&b=3&a");
    /* Alternatives: the longest match decides, so "sid" is whole for "s|sid". */
    static const char *const alt[] = { "s|sid", NULL };
    assert_canonical("http://h/p?sid=1&s=2&si=3", 1, alt, "http://h/p?si=3");
    /* A value is never matched, only the name. */
    assert_canonical("http://h/p?x=sid", 1, pats, "http://h/p?x=sid");
}

static void the_fragment_and_the_rest_of_the_url_are_left_alone(void **state)
{
    /* The first '?' starts the query; a later one is a query's byte. */
    assert_canonical("http://h/b?a/p?b=2&a=1#f?z&y", 1, NULL, "http://h/b?a=1&a/p?b=2#f?z&y");
    assert_canonical("http://h/p#f?b&a", 1, NULL, "http://h/p#f?b&a");
    static const char *const all[] = { ".*", NULL };
    assert_canonical("http://u:p@h:81/x?b&a#frag", 1, all, "http://u:p@h:81/x#frag");
}

static void canonical_forms_of_one_page_are_one_normal_form(void **state)
{
    /* Normal forms first (escapes in one spelling), then the query. */
    static const char *const v[] = {
        "http://H/p?b=2&a=%7e", "http://h/p?a=~&b=2", "http://h/p?a=%7E&b=2&utm_source=z",
    };
    regex_t re;
    assert_int_equal(regcomp(&re, "utm_.*", REG_EXTENDED), 0);
    char *first = NULL;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char *norm = NULL, *canon = NULL;
        assert_int_equal(url_normalise(v[i], &norm), 0);
        assert_int_equal(url_canonical(norm, 1, &re, 1, &canon), 0);
        if (!first)
            first = strdup(canon);
        assert_string_equal(canon, first);
        free(norm);
        free(canon);
    }
    assert_string_equal(first, "http://h/p?a=~&b=2");
    free(first);
    regfree(&re);
}

static void a_resolved_link_parses_back_to_itself(void **state)
{
    static const char *const hrefs[] = {
        "HTTP://EXAMPLE.com:80/dir/a#x", "caf\xc3\xa9.html?q=a b", "%7e", "../X/./y",
        "\\\\other.example\\x?'{}", "http:/%2e%2E/a/.%2e/b", "//@h\xc3\xa9.example:443",
    };
    struct url_base *b = base_of("https://Example.COM:443/dir/page", NULL);
    for (size_t i = 0; i < sizeof hrefs / sizeof *hrefs; i++) {
        char *c = clean(hrefs[i]), *link = NULL, *again = NULL;
        assert_int_equal(url_resolve(b, c, &link), 0);
        assert_non_null(link);
        assert_int_equal(url_resolve(NULL, link, &again), 0);
        assert_non_null(again);
        assert_string_equal(link, again);
        free(c);
        free(link);
        free(again);
    }
    url_base_free(b);
}

/* ---- where a browser and RFC 3986 part ---------------------------------- */

static void links_resolve_as_in_a_browser_where_rfc_3986_differs(void **state)
{
    struct url_base *b = base_of("http://example.org/foo/bar", NULL);
    /* A backslash is a slash in an http URL. */
    assert_resolves(b, "\\x", "http://example.org/x");
    assert_resolves(b, "\\\\host\\a", "http://host/a");
    /* The base's own scheme without slashes is relative; another's is not. */
    assert_resolves(b, "http:foo", "http://example.org/foo/foo");
    assert_resolves(b, "http:/example.com/", "http://example.org/example.com/");
    assert_resolves(b, "https:/example.com/", "https://example.com/");
    assert_resolves(NULL, "http:/example.com/", "http://example.com/");
    /* Dot segments, also written %2e. */
    assert_resolves(b, "/a/%2e%2E/b/.%2e/c/%2e", "http://example.org/c/");
    /* An empty query is kept; ' in a query and `{} in a path are encoded. */
    assert_resolves(b, "?", "http://example.org/foo/bar?");
    assert_resolves(b, "/`{}?'{}", "http://example.org/%60%7B%7D?%27{}");
    /* User info: an empty one goes, an '@' before the last is encoded. */
    assert_resolves(NULL, "http://@www.example.com", "http://www.example.com/");
    assert_resolves(NULL, "http://a:b@c@d/", "http://a:b%40c@d/");
    url_base_free(b);
}

static void hosts_are_parsed_as_in_a_browser(void **state)
{
    assert_resolves(NULL, "http://\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xbd\xa0\xe5\xa5\xbd", "http://xn--6qqa088eba/");
    assert_resolves(NULL, "http://192.168.257.", "http://192.168.1.1/");
    assert_resolves(NULL, "http://0x7f.1/", "http://127.0.0.1/");
    assert_resolves(NULL, "http://4294967295", "http://255.255.255.255/");
    assert_resolves(NULL, "http://256.256.256.256/", NULL);
    assert_resolves(NULL, "http://1.2.3.08/", NULL);
    assert_resolves(NULL, "http://[0:0::1:2]/", "http://[::1:2]/");
    assert_resolves(NULL, "http://[::127.0.0.1]/", "http://[::7f00:1]/");
    assert_resolves(NULL, "http://EX%41MPLE.com/", "http://example.com/");
    static const char *const forbidden[] = {
        "http://a|b/", "http://a^b/", "http://a<b/", "http://a%25b/", "http://a%00b/", "http://[::1/",
    };
    for (size_t i = 0; i < sizeof forbidden / sizeof *forbidden; i++)
        assert_resolves(NULL, forbidden[i], NULL);
}

/* ---- parts and host keys ------------------------------------------------- */

static void split_gives_the_link_normal_form_host_key_host_and_path(void **state)
{
    struct url_parts p;
    assert_int_equal(url_split("HTTP://Example.COM:80/a/./b?x=%7e%2f#frag", &p), 0);
    assert_string_equal(p.href, "http://example.com/a/b?x=%7e%2f");
    assert_string_equal(p.norm, "http://example.com/a/b?x=~%2F");
    assert_string_equal(p.key, "http://example.com:80");
    assert_string_equal(p.host, "example.com");
    assert_string_equal(p.path, "/a/b?x=~%2F");
    url_parts_free(&p);
    assert_null(p.norm);
    assert_null(p.href);
}

static void the_host_key_always_names_the_port(void **state)
{
    static const struct { const char *url, *key, *path; } v[] = {
        { "https://example.com", "https://example.com:443", "/" },
        { "http://example.com:8080/x", "http://example.com:8080", "/x" },
        { "https://example.com:80/", "https://example.com:80", "/" },
        { "http://[::1]:8080/a?", "http://[::1]:8080", "/a?" },
        { "http://127.0.0.1/caf\xc3\xa9", "http://127.0.0.1:80", "/caf%C3%A9" },
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        struct url_parts p;
        assert_int_equal(url_split(v[i].url, &p), 0);
        assert_string_equal(p.key, v[i].key);
        assert_string_equal(p.path, v[i].path);
        url_parts_free(&p);
    }
}

static void a_listed_url_and_a_link_to_it_share_one_seen_key(void **state)
{
    struct url_base *b = base_of("http://example.com/dir/", NULL);
    struct url_parts listed, found;
    char *link = NULL;
    assert_int_equal(url_resolve(b, "../Caf%c3%a9?q=%7e", &link), 0);
    assert_int_equal(url_split("HTTP://EXAMPLE.COM:80/Caf\xc3\xa9?q=~#top", &listed), 0);
    assert_int_equal(url_split(link, &found), 0);
    /* The link as written; the key as one spelling. */
    assert_string_equal(link, "http://example.com/Caf%c3%a9?q=%7e");
    assert_string_equal(found.href, link);
    assert_string_equal(found.norm, "http://example.com/Caf%C3%A9?q=~");
    assert_string_equal(listed.norm, found.norm);
    assert_string_equal(listed.key, found.key);
    assert_string_equal(listed.host, found.host);
    assert_string_equal(listed.path, found.path);
    url_parts_free(&listed);
    url_parts_free(&found);
    free(link);
    url_base_free(b);
}

/* Asserts that a and b have one seen-set key (same != 0) or two. */
static void assert_same_key(const char *a, const char *b, int same)
{
    char *ka = NULL, *kb = NULL;
    assert_int_equal(url_normalise(a, &ka), 0);
    assert_int_equal(url_normalise(b, &kb), 0);
    if ((strcmp(ka, kb) == 0) != same)
        fail_msg("\"%s\" (%s) and \"%s\" (%s): want %s", a, ka, b, kb, same ? "one key" : "two");
    free(ka);
    free(kb);
}

static void two_spellings_of_one_url_have_one_seen_key(void **state)
{
    assert_same_key("http://example.com/~a", "http://example.com/%7ea", 1);
    assert_same_key("http://example.com/%7Ea", "http://example.com/%7ea", 1);
    assert_same_key("http://example.com/a%2fb", "http://example.com/a%2Fb", 1);
    assert_same_key("http://example.com:80/", "http://EXAMPLE.com", 1);
    assert_same_key("https://example.com:443/x", "https://example.com/x", 1);
    assert_same_key("http://example.com/a|b", "http://example.com/a%7Cb", 1);
    assert_same_key("http://b\xc3\xbc" "cher.example/", "http://xn--bcher-kva.example/", 1);
    assert_same_key("http://0x7f.1/", "http://127.0.0.1/", 1);
    assert_same_key("http://example.com/a/./b/../c", "http://example.com/a/c", 1);
    assert_same_key("http://example.com/x#one", "http://example.com/x#two", 1);
    /* Not one URL: an empty query is a query, an escaped '/' is no '/'. */
    assert_same_key("http://example.com/?", "http://example.com/", 0);
    assert_same_key("http://example.com/a%2Fb", "http://example.com/a/b", 0);
    assert_same_key("http://example.com/A", "http://example.com/a", 0);
    assert_same_key("http://example.com:8080/", "http://example.com/", 0);
}

static void escapes_are_normalised_for_robots_rules_too(void **state)
{
    static const struct { const char *in, *out; } v[] = {
        { "/a/b/c", "/a/b/c" }, { "\xc3\xa1", "%C3%A1" }, { "%aa", "%AA" },
        { "/%62%61%7A", "/baz" }, { "/*.php$", "/*.php$" }, { "/a%2a", "/a%2A" }, { "%", "%25" },
        { "/a b\"", "/a%20b%22" },
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char *out = NULL;
        assert_int_equal(url_norm_escapes(v[i].in, strlen(v[i].in), &out), 0);
        assert_string_equal(out, v[i].out);
        free(out);
    }
}

static void non_http_urls_do_not_split(void **state)
{
    struct url_parts p;
    assert_int_equal(url_split("ftp://example.com/x", &p), -EINVAL);
    assert_null(p.norm);
    assert_null(p.key);
    assert_int_equal(url_split("no scheme", &p), -EINVAL);
    assert_null(p.host);
}

/* ---- lists of distinct URLs ---------------------------------------------- */

static void a_list_keeps_first_seen_order_and_drops_duplicates(void **state)
{
    struct url_list l = { 0 };
    static const char *const in[] = { "b", "a", "b", "c", "a" };
    static const int want[] = { 0, 0, 1, 0, 1 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(url_list_add(&l, strdup(in[i]), 10), want[i]);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.v[0], "b");
    assert_string_equal(l.v[1], "a");
    assert_string_equal(l.v[2], "c");
    url_list_free(&l);
    assert_int_equal(l.n, 0);
}

static void a_full_list_says_so_but_still_knows_its_own(void **state)
{
    struct url_list l = { 0 };
    assert_int_equal(url_list_add(&l, strdup("x"), 2), 0);
    assert_int_equal(url_list_add(&l, strdup("y"), 2), 0);
    assert_int_equal(url_list_add(&l, strdup("z"), 2), 2);
    assert_int_equal(url_list_add(&l, strdup("x"), 2), 1);
    assert_int_equal(l.n, 2);
    url_list_free(&l);
}

static void a_list_grows_past_its_first_tables(void **state)
{
    struct url_list l = { 0 };
    char buf[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 5000; i++) {
            snprintf(buf, sizeof buf, "http://example.com/%d", i);
            assert_int_equal(url_list_add(&l, strdup(buf), 100000), round);
        }
    size_t n;
    char **v = url_list_take(&l, &n);
    assert_int_equal(n, 5000);
    assert_string_equal(v[4999], "http://example.com/4999");
    assert_null(l.v);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    assert_null(url_list_take(&l, &n));
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(http_and_https_urls_with_a_host_are_valid),
        cmocka_unit_test(an_empty_line_is_an_empty_url),
        cmocka_unit_test(control_characters_are_named_before_anything_else),
        cmocka_unit_test(a_url_without_a_scheme_says_so),
        cmocka_unit_test(every_scheme_but_http_and_https_is_unsupported),
        cmocka_unit_test(spaces_are_named_once_the_scheme_is_right),
        cmocka_unit_test(what_libcurl_refuses_is_malformed),
        cmocka_unit_test(what_the_url_standard_refuses_is_malformed),
        cmocka_unit_test(white_space_is_trimmed_and_tabs_and_newlines_removed),
        cmocka_unit_test(the_fragment_goes_and_a_lone_fragment_leaves_nothing),
        cmocka_unit_test(cleaning_leaves_percent_encoding_to_the_parser),
        cmocka_unit_test(a_nul_byte_is_written_as_an_escape),
        cmocka_unit_test(only_http_and_https_schemes_survive_cleaning),
        cmocka_unit_test(hrefs_longer_than_the_limit_are_skipped),
        cmocka_unit_test(relative_references_resolve_against_the_page),
        cmocka_unit_test(queries_and_fragments_resolve_as_in_a_browser),
        cmocka_unit_test(absolute_references_ignore_the_base),
        cmocka_unit_test(protocol_relative_references_take_the_base_scheme),
        cmocka_unit_test(references_that_make_no_url_give_no_link),
        cmocka_unit_test(a_resolved_link_longer_than_the_limit_is_dropped),
        cmocka_unit_test(without_a_base_only_absolute_references_resolve),
        cmocka_unit_test(a_page_that_is_no_http_url_has_no_base),
        cmocka_unit_test(base_href_replaces_the_page_as_base),
        cmocka_unit_test(a_relative_base_href_resolves_against_the_page),
        cmocka_unit_test(a_base_href_that_does_not_parse_leaves_the_page_as_base),
        cmocka_unit_test(a_base_href_of_another_scheme_leaves_only_absolute_links),
        cmocka_unit_test(scheme_and_host_are_lower_cased_but_not_the_path),
        cmocka_unit_test(default_ports_are_removed_and_others_kept),
        cmocka_unit_test(the_fragment_is_dropped_and_dot_segments_removed),
        cmocka_unit_test(escapes_take_one_spelling_in_the_normal_form),
        cmocka_unit_test(international_hosts_are_punycode_whatever_the_locale),
        cmocka_unit_test(non_http_urls_have_no_normal_form),
        cmocka_unit_test(a_normal_form_is_its_own_normal_form),
        cmocka_unit_test(a_resolved_link_parses_back_to_itself),
        cmocka_unit_test(links_resolve_as_in_a_browser_where_rfc_3986_differs),
        cmocka_unit_test(hosts_are_parsed_as_in_a_browser),
        cmocka_unit_test(split_gives_the_link_normal_form_host_key_host_and_path),
        cmocka_unit_test(the_host_key_always_names_the_port),
        cmocka_unit_test(a_listed_url_and_a_link_to_it_share_one_seen_key),
        cmocka_unit_test(two_spellings_of_one_url_have_one_seen_key),
        cmocka_unit_test(escapes_are_normalised_for_robots_rules_too),
        cmocka_unit_test(non_http_urls_do_not_split),
        cmocka_unit_test(arguments_sort_by_name_and_repeated_ones_keep_their_order),
        cmocka_unit_test(blank_values_are_kept_and_a_bare_name_is_not_an_empty_value),
        cmocka_unit_test(escaped_names_are_compared_as_written),
        cmocka_unit_test(empty_pieces_go_and_the_question_mark_with_the_last_argument),
        cmocka_unit_test(a_strip_pattern_must_match_the_whole_name),
        cmocka_unit_test(the_fragment_and_the_rest_of_the_url_are_left_alone),
        cmocka_unit_test(canonical_forms_of_one_page_are_one_normal_form),
        cmocka_unit_test(a_list_keeps_first_seen_order_and_drops_duplicates),
        cmocka_unit_test(a_full_list_says_so_but_still_knows_its_own),
        cmocka_unit_test(a_list_grows_past_its_first_tables),
    };
    return cmocka_run_group_tests_name("url", tests, NULL, NULL);
}

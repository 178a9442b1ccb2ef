/* test_fixture_http.c: unit tests of the fixture server's request parser and
 * helpers: exact consumed lengths, partial input at every split point, and
 * the malformed heads the server must answer with 400. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fixture_http.h"

static long parse(const char *s, size_t len, struct fixture_http_request *req,
                  struct fixture_http_header *hdrs, size_t cap)
{
    req->headers = hdrs;
    req->num_headers = cap;
    return fixture_http_parse_request(s, len, req);
}

static void test_parses_request_line_and_headers(void **state)
{
    const char *s = "GET /a/b?c=d HTTP/1.1\r\nHost: example\r\nX-Two:  a b \t\r\n\r\nGET /next";
    struct fixture_http_header h[4];
    struct fixture_http_request r;
    long n = parse(s, strlen(s), &r, h, 4);
    assert_int_equal(n, strlen(s) - strlen("GET /next"));
    assert_int_equal(r.method_len, 3);
    assert_memory_equal(r.method, "GET", 3);
    assert_int_equal(r.target_len, 8);
    assert_memory_equal(r.target, "/a/b?c=d", 8);
    assert_int_equal(r.minor_version, 1);
    assert_int_equal(r.num_headers, 2);
    assert_int_equal(h[1].value_len, 3);             /* spaces trimmed, inner kept */
    assert_memory_equal(h[1].value, "a b", 3);
    assert_ptr_equal(fixture_http_find_header(&r, "x-two"), &h[1]);
    assert_null(fixture_http_find_header(&r, "x-three"));
}

static void test_every_prefix_is_partial(void **state)
{
    const char *s = "\r\nHEAD /x HTTP/1.0\nA:b\r\nC: d\n\r\n";
    struct fixture_http_header h[4];
    struct fixture_http_request r;
    for (size_t len = 0; len < strlen(s); len++)
        assert_int_equal(parse(s, len, &r, h, 4), -2);
    assert_int_equal(parse(s, strlen(s), &r, h, 4), strlen(s));
    assert_int_equal(r.minor_version, 0);
    assert_int_equal(r.num_headers, 2);
}

static void test_rejects_malformed_heads(void **state)
{
    static const char *bad[] = {
        "GARBAGE\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1 \r\n\r\n",
        "GET /\x01 HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "GET / HTTP/1.1\r\nName : x\r\n\r\n",
        "GET / HTTP/1.1\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
        "GET / HTTP/1.1\r\nA: \x00\r\n\r\n",
        "GET / HTTP/1.1\r\n: empty\r\n\r\n",
    };
    struct fixture_http_header h[4];
    struct fixture_http_request r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = strlen(bad[i]);
        if (i == 9)
            len = strlen("GET / HTTP/1.1\r\nA: ") + 1 + 4;   /* the NUL is data */
        assert_int_equal(parse(bad[i], len, &r, h, 4), -1);
    }
}

static void test_too_many_headers_is_malformed(void **state)
{
    const char *s = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    struct fixture_http_header h[3];
    struct fixture_http_request r;
    assert_int_equal(parse(s, strlen(s), &r, h, 2), -1);
    assert_int_equal(parse(s, strlen(s), &r, h, 3), strlen(s));
}

static void test_token_q(void **state)
{
    const char *ae = "deflate, GZIP;q=0.5 , br;q=0, *;q=0.1";
    assert_int_equal(fixture_http_token_q(ae, strlen(ae), "gzip"), 500);
    assert_int_equal(fixture_http_token_q(ae, strlen(ae), "deflate"), 1000);
    assert_int_equal(fixture_http_token_q(ae, strlen(ae), "br"), 0);
    assert_int_equal(fixture_http_token_q(ae, strlen(ae), "*"), 100);
    assert_int_equal(fixture_http_token_q(ae, strlen(ae), "zstd"), -1);
    assert_int_equal(fixture_http_token_q("keep-alive, Close", 17, "close"), 1000);
    assert_int_equal(fixture_http_token_q("closed", 6, "close"), -1);
}

static void test_percent_decode(void **state)
{
    char out[32];
    assert_int_equal(fixture_http_percent_decode("a%2Fb+c%41", 10, out, sizeof out), 6);
    assert_memory_equal(out, "a/b+cA", 6);
    assert_int_equal(fixture_http_percent_decode("%4", 2, out, sizeof out), -1);
    assert_int_equal(fixture_http_percent_decode("%zz", 3, out, sizeof out), -1);
    assert_int_equal(fixture_http_percent_decode("abc", 3, out, 2), -1);
}

static void test_query_param(void **state)
{
    const char *q = "a=1&url=http%3A%2F%2Fx&flag&urlx=2", *v;
    size_t vl;
    assert_int_equal(fixture_http_query_param(q, strlen(q), "url", &v, &vl), 0);
    assert_int_equal(vl, 14);
    assert_memory_equal(v, "http%3A%2F%2Fx", 14);
    assert_int_equal(fixture_http_query_param(q, strlen(q), "flag", &v, &vl), 0);
    assert_int_equal(vl, 0);
    assert_int_equal(fixture_http_query_param(q, strlen(q), "ur", &v, &vl), -1);
    assert_int_equal(fixture_http_query_param("", 0, "a", &v, &vl), -1);
}

static void test_path_is_safe(void **state)
{
    assert_true(fixture_http_path_is_safe("/", 1));
    assert_true(fixture_http_path_is_safe("/a/b.html", 9));
    assert_true(fixture_http_path_is_safe("/a/..b/c..", 10));
    assert_false(fixture_http_path_is_safe("/a/../b", 7));
    assert_false(fixture_http_path_is_safe("/..", 3));
    assert_false(fixture_http_path_is_safe("/./a", 4));
    assert_false(fixture_http_path_is_safe("a/b", 3));
    assert_false(fixture_http_path_is_safe("/a\\..\\b", 7));
    assert_false(fixture_http_path_is_safe("/a\0b", 4));
}

static void test_parse_uint_takes_only_whole_numbers_within_max(void **state)
{
    uint64_t v = 7;
    assert_int_equal(fixture_http_parse_uint("0", 1, 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(fixture_http_parse_uint("599", 3, 599, &v), 0);
    assert_int_equal(v, 599);
    assert_int_equal(fixture_http_parse_uint("600", 3, 599, &v), -1);
    assert_int_equal(fixture_http_parse_uint("7", 1, 5, &v), -1);
    assert_int_equal(fixture_http_parse_uint("18446744073709551615", 20, UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(fixture_http_parse_uint("18446744073709551616", 20, UINT64_MAX, &v), -1);
    assert_int_equal(fixture_http_parse_uint("", 0, 10, &v), -1);
    assert_int_equal(fixture_http_parse_uint("1a", 2, 100, &v), -1);
    assert_int_equal(fixture_http_parse_uint("-1", 2, 100, &v), -1);
    assert_int_equal(fixture_http_parse_uint(" 1", 2, 100, &v), -1);
}

static void test_an_imf_fixdate_reads_and_writes_back_and_nothing_else_reads(void **state)
{
    (void)state;
    int64_t t;
    char out[FIXTURE_HTTP_DATE];
    const char *d = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(fixture_http_parse_date(d, strlen(d), &t), 0);
    assert_true(t == 784111777);
    assert_string_equal(fixture_http_format_date(t, out), d);
    assert_string_equal(fixture_http_format_date(1704067200 + 3600, out),
                        "Mon, 01 Jan 2024 01:00:00 GMT");
    static const char *const bad[] = {
        "Sunday, 06-Nov-94 08:49:37 GMT",   /* RFC 850 */
        "Sun Nov  6 08:49:37 1994",         /* asctime */
        "Mon, 06 Nov 1994 08:49:37 GMT",    /* not a Monday */
        "Tue, 31 Apr 2024 00:00:00 GMT",    /* April has 30 days */
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 GMT ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(fixture_http_parse_date(bad[i], strlen(bad[i]), &t), -1);
}

static void test_if_none_match_compares_entity_tags_weakly(void **state)
{
    (void)state;
    struct { const char *list, *etag; int match; } cases[] = {
        { "\"a-0\"", "\"a-0\"", 1 },
        { "W/\"a-0\"", "\"a-0\"", 1 },
        { "\"a-0\"", "W/\"a-0\"", 1 },
        { "\"x\", \"a-0\"", "\"a-0\"", 1 },
        { "*", "\"a-0\"", 1 },
        { "\"a-1\"", "\"a-0\"", 0 },
        { "a-0", "\"a-0\"", 0 },                /* no quotes: no entity tag */
        { "", "\"a-0\"", 0 },
        { "\"a-0\"", "a-0", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(fixture_http_etag_match(cases[i].list, strlen(cases[i].list),
                                                 cases[i].etag, strlen(cases[i].etag)),
                         cases[i].match);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parses_request_line_and_headers),
        cmocka_unit_test(test_every_prefix_is_partial),
        cmocka_unit_test(test_rejects_malformed_heads),
        cmocka_unit_test(test_too_many_headers_is_malformed),
        cmocka_unit_test(test_token_q),
        cmocka_unit_test(test_percent_decode),
        cmocka_unit_test(test_query_param),
        cmocka_unit_test(test_path_is_safe),
        cmocka_unit_test(test_parse_uint_takes_only_whole_numbers_within_max),
        cmocka_unit_test(test_an_imf_fixdate_reads_and_writes_back_and_nothing_else_reads),
        cmocka_unit_test(test_if_none_match_compares_entity_tags_weakly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for what --warc and --save compute on their own: base32 of
 * digests, the SURT keys of the CDXJ index, the captured heads (HTTP/2 in
 * HTTP/1.1 syntax) and the mirror's file names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "mirror.h"
#include "warc.h"

static void test_base32_follows_rfc_4648(void **state)
{
    char out[64];
    /* RFC 4648, 10: the test vectors, without padding. */
    assert_string_equal(warc_base32((const unsigned char *)"", 0, out), "");
    assert_string_equal(warc_base32((const unsigned char *)"f", 1, out), "MY");
    assert_string_equal(warc_base32((const unsigned char *)"fo", 2, out), "MZXQ");
    assert_string_equal(warc_base32((const unsigned char *)"foo", 3, out), "MZXW6");
    assert_string_equal(warc_base32((const unsigned char *)"foob", 4, out), "MZXW6YQ");
    assert_string_equal(warc_base32((const unsigned char *)"fooba", 5, out), "MZXW6YTB");
    assert_string_equal(warc_base32((const unsigned char *)"foobar", 6, out), "MZXW6YTBOI");
}

static void test_surt_reverses_the_host_and_drops_www(void **state)
{
    char out[256];
    assert_int_equal(warc_surt("http://www.Example.com/A/b?x=1", out, sizeof out), 0);
    assert_string_equal(out, "com,example)/a/b?x=1");
    assert_int_equal(warc_surt("https://127.0.0.1:8080/site/", out, sizeof out), 0);
    assert_string_equal(out, "1,0,0,127:8080)/site/");
    assert_int_equal(warc_surt("http://example.org", out, sizeof out), 0);
    assert_string_equal(out, "org,example)/");
    assert_int_equal(warc_surt("http://a.b/p#frag", out, sizeof out), 0);
    assert_string_equal(out, "b,a)/p");
    assert_int_equal(warc_surt("ftp://a.b/", out, sizeof out), -1);
    assert_int_equal(warc_surt("http://averyveryverylonghost.example/", out, 10), -1);
}

static void test_an_h2_head_is_captured_in_http_1_1_syntax(void **state)
{
    struct warc_capture *cap = warc_capture_new();
    assert_non_null(cap);
    assert_false(warc_capture_has_response(cap));
    warc_capture_header(cap, "HTTP/2 404 \r\n", 13);
    warc_capture_header(cap, "content-type: text/html\r\n", 25);
    warc_capture_header(cap, "\r\n", 2);
    assert_true(warc_capture_has_response(cap));
    assert_string_equal(warc_capture_protocol(cap), "h2");
    warc_capture_reset(cap);
    warc_capture_header(cap, "HTTP/1.1 100 Continue\r\n", 23);
    warc_capture_header(cap, "\r\n", 2);
    warc_capture_header(cap, "HTTP/1.1 200 OK\r\n", 17);
    assert_null(warc_capture_protocol(cap));
    warc_capture_free(cap);
}

static void test_mirror_paths_follow_wgets_layout(void **state)
{
    char out[4096];
    assert_int_equal(mirror_path("http://Example.COM/", out, sizeof out), 0);
    assert_string_equal(out, "example.com/index.html");
    assert_int_equal(mirror_path("http://example.com", out, sizeof out), 0);
    assert_string_equal(out, "example.com/index.html");
    assert_int_equal(mirror_path("http://example.com:80/a/b", out, sizeof out), 0);
    assert_string_equal(out, "example.com/a/b");
    assert_int_equal(mirror_path("https://example.com:8443/a/", out, sizeof out), 0);
    assert_string_equal(out, "example.com:8443/a/index.html");
    assert_int_equal(mirror_path("http://h/p?q=1&r=a/b", out, sizeof out), 0);
    assert_string_equal(out, "h/p?q=1&r=a%2Fb");
    assert_int_equal(mirror_path("http://h/caf%C3%A9%20x", out, sizeof out), 0);
    assert_string_equal(out, "h/caf\xc3\xa9 x");
    assert_int_equal(mirror_path("mailto:x@y", out, sizeof out), -EINVAL);
}

static void test_mirror_paths_never_climb_out(void **state)
{
    char out[4096];
    assert_int_equal(mirror_path("http://h/a/%2e%2E/%2e/b", out, sizeof out), 0);
    assert_string_equal(out, "h/a/%2E%2E/%2E/b");
    assert_int_equal(mirror_path("http://h/%2F%2Fetc%2Fpasswd", out, sizeof out), 0);
    assert_string_equal(out, "h/%2F%2Fetc%2Fpasswd");
    assert_int_equal(mirror_path("http://h/a%00b%0a%25", out, sizeof out), 0);
    assert_string_equal(out, "h/a%00b%0A%25");
    assert_int_equal(mirror_path("http://h//x", out, sizeof out), 0);
    assert_string_equal(out, "h/x");
    /* no name is "." or ".." and none starts with "/" */
    for (char *p = strtok(out, "/"); p; p = strtok(NULL, "/"))
        assert_true(strcmp(p, ".") != 0 && strcmp(p, "..") != 0);
}

static void test_overlong_names_are_cut_with_a_hash(void **state)
{
    char url[1200], out[4096], other[4096];
    memcpy(url, "http://h/", 9);
    memset(url + 9, 'a', 1000);
    url[1009] = '\0';
    assert_int_equal(mirror_path(url, out, sizeof out), 0);
    assert_int_equal(strlen(out), 2 + MIRROR_NAME_MAX);
    url[1008] = 'b';
    assert_int_equal(mirror_path(url, other, sizeof other), 0);
    assert_int_equal(strncmp(out, other, 2 + MIRROR_NAME_MAX - 16), 0);
    assert_string_not_equal(out, other);        /* the hashes differ */
    /* a path longer than any file system takes */
    char deep[8000] = "http://h";
    for (int i = 0; i < 30; i++)
        strcat(deep, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    assert_int_equal(mirror_path(deep, out, sizeof out), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base32_follows_rfc_4648),
        cmocka_unit_test(test_surt_reverses_the_host_and_drops_www),
        cmocka_unit_test(test_an_h2_head_is_captured_in_http_1_1_syntax),
        cmocka_unit_test(test_mirror_paths_follow_wgets_layout),
        cmocka_unit_test(test_mirror_paths_never_climb_out),
        cmocka_unit_test(test_overlong_names_are_cut_with_a_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the fetch result mapping: libcurl's codes to the failure
 * classes that rows, tests and scripts rely on, and the settings line every
 * model shares, and the reading of a response's Content-Length lines. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "crawl.h"
#include "fetch.h"

static void test_libcurl_codes_map_to_the_documented_classes(void **state)
{
    static const struct { CURLcode rc; enum crawl_fail fail; } map[] = {
        { CURLE_OK, CRAWL_FAIL_NONE },
        { CURLE_COULDNT_RESOLVE_HOST, CRAWL_FAIL_DNS },
        { CURLE_COULDNT_RESOLVE_PROXY, CRAWL_FAIL_DNS },
        { CURLE_COULDNT_CONNECT, CRAWL_FAIL_CONNECT },
        { CURLE_OPERATION_TIMEDOUT, CRAWL_FAIL_TIMEOUT },
        { CURLE_SSL_CONNECT_ERROR, CRAWL_FAIL_TLS },
        { CURLE_PEER_FAILED_VERIFICATION, CRAWL_FAIL_TLS },
        { CURLE_SSL_CACERT_BADFILE, CRAWL_FAIL_TLS },
        { CURLE_UNSUPPORTED_PROTOCOL, CRAWL_FAIL_PROTOCOL },
        { CURLE_WEIRD_SERVER_REPLY, CRAWL_FAIL_PROTOCOL },
        { CURLE_BAD_CONTENT_ENCODING, CRAWL_FAIL_PROTOCOL },
        { CURLE_HTTP2, CRAWL_FAIL_PROTOCOL },
        { CURLE_URL_MALFORMAT, CRAWL_FAIL_PROTOCOL },
        { CURLE_RECV_ERROR, CRAWL_FAIL_RECV },
        { CURLE_SEND_ERROR, CRAWL_FAIL_RECV },
        { CURLE_GOT_NOTHING, CRAWL_FAIL_RECV },
        { CURLE_PARTIAL_FILE, CRAWL_FAIL_RECV },
        { CURLE_TOO_MANY_REDIRECTS, CRAWL_FAIL_REDIRECTS },
        { CURLE_FILESIZE_EXCEEDED, CRAWL_FAIL_TOO_LARGE },
        { CURLE_ABORTED_BY_CALLBACK, CRAWL_FAIL_CANCELLED },
        { CURLE_OUT_OF_MEMORY, CRAWL_FAIL_OTHER },
        { CURLE_WRITE_ERROR, CRAWL_FAIL_OTHER },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        enum crawl_fail got = fetch_fail_class(map[i].rc);
        if (got != map[i].fail)
            fail_msg("%s: %s, want %s", curl_easy_strerror(map[i].rc), job_fail_name(got),
                     job_fail_name(map[i].fail));
    }
}

static void test_every_class_has_a_one_word_name(void **state)
{
    const char *names[] = { "none", "input", "dns", "connect", "timeout", "tls", "protocol",
                            "recv", "redirects", "too-large", "http", "thread", "cancelled",
                            "robots", "other" };
    for (int f = CRAWL_FAIL_NONE; f <= CRAWL_FAIL_OTHER; f++)
        assert_string_equal(job_fail_name((enum crawl_fail)f), names[f]);
    assert_string_equal(job_fail_name((enum crawl_fail)99), "other");
}

static void test_the_shared_settings_line_names_what_every_model_uses(void **state)
{
    struct crawl_opts o;
    char buf[512];
    crawl_opts_init(&o);
    o.timeout = 5;
    o.max_redirs = 0;
    o.max_size = 1 << 20;
    const char *d = fetch_describe_opts(&o, buf, sizeof buf);
    assert_non_null(strstr(d, "timeout 5s"));
    assert_non_null(strstr(d, "redirects 0"));
    assert_non_null(strstr(d, "max size 1M"));
}

/* Feeds each line of a response head to l; returns what the last returned. */
static int head(struct fetch_length *l, const char *const *lines)
{
    int rc = 0;
    for (; *lines; lines++)
        rc = fetch_length_line(l, *lines, strlen(*lines));
    return rc;
}

static void test_equal_content_lengths_are_one_length(void **state)
{
    struct fetch_length l = { 0 };
    const char *a[] = { "HTTP/1.1 200 OK\r\n", "Content-Length: 7\r\n",
                        "content-length:7 , 7,\t,7\r\n", "CONTENT-LENGTH: 007\r\n", "\r\n", NULL };
    assert_int_equal(head(&l, a), 0);
    assert_int_equal(l.bad, 0);
    assert_int_equal(l.seen, 1);
    assert_int_equal(l.value, 7);
}

static void test_different_content_lengths_are_refused_with_both_values(void **state)
{
    struct fetch_length l = { 0 };
    const char *a[] = { "HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "Content-Length: 7\r\n", NULL };
    assert_int_equal(head(&l, a), -1);
    assert_int_equal(l.bad, FETCH_LENGTH_CONFLICT);
    assert_int_equal(l.value, 5);
    assert_int_equal(l.other, 7);
    /* Within one line too, and a later line does not clear it. */
    struct fetch_length m = { 0 };
    const char *b[] = { "HTTP/2 200 \r\n", "content-length: 5, 7\r\n", "X-A: b\r\n", NULL };
    assert_int_equal(head(&m, b), -1);
    assert_int_equal(m.other, 7);
}

static void test_a_content_length_that_is_no_number_is_refused(void **state)
{
    const char *bad[] = { "Content-Length: 5, x\r\n", "Content-Length: -5\r\n",
                          "Content-Length: 5 5\r\n", "Content-Length: 99999999999999999999\r\n",
                          "Content-Length: 0x10\r\n" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct fetch_length l = { 0 };
        assert_int_equal(fetch_length_line(&l, bad[i], strlen(bad[i])), -1);
        assert_int_equal(l.bad, FETCH_LENGTH_INVALID);
    }
}

static void test_each_response_of_a_chain_has_its_own_length(void **state)
{
    /* A redirect's 0, then the target's 7: two responses, no conflict. */
    struct fetch_length l = { 0 };
    const char *a[] = { "HTTP/1.1 301 Moved\r\n", "Content-Length: 0\r\n", "\r\n",
                        "HTTP/1.1 200 OK\r\n", "Content-Length: 7\r\n", "\r\n", NULL };
    assert_int_equal(head(&l, a), 0);
    assert_int_equal(l.value, 7);
    /* Other fields whose names start alike are not it. */
    struct fetch_length m = { 0 };
    const char *b[] = { "Content-Length: 3\r\n", "Content-Lengthy: 4\r\n",
                        "X-Content-Length: 5\r\n", NULL };
    assert_int_equal(head(&m, b), 0);
    assert_int_equal(m.value, 3);
}

static void test_a_validator_header_is_read_by_its_name_without_white_space(void **state)
{
    (void)state;
    const char *v;
    size_t n;
    const char *line = "etag:  W/\"a b\" \t\r\n";
    assert_int_equal(fetch_header_value(line, strlen(line), "ETag", &v, &n), 1);
    assert_int_equal(n, 7);
    assert_memory_equal(v, "W/\"a b\"", 7);
    line = "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\n";
    assert_int_equal(fetch_header_value(line, strlen(line), "Last-Modified", &v, &n), 1);
    assert_int_equal(n, 29);
    line = "ETagX: 1\r\n";
    assert_int_equal(fetch_header_value(line, strlen(line), "ETag", &v, &n), 0);
    line = "ETag\r\n";
    assert_int_equal(fetch_header_value(line, strlen(line), "ETag", &v, &n), 0);
    line = "ETag:\r\n";
    assert_int_equal(fetch_header_value(line, strlen(line), "ETag", &v, &n), 1);
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_validator_header_is_read_by_its_name_without_white_space),
        cmocka_unit_test(test_libcurl_codes_map_to_the_documented_classes),
        cmocka_unit_test(test_every_class_has_a_one_word_name),
        cmocka_unit_test(test_the_shared_settings_line_names_what_every_model_uses),
        cmocka_unit_test(test_equal_content_lengths_are_one_length),
        cmocka_unit_test(test_different_content_lengths_are_refused_with_both_values),
        cmocka_unit_test(test_a_content_length_that_is_no_number_is_refused),
        cmocka_unit_test(test_each_response_of_a_chain_has_its_own_length),
    };
    return cmocka_run_group_tests_name("fetch", tests, NULL, NULL);
}

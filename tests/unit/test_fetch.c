/* Unit tests for the fetch result mapping: libcurl's codes to the failure
 * classes that rows, tests and scripts rely on, and the settings line every
 * model shares. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libcurl_codes_map_to_the_documented_classes),
        cmocka_unit_test(test_every_class_has_a_one_word_name),
        cmocka_unit_test(test_the_shared_settings_line_names_what_every_model_uses),
    };
    return cmocka_run_group_tests_name("fetch", tests, NULL, NULL);
}

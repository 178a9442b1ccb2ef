/* Unit tests for the --frontier URL: host, port (6379 by default), an
 * IPv6 literal, a password with or without a user, the crawl's NAME as the
 * prefix of its keys, and what is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "state_redis_internal.h"

static struct redis_addr parse_ok(const char *url)
{
    struct redis_addr a;
    char why[200] = "";
    memset(&a, 0, sizeof a);
    assert_int_equal(redis_parse_url(&a, url, why, sizeof why), 0);
    assert_string_equal(why, "");
    return a;
}

static void test_host_port_and_name(void **state)
{
    struct redis_addr a = parse_ok("redis://10.0.0.1:7000/site");
    assert_string_equal(a.host, "10.0.0.1");
    assert_int_equal(a.port, 7000);
    assert_string_equal(a.prefix, "crawl:site:");
    assert_string_equal(a.user, "");
    assert_string_equal(a.pass, "");
}

static void test_the_port_defaults_to_6379(void **state)
{
    struct redis_addr a = parse_ok("redis://db.example/a.b_c-9");
    assert_string_equal(a.host, "db.example");
    assert_int_equal(a.port, 6379);
    assert_string_equal(a.prefix, "crawl:a.b_c-9:");
}

static void test_an_ipv6_literal(void **state)
{
    struct redis_addr a = parse_ok("redis://[::1]:6380/x");
    assert_string_equal(a.host, "::1");
    assert_int_equal(a.port, 6380);
    a = parse_ok("REDIS://[fe80::2]/x");
    assert_string_equal(a.host, "fe80::2");
    assert_int_equal(a.port, 6379);
}

static void test_a_password_with_or_without_a_user(void **state)
{
    struct redis_addr a = parse_ok("redis://:s3cret@127.0.0.1:7000/x");
    assert_string_equal(a.user, "");
    assert_string_equal(a.pass, "s3cret");
    assert_string_equal(a.host, "127.0.0.1");
    a = parse_ok("redis://crawler:pw:with:colons@h/x");
    assert_string_equal(a.user, "crawler");
    assert_string_equal(a.pass, "pw:with:colons");
    assert_string_equal(a.host, "h");
}

static void test_what_is_refused(void **state)
{
    static const char *const bad[] = {
        "redis://host",             /* no NAME */
        "redis://host/",
        "redis:///x",               /* no host */
        "redis://host:0/x",
        "redis://host:65536/x",
        "redis://host:12ab/x",
        "redis://host:/x",
        "redis://host/bad name",
        "redis://host/a/b",
        "redis://[::1/x",
        "redis://user@host/x",      /* a user with no password */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct redis_addr a;
        char why[200] = "";
        memset(&a, 0, sizeof a);
        print_message("%s\n", bad[i]);
        assert_int_equal(redis_parse_url(&a, bad[i], why, sizeof why), -1);
        assert_non_null(strstr(why, "not redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_port_and_name),
        cmocka_unit_test(test_the_port_defaults_to_6379),
        cmocka_unit_test(test_an_ipv6_literal),
        cmocka_unit_test(test_a_password_with_or_without_a_user),
        cmocka_unit_test(test_what_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the content decoders of --warc (decode.c): stacks undone
 * last coding first, libcurl's limits and its words for each failure, and
 * a body fed a byte at a time decoding as it does whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "decode.h"

#define ALL (DECODE_DEFLATE | DECODE_GZIP | DECODE_BR | DECODE_ZSTD)

/* 128 bytes of the fixture server's pattern, as its /br/128 sends them
 * (brotli quality 5): no encoder is linked here. */
static const unsigned char br128[] = {
    0x1b, 0x7f, 0x00, 0x00, 0x64, 0x64, 0x5e, 0x7f, 0x0b, 0x1f, 0x1c, 0x01,
    0x37, 0xc0, 0xf1, 0x56, 0x60, 0xae, 0x59, 0x5e, 0x94, 0x55, 0xdd, 0xb4,
    0x5d, 0x3f, 0x8c, 0xd3, 0xbc, 0xac, 0xdb, 0x7e, 0x9c, 0xd7, 0xfd, 0xbc,
    0xdf, 0xcf, 0xb0, 0x1c, 0x2f, 0x88, 0x92, 0xac, 0xa8, 0x9a, 0x6e, 0x98,
    0x96, 0xed, 0xb8, 0x9e, 0x1f, 0x84, 0x51, 0x9c, 0xa4, 0x10, 0x8c, 0xa0,
    0x18, 0x4e, 0x90, 0x14, 0x0d, 0x02, 0x03,
};
#define LINE "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.\n"

struct out {
    char buf[4096];
    size_t len;
    int refuse;                 /* the sink says no */
};

static int sink(void *data, const char *p, size_t n)
{
    struct out *o = data;
    if (o->refuse)
        return -1;
    assert_true(o->len + n <= sizeof o->buf);
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

/* gzip (wbits 31), zlib (15) or raw deflate (-15) of n bytes into out;
 * returns the length. */
static size_t zcomp(int wbits, const void *p, size_t n, unsigned char *out, size_t cap)
{
    z_stream z = { 0 };
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)p;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    return len;
}

/* Decodes all of p through a decoder for codings, piece bytes at a time
 * (0: at once). Returns what decode_write last returned. */
static int run(const char *codings, unsigned known, const void *p, size_t n, size_t piece,
               struct out *o, char *why, size_t whylen)
{
    struct decode *d;
    int rc = decode_new(&d, codings, known, sink, o);
    if (rc == 0) {
        const char *q = p;
        for (size_t off = 0; off < n && rc == 0;) {
            size_t step = piece && n - off > piece ? piece : n - off;
            rc = decode_write(d, q + off, step);
            off += step;
        }
    }
    if (why)
        snprintf(why, whylen, "%s", d && decode_why(d) ? decode_why(d) : "");
    decode_free(d);
    return rc;
}

static void test_stacked_codings_are_undone_last_first_whole_or_a_byte_at_a_time(void **state)
{
    unsigned char gz[256], zs[512];
    size_t gn = zcomp(31, "hello\n", 6, gz, sizeof gz);
    size_t zn = ZSTD_compress(zs, sizeof zs, gz, gn, 3);
    assert_false(ZSTD_isError(zn));
    for (size_t piece = 0; piece <= 1; piece++) {
        struct out o = { 0 };
        assert_int_equal(run("gzip, zstd", ALL, zs, zn, piece, &o, NULL, 0), 0);
        assert_int_equal(o.len, 6);
        assert_memory_equal(o.buf, "hello\n", 6);
    }
    /* the other order undoes gzip first: not a gzip stream */
    struct out o = { 0 };
    char why[160];
    assert_int_equal(run("zstd, gzip", ALL, zs, zn, 0, &o, why, sizeof why), DECODE_EBAD);
    assert_string_equal(why, "Error while processing content unencoding: incorrect header check");
}

static void test_names_are_read_as_libcurl_reads_them(void **state)
{
    unsigned char gz[256];
    size_t gn = zcomp(31, "hi", 2, gz, sizeof gz);
    const char *same[] = { "gzip", " GZIP ", "x-gzip", ",,gzip,", "identity, gzip", "gzip , none" };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        struct out o = { 0 };
        assert_int_equal(run(same[i], ALL, gz, gn, 0, &o, NULL, 0), 0);
        assert_int_equal(o.len, 2);
    }
    struct out o = { 0 };
    assert_int_equal(run("", ALL, "plain", 5, 0, &o, NULL, 0), 0);
    assert_int_equal(o.len, 5);
}

static void test_an_unknown_coding_fails_the_first_byte_naming_what_is_understood(void **state)
{
    struct out o = { 0 };
    char why[160];
    struct decode *d;
    /* no body, no failure */
    assert_int_equal(decode_new(&d, "compress", ALL, sink, &o), 0);
    decode_free(d);
    assert_int_equal(run("compress", ALL, "x", 1, 0, &o, why, sizeof why), DECODE_EBAD);
    assert_string_equal(why, "Unrecognized content encoding type. libcurl understands "
                        "deflate, gzip, br, zstd content encodings.");
    /* a libcurl without brotli: br is not understood either */
    assert_int_equal(run("br", DECODE_DEFLATE | DECODE_GZIP, br128, sizeof br128, 0, &o, why,
                         sizeof why), DECODE_EBAD);
    assert_string_equal(why, "Unrecognized content encoding type. libcurl understands "
                        "deflate, gzip content encodings.");
    assert_int_equal(o.len, 0);
}

static void test_more_than_five_codings_are_refused_before_any_body(void **state)
{
    struct out o = { 0 };
    struct decode *d;
    assert_int_equal(decode_new(&d, "identity,none,identity,identity,identity", ALL, sink, &o), 0);
    assert_int_equal(decode_write(d, "abc", 3), 0);
    decode_free(d);
    assert_int_equal(decode_new(&d, "a, b, c, d, e, f", ALL, sink, &o), DECODE_EBAD);
    assert_non_null(d);
    assert_string_equal(decode_why(d), "Reject response due to more than 5 content encodings");
    decode_free(d);
}

static void test_brotli_decodes_and_a_stream_cut_short_is_no_error(void **state)
{
    struct out o = { 0 };
    assert_int_equal(run("br", ALL, br128, sizeof br128, 1, &o, NULL, 0), 0);
    assert_int_equal(o.len, 128);
    assert_memory_equal(o.buf, LINE LINE, 128);
    struct out cut = { 0 };
    assert_int_equal(run("br", ALL, br128, 30, 0, &cut, NULL, 0), 0);
    assert_true(cut.len < 128);
    assert_memory_equal(cut.buf, LINE LINE, cut.len);
    /* bytes after its end */
    unsigned char more[sizeof br128 + 1];
    memcpy(more, br128, sizeof br128);
    more[sizeof br128] = 'x';
    char why[160];
    struct out after = { 0 };
    assert_int_equal(run("br", ALL, more, sizeof more, 0, &after, why, sizeof why), DECODE_EAFTER);
    assert_string_equal(why, "Failed writing received data to disk/application");
    assert_int_equal(after.len, 128);
}

static void test_bytes_after_a_stream_end_fail_as_libcurl_write_error(void **state)
{
    unsigned char gz[256];
    size_t gn = zcomp(31, "hello\n", 6, gz, sizeof gz);
    memcpy(gz + gn, gz, gn);    /* a second gzip member */
    struct out o = { 0 };
    char why[160];
    assert_int_equal(run("gzip", ALL, gz, 2 * gn, 0, &o, why, sizeof why), DECODE_EAFTER);
    assert_string_equal(why, "Failed writing received data to disk/application");
    assert_int_equal(o.len, 6);
    /* zstd frames may follow one another; other bytes are bad data */
    unsigned char zs[256];
    size_t zn = ZSTD_compress(zs, sizeof zs, "ab", 2, 3);
    memcpy(zs + zn, zs, zn);
    struct out two = { 0 };
    assert_int_equal(run("zstd", ALL, zs, 2 * zn, 0, &two, NULL, 0), 0);
    assert_int_equal(two.len, 4);
    zs[zn] = 'x';
    struct out bad = { 0 };
    assert_int_equal(run("zstd", ALL, zs, 2 * zn, 0, &bad, why, sizeof why), DECODE_EBAD);
    assert_string_equal(why, "Unrecognized or bad HTTP Content or Transfer-Encoding");
}

static void test_deflate_is_zlib_or_raw_and_a_raw_one_may_carry_four_bytes_more(void **state)
{
    unsigned char buf[256];
    size_t n = zcomp(15, "zlib wrapped", 12, buf, sizeof buf);
    struct out o = { 0 };
    assert_int_equal(run("deflate", ALL, buf, n, 0, &o, NULL, 0), 0);
    assert_int_equal(o.len, 12);
    n = zcomp(-15, "raw deflate", 11, buf, sizeof buf);
    memcpy(buf + n, "1234x", 5);
    struct out raw = { 0 };
    assert_int_equal(run("deflate", ALL, buf, n + 4, 0, &raw, NULL, 0), 0);
    assert_int_equal(raw.len, 11);
    struct out five = { 0 };
    assert_int_equal(run("deflate", ALL, buf, n + 5, 0, &five, NULL, 0), DECODE_EAFTER);
}

static void test_the_sinks_refusal_stops_decoding_for_good(void **state)
{
    unsigned char gz[256];
    size_t gn = zcomp(31, "hello\n", 6, gz, sizeof gz);
    struct out o = { .refuse = 1 };
    struct decode *d;
    assert_int_equal(decode_new(&d, "gzip", ALL, sink, &o), 0);
    assert_int_equal(decode_write(d, (const char *)gz, gn), DECODE_ESINK);
    assert_null(decode_why(d));
    o.refuse = 0;
    assert_int_equal(decode_write(d, (const char *)gz, gn), DECODE_ESINK);
    assert_int_equal(o.len, 0);
    decode_free(d);
}

static void test_the_list_of_codings_is_in_libcurls_order(void **state)
{
    char buf[64];
    assert_string_equal(decode_list(buf, sizeof buf, ALL), "deflate, gzip, br, zstd");
    assert_string_equal(decode_list(buf, sizeof buf, DECODE_GZIP | DECODE_ZSTD), "gzip, zstd");
    assert_string_equal(decode_list(buf, sizeof buf, 0), "identity");
    assert_string_equal(decode_list(buf, 8, ALL), "deflate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stacked_codings_are_undone_last_first_whole_or_a_byte_at_a_time),
        cmocka_unit_test(test_names_are_read_as_libcurl_reads_them),
        cmocka_unit_test(test_an_unknown_coding_fails_the_first_byte_naming_what_is_understood),
        cmocka_unit_test(test_more_than_five_codings_are_refused_before_any_body),
        cmocka_unit_test(test_brotli_decodes_and_a_stream_cut_short_is_no_error),
        cmocka_unit_test(test_bytes_after_a_stream_end_fail_as_libcurl_write_error),
        cmocka_unit_test(test_deflate_is_zlib_or_raw_and_a_raw_one_may_carry_four_bytes_more),
        cmocka_unit_test(test_the_sinks_refusal_stops_decoding_for_good),
        cmocka_unit_test(test_the_list_of_codings_is_in_libcurls_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

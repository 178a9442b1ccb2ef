/* Unit tests for what --warc and --save compute on their own: base32 of
 * digests, the SURT keys of the CDXJ index, the captured heads (HTTP/2 in
 * HTTP/1.1 syntax), revisit records (a payload written before, a 304) and
 * the index they are read back from, and the mirror's file names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dedupe.h"
#include "digest.h"
#include "json.h"
#include "mirror.h"
#include "strbuf.h"
#include "warc.h"

static void test_base32_follows_rfc_4648(void **state)
{
    char out[64];
    /* RFC 4648, 10: the test vectors, without padding. */
    assert_string_equal(digest_base32((const unsigned char *)"", 0, out), "");
    assert_string_equal(digest_base32((const unsigned char *)"f", 1, out), "MY");
    assert_string_equal(digest_base32((const unsigned char *)"fo", 2, out), "MZXQ");
    assert_string_equal(digest_base32((const unsigned char *)"foo", 3, out), "MZXW6");
    assert_string_equal(digest_base32((const unsigned char *)"foob", 4, out), "MZXW6YQ");
    assert_string_equal(digest_base32((const unsigned char *)"fooba", 5, out), "MZXW6YTB");
    assert_string_equal(digest_base32((const unsigned char *)"foobar", 6, out), "MZXW6YTBOI");
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

static void test_base32_reads_back_what_it_writes(void **state)
{
    unsigned char md[DIGEST_LEN], back[DIGEST_LEN];
    char text[DIGEST_TEXT];
    assert_int_equal(digest_of("abc", 3, md), 0);
    /* SHA-1("abc"), FIPS 180-2's example, in base32. */
    assert_string_equal(digest_text(md, text), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    assert_int_equal(digest_parse(text, strlen(text), back), 0);
    assert_memory_equal(md, back, DIGEST_LEN);
    assert_int_equal(digest_parse(text + 5, 32, back), 0);     /* warcio's, no prefix */
    assert_memory_equal(md, back, DIGEST_LEN);
    assert_int_equal(digest_parse("sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE", 36, back), -1);
    assert_int_equal(digest_parse("sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE1", 37, back), -1);
}

static void test_json_members_are_read_with_their_escapes(void **state)
{
    struct strbuf b = { 0 };
    const char *o = "{\"a\": {\"url\": \"no\"}, \"n\":[1,\"]\"], \"url\":\"http://h/\\u00e9\\\"x\\ud83d\\ude00\","
                    "\"status\": 200, \"x\\\"\": null}";
    assert_int_equal(json_member(o, "url", &b), 1);
    assert_string_equal(b.data, "http://h/\xc3\xa9\"x\xf0\x9f\x98\x80");
    sb_reset(&b);
    assert_int_equal(json_member(o, "status", &b), 1);
    assert_string_equal(b.data, "200");
    sb_reset(&b);
    assert_int_equal(json_member(o, "x\"", &b), 1);
    assert_string_equal(b.data, "null");
    assert_int_equal(json_member(o, "a", &b), 0);           /* an object is not given */
    assert_int_equal(json_member(o, "mime", &b), 0);
    assert_int_equal(json_member("[1]", "url", &b), -1);
    assert_int_equal(json_member("{\"url\" 1}", "url", &b), -1);
    sb_free(&b);
}

/* ---- records written and read back -------------------------------------- */

struct tmp {
    char dir[64];
    char warc[128], cdx[128];
};

static struct warc *writer(struct tmp *t, struct dedupe *seen)
{
    struct warc *w = NULL;
    char failed[256] = "";
    snprintf(t->dir, sizeof t->dir, "/tmp/test_warc.XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    snprintf(t->warc, sizeof t->warc, "%s/a.warc.gz", t->dir);
    snprintf(t->cdx, sizeof t->cdx, "%s/a.cdxj", t->dir);
    struct warc_conf conf = { .path = t->warc, .worker = -1, .cdx = t->cdx,
                              .software = "crawl test", .seen = seen };
    assert_int_equal(warc_open(&w, &conf, failed, sizeof failed), 0);
    return w;
}

/* The whole of a file, gzip members inflated one after the other. */
static char *slurp(const char *path, int gz)
{
    struct strbuf b = { 0 };
    char buf[4096];
    int n;
    gzFile f = gz ? gzopen(path, "rb") : NULL;
    FILE *p = gz ? NULL : fopen(path, "r");
    assert_true(f || p);
    while ((n = f ? gzread(f, buf, sizeof buf) : (int)fread(buf, 1, sizeof buf, p)) > 0)
        sb_add(&b, buf, (size_t)n);
    if (f)
        gzclose(f);
    else
        fclose(p);
    sb_addc(&b, '\0');
    return b.data;
}

static void tmp_done(struct tmp *t)
{
    unlink(t->warc);
    unlink(t->cdx);
    rmdir(t->dir);
}

/* A capture of a 200 (or status) response for uri with body. */
static struct warc_capture *capture(long status, const char *body)
{
    struct warc_capture *cap = warc_capture_new();
    char line[64];
    assert_non_null(cap);
    warc_capture_request(cap, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n", 27);
    snprintf(line, sizeof line, "HTTP/1.1 %ld X\r\n", status);
    warc_capture_header(cap, line, strlen(line));
    warc_capture_header(cap, "Content-Type: text/html\r\n", 25);
    warc_capture_header(cap, "\r\n", 2);
    if (*body)
        assert_int_equal(warc_capture_body(cap, body, strlen(body)), 0);
    return cap;
}

/* The value of header name in the record that starts at rec, or "". */
static char *field(const char *rec, const char *name, char *out, size_t n)
{
    const char *end = strstr(rec, "\r\n\r\n"), *p = strstr(rec, name);
    out[0] = '\0';
    if (p && p < end)
        snprintf(out, n, "%.*s", (int)strcspn(p + strlen(name), "\r"), p + strlen(name));
    return out;
}

static void test_a_payload_written_before_is_a_revisit_of_its_first_record(void **state)
{
    struct tmp t;
    struct dedupe *seen = dedupe_new(16, 4096);
    struct warc *w = writer(&t, seen);
    struct warc_capture *a = capture(200, "same body"), *b = capture(200, "same body");
    struct warc_capture *c = capture(200, "other body");
    assert_int_equal(warc_write(w, a, "http://h/a", "127.0.0.1", NULL), 0);
    assert_int_equal(warc_write(w, b, "http://h/b", "127.0.0.1", NULL), 0);
    assert_int_equal(warc_write(w, c, "http://h/c", "127.0.0.1", NULL), 0);
    assert_int_equal(warc_close(w), 0);
    char *all = slurp(t.warc, 1), v[256], id[256], date[64], pay[64];
    const char *first = strstr(all, "WARC-Type: response"), *rev = strstr(all, "WARC-Type: revisit");
    assert_non_null(first);
    assert_non_null(rev);
    assert_null(strstr(rev + 1, "WARC-Type: revisit"));     /* one, for b */
    assert_string_equal(field(rev, "WARC-Target-URI: ", v, sizeof v), "http://h/b");
    assert_string_equal(field(rev, "WARC-Profile: ", v, sizeof v),
                        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest");
    assert_string_equal(field(rev, "WARC-Refers-To-Target-URI: ", v, sizeof v), "http://h/a");
    assert_string_equal(field(rev, "WARC-Refers-To: ", v, sizeof v),
                        field(first, "WARC-Record-ID: ", id, sizeof id));
    assert_string_equal(field(rev, "WARC-Refers-To-Date: ", v, sizeof v),
                        field(first, "WARC-Date: ", date, sizeof date));
    assert_string_equal(field(rev, "WARC-Payload-Digest: ", v, sizeof v),
                        field(first, "WARC-Payload-Digest: ", pay, sizeof pay));
    /* No payload: the block is the head alone, its digest the head's. */
    const char *block = strstr(rev, "\r\n\r\n") + 4;
    const char *head = "HTTP/1.1 200 X\r\nContent-Type: text/html\r\n\r\n";
    unsigned char md[DIGEST_LEN];
    char text[DIGEST_TEXT];
    assert_int_equal(atoi(field(rev, "Content-Length: ", v, sizeof v)), (int)strlen(head));
    assert_memory_equal(block, head, strlen(head));
    assert_int_equal(digest_of(head, strlen(head), md), 0);
    assert_string_equal(field(rev, "WARC-Block-Digest: ", v, sizeof v), digest_text(md, text));
    free(all);
    /* The index: the revisit's line says warc/revisit, the others their mime. */
    char *idx = slurp(t.cdx, 0);
    assert_non_null(strstr(idx, "\"url\":\"http://h/b\",\"mime\":\"warc/revisit\",\"status\":\"200\","
                                "\"digest\":\"sha1:"));
    assert_non_null(strstr(idx, "\"url\":\"http://h/a\",\"mime\":\"text/html\""));
    assert_non_null(strstr(idx, "\"url\":\"http://h/c\",\"mime\":\"text/html\""));
    free(idx);
    warc_capture_free(a);
    warc_capture_free(b);
    warc_capture_free(c);
    dedupe_free(seen);
    tmp_done(&t);
}

static void test_only_a_whole_2xx_payload_that_is_not_empty_is_a_revisit(void **state)
{
    struct tmp t;
    struct dedupe *seen = dedupe_new(16, 4096);
    struct warc *w = writer(&t, seen);
    struct warc_capture *caps[6] = { capture(404, "gone"), capture(404, "gone"),
                                     capture(200, ""), capture(200, ""),
                                     capture(200, "cut"), capture(200, "cut") };
    assert_int_equal(warc_write(w, caps[0], "http://h/1", NULL, NULL), 0);
    assert_int_equal(warc_write(w, caps[1], "http://h/2", NULL, NULL), 0);
    assert_int_equal(warc_write(w, caps[2], "http://h/3", NULL, NULL), 0);
    assert_int_equal(warc_write(w, caps[3], "http://h/4", NULL, NULL), 0);
    assert_int_equal(warc_write(w, caps[4], "http://h/5", NULL, "length"), 0);
    assert_int_equal(warc_write(w, caps[5], "http://h/6", NULL, "length"), 0);
    assert_int_equal(warc_close(w), 0);
    char *all = slurp(t.warc, 1);
    assert_null(strstr(all, "WARC-Type: revisit"));
    free(all);
    for (int i = 0; i < 6; i++)
        warc_capture_free(caps[i]);
    dedupe_free(seen);
    tmp_done(&t);
}

static void test_a_304_is_a_server_not_modified_revisit_of_what_it_revalidated(void **state)
{
    struct tmp t;
    struct warc *w = writer(&t, NULL);          /* no set: a 304 is one anyway */
    struct warc_capture *cap = capture(304, "");
    assert_int_equal(warc_capture_refers(cap, "http://h/page", "2026-01-01T00:00:00.5Z",
                                         "<urn:uuid:00000000-0000-4000-8000-000000000001>"), 0);
    assert_int_equal(warc_write(w, cap, "http://h/page", "127.0.0.1", NULL), 0);
    /* Forgotten with the capture: the next 304 refers to nothing named. */
    warc_capture_reset(cap);
    warc_capture_header(cap, "HTTP/1.1 304 Not Modified\r\n", 27);
    warc_capture_header(cap, "\r\n", 2);
    assert_int_equal(warc_write(w, cap, "http://h/other", "127.0.0.1", NULL), 0);
    assert_int_equal(warc_close(w), 0);
    char *all = slurp(t.warc, 1), v[256];
    const char *rev = strstr(all, "WARC-Type: revisit");
    assert_non_null(rev);
    assert_null(strstr(all, "WARC-Type: response"));
    assert_string_equal(field(rev, "WARC-Profile: ", v, sizeof v),
                        "http://netpreserve.org/warc/1.1/revisit/server-not-modified");
    assert_string_equal(field(rev, "WARC-Refers-To-Target-URI: ", v, sizeof v), "http://h/page");
    assert_string_equal(field(rev, "WARC-Refers-To-Date: ", v, sizeof v), "2026-01-01T00:00:00.5Z");
    assert_string_equal(field(rev, "WARC-Refers-To: ", v, sizeof v),
                        "<urn:uuid:00000000-0000-4000-8000-000000000001>");
    assert_string_equal(field(rev, "WARC-Payload-Digest: ", v, sizeof v), "");
    assert_string_equal(field(rev, "Content-Type: ", v, sizeof v), "application/http;msgtype=response");
    const char *second = strstr(rev + 1, "WARC-Type: revisit");
    assert_non_null(second);
    assert_string_equal(field(second, "WARC-Target-URI: ", v, sizeof v), "http://h/other");
    assert_string_equal(field(second, "WARC-Refers-To-Target-URI: ", v, sizeof v), "");
    assert_string_equal(field(second, "WARC-Refers-To-Date: ", v, sizeof v), "");
    free(all);
    char *idx = slurp(t.cdx, 0);
    assert_non_null(strstr(idx, "{\"url\":\"http://h/page\",\"mime\":\"warc/revisit\",\"status\":\"304\","
                                "\"length\":"));
    assert_null(strstr(idx, "digest"));
    free(idx);
    warc_capture_free(cap);
    tmp_done(&t);
}

static void test_an_earlier_index_is_read_into_the_set_its_2xx_responses_only(void **state)
{
    char path[] = "/tmp/test_warc_cdx.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("!OpenWayback-CDXJ 1.0\n"
          "h)/a 20260102030405 {\"url\":\"http://h/a\",\"mime\":\"text/html\",\"status\":\"200\","
          "\"digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\",\"length\":\"9\"}\n"
          /* warcio's: no "sha1:" */
          "h)/b 20260102030406 {\"url\":\"http://h/b\",\"mime\":\"text/html\",\"status\":\"200\","
          "\"digest\":\"2JMJ7L5RSW7YQGBXW7SDZHKHWR3FO4PR\"}\n"
          "h)/c 20260102030407 {\"url\":\"http://h/c\",\"mime\":\"warc/revisit\",\"status\":\"200\","
          "\"digest\":\"sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\"}\n"
          "h)/d 20260102030408 {\"url\":\"http://h/d\",\"mime\":\"text/html\",\"status\":\"404\","
          "\"digest\":\"sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}\n"
          "not a cdxj line\n"
          "h)/e 2026 {\"url\":\"http://h/e\"}\n"
          "\n", f);
    fclose(f);
    struct dedupe *seen = dedupe_new(16, 4096);
    size_t taken, unread;
    assert_int_equal(warc_cdx_load(path, seen, &taken, &unread), 0);
    assert_int_equal(taken, 2);
    assert_int_equal(unread, 2);
    unsigned char md[DIGEST_LEN];
    struct dedupe_first f1 = { .uri = "http://now/" }, got;
    assert_int_equal(digest_of("abc", 3, md), 0);
    assert_int_equal(dedupe_claim(seen, DEDUPE_PAYLOAD, md, &f1, &got), DEDUPE_SEEN);
    assert_string_equal(got.uri, "http://h/a");
    assert_string_equal(got.date, "2026-01-02T03:04:05Z");
    assert_string_equal(got.id, "");
    assert_int_equal(digest_parse("2JMJ7L5RSW7YQGBXW7SDZHKHWR3FO4PR", 32, md), 0);
    assert_int_equal(dedupe_claim(seen, DEDUPE_PAYLOAD, md, &f1, &got), DEDUPE_SEEN);
    assert_string_equal(got.uri, "http://h/b");
    /* The 404's digest was not taken; nor is a page's decoded body the same entry. */
    assert_int_equal(digest_parse("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 32, md), 0);
    assert_int_equal(dedupe_claim(seen, DEDUPE_PAYLOAD, md, &f1, &got), DEDUPE_FIRST);
    assert_int_equal(digest_of("abc", 3, md), 0);
    assert_int_equal(dedupe_claim(seen, DEDUPE_BODY, md, &f1, &got), DEDUPE_FIRST);
    assert_int_equal(warc_cdx_load("/nonexistent/x.cdxj", seen, &taken, &unread), -ENOENT);
    dedupe_free(seen);
    unlink(path);
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
        cmocka_unit_test(test_base32_reads_back_what_it_writes),
        cmocka_unit_test(test_json_members_are_read_with_their_escapes),
        cmocka_unit_test(test_a_payload_written_before_is_a_revisit_of_its_first_record),
        cmocka_unit_test(test_only_a_whole_2xx_payload_that_is_not_empty_is_a_revisit),
        cmocka_unit_test(test_a_304_is_a_server_not_modified_revisit_of_what_it_revalidated),
        cmocka_unit_test(test_an_earlier_index_is_read_into_the_set_its_2xx_responses_only),
        cmocka_unit_test(test_mirror_paths_follow_wgets_layout),
        cmocka_unit_test(test_mirror_paths_never_climb_out),
        cmocka_unit_test(test_overlong_names_are_cut_with_a_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

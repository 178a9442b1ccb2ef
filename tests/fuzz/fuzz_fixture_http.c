/* fuzz_fixture_http.c: libFuzzer target for the fixture server's request
 * parser and helpers. Every input is parsed as a request head; the parts it
 * yields go through the helpers the server would call on them.
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ifixture \
 *       tests/fuzz/fuzz_fixture_http.c fixture/fixture_http.c -o build/fuzz_fixture_http */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so that AddressSanitizer catches any
     * read past the end. */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);

    struct fixture_http_header headers[16];
    struct fixture_http_request req = { .headers = headers, .num_headers = 16 };
    long n = fixture_http_parse_request(buf, size, &req);
    if (n > (long)size)
        abort();
    if (n > 0) {
        const struct fixture_http_header *h = fixture_http_find_header(&req, "accept-encoding");
        if (h)
            fixture_http_token_q(h->value, h->value_len, "gzip");
        char *dec = malloc(req.target_len ? req.target_len : 1);
        if (dec) {
            long d = fixture_http_percent_decode(req.target, req.target_len, dec, req.target_len);
            if (d > (long)req.target_len)
                abort();
            if (d >= 0)
                fixture_http_path_is_safe(dec, (size_t)d);
            free(dec);
        }
        const char *q = memchr(req.target, '?', req.target_len), *v;
        size_t vlen;
        if (q)
            fixture_http_query_param(q + 1, req.target_len - (size_t)(q - req.target) - 1,
                                     "url", &v, &vlen);
        h = fixture_http_find_header(&req, "content-length");
        uint64_t cl;
        if (h && fixture_http_parse_uint(h->value, h->value_len, UINT64_MAX, &cl) == 0 &&
            h->value_len == 0)
            abort();
        /* A date read is one written back the same. */
        h = fixture_http_find_header(&req, "if-modified-since");
        int64_t t;
        char date[FIXTURE_HTTP_DATE];
        if (h && fixture_http_parse_date(h->value, h->value_len, &t) == 0 &&
            (strlen(fixture_http_format_date(t, date)) != h->value_len ||
             memcmp(date, h->value, h->value_len) != 0))
            abort();
        h = fixture_http_find_header(&req, "if-none-match");
        if (h)
            fixture_http_etag_match(h->value, h->value_len, "\"a-0\"", 5);
    }
    fixture_http_token_q(buf, size, "close");
    free(buf);
    return 0;
}

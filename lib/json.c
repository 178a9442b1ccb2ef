/* json.c: text as JSON strings and CSV fields, whole and valid: a byte
 * that is not UTF-8 becomes U+FFFD, so that a row from a page in another
 * charset still parses. Used by the report, the trace and the WARC index. */
#include <string.h>

#include "json.h"

size_t json_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n;
    unsigned min;
    unsigned cp;
    if ((s[0] & 0xe0) == 0xc0) { n = 2; cp = s[0] & 0x1f; min = 0x80; }
    else if ((s[0] & 0xf0) == 0xe0) { n = 3; cp = s[0] & 0x0f; min = 0x800; }
    else if ((s[0] & 0xf8) == 0xf0) { n = 4; cp = s[0] & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void json_string_sb(struct strbuf *b, const char *s)
{
    if (!s) {
        sb_adds(b, "null");
        return;
    }
    sb_addc(b, '"');
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        const unsigned char *run = p;
        size_t n;
        /* Plain bytes go in runs; the rest one at a time. */
        while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
            p++;
        if (p > run)
            sb_add(b, run, (size_t)(p - run));
        if (!*p)
            break;
        if (*p == '"' || *p == '\\') {
            sb_addc(b, '\\');
            sb_addc(b, (char)*p++);
        } else if (*p < 0x20 || *p == 0x7f) {
            sb_printf(b, "\\u%04x", *p++);
        } else if ((n = json_utf8_len(p)) == 0) {
            sb_adds(b, "\\ufffd");
            p++;
        } else {
            sb_add(b, p, n);
            p += n;
        }
    }
    sb_addc(b, '"');
}

void json_csv_sb(struct strbuf *b, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        sb_adds(b, s);
        return;
    }
    sb_addc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            sb_addc(b, '"');
        sb_addc(b, *s);
    }
    sb_addc(b, '"');
}

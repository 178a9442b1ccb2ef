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

/* ---- reading: one member of a flat object (a CDXJ line's) ------------------ */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v * 16 + (unsigned)d;
    }
    return 0;
}

static void put_utf8(struct strbuf *b, unsigned cp)
{
    if (cp < 0x80) {
        sb_addc(b, (char)cp);
    } else if (cp < 0x800) {
        sb_addc(b, (char)(0xc0 | cp >> 6));
        sb_addc(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        sb_addc(b, (char)(0xe0 | cp >> 12));
        sb_addc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
        sb_addc(b, (char)(0x80 | (cp & 0x3f)));
    } else {
        sb_addc(b, (char)(0xf0 | cp >> 18));
        sb_addc(b, (char)(0x80 | (cp >> 12 & 0x3f)));
        sb_addc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
        sb_addc(b, (char)(0x80 | (cp & 0x3f)));
    }
}

/* A \u escape at p (after the backslash and the u): its code point into
 * b, a surrogate pair joined, a lone surrogate as U+FFFD. Returns where
 * the escape ends, or NULL. */
static const char *unicode_escape(const char *p, struct strbuf *b)
{
    unsigned cp, lo;
    if (hex4(p, &cp) != 0)
        return NULL;
    p += 4;
    if (cp >= 0xd800 && cp < 0xdc00 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 &&
        lo >= 0xdc00 && lo < 0xe000) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        p += 6;
    } else if (cp >= 0xd800 && cp < 0xe000) {
        cp = 0xfffd;
    }
    if (b)
        put_utf8(b, cp);
    return p;
}

/* The JSON string at p (its opening quote), unescaped into b (NULL: only
 * skipped). Returns where it ends, past its closing quote, or NULL. */
static const char *read_string(const char *p, struct strbuf *b)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    for (p++; *p && *p != '"';) {
        if (*p != '\\') {
            if (b)
                sb_addc(b, *p);
            p++;
            continue;
        }
        p++;
        if (*p == 'u') {
            if (!(p = unicode_escape(p + 1, b)))
                return NULL;
            continue;
        }
        const char *e = *p ? strchr(from, *p) : NULL;
        if (!e)
            return NULL;
        if (b)
            sb_addc(b, to[e - from]);
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

/* Skips the JSON value at p, nested ones included. Returns where it ends,
 * or NULL. */
static const char *skip_value(const char *p)
{
    if (*p == '"')
        return read_string(p, NULL);
    if (*p != '{' && *p != '[') {
        const char *s = p;
        while (*p && !strchr(",}] \t\r\n", *p))
            p++;
        return p > s ? p : NULL;
    }
    int depth = 0;
    do {
        if (*p == '"') {
            if (!(p = read_string(p, NULL)))
                return NULL;
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            depth--;
        else if (!*p)
            return NULL;
        p++;
    } while (depth > 0);
    return p;
}

int json_member(const char *obj, const char *name, struct strbuf *out)
{
    struct strbuf key = { 0 };
    int rc = -1;
    const char *p = skip_ws(obj);
    if (*p++ != '{')
        return -1;
    p = skip_ws(p);
    if (*p == '}')
        return 0;
    while (*p == '"') {
        sb_reset(&key);
        if (!(p = read_string(p, &key)) || *(p = skip_ws(p)) != ':')
            break;
        p = skip_ws(p + 1);
        if (key.len > 0 && key.len == strlen(name) && memcmp(key.data, name, key.len) == 0 && *p != '{' &&
            *p != '[') {
            const char *v = p;
            if (*p == '"' ? !read_string(p, out) : !(p = skip_value(p)))
                break;
            if (*v != '"')
                sb_add(out, v, (size_t)(p - v));
            rc = 1;
            break;
        }
        if (!(p = skip_value(p)))
            break;
        p = skip_ws(p);
        if (*p == '}') {
            rc = 0;
            break;
        }
        if (*p != ',')
            break;
        p = skip_ws(p + 1);
    }
    sb_free(&key);
    return rc;
}

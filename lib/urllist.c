/* urllist.c: URL lists. Every line that could be meant as a URL ends as a
 * job, so that no line is silently dropped: a bad one becomes a failed job
 * with a message naming the file and line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urllist.h"

/* The length of a valid UTF-8 sequence at s within len bytes, or 0. */
static size_t utf8_at(const char *s, size_t len)
{
    unsigned char tmp[5] = {0};
    memcpy(tmp, s, len < 4 ? len : 4);
    return crawl_utf8_len(tmp);
}

char *urllist_printable(const char *s, size_t len, char *out, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned char ch = (unsigned char)s[i];
        if (o + 8 >= n) {
            memcpy(out + (o < n - 4 ? o : n - 4), "...", 4);
            return out;
        }
        /* Whole UTF-8 sequences pass; a stray byte is shown escaped, so
         * that no line can put control or invalid bytes on a terminal. */
        size_t u = ch >= 0x80 ? utf8_at(s + i, len - i) : 1;
        if (ch < 0x20 || ch == 0x7f || u == 0) {
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", ch);
            i++;
        } else {
            memcpy(out + o, s + i, u);
            o += u;
            i += u;
        }
    }
    out[o] = '\0';
    return out;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' ||
           ch == '\f';
}

/* Adds one trimmed line; a line with a NUL byte or too long is bad before
 * the core even looks at it. */
static int add_line(struct crawl *c, const char *s, size_t len, const char *name,
                    long line, FILE *err)
{
    char shown[URLLIST_MAX_URL + 16];
    const char *why = NULL;
    int rc;

    if (memchr(s, '\0', len))
        why = "contains a NUL byte";
    else if (len > URLLIST_MAX_URL)
        why = "line longer than 8192 bytes";
    if (why) {
        urllist_printable(s, len, shown, 256);
        if ((rc = crawl_add_failed(c, shown, name, line, why)) < 0)
            return rc;
        fprintf(err, "%s:%ld: %s: %s\n", name, line, why, shown);
        return 1;
    }
    urllist_printable(s, len, shown, sizeof shown);
    rc = crawl_add(c, shown, name, line, &why);
    if (rc == 1) {
        char brief[256];
        urllist_printable(s, len, brief, sizeof brief);
        fprintf(err, "%s:%ld: %s: %s\n", name, line, why, brief);
    }
    return rc;
}

int urllist_read(struct crawl *c, FILE *f, const char *name, FILE *err)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    long line = 0;
    int bad = 0;

    errno = 0;
    while ((n = getline(&buf, &cap, f)) >= 0) {
        char *s = buf;
        size_t len = (size_t)n;
        line++;
        if (line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
            s += 3;
            len -= 3;
        }
        while (len && is_space(s[len - 1]))
            len--;
        while (len && is_space(*s)) {
            s++;
            len--;
        }
        if (len == 0 || *s == '#')
            continue;
        int rc = add_line(c, s, len, name, line, err);
        if (rc < 0) {
            free(buf);
            return rc;
        }
        bad += rc;
    }
    int rerr = ferror(f);
    free(buf);
    if (rerr)
        return CRAWL_EINPUT;
    return bad;
}

int urllist_add_arg(struct crawl *c, const char *url, long argn, FILE *err)
{
    return add_line(c, url, strlen(url), "argument", argn, err);
}

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

/* One source of URLs: an open list, or a URL given as an argument. */
struct source {
    FILE *f;                /* NULL for an argument */
    int close_it;
    const char *name;       /* the list's name, or the URL */
    long line;              /* lines read, or the argument's number */
    int done;
};

struct urllist {
    struct source *v;
    size_t n, cap, cur;     /* cur: the source being read */
    char *buf;              /* getline's */
    size_t buf_cap;
    FILE *err;
    int bad;                /* bad lines so far */
};

/* Reads lines of src until want jobs were added or the list ends. Returns
 * the number added, or CRAWL_EINPUT / CRAWL_ENOMEM. */
static long read_lines(struct urllist *l, struct crawl *c, struct source *src, size_t want)
{
    ssize_t n;
    long added = 0;
    errno = 0;
    while ((size_t)added < want && (n = getline(&l->buf, &l->buf_cap, src->f)) >= 0) {
        char *s = l->buf;
        size_t len = (size_t)n;
        src->line++;
        if (src->line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
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
        int rc = add_line(c, s, len, src->name, src->line, l->err);
        if (rc < 0)
            return rc;
        l->bad += rc;
        added++;
    }
    if ((size_t)added < want) {
        src->done = 1;
        if (ferror(src->f))
            return CRAWL_EINPUT;
    }
    return added;
}

struct urllist *urllist_new(FILE *err)
{
    struct urllist *l = calloc(1, sizeof *l);
    if (l)
        l->err = err;
    return l;
}

static struct source *add_source(struct urllist *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct source *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    struct source *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    return s;
}

int urllist_add_file(struct urllist *l, FILE *f, const char *name, int close_it)
{
    struct source *s = add_source(l);
    if (!s)
        return CRAWL_ENOMEM;
    s->f = f;
    s->name = name;
    s->close_it = close_it;
    return 0;
}

int urllist_add_url(struct urllist *l, const char *url, long argn)
{
    struct source *s = add_source(l);
    if (!s)
        return CRAWL_ENOMEM;
    s->name = url;
    s->line = argn;
    return 0;
}

int urllist_input(struct crawl *c, size_t want, void *data)
{
    struct urllist *l = data;
    while (want && l->cur < l->n) {
        struct source *src = &l->v[l->cur];
        long rc;
        if (!src->f) {
            rc = add_line(c, src->name, strlen(src->name), "argument", src->line, l->err);
            if (rc > 0)
                l->bad++;
            rc = rc < 0 ? rc : 1;
            src->done = 1;
        } else {
            rc = read_lines(l, c, src, want);
            if (rc == CRAWL_EINPUT)
                fprintf(l->err, "crawl: %s: %s\n", src->name, strerror(errno));
        }
        if (src->done) {
            if (src->f && src->close_it)
                fclose(src->f);
            src->f = NULL;
            l->cur++;
        }
        if (rc < 0) {
            l->cur = l->n;
            return (int)rc;
        }
        want -= (size_t)rc < want ? (size_t)rc : want;
    }
    return l->cur < l->n;
}

int urllist_bad(const struct urllist *l)
{
    return l->bad;
}

void urllist_free(struct urllist *l)
{
    if (!l)
        return;
    for (size_t i = l->cur; i < l->n; i++)
        if (l->v[i].f && l->v[i].close_it)
            fclose(l->v[i].f);
    free(l->v);
    free(l->buf);
    free(l);
}

int urllist_read(struct crawl *c, FILE *f, const char *name, FILE *err)
{
    struct urllist l = { .err = err };
    struct source src = { .f = f, .name = name };
    long rc;
    while ((rc = read_lines(&l, c, &src, 4096)) > 0 && !src.done)
        ;
    free(l.buf);
    return rc < 0 ? (int)rc : l.bad;
}

int urllist_add_arg(struct crawl *c, const char *url, long argn, FILE *err)
{
    return add_line(c, url, strlen(url), "argument", argn, err);
}

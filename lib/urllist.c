/* urllist.c: URL lists. Every line that could be meant as a URL ends as a
 * job, so that no line is silently dropped: a bad one becomes a failed job
 * with a message naming the file and line. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "urllist.h"
#include "vec.h"

/* The length of a valid UTF-8 sequence at s within len bytes, or 0. */
static size_t utf8_at(const char *s, size_t len)
{
    unsigned char tmp[5] = {0};
    memcpy(tmp, s, len < 4 ? len : 4);
    return json_utf8_len(tmp);
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
    int stream;             /* a pipe or terminal: read with read(2) as lines come */
    char *sbuf;             /* a stream's bytes not yet taken as lines */
    size_t slen, scap;
};

/* How long a stream is waited on before the reader hands control back. */
#define STREAM_WAIT_MS 100

struct urllist {
    struct source *v;
    size_t n, cap, cur;     /* cur: the source being read */
    char *buf;              /* getline's */
    size_t buf_cap;
    FILE *err;
    int bad;                /* bad lines so far */
};

/* Takes one raw line (n bytes at s, its newline included or not) of src.
 * Returns 1 when it became a job, 0 when it was blank or a comment, or
 * CRAWL_ENOMEM. */
static int take_line(struct urllist *l, struct crawl *c, struct source *src, char *s,
                     size_t len)
{
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
        return 0;
    int rc = add_line(c, s, len, src->name, src->line, l->err);
    if (rc < 0)
        return rc;
    l->bad += rc;
    return 1;
}

/* Reads lines of src until want jobs were added or the list ends. Returns
 * the number added, or CRAWL_EINPUT / CRAWL_ENOMEM. */
static long read_lines(struct urllist *l, struct crawl *c, struct source *src, size_t want)
{
    ssize_t n;
    long added = 0;
    errno = 0;
    while ((size_t)added < want && (n = getline(&l->buf, &l->buf_cap, src->f)) >= 0) {
        int rc = take_line(l, c, src, l->buf, (size_t)n);
        if (rc < 0)
            return rc;
        added += rc;
    }
    if ((size_t)added < want) {
        src->done = 1;
        if (ferror(src->f))
            return CRAWL_EINPUT;
    }
    return added;
}

/* Reads what a stream has, as lines, until want jobs were added; waits at
 * most STREAM_WAIT_MS for more. Returns the number added, or CRAWL_EINPUT /
 * CRAWL_ENOMEM. Stdio is not used on a stream, so that a poll() tells the
 * truth about what is there. */
static long read_stream(struct urllist *l, struct crawl *c, struct source *src, size_t want,
                        int buffered_only)
{
    int fd = fileno(src->f);
    long added = 0;
    for (;;) {
        char *nl;
        while ((size_t)added < want && src->slen && (nl = memchr(src->sbuf, '\n', src->slen))) {
            size_t n = (size_t)(nl - src->sbuf) + 1;
            int rc = take_line(l, c, src, src->sbuf, n);
            memmove(src->sbuf, src->sbuf + n, src->slen - n);
            src->slen -= n;
            if (rc < 0)
                return rc;
            added += rc;
        }
        if ((size_t)added >= want || buffered_only)
            return added;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int pr = poll(&p, 1, added ? 0 : STREAM_WAIT_MS);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            return added;
        if (vec_reserve(&src->sbuf, &src->scap, src->slen + 4096, 1, 8192) != 0)
            return CRAWL_ENOMEM;
        ssize_t r = pr < 0 ? -1 : read(fd, src->sbuf + src->slen, src->scap - src->slen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            src->done = 1;
            return CRAWL_EINPUT;
        }
        if (r == 0) {
            /* The end: a last line without its newline is a line too. */
            if (src->slen) {
                int rc = take_line(l, c, src, src->sbuf, src->slen);
                src->slen = 0;
                if (rc < 0)
                    return rc;
                added += rc;
            }
            src->done = 1;
            return added;
        }
        src->slen += (size_t)r;
    }
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
    if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v, 8) != 0)
        return NULL;
    struct source *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    return s;
}

int urllist_add_file(struct urllist *l, FILE *f, const char *name, int close_it)
{
    struct source *s = add_source(l);
    struct stat st;
    if (!s)
        return CRAWL_ENOMEM;
    s->f = f;
    s->name = name;
    s->close_it = close_it;
    s->stream = fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
    return 0;
}

int urllist_streams(const struct urllist *l)
{
    for (size_t i = l->cur; i < l->n; i++)
        if (l->v[i].stream)
            return 1;
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
        } else if (src->stream && crawl_is_cancelled(c)) {
            /* The lines already read get their rows; lines still to come
             * from a pipe were never in the crawl. */
            rc = read_stream(l, c, src, (size_t)-1, 1);
            src->done = 1;
        } else {
            rc = src->stream ? read_stream(l, c, src, want, 0) : read_lines(l, c, src, want);
            if (rc == CRAWL_EINPUT)
                fprintf(l->err, "crawl: %s: %s\n", src->name, strerror(errno));
            if (src->stream && !src->done) {
                /* Nothing more for now: the caller comes back. */
                return 1;
            }
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
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].sbuf);
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

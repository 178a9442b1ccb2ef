/* urllist.c: URL lists. Every line that could be meant as a URL is handed
 * to the taker, so that no line is silently dropped: a bad one is handed
 * on too, as bad, with a message naming the file and line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "io.h"
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

/* Of a line, this many bytes are kept: a URL of URLLIST_MAX_URL with room
 * for a byte order mark, a CR and white space around it. The rest of a
 * longer line is read and dropped a chunk at a time, so that a list that
 * never ends a line (/dev/zero, `yes | tr -d '\n'`) costs one buffer, not
 * the line. */
#define LINE_KEEP (URLLIST_MAX_URL + 16)

/* How much is read at a time, and what a source's buffer holds besides a
 * kept line. */
#define READ_CHUNK 65536

/* One source of URLs: an open list, or a URL given as an argument. */
struct source {
    FILE *f;                /* NULL for an argument */
    int close_it;
    const char *name;       /* the list's name, or the URL */
    long line;              /* lines read, or the argument's number */
    int done;
    int stream;             /* a pipe or terminal: read with read(2) as lines come */
    char *buf;              /* LINE_KEEP + READ_CHUNK bytes, once read from */
    size_t off, len;        /* buf[off, len): read and not yet taken as lines */
    int skipping;           /* buf[0, LINE_KEEP) is the start of a line too long,
                             * whose rest is being dropped up to its newline */
    int skip_text;          /* what was dropped held a byte that is not white space */
};

/* How long a stream's bytes are read before the reader hands control
 * back, and how long one is waited on when it cannot be woken. */
#define STREAM_WAIT_MS 100

struct urllist {
    struct source *v;
    size_t n, cap, cur;     /* cur: the source being read */
    FILE *err;
    int bad;                /* bad lines so far */
    const struct urllist_taker *t;  /* the taker of the urllist_next under */
    void *data;                     /* way, and its data */
    int wake[2];            /* with a stream among the sources: written by
                             * urllist_wake, read away by the read it woke;
                             * -1 when none could be made */
};

/* Hands one trimmed line to the taker; a line with a NUL byte or too long
 * is bad before the taker even looks at it. too_long: the line goes on
 * past the bytes kept of it (s is its start), so it is too long whatever
 * they hold. Returns what the taker did (0, 1: bad) or its negative code. */
static int add_line(struct urllist *l, const char *s, size_t len, const char *name,
                    long line, int too_long)
{
    char shown[URLLIST_MAX_URL + 16];
    const char *why = NULL;

    if (too_long || len > URLLIST_MAX_URL)
        why = "line longer than 8192 bytes";
    else if (memchr(s, '\0', len))
        why = "contains a NUL byte";
    /* A line refused here is kept short, in its row as in its message. */
    const char *refused = why;
    urllist_printable(s, len, shown, refused ? 256 : sizeof shown);
    int rc = l->t->take(l->data, shown, name, line, &why);
    if (rc == 1) {
        char brief[256];
        fprintf(l->err, "%s:%ld: %s: %s\n", name, line, why,
                refused ? shown : urllist_printable(s, len, brief, sizeof brief));
    }
    return rc;
}

/* Whether n bytes at s hold one that is not white space. */
static int has_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_space(s[i]))
            return 1;
    return 0;
}

/* Takes one line of src: its first len bytes (at most LINE_KEEP, without
 * its newline) at s; more_text: what followed them held text, so the line
 * cannot be trimmed to something short enough. Returns 1 when it was handed
 * on, 0 when it was blank or a comment, or the taker's negative code. */
static int take_line(struct urllist *l, struct source *src, char *s, size_t len,
                     int more_text)
{
    src->line++;
    if (src->line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
        s += 3;
        len -= 3;
    }
    while (len && is_space(*s)) {
        s++;
        len--;
    }
    while (!more_text && len && is_space(s[len - 1]))
        len--;
    if ((len == 0 && !more_text) || (len && *s == '#'))
        return 0;
    int rc = add_line(l, s, len, src->name, src->line, more_text);
    if (rc < 0)
        return rc;
    l->bad += rc;
    return 1;
}

/* Takes the whole lines buffered in src until want were handed on; a line
 * that goes past LINE_KEEP without its newline starts being skipped.
 * Returns the number handed on, or the taker's negative code. */
static long take_buffered(struct urllist *l, struct source *src, size_t want)
{
    long added = 0;
    while ((size_t)added < want && src->off < src->len) {
        char *p = src->buf + src->off;
        size_t n = src->len - src->off;
        char *nl = memchr(p, '\n', n);
        size_t k = nl ? (size_t)(nl - p) : n;       /* this line's bytes here */
        int rc;
        if (src->skipping) {
            src->skip_text = src->skip_text || has_text(p, k);
            if (!nl) {
                src->off = src->len = LINE_KEEP;    /* dropped; the kept start stays */
                break;
            }
            src->off += k + 1;
            src->skipping = 0;
            rc = take_line(l, src, src->buf, LINE_KEEP, src->skip_text);
        } else if (nl) {
            src->off += k + 1;
            rc = take_line(l, src, p, k < LINE_KEEP ? k : LINE_KEEP,
                           k > LINE_KEEP && has_text(p + LINE_KEEP, k - LINE_KEEP));
        } else {
            if (k > LINE_KEEP) {
                /* Too long already: keep its start, drop what came after. */
                memmove(src->buf, p, LINE_KEEP);
                src->skipping = 1;
                src->skip_text = has_text(p + LINE_KEEP, k - LINE_KEEP);
                src->off = src->len = LINE_KEEP;
            }
            break;
        }
        if (rc < 0)
            return rc;
        added += rc;
    }
    return added;
}

/* Makes room in src's buffer for the next read, dropping what was taken.
 * Returns the room (at least READ_CHUNK), or 0 when out of memory. */
static size_t make_room(struct source *src)
{
    if (!src->buf && !(src->buf = malloc(LINE_KEEP + READ_CHUNK)))
        return 0;
    if (!src->skipping && src->off) {
        memmove(src->buf, src->buf + src->off, src->len - src->off);
        src->len -= src->off;
        src->off = 0;
    }
    return LINE_KEEP + READ_CHUNK - src->len;
}

/* At the end of src: a last line without its newline is a line too.
 * Returns 1 when it was handed on, 0 when there was none, or the taker's
 * negative code. */
static int take_last(struct urllist *l, struct source *src)
{
    int rc = 0;
    if (src->skipping)
        rc = take_line(l, src, src->buf, LINE_KEEP, src->skip_text);
    else if (src->off < src->len)
        rc = take_line(l, src, src->buf + src->off, src->len - src->off, 0);
    src->skipping = 0;
    src->off = src->len = 0;
    src->done = 1;
    return rc;
}

/* Reads lines of src until want were handed on or the list ends. Returns
 * the number handed on, or CRAWL_EINPUT (errno set) / CRAWL_ENOMEM / the
 * taker's negative code. */
static long read_lines(struct urllist *l, struct source *src, size_t want)
{
    long added = 0;
    for (;;) {
        long rc = take_buffered(l, src, want - (size_t)added);
        if (rc < 0)
            return rc;
        added += rc;
        if ((size_t)added >= want)
            return added;
        size_t room = make_room(src);
        if (room == 0)
            return CRAWL_ENOMEM;
        errno = 0;
        size_t r = fread(src->buf + src->len, 1, room, src->f);
        src->len += r;
        if (r == 0 && ferror(src->f)) {
            src->done = 1;
            return CRAWL_EINPUT;
        }
        if (r == 0) {
            rc = take_last(l, src);
            return rc < 0 ? rc : added + rc;
        }
    }
}

/* Whether the taker says the reading is cancelled. */
static int cancelled(const struct urllist *l)
{
    return l->t->cancelled && l->t->cancelled(l->data);
}

/* Reads what a stream has, as lines, until want were handed on; with
 * nothing read yet, waits until it has more or urllist_wake is called
 * (STREAM_WAIT_MS at most without a wake-up pipe), and reads for no longer
 * than STREAM_WAIT_MS, so that the caller gets its turn (and the cancel,
 * checked between reads, is seen) however fast the bytes come without a
 * newline. Returns the number handed on, or CRAWL_EINPUT / CRAWL_ENOMEM /
 * the taker's code. Stdio is not used on a stream, so that a poll() tells
 * the truth about what is there. */
static long read_stream(struct urllist *l, struct source *src, size_t want, int buffered_only)
{
    int fd = fileno(src->f);
    long added = 0;
    double until = clock_now() + STREAM_WAIT_MS / 1000.0;
    for (;;) {
        long rc = take_buffered(l, src, want - (size_t)added);
        if (rc < 0)
            return rc;
        added += rc;
        if ((size_t)added >= want || buffered_only)
            return added;
        double left = until - clock_now();
        if (left <= 0 || cancelled(l))
            return added;
        /* Woken (a cancel, the run's end), the caller sees why now; a
         * later read (the rows of what is left) waits again. */
        int pr = io_wait(fd, l->wake, added ? 0 : l->wake[0] >= 0 ? -1 : (int)(left * 1000) + 1);
        if (pr == -EINTR)
            continue;
        if (pr == 0)
            return added;
        if (pr < 0) {
            src->done = 1;
            return CRAWL_EINPUT;
        }
        size_t room = make_room(src);
        if (room == 0)
            return CRAWL_ENOMEM;
        ssize_t r = read(fd, src->buf + src->len, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            src->done = 1;
            return CRAWL_EINPUT;
        }
        if (r == 0) {
            rc = take_last(l, src);
            return rc < 0 ? rc : added + rc;
        }
        src->len += (size_t)r;
    }
}

struct urllist *urllist_new(FILE *err)
{
    struct urllist *l = calloc(1, sizeof *l);
    if (l) {
        l->err = err;
        l->wake[0] = l->wake[1] = -1;
    }
    return l;
}

void urllist_wake(struct urllist *l)
{
    io_wake(l->wake);
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
    /* Without the pipe, a stream is waited on STREAM_WAIT_MS at a time. */
    if (s->stream && l->wake[0] < 0)
        (void)io_wake_pipe(l->wake);
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

int urllist_next(struct urllist *l, size_t want, const struct urllist_taker *t, void *data)
{
    l->t = t;
    l->data = data;
    while (want && l->cur < l->n) {
        struct source *src = &l->v[l->cur];
        long rc;
        if (!src->f) {
            rc = add_line(l, src->name, strlen(src->name), "argument", src->line, 0);
            if (rc > 0)
                l->bad++;
            rc = rc < 0 ? rc : 1;
            src->done = 1;
        } else if (src->stream && cancelled(l)) {
            /* The lines already read are taken; lines still to come
             * from a pipe were never in the crawl. */
            rc = read_stream(l, src, (size_t)-1, 1);
            src->done = 1;
        } else {
            rc = src->stream ? read_stream(l, src, want, 0) : read_lines(l, src, want);
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
            free(src->buf);
            src->buf = NULL;
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
        free(l->v[i].buf);
    io_wake_close(l->wake);
    free(l->v);
    free(l);
}

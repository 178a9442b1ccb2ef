/* report.c: output. Nothing here decides what a result means; it only
 * prints what the core recorded, in the order asked for, as the core hands
 * each finished job in. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "html.h"
#include "json.h"
#include "reorder.h"
#include "report.h"
#include "spool.h"

/* Python's str.format centring: the left side gets the smaller half. */
static void centre(char *out, size_t n, const char *s, int width)
{
    int len = (int)strlen(s);
    int pad = width > len ? width - len : 0;
    int left = pad / 2;
    snprintf(out, n, "%*s%s%*s", left, "", s, pad - left, "");
}

/* The table row into b, without its newline. */
static void table_row(struct strbuf *b, const struct crawl_job *j)
{
    char num[32], cell[48];
    if (j->res.fail == CRAWL_FAIL_NONE) {
        snprintf(num, sizeof num, "%lld", (long long)j->res.length);
        centre(cell, sizeof cell, num, 7);
        sb_printf(b, "Length: %s URL: %s", cell, j->url);
    } else {
        centre(cell, sizeof cell, "error", 7);
        sb_printf(b, "Length: %s URL: %s (%s)", cell, j->url,
                  j->res.error ? j->res.error : job_fail_name(j->res.fail));
    }
    /* --extract values follow the URL as name=value, one per value. */
    for (size_t i = 0; i < j->res.nextracts; i++)
        sb_printf(b, " %s=%s", j->res.extracts[i].name, j->res.extracts[i].value);
}

char *report_row(const struct crawl_job *j, char *buf, size_t n)
{
    struct strbuf b = {0};
    table_row(&b, j);
    snprintf(buf, n, "%s", b.data ? b.data : "");
    sb_free(&b);
    return buf;
}

void report_use_time(FILE *out, double seconds)
{
    fprintf(out, "Use time: %.2fs\n", seconds);
}

static void put_sb(FILE *out, struct strbuf *b)
{
    if (b->len)
        fwrite(b->data, 1, b->len, out);
    sb_free(b);
}

void report_json_str(FILE *out, const char *s)
{
    struct strbuf b = {0};
    json_string_sb(&b, s);
    put_sb(out, &b);
}

void report_csv_str(FILE *out, const char *s)
{
    struct strbuf b = {0};
    json_csv_sb(&b, s);
    put_sb(out, &b);
}

/* One column of a row: the same columns, in the same order, make the JSON
 * lines and the CSV (the schema is in README and crawl(1)). A column that
 * does not apply to a row is null in JSON and an empty cell in CSV. */
struct cell {
    enum { CELL_NULL, CELL_NUM, CELL_STR, CELL_JSON } kind;
    const char *s;              /* CELL_STR, CELL_JSON */
    char num[40];               /* CELL_NUM, NUL-terminated */
    unsigned char nlen;         /* CELL_NUM: its length */
};

static const char *const columns[] = {
    "url", "source", "line", "depth", "final_url", "status", "length", "wire_bytes",
    "redirects", "attempts", "worker", "start_s", "time_dns_s", "time_connect_s",
    "time_tls_s", "time_ttfb_s", "time_total_s", "links", "fail", "error", "extract",
    "parent", "digest", "duplicate_of", "not_modified",
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])

static void c_str(struct cell *c, const char *s)
{
    c->kind = s ? CELL_STR : CELL_NULL;
    c->s = s;
}

/* The decimal digits of v, written backwards from end. Returns where they
 * start. Every row has a dozen numbers: printf's parsing of its format for
 * each was a tenth of a row's cost. */
static char *digits(char *end, unsigned long long v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

static void num_text(struct cell *c, const char *p, size_t n)
{
    memmove(c->num, p, n);
    c->num[n] = '\0';
    c->nlen = (unsigned char)n;
}

static void c_int(struct cell *c, int apply, long long v)
{
    c->kind = apply ? CELL_NUM : CELL_NULL;
    if (!apply)
        return;
    char *end = c->num + sizeof c->num, *p;
    p = digits(end, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
    if (v < 0)
        *--p = '-';
    num_text(c, p, (size_t)(end - p));
}

/* Seconds, to the microsecond libcurl measures in: what "%.6f" writes.
 * Whole microseconds are v * 1e6 rounded: below a million seconds that
 * product is within 1e-4 of the exact one, so it rounds as printf does
 * unless its fraction lies within 1e-3 of a half; such a value, and one
 * negative or larger, goes through printf. */
static void c_sec(struct cell *c, int apply, double v)
{
    c->kind = apply ? CELL_NUM : CELL_NULL;
    if (!apply)
        return;
    double us = v * 1e6, whole = floor(us);
    if (!(v >= 0 && v < 1e6) || fabs(us - whole - 0.5) < 1e-3) {
        snprintf(c->num, sizeof c->num, "%.6f", v);
        c->nlen = (unsigned char)strlen(c->num);
        return;
    }
    unsigned long long u = (unsigned long long)(us - whole >= 0.5 ? whole + 1 : whole);
    char *end = c->num + sizeof c->num, *p = end;
    unsigned long long frac = u % 1000000;
    for (int i = 0; i < 6; i++, frac /= 10)
        *--p = (char)('0' + frac % 10);
    *--p = '.';
    p = digits(p, u / 1000000);
    num_text(c, p, (size_t)(end - p));
}

/* Milliseconds, to the microsecond: the summary's percentiles. */
static void c_ms(struct cell *c, int apply, double ms)
{
    c->kind = apply ? CELL_NUM : CELL_NULL;
    snprintf(c->num, sizeof c->num, "%.3f", ms);
    c->nlen = (unsigned char)strlen(c->num);
}

/* The extracts as one JSON object, {"name": [values...], ...}, grouped by
 * rule as they come. */
static void extract_json(struct strbuf *b, const struct crawl_result *r)
{
    sb_addc(b, '{');
    for (size_t i = 0; i < r->nextracts; i++) {
        int first = i == 0 || strcmp(r->extracts[i - 1].name, r->extracts[i].name) != 0;
        int last = i + 1 == r->nextracts ||
                   strcmp(r->extracts[i + 1].name, r->extracts[i].name) != 0;
        if (first) {
            if (i)
                sb_addc(b, ',');
            json_string_sb(b, r->extracts[i].name);
            sb_adds(b, ":[");
        } else {
            sb_addc(b, ',');
        }
        json_string_sb(b, r->extracts[i].value);
        if (last)
            sb_addc(b, ']');
    }
    sb_addc(b, '}');
}

/* Fills a row's cells; ext receives the extract object when it applies. */
static void row_cells(struct cell *c, const struct crawl_job *j, unsigned cols,
                      struct strbuf *ext)
{
    const struct crawl_result *r = &j->res;
    int ran = r->attempts > 0;                  /* fetched at least once */
    int listed = j->line > 0;                   /* from a list, not a link */
    /* Pages are parsed only when they arrived whole, with a 2xx status,
     * and were not a duplicate at their first's own URL (fetch.c). */
    int parsed = ran && !r->fail && r->status >= 200 && r->status < 300 &&
                 !(r->duplicate_of && r->final_url && strcmp(r->duplicate_of, r->final_url) == 0);
    /* libcurl leaves a phase it did not reach at 0: a reused connection
     * has no connect and plain http no TLS; no response, no first byte. */
    c_str(&c[0], j->url);
    c_str(&c[1], listed ? j->source : NULL);
    c_int(&c[2], listed, j->line);
    c_int(&c[3], 1, j->depth);
    c_str(&c[4], r->final_url);
    c_int(&c[5], r->status > 0, r->status);
    /* A 304 brought no body: the page's length is in its earlier row. */
    c_int(&c[6], !r->not_modified, (long long)r->length);
    c_int(&c[7], 1, (long long)r->wire_bytes);
    c_int(&c[8], 1, r->redirects);
    c_int(&c[9], 1, r->attempts);
    c_int(&c[10], ran, r->worker);
    c_sec(&c[11], ran, r->start);
    c_sec(&c[12], ran && r->time_dns > 0, r->time_dns);
    c_sec(&c[13], ran && r->time_connect > 0, r->time_connect);
    c_sec(&c[14], ran && r->time_tls > 0, r->time_tls);
    c_sec(&c[15], ran && r->time_ttfb > 0, r->time_ttfb);
    c_sec(&c[16], ran, r->time_total);
    c_int(&c[17], (cols & REPORT_LINKS) && parsed, (long long)r->nlinks);
    c_str(&c[18], r->fail ? job_fail_name(r->fail) : NULL);
    c_str(&c[19], r->fail && !r->error ? job_fail_name(r->fail) : r->error);
    c[20].kind = CELL_NULL;
    if ((cols & REPORT_EXTRACT) && parsed) {
        extract_json(ext, r);
        c[20].kind = CELL_JSON;
        c[20].s = ext->data ? ext->data : "{}";
    }
    c_str(&c[21], j->parent);
    c_str(&c[22], r->digest);
    c_str(&c[23], r->duplicate_of);
    c[24].kind = r->status > 0 ? CELL_JSON : CELL_NULL;
    c[24].s = r->not_modified ? "true" : "false";
}

/* The JSON lines' keys, each with its quotes and colon, and the comma
 * before every key but the first: made once, copied as they are. */
static struct { char text[24]; unsigned char len; } json_keys[NCOLUMNS];
static pthread_once_t json_keys_once = PTHREAD_ONCE_INIT;

static void json_keys_make(void)
{
    for (size_t k = 0; k < NCOLUMNS; k++) {
        int n = snprintf(json_keys[k].text, sizeof json_keys[k].text, "%s\"%s\":",
                         k ? "," : "{", columns[k]);
        json_keys[k].len = (unsigned char)n;
    }
}

static void json_row(struct strbuf *b, const struct crawl_job *j, unsigned cols)
{
    struct cell c[NCOLUMNS];
    struct strbuf ext = {0};
    row_cells(c, j, cols, &ext);
    pthread_once(&json_keys_once, json_keys_make);
    for (size_t k = 0; k < NCOLUMNS; k++) {
        sb_add(b, json_keys[k].text, json_keys[k].len);
        switch (c[k].kind) {
        case CELL_NULL: sb_add(b, "null", 4); break;
        case CELL_NUM:  sb_add(b, c[k].num, c[k].nlen); break;
        case CELL_STR:  json_string_sb(b, c[k].s); break;
        case CELL_JSON: sb_adds(b, c[k].s); break;
        }
    }
    sb_add(b, "}\n", 2);
    if (ext.nomem)
        b->nomem = 1;
    sb_free(&ext);
}

static void csv_header(struct strbuf *b)
{
    for (size_t k = 0; k < NCOLUMNS; k++)
        sb_printf(b, "%s%s", k ? "," : "", columns[k]);
    sb_addc(b, '\n');
}

static void csv_row(struct strbuf *b, const struct crawl_job *j, unsigned cols)
{
    struct cell c[NCOLUMNS];
    struct strbuf ext = {0};
    row_cells(c, j, cols, &ext);
    for (size_t k = 0; k < NCOLUMNS; k++) {
        if (k)
            sb_addc(b, ',');
        if (c[k].kind == CELL_NUM)
            sb_add(b, c[k].num, c[k].nlen);
        else if (c[k].kind != CELL_NULL)
            json_csv_sb(b, c[k].s);
    }
    sb_addc(b, '\n');
    if (ext.nomem)
        b->nomem = 1;
    sb_free(&ext);
}

void report_format(struct strbuf *b, const struct crawl_job *j, enum crawl_format fmt,
                   unsigned cols)
{
    switch (fmt) {
    case CRAWL_FMT_TABLE:
        table_row(b, j);
        sb_addc(b, '\n');
        break;
    case CRAWL_FMT_JSONL:
        json_row(b, j, cols);
        break;
    case CRAWL_FMT_CSV:
        csv_row(b, j, cols);
        break;
    }
}

struct report {
    enum crawl_format fmt;
    enum crawl_order ord;
    int quiet;
    unsigned cols;              /* REPORT_LINKS, REPORT_EXTRACT */
    int summary_fd;             /* CSV's summary line; -1: none */
    pthread_mutex_t lock;       /* guards the order and the held rows */
    struct sink *sink;
    struct reorder *reorder;    /* input order: rows wait for their turn */
    struct spool *table;        /* the table's rows, until "Use time" is known */
    int err;                    /* first error of holding rows (the sink has its own) */
};

static int place(const char *row, size_t n, void *data);

/* report_new, for a file that holds offset bytes of an earlier run's rows
 * when commit is set: the CSV header is written only into an empty one. */
static int report_make(struct report **out, int fd, enum crawl_format fmt, enum crawl_order ord,
                       int quiet, unsigned cols, int summary_fd, int flush_ms,
                       sink_error_fn on_error, void *data,
                       uint64_t offset, sink_commit_fn commit, void *cdata)
{
    struct report *r = calloc(1, sizeof *r);
    int rc = -ENOMEM;
    if (!r)
        return -ENOMEM;
    r->fmt = fmt;
    r->ord = ord;
    r->quiet = quiet;
    r->cols = cols;
    r->summary_fd = summary_fd;
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return -ENOMEM;
    }
    /* Table rows wait for the end anyway: no need to write them early. */
    if ((rc = sink_new(&r->sink, fd, fmt == CRAWL_FMT_TABLE || quiet ? 0 : flush_ms,
                       on_error, data)) != 0)
        goto err;
    if (commit)
        sink_set_commit(r->sink, offset, commit, cdata);
    rc = -ENOMEM;
    if (!quiet && ord == CRAWL_ORDER_INPUT &&
        !(r->reorder = reorder_new(REPORT_HOLD_BYTES, place, r)))
        goto err;
    if (!quiet && fmt == CRAWL_FMT_TABLE && !(r->table = spool_new(REPORT_HOLD_BYTES)))
        goto err;
    if (!quiet && fmt == CRAWL_FMT_CSV && offset == 0) {
        struct strbuf h = {0};
        csv_header(&h);
        rc = h.nomem ? -ENOMEM : sink_put(r->sink, h.data, h.len);
        sb_free(&h);
        if (rc != 0)
            goto err;
    }
    *out = r;
    return 0;
err:
    report_free(r);
    return rc;
}

int report_new(struct report **out, int fd, enum crawl_format fmt, enum crawl_order ord,
               int quiet, unsigned cols, int summary_fd, int flush_ms,
               sink_error_fn on_error, void *data)
{
    return report_make(out, fd, fmt, ord, quiet, cols, summary_fd, flush_ms, on_error, data,
                       0, NULL, NULL);
}

int report_new_marked(struct report **out, int fd, enum crawl_format fmt, unsigned cols,
                      int summary_fd, int flush_ms, sink_error_fn on_error, void *data,
                      uint64_t offset, sink_commit_fn commit, void *cdata)
{
    if (fmt == CRAWL_FMT_TABLE || flush_ms <= 0)
        return -EINVAL;
    return report_make(out, fd, fmt, CRAWL_ORDER_COMPLETION, 0, cols, summary_fd, flush_ms,
                       on_error, data, offset, commit, cdata);
}

/* reorder_emit_fn, and the direct path: a row whose turn has come goes to
 * the table's spool or out. */
static int place(const char *row, size_t n, void *data)
{
    struct report *r = data;
    if (r->table) {
        int rc = spool_add(r->table, row, n, NULL);
        if (rc && !r->err)
            r->err = rc;
        return rc;
    }
    return sink_put(r->sink, row, n);
}

int report_job(struct report *r, const struct crawl_job *j)
{
    if (r->quiet)
        return sink_error(r->sink);
    /* Rows are about half a KiB: built on the stack, a row costs no
     * allocation (per-thread heaps kept a pool model's freed rows: 7 KiB
     * a thread). */
    char row[2048];
    struct strbuf b;
    int rc;
    sb_init_lent(&b, row, sizeof row);
    report_format(&b, j, r->fmt, r->cols);
    pthread_mutex_lock(&r->lock);
    if (r->err)
        rc = r->err;
    else if (b.nomem)
        rc = r->err = -ENOMEM;
    else if (r->reorder)
        rc = reorder_put(r->reorder, j->seq, b.data, b.len);
    else if (r->table)
        rc = place(b.data, b.len, r);
    else
        rc = sink_put_mark(r->sink, b.data, b.len, j->mark);
    if (rc && !r->err)
        r->err = rc;
    pthread_mutex_unlock(&r->lock);
    sb_free(&b);
    return rc;
}

static int put_to_sink(const char *p, size_t n, void *data)
{
    return sink_put(data, p, n);
}

/* The summary's fields, in order: the JSON summary object after its
 * "summary": true, and the CSV summary (-q) under its own header. */
static const char *const sum_columns[] = {
    "mode", "urls", "ok", "failed", "retries", "queued_left", "queue_dropped", "wall_s", "conns",
    "reuse",
    "concurrency", "threads", "robots_fetched", "robots_blocked", "options",
    "p50_ms", "p90_ms", "p99_ms", "max_ms",
    "ttfb_p50_ms", "ttfb_p90_ms", "ttfb_p99_ms", "ttfb_max_ms",
    "dns_lookups", "dns_p50_ms", "dns_p99_ms",
};
#define NSUM (sizeof sum_columns / sizeof sum_columns[0])

/* Fills the summary's cells; desc (size n) holds the options' text. */
static void sum_cells(struct cell *c, struct crawl *cr, char *desc, size_t n)
{
    struct crawl_summary s;
    crawl_get_summary(cr, &s);
    c_str(&c[0], s.mode);
    c_int(&c[1], 1, (long long)s.rows);
    c_int(&c[2], 1, (long long)(s.rows - s.failed));
    c_int(&c[3], 1, (long long)s.failed);
    c_int(&c[4], 1, (long long)s.retries);
    c_int(&c[5], 1, (long long)s.queued_left);
    c_int(&c[6], 1, (long long)s.queue_dropped);
    c_sec(&c[7], 1, s.wall);
    c_int(&c[8], 1, (long long)s.conns);
    c_str(&c[9], s.reuse ? "on" : "off");
    c_int(&c[10], 1, s.limit);
    c_int(&c[11], 1, s.threads);
    c_int(&c[12], 1, (long long)s.robots_fetched);
    c_int(&c[13], 1, (long long)s.robots_blocked);
    c_str(&c[14], crawl_describe(cr, desc, n));
    /* Percentiles of the fetched URLs' times: the whole transfer, and until
     * the first byte of the response; null when none was fetched. */
    static const double qs[] = { 0.50, 0.90, 0.99, 1 };
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++) {
            struct cell *x = &c[15 + 4 * t + k];
            double ms = crawl_latency_ms(cr, t ? CRAWL_TIME_TTFB : CRAWL_TIME_TOTAL, qs[k]);
            c_ms(x, s.rows > s.failed, ms);
        }
    /* The names looked up, and how long a look-up took (time_dns). */
    c_int(&c[23], 1, (long long)s.dns_lookups);
    for (int k = 0; k < 2; k++) {
        c_ms(&c[24 + k], s.dns_lookups > 0,
             crawl_latency_ms(cr, CRAWL_TIME_DNS, k ? 0.99 : 0.50));
    }
}

static void json_summary(struct strbuf *b, struct crawl *cr)
{
    char desc[512];
    struct cell c[NSUM];
    sum_cells(c, cr, desc, sizeof desc);
    sb_adds(b, "{\"summary\":true");
    for (size_t k = 0; k < NSUM; k++) {
        sb_printf(b, ",\"%s\":", sum_columns[k]);
        if (c[k].kind == CELL_NUM)
            sb_add(b, c[k].num, c[k].nlen);
        else
            json_string_sb(b, c[k].kind == CELL_STR ? c[k].s : NULL);
    }
    sb_adds(b, "}\n");
}

static void csv_summary(struct strbuf *b, struct crawl *cr)
{
    char desc[512];
    struct cell c[NSUM];
    sum_cells(c, cr, desc, sizeof desc);
    for (size_t k = 0; k < NSUM; k++)
        sb_printf(b, "%s%s", k ? "," : "", sum_columns[k]);
    sb_addc(b, '\n');
    for (size_t k = 0; k < NSUM; k++) {
        if (k)
            sb_addc(b, ',');
        if (c[k].kind == CELL_NUM)
            sb_add(b, c[k].num, c[k].nlen);
        else if (c[k].kind == CELL_STR)
            json_csv_sb(b, c[k].s);
    }
    sb_addc(b, '\n');
}

static void table_summary(struct strbuf *b, struct crawl *c)
{
    char desc[512];
    struct crawl_summary s;
    crawl_get_summary(c, &s);
    sb_printf(b, "Mode: %s; %zu URLs, %zu ok, %zu failed", s.mode, s.rows, s.rows - s.failed,
              s.failed);
    if (s.retries)
        sb_printf(b, ", %zu %s", s.retries, s.retries == 1 ? "retry" : "retries");
    if (s.queued_left)
        sb_printf(b, ", %zu links found and not fetched", s.queued_left);
    if (s.queue_dropped)
        sb_printf(b, ", %zu links dropped past --max-queue", s.queue_dropped);
    sb_printf(b, "; %zu connections", s.conns);
    if (s.dns_lookups)
        sb_printf(b, "; %zu name %s (p50 %.2f ms, p99 %.2f ms)", s.dns_lookups,
                  s.dns_lookups == 1 ? "lookup" : "lookups",
                  crawl_latency_ms(c, CRAWL_TIME_DNS, 0.50), crawl_latency_ms(c, CRAWL_TIME_DNS, 0.99));
    sb_printf(b, "; %s\n", crawl_describe(c, desc, sizeof desc));
}

int report_end(struct report *r, struct crawl *c)
{
    struct strbuf b = {0};
    struct crawl_summary s;
    int rc = 0;
    crawl_get_summary(c, &s);
    pthread_mutex_lock(&r->lock);
    rc = r->err;
    if (rc == 0 && r->reorder && reorder_held(r->reorder))
        rc = -EIO;      /* a row never came: the core broke its promise */
    switch (r->fmt) {
    case CRAWL_FMT_TABLE:
        sb_printf(&b, "Use time: %.2fs\n", s.wall);
        if (!rc)
            rc = sink_put(r->sink, b.data, b.len);
        if (r->quiet)
            break;
        if (!rc && r->table)
            rc = spool_each(r->table, put_to_sink, r->sink);
        sb_reset(&b);
        table_summary(&b, c);
        if (!rc)
            rc = sink_put(r->sink, b.data, b.len);
        break;
    case CRAWL_FMT_JSONL:
        json_summary(&b, c);
        if (!rc)
            rc = sink_put(r->sink, b.data, b.len);
        break;
    case CRAWL_FMT_CSV:
        /* The rows stay one table; the summary goes out of band (stderr),
         * or, with -q, is the output: a CSV of its own. */
        if (r->quiet) {
            csv_summary(&b, c);
            if (!rc)
                rc = sink_put(r->sink, b.data, b.len);
        } else if (r->summary_fd >= 0) {
            table_summary(&b, c);
        }
        break;
    }
    if (b.nomem && !rc)
        rc = -ENOMEM;
    int frc = sink_flush(r->sink);
    if (!rc)
        rc = frc;
    /* After the rows, so that on a terminal it reads as the table's last line. */
    if (r->fmt == CRAWL_FMT_CSV && !r->quiet && r->summary_fd >= 0 && b.len && !b.nomem &&
        rc == 0)
        (void)!write(r->summary_fd, b.data, b.len);
    pthread_mutex_unlock(&r->lock);
    sb_free(&b);
    return rc;
}

void report_emergency_flush(struct report *r)
{
    if (r)
        sink_emergency_flush(r->sink);
}

void report_free(struct report *r)
{
    if (!r)
        return;
    sink_free(r->sink);
    reorder_free(r->reorder);
    spool_free(r->table);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* The output hook: each page's row, as it is final. */
static void row_hook(void *data, struct crawl *c, struct crawl_job *job)
{
    report_job(data, job);
}

void report_attach(struct report *r, struct crawl *c)
{
    static const struct crawl_hook hook = { .row = row_hook };
    static const struct crawl_hook none;
    crawl_hook(c, CRAWL_HOOK_OUTPUT, r ? &hook : &none, r);
}

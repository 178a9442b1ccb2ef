/* report.c: output. Nothing here decides what a result means; it only
 * prints what the core recorded, in the order asked for, as the core hands
 * each finished job in. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fetch.h"
#include "html.h"
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
                  j->res.error ? j->res.error : crawl_fail_name(j->res.fail));
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

void report_json_sb(struct strbuf *b, const char *s)
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
        } else if ((n = crawl_utf8_len(p)) == 0) {
            sb_adds(b, "\\ufffd");
            p++;
        } else {
            sb_add(b, p, n);
            p += n;
        }
    }
    sb_addc(b, '"');
}

void report_csv_sb(struct strbuf *b, const char *s)
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

static void put_sb(FILE *out, struct strbuf *b)
{
    if (b->len)
        fwrite(b->data, 1, b->len, out);
    sb_free(b);
}

void report_json_str(FILE *out, const char *s)
{
    struct strbuf b = {0};
    report_json_sb(&b, s);
    put_sb(out, &b);
}

void report_csv_str(FILE *out, const char *s)
{
    struct strbuf b = {0};
    report_csv_sb(&b, s);
    put_sb(out, &b);
}

static void json_row(struct strbuf *b, const struct crawl_job *j)
{
    const struct crawl_result *r = &j->res;
    sb_adds(b, "{\"url\":");
    report_json_sb(b, j->url);
    sb_adds(b, ",\"final_url\":");
    report_json_sb(b, r->final_url);
    sb_printf(b,
              ",\"status\":%ld,\"length\":%lld,\"wire_bytes\":%lld,\"redirects\":%ld"
              ",\"time_dns\":%.6f,\"time_connect\":%.6f,\"time_tls\":%.6f"
              ",\"time_ttfb\":%.6f,\"time_total\":%.6f,\"start\":%.6f"
              ",\"worker\":%d,\"line\":%ld,\"depth\":%d,\"links\":%zu,\"attempts\":%d"
              ",\"fail\":",
              r->status, (long long)r->length, (long long)r->wire_bytes,
              r->redirects, r->time_dns, r->time_connect, r->time_tls,
              r->time_ttfb, r->time_total, r->start, r->worker, j->line, j->depth,
              r->nlinks, r->attempts);
    report_json_sb(b, r->fail ? crawl_fail_name(r->fail) : NULL);
    sb_adds(b, ",\"error\":");
    report_json_sb(b, r->fail && !r->error ? crawl_fail_name(r->fail) : r->error);
    if (r->nextracts) {
        /* {"name": [values...], ...}: the extracts come grouped by rule. */
        sb_adds(b, ",\"extract\":{");
        for (size_t i = 0; i < r->nextracts; i++) {
            int first = i == 0 || strcmp(r->extracts[i - 1].name, r->extracts[i].name) != 0;
            int last = i + 1 == r->nextracts ||
                       strcmp(r->extracts[i + 1].name, r->extracts[i].name) != 0;
            if (first) {
                if (i)
                    sb_addc(b, ',');
                report_json_sb(b, r->extracts[i].name);
                sb_adds(b, ":[");
            } else {
                sb_addc(b, ',');
            }
            report_json_sb(b, r->extracts[i].value);
            if (last)
                sb_addc(b, ']');
        }
        sb_addc(b, '}');
    }
    sb_adds(b, "}\n");
}

static const char csv_header[] =
    "url,final_url,status,length,wire_bytes,redirects,time_dns,time_connect,"
    "time_tls,time_ttfb,time_total,start,worker,line,depth,attempts,fail,error,extract\n";

static void csv_row(struct strbuf *b, const struct crawl_job *j)
{
    const struct crawl_result *r = &j->res;
    report_csv_sb(b, j->url);
    sb_addc(b, ',');
    report_csv_sb(b, r->final_url);
    sb_printf(b, ",%ld,%lld,%lld,%ld,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%ld,%d,%d,",
              r->status, (long long)r->length, (long long)r->wire_bytes,
              r->redirects, r->time_dns, r->time_connect, r->time_tls,
              r->time_ttfb, r->time_total, r->start, r->worker, j->line, j->depth,
              r->attempts);
    if (r->fail)
        sb_adds(b, crawl_fail_name(r->fail));
    sb_addc(b, ',');
    report_csv_sb(b, r->fail && !r->error ? crawl_fail_name(r->fail) : r->error);
    sb_addc(b, ',');
    if (r->nextracts) {
        /* One field: "name=value; name=value". */
        struct strbuf cell = {0};
        for (size_t i = 0; i < r->nextracts; i++)
            sb_printf(&cell, "%s%s=%s", i ? "; " : "", r->extracts[i].name,
                      r->extracts[i].value);
        report_csv_sb(b, cell.data ? cell.data : "");
        if (cell.nomem)
            b->nomem = 1;
        sb_free(&cell);
    }
    sb_addc(b, '\n');
}

void report_format(struct strbuf *b, const struct crawl_job *j, enum crawl_format fmt)
{
    switch (fmt) {
    case CRAWL_FMT_TABLE:
        table_row(b, j);
        sb_addc(b, '\n');
        break;
    case CRAWL_FMT_JSONL:
        json_row(b, j);
        break;
    case CRAWL_FMT_CSV:
        csv_row(b, j);
        break;
    }
}

struct report {
    enum crawl_format fmt;
    enum crawl_order ord;
    int quiet;
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
                       int quiet, int flush_ms, sink_error_fn on_error, void *data,
                       uint64_t offset, sink_commit_fn commit, void *cdata)
{
    struct report *r = calloc(1, sizeof *r);
    int rc = -ENOMEM;
    if (!r)
        return -ENOMEM;
    r->fmt = fmt;
    r->ord = ord;
    r->quiet = quiet;
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
    if (!quiet && fmt == CRAWL_FMT_CSV && offset == 0 &&
        (rc = sink_put(r->sink, csv_header, sizeof csv_header - 1)) != 0)
        goto err;
    *out = r;
    return 0;
err:
    report_free(r);
    return rc;
}

int report_new(struct report **out, int fd, enum crawl_format fmt, enum crawl_order ord,
               int quiet, int flush_ms, sink_error_fn on_error, void *data)
{
    return report_make(out, fd, fmt, ord, quiet, flush_ms, on_error, data, 0, NULL, NULL);
}

int report_new_marked(struct report **out, int fd, enum crawl_format fmt, int flush_ms,
                      sink_error_fn on_error, void *data, uint64_t offset,
                      sink_commit_fn commit, void *cdata)
{
    if (fmt == CRAWL_FMT_TABLE || flush_ms <= 0)
        return -EINVAL;
    return report_make(out, fd, fmt, CRAWL_ORDER_COMPLETION, 0, flush_ms, on_error, data,
                       offset, commit, cdata);
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
    struct strbuf b = {0};
    int rc;
    report_format(&b, j, r->fmt);
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

static void json_summary(struct strbuf *b, struct crawl *c)
{
    char desc[512];
    struct crawl_summary s;
    crawl_get_summary(c, &s);
    sb_printf(b,
              "{\"summary\":true,\"mode\":\"%s\",\"urls\":%zu,\"ok\":%zu,"
              "\"failed\":%zu,\"retries\":%zu,\"queued_left\":%zu,\"wall\":%.6f,\"connections\":%zu,"
              "\"reuse\":\"%s\",\"concurrency\":%d,\"threads\":%d,\"robots_fetched\":%zu,"
              "\"robots_blocked\":%zu,\"options\":",
              s.mode, s.rows, s.rows - s.failed, s.failed, s.retries, s.queued_left, s.wall, s.conns,
              s.reuse ? "on" : "off", s.limit, s.threads, s.robots_fetched, s.robots_blocked);
    report_json_sb(b, fetch_describe(c, desc, sizeof desc));
    /* Percentiles of the fetched URLs' times: the whole transfer, and until
     * the first byte of the response. */
    static const struct { const char *name; double q; } qs[] = {
        { "p50", 0.50 }, { "p90", 0.90 }, { "p99", 0.99 }, { "max", 1 },
    };
    for (int t = 0; t < 2; t++)
        for (size_t k = 0; k < sizeof qs / sizeof *qs; k++)
            sb_printf(b, ",\"%s%s_ms\":%.3f", t ? "ttfb_" : "", qs[k].name,
                      crawl_latency_ms(c, t ? CRAWL_TIME_TTFB : CRAWL_TIME_TOTAL, qs[k].q));
    sb_adds(b, "}\n");
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
    sb_printf(b, "; %zu connections; %s\n", s.conns, fetch_describe(c, desc, sizeof desc));
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
        break;
    }
    if (b.nomem && !rc)
        rc = -ENOMEM;
    int frc = sink_flush(r->sink);
    if (!rc)
        rc = frc;
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

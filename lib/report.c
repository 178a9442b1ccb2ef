/* report.c: output. Nothing here decides what a result means; it only
 * prints what the core recorded, in the order asked for. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fetch.h"
#include "html.h"
#include "report.h"

/* Python's str.format centring: the left side gets the smaller half. */
static void centre(char *out, size_t n, const char *s, int width)
{
    int len = (int)strlen(s);
    int pad = width > len ? width - len : 0;
    int left = pad / 2;
    snprintf(out, n, "%*s%s%*s", left, "", s, pad - left, "");
}

char *report_row(const struct crawl_job *j, char *buf, size_t n)
{
    char num[32], cell[48];
    int o;
    if (j->res.fail == CRAWL_FAIL_NONE) {
        snprintf(num, sizeof num, "%lld", (long long)j->res.length);
        centre(cell, sizeof cell, num, 7);
        o = snprintf(buf, n, "Length: %s URL: %s", cell, j->url);
    } else {
        centre(cell, sizeof cell, "error", 7);
        o = snprintf(buf, n, "Length: %s URL: %s (%s)", cell, j->url,
                     j->res.error ? j->res.error : "failed");
    }
    /* --extract values follow the URL as name=value, one per value. */
    for (size_t i = 0; i < j->res.nextracts && o >= 0 && (size_t)o < n; i++)
        o += snprintf(buf + o, n - (size_t)o, " %s=%s", j->res.extracts[i].name,
                      j->res.extracts[i].value);
    return buf;
}

void report_use_time(FILE *out, double seconds)
{
    fprintf(out, "Use time: %.2fs\n", seconds);
}

static int by_done(const void *a, const void *b)
{
    const struct crawl_job *x = *(const struct crawl_job *const *)a;
    const struct crawl_job *y = *(const struct crawl_job *const *)b;
    return (x->done_seq > y->done_seq) - (x->done_seq < y->done_seq);
}

struct crawl_job **report_order(struct crawl *c, enum crawl_order ord)
{
    struct crawl_job **v = malloc((c->njobs ? c->njobs : 1) * sizeof *v);
    if (!v)
        return NULL;
    if (c->njobs)
        memcpy(v, c->jobs, c->njobs * sizeof *v);
    if (ord == CRAWL_ORDER_COMPLETION)
        qsort(v, c->njobs, sizeof *v, by_done);
    return v;
}

void report_json_str(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char ch = *p;
        if (ch == '"' || ch == '\\') {
            putc('\\', out);
            putc(ch, out);
            p++;
        } else if (ch < 0x20 || ch == 0x7f) {
            fprintf(out, "\\u%04x", ch);
            p++;
        } else {
            size_t n = crawl_utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", out);
                p++;
            } else {
                fwrite(p, 1, n, out);
                p += n;
            }
        }
    }
    putc('"', out);
}

void report_csv_str(FILE *out, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}

static void json_row(FILE *out, const struct crawl_job *j)
{
    const struct crawl_result *r = &j->res;
    fputs("{\"url\":", out);
    report_json_str(out, j->url);
    fputs(",\"final_url\":", out);
    report_json_str(out, r->final_url);
    fprintf(out,
            ",\"status\":%ld,\"length\":%lld,\"wire_bytes\":%lld,\"redirects\":%ld"
            ",\"time_dns\":%.6f,\"time_connect\":%.6f,\"time_tls\":%.6f"
            ",\"time_ttfb\":%.6f,\"time_total\":%.6f,\"start\":%.6f"
            ",\"worker\":%d,\"line\":%ld,\"depth\":%d,\"links\":%zu,\"fail\":",
            r->status, (long long)r->length, (long long)r->wire_bytes,
            r->redirects, r->time_dns, r->time_connect, r->time_tls,
            r->time_ttfb, r->time_total, r->start, r->worker, j->line, j->depth,
            r->nlinks);
    report_json_str(out, r->fail ? crawl_fail_name(r->fail) : NULL);
    fputs(",\"error\":", out);
    report_json_str(out, r->error);
    if (r->nextracts) {
        /* {"name": [values...], ...}: the extracts come grouped by rule. */
        fputs(",\"extract\":{", out);
        for (size_t i = 0; i < r->nextracts; i++) {
            int first = i == 0 || strcmp(r->extracts[i - 1].name, r->extracts[i].name) != 0;
            int last = i + 1 == r->nextracts ||
                       strcmp(r->extracts[i + 1].name, r->extracts[i].name) != 0;
            if (first) {
                if (i)
                    putc(',', out);
                report_json_str(out, r->extracts[i].name);
                fputs(":[", out);
            } else {
                putc(',', out);
            }
            report_json_str(out, r->extracts[i].value);
            if (last)
                putc(']', out);
        }
        putc('}', out);
    }
    fputs("}\n", out);
}

static const char csv_header[] =
    "url,final_url,status,length,wire_bytes,redirects,time_dns,time_connect,"
    "time_tls,time_ttfb,time_total,start,worker,line,depth,fail,error,extract\n";

static void csv_row(FILE *out, const struct crawl_job *j)
{
    const struct crawl_result *r = &j->res;
    report_csv_str(out, j->url);
    putc(',', out);
    report_csv_str(out, r->final_url);
    fprintf(out, ",%ld,%lld,%lld,%ld,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%ld,%d,",
            r->status, (long long)r->length, (long long)r->wire_bytes,
            r->redirects, r->time_dns, r->time_connect, r->time_tls,
            r->time_ttfb, r->time_total, r->start, r->worker, j->line, j->depth);
    if (r->fail)
        fputs(crawl_fail_name(r->fail), out);
    putc(',', out);
    report_csv_str(out, r->error);
    putc(',', out);
    if (r->nextracts) {
        /* One field: "name=value; name=value". */
        char *cell = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&cell, &len);
        if (m) {
            for (size_t i = 0; i < r->nextracts; i++)
                fprintf(m, "%s%s=%s", i ? "; " : "", r->extracts[i].name,
                        r->extracts[i].value);
            fclose(m);
            report_csv_str(out, cell);
            free(cell);
        }
    }
    putc('\n', out);
}

static void json_summary(FILE *out, struct crawl *c)
{
    char desc[512];
    fprintf(out,
            "{\"summary\":true,\"mode\":\"%s\",\"urls\":%zu,\"ok\":%zu,"
            "\"failed\":%zu,\"wall\":%.6f,\"connections\":%zu,\"reuse\":\"%s\","
            "\"concurrency\":%d,\"threads\":%d,\"robots_fetched\":%zu,"
            "\"robots_blocked\":%zu,\"options\":",
            c->backend ? c->backend->name : "none", c->njobs, c->njobs - c->nfailed,
            c->nfailed, c->wall, c->conns, c->reuse ? "on" : "off", c->limit,
            c->threads_peak, c->robots_fetched, c->robots_blocked);
    report_json_str(out, fetch_describe(c, desc, sizeof desc));
    fputs("}\n", out);
}

static void table_summary(FILE *out, struct crawl *c)
{
    char desc[512];
    fprintf(out, "Mode: %s; %zu URLs, %zu ok, %zu failed; %zu connections; %s\n",
            c->backend ? c->backend->name : "none", c->njobs, c->njobs - c->nfailed,
            c->nfailed, c->conns, fetch_describe(c, desc, sizeof desc));
}

int report_write(FILE *out, struct crawl *c, enum crawl_format fmt,
                 enum crawl_order ord, int quiet)
{
    struct crawl_job **v = NULL;
    if (!quiet && !(v = report_order(c, ord)))
        return -ENOMEM;
    switch (fmt) {
    case CRAWL_FMT_TABLE:
        report_use_time(out, c->wall);
        if (quiet)
            break;
        for (size_t i = 0; i < c->njobs; i++) {
            char row[URL_ROW_MAX];
            fprintf(out, "%s\n", report_row(v[i], row, sizeof row));
        }
        table_summary(out, c);
        break;
    case CRAWL_FMT_JSONL:
        if (!quiet)
            for (size_t i = 0; i < c->njobs; i++)
                json_row(out, v[i]);
        json_summary(out, c);
        break;
    case CRAWL_FMT_CSV:
        if (quiet)
            break;
        fputs(csv_header, out);
        for (size_t i = 0; i < c->njobs; i++)
            csv_row(out, v[i]);
        break;
    }
    free(v);
    if (fflush(out) != 0 || ferror(out))
        return -errno;
    return 0;
}

/* fuzz_urllist.c: libFuzzer target for the URL-list reader: any bytes as a
 * list file. Every non-blank, non-comment line must become exactly one job
 * and one row, and every job's URL and error must be printable text that
 * each output format can write. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawl_internal.h"
#include "report.h"
#include "strbuf.h"
#include "urllist.h"

struct seen {
    size_t rows;
    struct strbuf out;
};

/* crawl's on_done: checks the job and writes its row in every format. */
static void check_row(void *data, struct crawl *c, struct crawl_job *j)
{
    struct seen *s = data;
    if (!j->url || (j->res.fail == CRAWL_FAIL_INPUT && !j->res.error))
        abort();
    for (const char *p = j->url; *p; p++)
        if ((unsigned char)*p < 0x20)
            abort();
    sb_reset(&s->out);
    report_format(&s->out, j, CRAWL_FMT_TABLE, REPORT_LINKS | REPORT_EXTRACT);
    report_format(&s->out, j, CRAWL_FMT_JSONL, REPORT_LINKS | REPORT_EXTRACT);
    report_format(&s->out, j, CRAWL_FMT_CSV, REPORT_LINKS | REPORT_EXTRACT);
    s->rows++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct crawl_opts o;
    struct crawl c;
    struct seen s = {0};
    crawl_opts_init(&o);
    if (crawl__init(&c, &o) != 0)
        return 0;
    static const struct crawl_hook rows = { .row = check_row };
    crawl_hook(&c, CRAWL_HOOK_OUTPUT, &rows, &s);
    FILE *in = fmemopen((void *)data, size, "r");
    FILE *err = fopen("/dev/null", "w");
    struct urllist *l = in && err ? urllist_new(err) : NULL;
    if (l && urllist_add_file(l, in, "fuzz", 0) == 0) {
        crawl_set_lists(&c, l);
        int rc = crawl_fill(&c);
        int bad = urllist_bad(l);
        struct crawl_job *j;
        /* Every job handed back as if fetched gives its row. */
        while (crawl_take(&c, &j, NULL) == 1)
            crawl_done(&c, j);
        if (rc < 0 || bad < 0 || (size_t)bad > s.rows || s.rows != c.nseq || c.nrows != s.rows)
            abort();
    }
    urllist_free(l);
    if (in)
        fclose(in);
    if (err)
        fclose(err);
    crawl__fini(&c);
    sb_free(&s.out);
    return 0;
}

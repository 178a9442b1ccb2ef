/* fuzz_urllist.c: libFuzzer target for the URL-list reader: any bytes as a
 * list file. Every non-blank, non-comment line must become exactly one job,
 * and every job's URL and error must be printable text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawl.h"
#include "report.h"
#include "urllist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct crawl_opts o;
    struct crawl c;
    crawl_opts_init(&o);
    if (crawl_init(&c, &o) != 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    FILE *err = fopen("/dev/null", "w");
    if (in && err) {
        int bad = urllist_read(&c, in, "fuzz", err);
        if (bad > (int)c.njobs)
            abort();
        for (size_t i = 0; i < c.njobs; i++) {
            const struct crawl_job *j = c.jobs[i];
            if (!j->url || (j->res.fail == CRAWL_FAIL_INPUT && !j->res.error))
                abort();
            for (const char *p = j->url; *p; p++)
                if ((unsigned char)*p < 0x20)
                    abort();
            char row[URL_ROW_MAX];
            report_row(j, row, sizeof row);
        }
        report_write(err, &c, CRAWL_FMT_JSONL, CRAWL_ORDER_INPUT, 0);
        report_write(err, &c, CRAWL_FMT_CSV, CRAWL_ORDER_COMPLETION, 0);
    }
    if (in)
        fclose(in);
    if (err)
        fclose(err);
    crawl_free(&c);
    return 0;
}

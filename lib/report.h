/* report.h: everything crawl prints about a run: the article's table, JSON
 * lines, CSV. Rows are written as the core hands finished jobs in, in
 * completion order or put back into input order; nothing waits for the end
 * but the table's rows, which follow its "Use time" line. */
#ifndef CRAWL_REPORT_H
#define CRAWL_REPORT_H

#include <stdio.h>
#include "crawl.h"
#include "sink.h"
#include "strbuf.h"

/* Room for one table row: the longest URL, its error and the frame. */
#define URL_ROW_MAX (8192 + 1024)

/* Memory that rows held back may take before they go to a temporary file:
 * rows waiting for their turn (input order), and the table's rows. */
#define REPORT_HOLD_BYTES (4u << 20)

/* Writes "Length: {:^7d} URL: {}" as Python formats it into buf (size n):
 * the number centred in 7 columns, the extra space on the right. A failed
 * job shows "error" and its reason after the URL. Returns buf. */
char *report_row(const struct crawl_job *j, char *buf, size_t n);

/* Optional columns that apply to a run: links when pages are parsed
 * (--depth, --follow, --extract), extract with --extract. Otherwise, and
 * for a page that was not parsed, they are null. */
#define REPORT_LINKS   1u
#define REPORT_EXTRACT 2u

/* Appends job j's row in format fmt to b, newline included; cols says which
 * optional columns apply (REPORT_LINKS, REPORT_EXTRACT). */
void report_format(struct strbuf *b, const struct crawl_job *j, enum crawl_format fmt,
                   unsigned cols);

/* Writes the article's "Use time: 1.23s" line. */
void report_use_time(FILE *out, double seconds);

/* Writes s as a JSON string (quoted, escaped, invalid UTF-8 replaced). */
void report_json_str(FILE *out, const char *s);

/* Writes s as a CSV field (quoted when needed). */
void report_csv_str(FILE *out, const char *s);

struct report;

/* Starts a run's output on fd (not closed here) in format fmt, rows in
 * order ord; quiet keeps only the summary: the line (table), the object
 * (jsonl), or a CSV of its own, header and one row (csv). cols: see
 * report_format. Without quiet, CSV's summary goes out of band, as the
 * table's summary line on summary_fd (-1: nowhere). flush_ms > 0 writes
 * buffered rows at least that often. on_error is told of the first write
 * error (-errno). Writes the CSV header at once. Returns 0 and the report
 * in *out, or -errno. */
int report_new(struct report **out, int fd, enum crawl_format fmt, enum crawl_order ord,
               int quiet, unsigned cols, int summary_fd, int flush_ms,
               sink_error_fn on_error, void *data);

/* As report_new, for a --state crawl: rows in completion order, each
 * carrying its job's mark to commit (see sink_set_commit) once it is in
 * the file; fd already holds offset bytes of earlier runs (the CSV header
 * is written only when offset is 0). fmt is jsonl or csv. Returns 0 or
 * -errno. */
int report_new_marked(struct report **out, int fd, enum crawl_format fmt, unsigned cols,
                      int summary_fd, int flush_ms, sink_error_fn on_error, void *data,
                      uint64_t offset, sink_commit_fn commit, void *cdata);

/* Takes finished page job j (its seq numbers rows in input order) and
 * writes or holds its row. Thread-safe; j is not kept. Returns 0 or the
 * sticky -errno of the output. */
int report_job(struct report *r, const struct crawl_job *j);

/* Makes r write c's rows from now on (c's output hook); NULL stops it. */
void report_attach(struct report *r, struct crawl *c);

/* Ends the run's output: the table's "Use time", held rows and summary
 * line, or the JSON summary object; writes everything out. Returns 0 or
 * -errno (the first error the output met). */
int report_end(struct report *r, struct crawl *c);

/* For a signal handler about to end the process: writes the rows that are
 * buffered, if it can do so safely. Async-signal-safe. */
void report_emergency_flush(struct report *r);

/* Frees r (without writing). */
void report_free(struct report *r);

#endif

/* report.h: everything crawl prints about a run: the article's table, JSON
 * lines, CSV. */
#ifndef CRAWL_REPORT_H
#define CRAWL_REPORT_H

#include <stdio.h>
#include "crawl.h"

/* Room for one table row: the longest URL, its error and the frame. */
#define URL_ROW_MAX (8192 + 1024)

/* Writes "Length: {:^7d} URL: {}" as Python formats it into buf (size n):
 * the number centred in 7 columns, the extra space on the right. A failed
 * job shows "error" and its reason after the URL. Returns buf. */
char *report_row(const struct crawl_job *j, char *buf, size_t n);

/* Writes the article's "Use time: 1.23s" line. */
void report_use_time(FILE *out, double seconds);

/* Writes the whole run in format fmt (table, jsonl or csv), jobs in order
 * ord; quiet keeps only the summary line (table) or object (jsonl). Returns
 * 0, or -errno when writing failed. */
int report_write(FILE *out, struct crawl *c, enum crawl_format fmt,
                 enum crawl_order ord, int quiet);

/* Writes s as a JSON string (quoted, escaped, invalid UTF-8 replaced). */
void report_json_str(FILE *out, const char *s);

/* Writes s as a CSV field (quoted when needed). */
void report_csv_str(FILE *out, const char *s);

/* Returns a newly allocated array of c's jobs in order ord (the caller frees
 * the array, not the jobs), or NULL when out of memory. */
struct crawl_job **report_order(struct crawl *c, enum crawl_order ord);

#endif

/* linkfile.h: --links-out: every link a parsed page gave, a JSON line
 * each, with what the frontier made of it: {"from": the page's final URL,
 * "to": the link, "admitted": true or false, "reason": null or why not}.
 * A page's lines are written together when its row is, in the page's
 * order of links; nothing here decides a verdict (the frontier does, into
 * the job: job.h's enum job_verdict). */
#ifndef CRAWL_LINKFILE_H
#define CRAWL_LINKFILE_H

#include "crawl.h"
#include "sink.h"
#include "strbuf.h"

struct linkfile;

/* Appends the lines of page job j's links (its verdicts) to b. */
void linkfile_format(struct strbuf *b, const struct crawl_job *j);

/* Starts the file on fd (not closed here): flush_ms > 0 writes what is
 * buffered at least that often; on_error is told of the first write
 * error (-errno). Returns 0 and the writer in *out, or -errno. */
int linkfile_new(struct linkfile **out, int fd, int flush_ms, sink_error_fn on_error,
                 void *data);

/* Makes l write c's pages' links from now on (c's links hook); NULL stops
 * it. */
void linkfile_attach(struct linkfile *l, struct crawl *c);

/* Writes everything out and frees l. Returns 0 or the first error met
 * (-errno). NULL is fine. */
int linkfile_free(struct linkfile *l);

#endif

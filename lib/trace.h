/* trace.h: --trace FILE, a Chrome trace-event file (the JSON Object Format,
 * {"traceEvents": [...]}) that Perfetto and chrome://tracing open. Every
 * finished transfer becomes a slice on its worker's track, with its phases
 * nested in it, as the core hands it in: the file is written as the run
 * goes, through a sink, and nothing is held for the end.
 *
 * The file is a head, one part per model run, and a tail. The head and the
 * tail are written by whoever owns the file (trace_head, trace_tail); each
 * model's part by a trace writer (trace_new) in the process that runs the
 * model, so that with --mode=all each forked child appends its part to the
 * shared descriptor in turn (the models run one after another). */
#ifndef CRAWL_TRACE_H
#define CRAWL_TRACE_H

#include "crawl.h"
#include "sink.h"
#include "strbuf.h"

/* Track ids: a model's processes are numbered from its base pid; with
 * --mode=all, model k (from 0) has base TRACE_PID_STEP * (k + 1). */
#define TRACE_PID_STEP 1000

/* Writes the file's head to fd. Returns 0 or -errno. */
int trace_head(int fd);

/* Writes the file's tail to fd, after every part. Returns 0 or -errno. */
int trace_tail(int fd);

struct trace;

/* Starts the part of one model's run, named name, on fd (not closed here),
 * with its tracks under pid base_pid; processes: the model's workers are
 * processes (worker id / 1,000,000 numbers the process, each a track of
 * its own). Writes go out at least every flush_ms (0: when the buffer
 * fills); on_error is told of the first write error (-errno). Returns 0
 * and the writer in *out, or -errno. */
int trace_new(struct trace **out, int fd, const char *name, int base_pid, int processes,
              int flush_ms, sink_error_fn on_error, void *data);

/* Writes the events of finished page job j: its transfer with its phases,
 * its wait in a queue, and the counters as it started and ended. A job that
 * was never fetched (a bad line, cancelled before it started) has none.
 * Thread-safe; j is not kept. Returns 0 or the sticky -errno. */
int trace_job(struct trace *t, const struct crawl_job *j);

/* Makes t take c's transfers from now on (c's trace hook); NULL stops it. */
void trace_attach(struct trace *t, struct crawl *c);

/* Appends job j's events to b, for the track ids of a part that starts at
 * base_pid (processes as for trace_new). Each event is followed by ",\n".
 * For trace_job and for tests. */
void trace_format(struct strbuf *b, const struct crawl_job *j, int base_pid, int processes);

/* Writes what is buffered and frees t. Returns 0 or the first error met
 * (-errno). NULL is fine. */
int trace_free(struct trace *t);

#endif

/* sink.h: where output rows go. A row is appended whole to a buffer and the
 * buffer is written with write(2) only at row boundaries, so that a process
 * killed at any moment leaves whole rows behind; a thread of the sink's own
 * writes what is buffered at least every flush interval, so that a row
 * reaches the file soon after it was final even when no other row follows.
 * The first error sticks: later rows are dropped and the error is reported
 * once, through the callback and from every later call. */
#ifndef CRAWL_SINK_H
#define CRAWL_SINK_H

#include <stddef.h>
#include <stdint.h>

struct sink;

/* Called once, from whichever thread met the error, with -errno. */
typedef void (*sink_error_fn)(int err, void *data);

/* Told after bytes reached the file: marks[0..n) are the marks of the
 * rows among them (sink_put_mark), offset the bytes written to the file
 * so far, from the offset given to sink_set_commit. Returns 0, or -errno
 * (then the sink fails with it). Called without the sink's lock, by one
 * thread at a time, in the order of the writes (the flushing thread's,
 * when there is one: a row put never waits for it); sink_flush returns
 * once every write before it was told. */
typedef int (*sink_commit_fn)(const uint64_t *marks, size_t n, uint64_t offset, void *data);

/* Makes a sink over fd (not closed by the sink). flush_ms > 0 starts the
 * flushing thread with that interval; 0 writes only when the buffer fills
 * or on sink_flush. Returns the sink in *out and 0, or -errno. */
int sink_new(struct sink **out, int fd, int flush_ms, sink_error_fn on_error, void *data);

/* Appends the n bytes at row (one or more whole rows) and writes when the
 * buffer is full. Thread-safe. Returns 0, or the sticky -errno. */
int sink_put(struct sink *s, const char *row, size_t n);

/* Makes s tell fn about every write, counting the file's bytes from
 * offset (what it held before). Call before the first row. */
void sink_set_commit(struct sink *s, uint64_t offset, sink_commit_fn fn, void *data);

/* As sink_put, for one row that carries mark (0: none), which goes to the
 * commit callback once the row is in the file. */
int sink_put_mark(struct sink *s, const char *row, size_t n, uint64_t mark);

/* Writes everything buffered. Thread-safe. Returns 0 or the sticky -errno. */
int sink_flush(struct sink *s);

/* Returns 0, or the first error the sink met (-errno). */
int sink_error(struct sink *s);

/* For a signal handler that is about to end the process: writes what is
 * buffered unless a thread is changing the buffer right now, and freezes the
 * sink. Async-signal-safe. */
void sink_emergency_flush(struct sink *s);

/* Stops the flushing thread, writes what is buffered and frees s. Returns 0
 * or the first error met. */
int sink_free(struct sink *s);

#endif

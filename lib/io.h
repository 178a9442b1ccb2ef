/* io.h: writing a whole buffer to a descriptor, replacing a file whole,
 * and the wake-up pipe a thread that waits in poll() is woken with. */
#ifndef CRAWL_IO_H
#define CRAWL_IO_H

#include <stddef.h>

/* Writes all n bytes at p to fd, again after EINTR and short writes.
 * Returns 0 or -errno (-EIO when write(2) wrote nothing). Async-signal-safe:
 * the sink's last flush on a second Ctrl-C uses it. */
int io_write_all(int fd, const void *p, size_t n);

/* Replaces the file at path with the n bytes at p: written beside it as
 * PATH.crawl-PID.tmp, synced and renamed over it, keeping its permissions
 * (a new file gets 0666 less the umask); on any failure path is left as it
 * was and the temporary file removed. Returns 0 or -errno (EISDIR: path
 * is a directory). */
int io_replace(const char *path, const void *p, size_t n);

/* A wake-up pipe: fd[0] is polled for POLLIN, io_wake writes a byte to
 * fd[1] from any thread (async-signal-safe), io_wake_drain reads what came
 * away. Both ends close-on-exec and non-blocking. Returns 0, or -errno
 * with fd[0] and fd[1] set to -1. */
int io_wake_pipe(int fd[2]);
void io_wake(const int fd[2]);
void io_wake_drain(const int fd[2]);

/* Waits until fd is readable (or at its end) or the wake-up pipe is
 * written, timeout_ms at most (-1: no bound); a wake-up is read away, so
 * that the next wait waits again: whatever woke it was set before the
 * byte was written, for the caller to see now. Without a pipe (wake[0]
 * -1), only fd is waited on. Returns 1 when fd is readable, 0 when woken
 * or timed out, -errno. */
int io_wait(int fd, const int wake[2], int timeout_ms);

/* Closes both ends of a wake-up pipe, if open, and sets them to -1. */
void io_wake_close(int fd[2]);

#endif

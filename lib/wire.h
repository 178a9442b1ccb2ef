/* wire.h: frames between the procs model's coordinator and its workers,
 * over a stream socket: a 32-bit length, then that many bytes, the first of
 * which says what the frame is; numbers in the machine's own byte order
 * (both ends are one machine), strings with a 32-bit length (all ones for
 * NULL). */
#ifndef CRAWL_WIRE_H
#define CRAWL_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

/* A frame being read: what is left of it, and whether a read went past
 * its end or ran out of memory. */
struct wire_rd {
    const char *p;
    size_t n;
    int bad;                /* read past the end, or out of memory */
};

/* Appends a number to b (growth failures are recorded in b). */
void wire_put_u32(struct strbuf *b, uint32_t v);
void wire_put_u64(struct strbuf *b, uint64_t v);
void wire_put_f64(struct strbuf *b, double v);

/* Sets the number put at offset at of b (a count known only once what it
 * counts is put); nothing when b ran out of memory. */
void wire_set_u32(struct strbuf *b, size_t at, uint32_t v);

/* A byte string, or NULL. */
void wire_put_bytes(struct strbuf *b, const char *s, size_t n);

/* A NUL-terminated string, or NULL. */
void wire_put_str(struct strbuf *b, const char *s);

/* Starts a frame of type t at the end of b; returns where it starts, for
 * wire_frame_end, which fills in its length. */
size_t wire_frame_begin(struct strbuf *b, char t);

/* Returns 0, or CRAWL_ENOMEM when b ran out of memory or the frame is too
 * long for its length field. */
int wire_frame_end(struct strbuf *b, size_t at);

/* Writes all of b to the socket fd. Returns 0 or -errno. */
int wire_send_all(int fd, const struct strbuf *b);

/* Reads the next number of the frame (0, with r->bad set, past its end). */
uint32_t wire_get_u32(struct wire_rd *r);
uint64_t wire_get_u64(struct wire_rd *r);
double wire_get_f64(struct wire_rd *r);

/* Returns a malloc'd copy of the next byte string (NUL-terminated), with
 * its length in *len if len is not NULL, or NULL for a NULL (and when r
 * went bad). */
char *wire_get_bytes(struct wire_rd *r, size_t *len);

/* Takes the next whole frame from the bytes buffered in in: *r reads it.
 * Returns 1 with a frame, 0 when none is whole yet. */
int wire_frame_next(struct strbuf *in, size_t *at, struct wire_rd *r, char *type);

/* Drops the first `at` bytes of in, the frames read from it. */
void wire_frames_taken(struct strbuf *in, size_t at);

/* Reads what fd has into in (at most 256 KiB at a time). Returns the bytes
 * read, 0 at the end, or -errno. */
ssize_t wire_fill(int fd, struct strbuf *in);

#endif

/* wire.c: the procs model's frames (wire.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crawl.h"
#include "wire.h"

void wire_put_u32(struct strbuf *b, uint32_t v) { sb_add(b, &v, sizeof v); }
void wire_put_u64(struct strbuf *b, uint64_t v) { sb_add(b, &v, sizeof v); }
void wire_put_f64(struct strbuf *b, double v) { sb_add(b, &v, sizeof v); }

void wire_set_u32(struct strbuf *b, size_t at, uint32_t v)
{
    if (!b->nomem && at + sizeof v <= b->len)
        memcpy(b->data + at, &v, sizeof v);
}

/* A byte string, or NULL. */
void wire_put_bytes(struct strbuf *b, const char *s, size_t n)
{
    wire_put_u32(b, s ? (uint32_t)n : UINT32_MAX);
    if (s)
        sb_add(b, s, n);
}

void wire_put_str(struct strbuf *b, const char *s)
{
    wire_put_bytes(b, s, s ? strlen(s) : 0);
}

/* Starts a frame of type t at the end of b; returns where it starts, for
 * wire_frame_end, which fills in its length. */
size_t wire_frame_begin(struct strbuf *b, char t)
{
    size_t at = b->len;
    wire_put_u32(b, 0);
    sb_addc(b, t);
    return at;
}

int wire_frame_end(struct strbuf *b, size_t at)
{
    if (b->nomem || b->len - at - 4 > UINT32_MAX)
        return CRAWL_ENOMEM;
    uint32_t n = (uint32_t)(b->len - at - 4);
    memcpy(b->data + at, &n, sizeof n);
    return 0;
}

/* Writes all of b to the socket fd. Returns 0 or -errno. */
int wire_send_all(int fd, const struct strbuf *b)
{
    const char *p = b->data;
    size_t n = b->len;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}


static void wire_get(struct wire_rd *r, void *v, size_t n)
{
    if (r->n < n) {
        r->bad = 1;
        memset(v, 0, n);
        return;
    }
    memcpy(v, r->p, n);
    r->p += n;
    r->n -= n;
}

uint32_t wire_get_u32(struct wire_rd *r) { uint32_t v; wire_get(r, &v, sizeof v); return v; }
uint64_t wire_get_u64(struct wire_rd *r) { uint64_t v; wire_get(r, &v, sizeof v); return v; }
double wire_get_f64(struct wire_rd *r) { double v; wire_get(r, &v, sizeof v); return v; }

/* Returns a malloc'd copy of the next byte string (NUL-terminated), with
 * its length in *len if len is not NULL, or NULL for a NULL. */
char *wire_get_bytes(struct wire_rd *r, size_t *len)
{
    uint32_t n = wire_get_u32(r);
    if (len)
        *len = 0;
    if (n == UINT32_MAX || r->bad)
        return NULL;
    if (r->n < n) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, r->p, n);
    s[n] = '\0';
    r->p += n;
    r->n -= n;
    if (len)
        *len = n;
    return s;
}

/* Takes the next whole frame from the bytes buffered in in: *r reads it.
 * Returns 1 with a frame, 0 when none is whole yet. */
int wire_frame_next(struct strbuf *in, size_t *at, struct wire_rd *r, char *type)
{
    uint32_t n;
    if (in->len - *at < sizeof n)
        return 0;
    memcpy(&n, in->data + *at, sizeof n);
    if (n == 0 || in->len - *at - sizeof n < n)
        return 0;
    *type = in->data[*at + sizeof n];
    r->p = in->data + *at + sizeof n + 1;
    r->n = n - 1;
    r->bad = 0;
    *at += sizeof n + n;
    return 1;
}

/* Drops the first `at` bytes of in, the frames read from it. */
void wire_frames_taken(struct strbuf *in, size_t at)
{
    if (at == 0)
        return;
    memmove(in->data, in->data + at, in->len - at);
    in->len -= at;
}

/* Reads what fd has into in (at most 256 KiB at a time). Returns the bytes
 * read, 0 at the end, or -errno. */
ssize_t wire_fill(int fd, struct strbuf *in)
{
    if (sb_reserve(in, 256 * 1024) != 0)
        return CRAWL_ENOMEM;
    ssize_t n;
    do
        n = read(fd, in->data + in->len, in->cap - in->len - 1);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    in->len += (size_t)n;
    return n;
}

/* spool.c: bytes in memory up to a bound, then in a temporary file. The
 * file is unlinked as soon as it is made, so nothing is left behind by a
 * process that is killed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

struct spool {
    char  *mem;             /* the first bytes, up to bound */
    size_t mem_len, bound;
    int    fd;              /* -1 until the memory part is full */
    uint64_t file_len;
};

struct spool *spool_new(size_t mem_bound)
{
    struct spool *sp = calloc(1, sizeof *sp);
    if (!sp)
        return NULL;
    sp->bound = mem_bound;
    sp->fd = -1;
    return sp;
}

static int open_file(struct spool *sp)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/crawl-spool.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -errno;
    unlink(path);
    sp->fd = fd;
    return 0;
}

int spool_add(struct spool *sp, const void *p, size_t n, uint64_t *off)
{
    if (off)
        *off = sp->mem_len + sp->file_len;
    if (sp->file_len == 0 && sp->mem_len + n <= sp->bound) {
        if (!sp->mem && !(sp->mem = malloc(sp->bound ? sp->bound : 1)))
            return -ENOMEM;
        memcpy(sp->mem + sp->mem_len, p, n);
        sp->mem_len += n;
        return 0;
    }
    int rc;
    if (sp->fd < 0 && (rc = open_file(sp)) != 0)
        return rc;
    const char *s = p;
    uint64_t at = sp->file_len;
    while (n) {
        ssize_t w = pwrite(sp->fd, s, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        s += w;
        n -= (size_t)w;
        at += (uint64_t)w;
    }
    sp->file_len = at;
    return 0;
}

int spool_get(struct spool *sp, uint64_t off, void *out, size_t n)
{
    char *o = out;
    if (off < sp->mem_len) {
        size_t k = sp->mem_len - off < n ? (size_t)(sp->mem_len - off) : n;
        memcpy(o, sp->mem + off, k);
        o += k;
        off += k;
        n -= k;
    }
    off -= sp->mem_len;
    while (n) {
        ssize_t r = pread(sp->fd, o, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        o += r;
        off += (uint64_t)r;
        n -= (size_t)r;
    }
    return 0;
}

int spool_each(struct spool *sp, int (*fn)(const char *p, size_t n, void *data), void *data)
{
    int rc;
    if (sp->mem_len && (rc = fn(sp->mem, sp->mem_len, data)) != 0)
        return rc;
    char buf[64 * 1024];
    for (uint64_t off = 0; off < sp->file_len;) {
        size_t n = sp->file_len - off < sizeof buf ? (size_t)(sp->file_len - off) : sizeof buf;
        if ((rc = spool_get(sp, sp->mem_len + off, buf, n)) != 0)
            return rc;
        if ((rc = fn(buf, n, data)) != 0)
            return rc;
        off += n;
    }
    return 0;
}

uint64_t spool_size(const struct spool *sp)
{
    return sp->mem_len + sp->file_len;
}

void spool_reset(struct spool *sp)
{
    sp->mem_len = 0;
    /* A failed truncation leaves old bytes on disk that nothing reads:
     * offsets count from 0 again and writes go over them. */
    if (sp->fd >= 0 && sp->file_len)
        (void)!ftruncate(sp->fd, 0);
    sp->file_len = 0;
}

void spool_free(struct spool *sp)
{
    if (!sp)
        return;
    if (sp->fd >= 0)
        close(sp->fd);
    free(sp->mem);
    free(sp);
}

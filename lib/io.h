/* io.h: writing a whole buffer to a descriptor. */
#ifndef CRAWL_IO_H
#define CRAWL_IO_H

#include <stddef.h>

/* Writes all n bytes at p to fd, again after EINTR and short writes.
 * Returns 0 or -errno (-EIO when write(2) wrote nothing). Async-signal-safe:
 * the sink's last flush on a second Ctrl-C uses it. */
int io_write_all(int fd, const void *p, size_t n);

#endif

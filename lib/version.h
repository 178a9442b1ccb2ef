/* version.h: crawl's version, and the --version line that names the
 * libraries as loaded at run time (version.c). */
#ifndef CRAWL_VERSION_H
#define CRAWL_VERSION_H

#include <stddef.h>

#define CRAWL_VERSION "0.1.0"

/* Writes the version line into buf (size n), e.g. "crawl 0.1.0 (libcurl
 * 7.88.1, libev 4.33, libxml2 2.9.14)", with the libraries' versions as
 * loaded at run time. Returns buf. */
char *crawl_version_line(char *buf, size_t n);

#endif

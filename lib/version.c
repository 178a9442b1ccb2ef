/* version.c: the version line of crawl --version. The libraries' versions
 * are those of the copies loaded at run time, which a system update can
 * move past the headers crawl was built against; what a bug report needs
 * is what ran. */
#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>
#include <ev.h>
#include <libxml/parser.h>

#include "version.h"

/* libxml2 spells its version as one number, 20914 for 2.9.14
 * (xmlParserVersion, set by the library itself, not by its headers). */
static void xml_dotted(char *buf, size_t n)
{
    long v = strtol(xmlParserVersion, NULL, 10);
    snprintf(buf, n, "%ld.%ld.%ld", v / 10000, v / 100 % 100, v % 100);
}

char *crawl_version_line(char *buf, size_t n)
{
    char xml[32];
    xml_dotted(xml, sizeof xml);
    snprintf(buf, n, "crawl %s (libcurl %s, libev %d.%d, libxml2 %s)", CRAWL_VERSION,
             curl_version_info(CURLVERSION_NOW)->version, ev_version_major(),
             ev_version_minor(), xml);
    return buf;
}

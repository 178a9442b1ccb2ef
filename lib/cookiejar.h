/* cookiejar.h: --cookie-jar's file written by crawl itself, through a
 * temporary file and a rename, so that a jar that cannot be written is an
 * error the run reports, not an empty or a half-written file. */
#ifndef CRAWL_COOKIEJAR_H
#define CRAWL_COOKIEJAR_H

#include <time.h>
#include <curl/curl.h>

/* Writes cookies (Netscape cookie-file lines, as CURLINFO_COOKIELIST gives
 * them) to path in the format libcurl's CURLOPT_COOKIEJAR writes: its
 * header comment lines, then one tab-separated line per cookie; cookies
 * expired by now are left out, as libcurl leaves them out. The file is
 * written beside path as PATH.crawl-PID.tmp, synced and renamed over path,
 * which keeps its permissions (a new jar gets 0666 less the umask); on any
 * failure path is left as it was and the temporary file is removed.
 * Returns 0 or -errno (ENOSPC: the disk is full; EISDIR: path is a
 * directory). */
int cookiejar_write(const char *path, const struct curl_slist *cookies, time_t now);

#endif

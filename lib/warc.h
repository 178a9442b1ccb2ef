/* warc.h: --warc, the fetches of a run kept as WARC/1.1 records (ISO
 * 28500:2017): one writer a process, to which every transfer hands what it
 * captured (warc_capture) as it ends. The writer knows nothing of models or
 * jobs; fetch decides what is captured and when it is written. A payload
 * written before in the crawl (the crawl's digest set, dedupe.h) is
 * written as a revisit record. */
#ifndef CRAWL_WARC_H
#define CRAWL_WARC_H

#include <stddef.h>
#include <stdint.h>

struct dedupe;
struct warc;
struct warc_capture;

/* The writer's settings. */
struct warc_conf {
    const char *path;         /* FILE.warc.gz as given */
    int worker;               /* procs worker number: FILE-wN.warc.gz; -1: none */
    uint64_t max_size;        /* rotate past this many bytes (-00000, -00001...); 0: never */
    const char *cdx;          /* CDXJ index file, or NULL */
    const char *software;     /* the warcinfo's software field */
    const char *options;      /* ... and its command line, or NULL */
    struct dedupe *seen;      /* the crawl's digest set: a 2xx payload it
                               * holds is written as a revisit; NULL: never */
};

/* Opens the first file and writes its warcinfo record. Returns 0 and the
 * writer in *out (freed with warc_close), or -errno / -ENOMEM with what
 * could not be made in failed (size n): "--warc: cannot write FILE" (a
 * procs worker's own, FILE-wN.warc.gz) or "--cdx: cannot write FILE". */
int warc_open(struct warc **out, const struct warc_conf *conf, char *failed, size_t n);

/* Ends the files: the CDXJ index, when there is one, is sorted (sort(1),
 * C locale). Returns 0 or the first error any write met (-errno); frees w. */
int warc_close(struct warc *w);

/* The index of a procs crawl: merges the indexes its nworkers workers
 * wrote (cdx with -wN before ".cdxj", each line naming its worker's WARC
 * file) into one sorted file, cdx (sort(1), C locale), and removes them.
 * A worker's index that is missing or not a file is left out; one a
 * killed worker cut short loses its last, partial line. Returns 0, or
 * -errno with what failed in failed (size n), "--cdx: cannot write FILE",
 * the workers' indexes then left as they are. */
int warc_cdx_merge(const char *cdx, int nworkers, char *failed, size_t n);

/* Returns the name of the file being written, owned by w. */
const char *warc_file_name(const struct warc *w);

/* Returns a new capture (one per transfer in flight), or NULL. */
struct warc_capture *warc_capture_new(void);
void warc_capture_free(struct warc_capture *cap);

/* Starts the capture of a transfer afresh: its date is now. */
void warc_capture_reset(struct warc_capture *cap);

/* Adds request head bytes as sent (CURLINFO_HEADER_OUT). An HTTP/2
 * request line is written in HTTP/1.1 syntax. */
void warc_capture_request(struct warc_capture *cap, const char *p, size_t n);

/* Adds one response header line as libcurl gives it, CRLF included. A new
 * status line starts the head again (1xx responses are not kept); HTTP/2
 * and /3 status lines are written in HTTP/1.1 syntax, and Transfer-Encoding
 * is renamed, since the payload is kept without it. */
void warc_capture_header(struct warc_capture *cap, const char *p, size_t n);

/* Adds payload bytes (transfer coding removed, content coding kept).
 * Returns 0 or -errno (the spool's file). */
int warc_capture_body(struct warc_capture *cap, const char *p, size_t n);

/* Names the earlier capture that the response, a 304, revalidated (the
 * request was conditional on it): its target URI, WARC-Date and
 * WARC-Record-ID, each NULL when not known. A 304 is written as a revisit
 * record of the server-not-modified profile, referring to it. Forgotten
 * at warc_capture_reset. Returns 0 or -ENOMEM. */
int warc_capture_refers(struct warc_capture *cap, const char *uri, const char *date,
                        const char *id);

/* Returns 1 once a response status line was captured. */
int warc_capture_has_response(const struct warc_capture *cap);

/* Returns the captured response's protocol: "h2", "h3", or NULL for
 * HTTP/1.x. */
const char *warc_capture_protocol(const struct warc_capture *cap);

/* Writes the request and response records of cap for uri, fetched from ip
 * (may be NULL), with WARC-Truncated: truncated when not NULL ("length",
 * "time", "disconnect"), and a CDXJ line. The response is a revisit record
 * instead (its HTTP head kept, no payload) when it is a 304 (profile
 * server-not-modified), or a 2xx payload, whole and not empty, whose
 * digest the writer's set already holds (profile identical-payload-digest,
 * referring to the first record of that payload); else its payload digest
 * goes into the set. Records that would start a file past --warc-max-size
 * start the next one. Thread-safe. Returns 0 or -errno: the first write
 * error sticks, and every later write returns it. */
int warc_write(struct warc *w, struct warc_capture *cap, const char *uri,
               const char *ip, const char *truncated);

/* Reads the CDXJ index at path (an earlier crawl's --cdx, or pywb's or
 * warcio's) into seen: each response line of a 2xx status, its payload
 * digest with its URL and date (from the line's 14-digit stamp), so that
 * this crawl writes those payloads as revisits. Revisit lines, and lines
 * of other statuses, are passed over; *taken counts the lines that went
 * in, *unread those that are not CDXJ. Returns 0, or -errno when the file
 * cannot be read. */
int warc_cdx_load(const char *path, struct dedupe *seen, size_t *taken, size_t *unread);

/* Writes the SURT form of url (the sort key of CDX indexes: host labels
 * reversed, comma-joined, lower case, "www." dropped, then ")" and the path
 * and query) into out of size n. Returns 0, or -1 when it does not fit or
 * url is not http(s). */
int warc_surt(const char *url, char *out, size_t n);

#endif

/* warc.c: the WARC/1.1 writer. Each record is one gzip member (so that a
 * reader can seek to any record, as the WARC standard's annex D asks); a
 * transfer's payload is spooled (memory, then a temporary file) while it
 * arrives and its SHA-1 digests are taken as it goes, so that writing a
 * record holds the writer's lock for one copy and nothing more. A payload
 * the crawl's digest set (dedupe.c) already holds, and a 304, are written
 * as revisit records (WARC 1.1, 6.7); the set is also filled from an
 * earlier crawl's CDXJ index. The digests are OpenSSL's (digest.c); what
 * goes over the network is fetch's business. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <openssl/rand.h>
#include <zlib.h>

#include "dedupe.h"
#include "digest.h"
#include "http_reason.h"
#include "io.h"
#include "json.h"
#include "spool.h"
#include "strbuf.h"
#include "warc.h"

extern char **environ;

/* Payload bytes a capture keeps in memory before it spools to a file. */
#define WARC_MEM_BOUND (64 * 1024)
#define WARC_CHUNK     (64 * 1024)

struct warc_capture {
    struct strbuf req;        /* request head as sent */
    struct strbuf head;       /* response head, HTTP/1.1 syntax */
    struct spool *body;       /* payload */
    struct digest *pay, *block;  /* SHA-1 of the payload, and of head + payload */
    int    head_done;         /* the blank line ending the head was seen */
    int    block_started;     /* the head went into block */
    const char *proto;        /* "h2", "h3" or NULL */
    char   mime[96];          /* Content-Type's media type, for the index */
    long   status;
    char   date[40];          /* WARC-Date of the transfer's start */
    char   stamp[16];         /* the same as 14 digits, for the index */
    int    err;               /* a spool write failed (-errno) */
    char  *ref_uri, *ref_date, *ref_id;  /* what a 304 revalidated, or NULL */
};

struct warc {
    pthread_mutex_t lock;
    struct warc_conf conf;
    char  *stem;              /* the path without .warc.gz, worker suffix included */
    char  *name;              /* the file being written */
    char  *cdx_path;
    unsigned part;            /* numbered files: the current one */
    int    fd;
    uint64_t size;            /* bytes in the current file */
    int    records;           /* records in it, warcinfo included */
    char   info_id[64];       /* its warcinfo's WARC-Record-ID */
    FILE  *cdx;
    int    err;               /* the first write error (-errno) */
    z_stream z;
    unsigned char *out;       /* deflate's output, WARC_CHUNK bytes */
    char  *in;                /* a spooled payload read back, WARC_CHUNK bytes */
};

/* ---- small texts ---------------------------------------------------------- */

/* A random (version 4) UUID as a WARC-Record-ID, angle brackets included. */
static void record_id(char out[64])
{
    unsigned char u[16];
    if (RAND_bytes(u, sizeof u) != 1) {
        for (size_t i = 0; i < sizeof u; i++)
            u[i] = (unsigned char)random();
    }
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    snprintf(out, 64, "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x>", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
             u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Now in WARC-Date's form with microseconds (WARC 1.1, 5.4: W3C-ISO8601
 * with fractions of a second), and as 14 digits for the index. */
static void now_text(char date[40], char stamp[16])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(date, 40, "%.20s.%06dZ", base, (int)(ts.tv_nsec / 1000));
    if (stamp)
        strftime(stamp, 16, "%Y%m%d%H%M%S", &tm);
}

int warc_surt(const char *url, char *out, size_t n)
{
    const char *p;
    if (strncasecmp(url, "http://", 7) == 0)
        p = url + 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        p = url + 8;
    else
        return -1;
    size_t hl = strcspn(p, "/?#");
    const char *rest = p + hl;
    const char *at = memchr(p, '@', hl);
    if (at) {
        hl -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    size_t host_len = hl;
    const char *colon = p[0] == '[' ? memchr(p, ']', hl) : NULL;
    colon = memchr(colon ? colon : p, ':', hl - (size_t)((colon ? colon : p) - p));
    if (colon)
        host_len = (size_t)(colon - p);
    if (host_len > 4 && strncasecmp(p, "www.", 4) == 0) {
        p += 4;
        host_len -= 4;
        if (colon)
            hl -= 4;
    }
    size_t o = 0;
    /* Labels from the last to the first. */
    size_t end = host_len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && p[start - 1] != '.')
            start--;
        if (o + (end - start) + 1 >= n)
            return -1;
        if (o)
            out[o++] = ',';
        for (size_t i = start; i < end; i++)
            out[o++] = (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i]);
        end = start ? start - 1 : 0;
    }
    if (colon) {
        size_t pl = hl - host_len;
        if (o + pl >= n)
            return -1;
        memcpy(out + o, colon, pl);
        o += pl;
    }
    size_t rl = strcspn(rest, "#");
    if (o + rl + 3 >= n)
        return -1;
    out[o++] = ')';
    if (rl == 0 || rest[0] != '/')
        out[o++] = '/';
    for (size_t i = 0; i < rl; i++)
        out[o++] = (char)((rest[i] >= 'A' && rest[i] <= 'Z') ? rest[i] + 32 : rest[i]);
    out[o] = '\0';
    return 0;
}

/* ---- the capture of one transfer ---------------------------------------- */

struct warc_capture *warc_capture_new(void)
{
    struct warc_capture *cap = calloc(1, sizeof *cap);
    if (!cap)
        return NULL;
    if (!(cap->body = spool_new(WARC_MEM_BOUND)) || !(cap->pay = digest_new()) ||
        !(cap->block = digest_new())) {
        warc_capture_free(cap);
        return NULL;
    }
    warc_capture_reset(cap);
    return cap;
}

void warc_capture_free(struct warc_capture *cap)
{
    if (!cap)
        return;
    sb_free(&cap->req);
    sb_free(&cap->head);
    spool_free(cap->body);
    digest_free(cap->pay);
    digest_free(cap->block);
    warc_capture_refers(cap, NULL, NULL, NULL);
    free(cap);
}

/* Forgets the response: a new status line, or a new transfer. */
static void response_reset(struct warc_capture *cap)
{
    sb_reset(&cap->head);
    spool_reset(cap->body);
    cap->head_done = cap->block_started = 0;
    cap->proto = NULL;
    cap->mime[0] = '\0';
    cap->status = 0;
    digest_reset(cap->pay);
    digest_reset(cap->block);
}

void warc_capture_reset(struct warc_capture *cap)
{
    sb_reset(&cap->req);
    response_reset(cap);
    cap->err = 0;
    now_text(cap->date, cap->stamp);
    warc_capture_refers(cap, NULL, NULL, NULL);
}

/* Replaces *to with a copy of s (NULL: none). Returns 0, or -1 when the
 * copy could not be made (*to is then NULL). */
static int set_text(char **to, const char *s)
{
    free(*to);
    *to = s ? strdup(s) : NULL;
    return s && !*to ? -1 : 0;
}

int warc_capture_refers(struct warc_capture *cap, const char *uri, const char *date,
                        const char *id)
{
    int rc = set_text(&cap->ref_uri, uri);
    rc |= set_text(&cap->ref_date, date);
    rc |= set_text(&cap->ref_id, id);
    return rc ? -ENOMEM : 0;
}

void warc_capture_request(struct warc_capture *cap, const char *p, size_t n)
{
    /* libcurl shows an HTTP/2 request as "GET /path HTTP/2" and headers. */
    const char *eol = memchr(p, '\n', n);
    if (cap->req.len == 0 && eol && eol - p >= 8 &&
        (memcmp(eol - 8, " HTTP/2\r", 8) == 0 || memcmp(eol - 8, " HTTP/3\r", 8) == 0)) {
        sb_add(&cap->req, p, (size_t)(eol - 8 - p));
        sb_adds(&cap->req, " HTTP/1.1\r\n");
        n -= (size_t)(eol + 1 - p);
        p = eol + 1;
    }
    sb_add(&cap->req, p, n);
}

/* The reason phrase of an HTTP/2 response's status (which has none). */
static const char *reason(long code)
{
    const char *r = http_reason(code);
    return r ? r : "";
}

static void take_mime(struct warc_capture *cap, const char *v, size_t n)
{
    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    size_t k = 0;
    while (k < n && k + 1 < sizeof cap->mime && v[k] != ';' && v[k] != ' ' &&
           v[k] != '\r' && v[k] != '\n')
        k++;
    memcpy(cap->mime, v, k);
    cap->mime[k] = '\0';
}

void warc_capture_header(struct warc_capture *cap, const char *p, size_t n)
{
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        response_reset(cap);
        const char *sp = memchr(p, ' ', n);
        if (!sp) {
            sb_add(&cap->head, p, n);
            return;
        }
        cap->status = strtol(sp + 1, NULL, 10);
        if (sp - p == 6 && (p[5] == '2' || p[5] == '3')) {
            cap->proto = p[5] == '2' ? "h2" : "h3";
            sb_printf(&cap->head, "HTTP/1.1 %03ld %s\r\n", cap->status, reason(cap->status));
            return;
        }
        sb_add(&cap->head, p, n);
        return;
    }
    if (cap->head_done)
        return;                 /* trailers */
    if (n <= 2 && (p[0] == '\r' || p[0] == '\n')) {
        sb_adds(&cap->head, "\r\n");
        cap->head_done = 1;
        return;
    }
    if (n > 18 && strncasecmp(p, "Transfer-Encoding:", 18) == 0)
        sb_adds(&cap->head, "X-Crawl-Original-");
    else if (n > 13 && strncasecmp(p, "Content-Type:", 13) == 0)
        take_mime(cap, p + 13, n - 13);
    sb_add(&cap->head, p, n);
}

/* The head goes into the block digest before the first payload byte. */
static void start_block(struct warc_capture *cap)
{
    if (cap->block_started)
        return;
    if (!cap->head_done)
        sb_adds(&cap->head, "\r\n");
    cap->head_done = cap->block_started = 1;
    digest_add(cap->block, cap->head.data, cap->head.len);
}

int warc_capture_body(struct warc_capture *cap, const char *p, size_t n)
{
    start_block(cap);
    if (cap->err)
        return cap->err;
    digest_add(cap->pay, p, n);
    digest_add(cap->block, p, n);
    int rc = spool_add(cap->body, p, n, NULL);
    if (rc)
        cap->err = rc;
    return rc;
}

int warc_capture_has_response(const struct warc_capture *cap)
{
    return cap->head.len > 0;
}

const char *warc_capture_protocol(const struct warc_capture *cap)
{
    return cap->proto;
}

/* ---- the files ---------------------------------------------------------- */

/* Deflates n bytes at p into the current member; flush ends it. */
static int gz_put(struct warc *w, const void *p, size_t n, int flush)
{
    w->z.next_in = (unsigned char *)p;
    w->z.avail_in = (uInt)n;
    do {
        w->z.next_out = w->out;
        w->z.avail_out = WARC_CHUNK;
        int zr = deflate(&w->z, flush ? Z_FINISH : Z_NO_FLUSH);
        if (zr == Z_STREAM_ERROR)
            return -EIO;
        size_t got = WARC_CHUNK - w->z.avail_out;
        int rc = io_write_all(w->fd, w->out, got);
        if (rc)
            return rc;
        w->size += got;
    } while (w->z.avail_in > 0 || (flush && w->z.avail_out == 0));
    return 0;
}

/* Writes one record: WARC head fields hdr (each ending in CRLF), then the
 * block: pre (in memory) and, when body is not NULL, the spooled payload. */
static int put_record(struct warc *w, const char *hdr, const struct strbuf *pre,
                      struct spool *body)
{
    uint64_t blen = pre->len + (body ? spool_size(body) : 0);
    char len[64];
    int rc;
    snprintf(len, sizeof len, "Content-Length: %llu\r\n\r\n", (unsigned long long)blen);
    deflateReset(&w->z);
    if ((rc = gz_put(w, "WARC/1.1\r\n", 10, 0)) || (rc = gz_put(w, hdr, strlen(hdr), 0)) ||
        (rc = gz_put(w, len, strlen(len), 0)) || (rc = gz_put(w, pre->data, pre->len, 0)))
        return rc;
    for (uint64_t off = 0; body && off < spool_size(body);) {
        size_t k = spool_size(body) - off < WARC_CHUNK ? (size_t)(spool_size(body) - off) : WARC_CHUNK;
        if ((rc = spool_get(body, off, w->in, k)) || (rc = gz_put(w, w->in, k, 0)))
            return rc;
        off += k;
    }
    if ((rc = gz_put(w, "\r\n\r\n", 4, 1)))
        return rc;
    w->records++;
    return 0;
}

/* The file name for the current part. */
static int make_name(struct warc *w)
{
    free(w->name);
    w->name = NULL;
    int r = w->conf.max_size ? asprintf(&w->name, "%s-%05u.warc.gz", w->stem, w->part)
                             : asprintf(&w->name, "%s.warc.gz", w->stem);
    return r < 0 ? -ENOMEM : 0;
}

static int put_warcinfo(struct warc *w)
{
    struct strbuf f = { 0 }, h = { 0 };
    char date[40];
    now_text(date, NULL);
    record_id(w->info_id);
    const char *base = strrchr(w->name, '/');
    sb_printf(&f, "software: %s\r\n", w->conf.software);
    sb_adds(&f, "format: WARC File Format 1.1\r\n");
    sb_adds(&f, "conformsTo: http://iipc.github.io/warc-specifications/specifications/"
            "warc-format/warc-1.1/\r\n");
    if (w->conf.options)
        sb_printf(&f, "options: %s\r\n", w->conf.options);
    sb_printf(&f, "date: %s\r\n", date);
    sb_printf(&h, "WARC-Type: warcinfo\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\n"
              "WARC-Filename: %s\r\nContent-Type: application/warc-fields\r\n",
              w->info_id, date, base ? base + 1 : w->name);
    int rc = f.nomem || h.nomem ? -ENOMEM : put_record(w, h.data, &f, NULL);
    sb_free(&f);
    sb_free(&h);
    return rc;
}

/* Opens the current part's file and writes its warcinfo. */
static int open_part(struct warc *w)
{
    int rc = make_name(w);
    if (rc)
        return rc;
    w->fd = open(w->name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0)
        return -errno;
    w->size = 0;
    w->records = 0;
    return put_warcinfo(w);
}

static int close_part(struct warc *w)
{
    int rc = 0;
    if (w->fd >= 0 && close(w->fd) != 0)
        rc = -errno;
    w->fd = -1;
    return rc;
}

/* Inserts suffix before ".ext" at the end of path, or appends it. */
static char *with_suffix(const char *path, const char *ext, const char *suffix, int keep_ext)
{
    size_t n = strlen(path), e = strlen(ext);
    char *s;
    if (n > e && strcmp(path + n - e, ext) == 0) {
        if (asprintf(&s, "%.*s%s%s", (int)(n - e), path, suffix, keep_ext ? ext : "") < 0)
            return NULL;
    } else if (asprintf(&s, "%s%s", path, suffix) < 0) {
        return NULL;
    }
    return s;
}

int warc_open(struct warc **out, const struct warc_conf *conf, char *failed, size_t n)
{
    char wsuf[32] = "";
    int rc = -ENOMEM;
    struct warc *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->conf = *conf;
    w->fd = -1;
    pthread_mutex_init(&w->lock, NULL);
    if (conf->worker >= 0)
        snprintf(wsuf, sizeof wsuf, "-w%d", conf->worker);
    if (!(w->stem = with_suffix(conf->path, ".warc.gz", wsuf, 0)) ||
        !(w->out = malloc(WARC_CHUNK)) || !(w->in = malloc(WARC_CHUNK)))
        goto err;
    if (deflateInit2(&w->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        goto err;
    if (conf->cdx) {
        if (!(w->cdx_path = with_suffix(conf->cdx, ".cdxj", wsuf, 1)))
            goto err;
        if (!(w->cdx = fopen(w->cdx_path, "we"))) {
            rc = -errno;
            snprintf(failed, n, "--cdx: cannot write %s", w->cdx_path);
            goto err;
        }
    }
    if ((rc = open_part(w)) != 0) {
        snprintf(failed, n, "--warc: cannot write %s", w->name ? w->name : conf->path);
        goto err;
    }
    *out = w;
    return 0;
err:
    if (n && rc == -ENOMEM)
        snprintf(failed, n, "--warc: cannot write %s", conf->path);
    w->err = rc;
    warc_close(w);
    return rc;
}

const char *warc_file_name(const struct warc *w)
{
    return w->name;
}

/* Sorts the lines of the n files in into out (which may be one of them)
 * with sort(1), which spills to disk for any size, in the C locale:
 * CDXJ readers (pywb, warcio's) look lines up by binary search. Returns 0
 * or -errno (-EIO: sort failed). */
static int sort_files(const char *out, char *const *in, size_t n)
{
    char **argv = calloc(n + 4, sizeof *argv);
    if (!argv)
        return -ENOMEM;
    argv[0] = "sort";
    argv[1] = "-o";
    argv[2] = (char *)out;
    memcpy(argv + 3, in, n * sizeof *in);
    char *const env[] = { "LC_ALL=C", NULL };
    pid_t pid;
    int st;
    /* sort starts with no signal blocked, whatever the caller's threads
     * block (the crawl command takes its signals on a thread of its own). */
    posix_spawnattr_t attr;
    sigset_t none;
    sigemptyset(&none);
    int rc = posix_spawnattr_init(&attr);
    if (rc) {
        free(argv);
        return -rc;
    }
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    rc = posix_spawnp(&pid, "sort", NULL, &attr, argv, env);
    posix_spawnattr_destroy(&attr);
    free(argv);
    if (rc)
        return -rc;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* Sorts the index in place. */
static int sort_index(const char *path)
{
    char *const in[] = { (char *)path };
    return sort_files(path, in, 1);
}

int warc_close(struct warc *w)
{
    if (!w)
        return 0;
    int rc = w->err, r;
    if ((r = close_part(w)) && !rc)
        rc = r;
    if (w->cdx) {
        if ((fclose(w->cdx) != 0) && !rc)
            rc = -errno;
        if (!rc && (r = sort_index(w->cdx_path)))
            rc = r;
    }
    if (w->out)
        deflateEnd(&w->z);
    pthread_mutex_destroy(&w->lock);
    free(w->out);
    free(w->in);
    free(w->stem);
    free(w->name);
    free(w->cdx_path);
    free(w);
    return rc;
}

/* The revisit profiles of WARC 1.1, 6.7.2 and 6.7.3 (compared by address). */
static const char PROFILE_IDENTICAL[] =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
static const char PROFILE_NOT_MODIFIED[] =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/* A transfer's records as they are to be written: their ids, their
 * digests, and whether the response is a revisit. */
struct pair {
    char req_id[64], resp_id[64];
    char pay[DIGEST_TEXT];      /* the payload's digest */
    char block[DIGEST_TEXT];    /* the response's (or revisit's) block's */
    char rblock[DIGEST_TEXT];   /* the request's block's */
    const char *profile;        /* a revisit's WARC-Profile; NULL: a response */
    struct dedupe_first refers; /* the record a revisit refers to: uri NULL when
                                 * not known, date and id NULL or "" likewise */
};

/* The CDXJ line of a response or revisit record at offset off, len bytes
 * long. A revisit's mime is "warc/revisit", as pywb and warcio index it;
 * a 304's carries no digest (its payload is the revalidated record's). */
static int put_cdx(struct warc *w, const struct warc_capture *cap, const char *uri,
                   const struct pair *pr, uint64_t off, uint64_t len)
{
    char *key = malloc(8192);
    struct strbuf b = { 0 };
    if (!key)
        return -ENOMEM;
    if (warc_surt(uri, key, 8192) != 0)
        snprintf(key, 8192, "%s", uri);
    const char *base = strrchr(w->name, '/');
    sb_printf(&b, "%s %s {\"url\":", key, cap->stamp);
    json_string_sb(&b, uri);
    sb_adds(&b, ",\"mime\":");
    json_string_sb(&b, pr->profile ? "warc/revisit" : cap->mime[0] ? cap->mime : "unk");
    sb_printf(&b, ",\"status\":\"%03ld\"", cap->status);
    if (pr->profile != PROFILE_NOT_MODIFIED)
        sb_printf(&b, ",\"digest\":\"%s\"", pr->pay);
    sb_printf(&b, ",\"length\":\"%llu\",\"offset\":\"%llu\",\"filename\":",
              (unsigned long long)len, (unsigned long long)off);
    json_string_sb(&b, base ? base + 1 : w->name);
    sb_adds(&b, "}\n");
    free(key);
    int rc = b.nomem ? -ENOMEM : 0;
    if (!rc && fwrite(b.data, 1, b.len, w->cdx) != b.len)
        rc = -errno ? -errno : -EIO;
    sb_free(&b);
    return rc;
}

/* The fields every record of a pair has. */
static void common_fields(struct strbuf *h, const char *type, const char *id,
                          const char *date, const char *uri, const char *ip,
                          const char *other, const char *info_id)
{
    sb_printf(h, "WARC-Type: %s\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\n"
              "WARC-Target-URI: %s\r\nWARC-Concurrent-To: %s\r\nWARC-Warcinfo-ID: %s\r\n",
              type, id, date, uri, other, info_id);
    if (ip && *ip)
        sb_printf(h, "WARC-IP-Address: %s\r\n", ip);
}

/* Whether cap's response is written as a revisit, in pr: a 304 is one
 * (server-not-modified, referring to what the caller said it revalidated);
 * so is a 2xx payload, whole and not empty, whose digest the crawl's set
 * already holds (identical-payload-digest). Anything else is claimed as
 * the first of its digest, or was not worth claiming: a response. */
static void revisit_or_not(struct warc *w, struct warc_capture *cap, const char *uri,
                           const char *truncated, const unsigned char md[DIGEST_LEN],
                           struct pair *pr)
{
    pr->profile = NULL;
    memset(&pr->refers, 0, sizeof pr->refers);
    if (cap->status == 304) {
        pr->profile = PROFILE_NOT_MODIFIED;
        pr->refers.uri = cap->ref_uri;
        pr->refers.date = cap->ref_date;
        pr->refers.id = cap->ref_id;
        return;
    }
    if (!w->conf.seen || truncated || cap->status < 200 || cap->status > 299 ||
        spool_size(cap->body) == 0)
        return;
    struct dedupe_first first = { uri, cap->date, pr->resp_id };
    if (dedupe_claim(w->conf.seen, DEDUPE_PAYLOAD, md, &first, &pr->refers) == DEDUPE_SEEN)
        pr->profile = PROFILE_IDENTICAL;
    else
        memset(&pr->refers, 0, sizeof pr->refers);
}

/* Fills pr for cap: ids, digests, revisit or not. Needs no lock. Returns 0
 * or -ENOMEM (OpenSSL could not give a digest). */
static int pair_prepare(struct warc *w, struct warc_capture *cap, const char *uri,
                        const char *truncated, struct pair *pr)
{
    unsigned char md[DIGEST_LEN], bmd[DIGEST_LEN], rmd[DIGEST_LEN];
    start_block(cap);
    record_id(pr->req_id);
    record_id(pr->resp_id);
    if (digest_peek(cap->pay, md) != 0 ||
        digest_of(cap->req.data ? cap->req.data : "", cap->req.len, rmd) != 0)
        return -ENOMEM;
    revisit_or_not(w, cap, uri, truncated, md, pr);
    /* A revisit's block is the response's head alone. */
    if (pr->profile ? digest_of(cap->head.data, cap->head.len, bmd) != 0
                    : digest_peek(cap->block, bmd) != 0)
        return -ENOMEM;
    digest_text(md, pr->pay);
    digest_text(bmd, pr->block);
    digest_text(rmd, pr->rblock);
    return 0;
}

static int write_request(struct warc *w, struct warc_capture *cap, const char *uri,
                         const char *ip, const struct pair *pr)
{
    struct strbuf h = { 0 };
    common_fields(&h, "request", pr->req_id, cap->date, uri, ip, pr->resp_id, w->info_id);
    sb_printf(&h, "WARC-Block-Digest: %s\r\n"
              "Content-Type: application/http;msgtype=request\r\n", pr->rblock);
    int rc = h.nomem ? -ENOMEM : put_record(w, h.data, &cap->req, NULL);
    sb_free(&h);
    return rc;
}

/* The response record, or the revisit record that stands for it: the
 * response's head kept, no payload (WARC 1.1, 6.7.2: "the payload
 * itself is not recorded"). */
static int write_response(struct warc *w, struct warc_capture *cap, const char *uri,
                          const char *ip, const char *truncated, const struct pair *pr)
{
    struct strbuf h = { 0 };
    common_fields(&h, pr->profile ? "revisit" : "response", pr->resp_id, cap->date, uri, ip,
                  pr->req_id, w->info_id);
    if (cap->proto)
        sb_printf(&h, "WARC-Protocol: %s\r\n", cap->proto);
    if (pr->profile) {
        sb_printf(&h, "WARC-Profile: %s\r\n", pr->profile);
        if (pr->refers.id && *pr->refers.id)
            sb_printf(&h, "WARC-Refers-To: %s\r\n", pr->refers.id);
        if (pr->refers.uri)
            sb_printf(&h, "WARC-Refers-To-Target-URI: %s\r\n", pr->refers.uri);
        if (pr->refers.date && *pr->refers.date)
            sb_printf(&h, "WARC-Refers-To-Date: %s\r\n", pr->refers.date);
    } else if (truncated) {
        sb_printf(&h, "WARC-Truncated: %s\r\n", truncated);
    }
    sb_printf(&h, "WARC-Block-Digest: %s\r\n", pr->block);
    if (pr->profile != PROFILE_NOT_MODIFIED)
        sb_printf(&h, "WARC-Payload-Digest: %s\r\n", pr->pay);
    sb_adds(&h, "Content-Type: application/http;msgtype=response\r\n");
    uint64_t off = w->size;
    int rc = h.nomem ? -ENOMEM : put_record(w, h.data, &cap->head, pr->profile ? NULL : cap->body);
    if (!rc && w->cdx)
        rc = put_cdx(w, cap, uri, pr, off, w->size - off);
    sb_free(&h);
    return rc;
}

int warc_write(struct warc *w, struct warc_capture *cap, const char *uri,
               const char *ip, const char *truncated)
{
    struct pair pr;
    int rc;
    if (cap->err)
        return cap->err;
    if (cap->req.nomem || cap->head.nomem)
        return -ENOMEM;
    /* Out of the lock: the digests' copies, and the claim in the set. */
    if ((rc = pair_prepare(w, cap, uri, truncated, &pr)) != 0)
        return rc;
    pthread_mutex_lock(&w->lock);
    if (!(rc = w->err) && w->conf.max_size && w->records > 1 && w->size >= w->conf.max_size) {
        w->part++;
        if (!(rc = close_part(w)))
            rc = open_part(w);
    }
    if (!rc && cap->req.len)
        rc = write_request(w, cap, uri, ip, &pr);
    if (!rc)
        rc = write_response(w, cap, uri, ip, truncated, &pr);
    if (rc && !w->err)
        w->err = rc;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/* Cuts path after its last newline: a worker killed mid-write leaves a
 * line cut short, which is no index line. Returns 0 or -errno. */
static int drop_cut_line(const char *path, off_t size)
{
    char buf[4096];
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    off_t end = size;
    int rc = 0;
    while (end > 0) {
        off_t at = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
        ssize_t got = pread(fd, buf, (size_t)(end - at), at);
        if (got <= 0) {
            rc = got < 0 ? -errno : -EIO;
            break;
        }
        char *nl = memrchr(buf, '\n', (size_t)got);
        if (nl) {
            end = at + (nl - buf) + 1;
            break;
        }
        end = at;
    }
    if (!rc && end < size && ftruncate(fd, end) != 0)
        rc = -errno;
    close(fd);
    return rc;
}

int warc_cdx_merge(const char *cdx, int nworkers, char *failed, size_t n)
{
    char **in = calloc((size_t)nworkers + 1, sizeof *in);
    size_t k = 0;
    int rc = in ? 0 : -ENOMEM;
    for (int i = 0; i < nworkers && !rc; i++) {
        char suf[32];
        snprintf(suf, sizeof suf, "-w%d", i);
        char *p = with_suffix(cdx, ".cdxj", suf, 1);
        struct stat st;
        if (!p)
            rc = -ENOMEM;
        else if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            free(p);        /* a worker that opened no index, or was refused it */
        else if (!(rc = drop_cut_line(p, st.st_size)))
            in[k++] = p;
        else
            snprintf(failed, n, "--cdx: cannot read %s", p);
    }
    if (!rc && k > 0 && (rc = sort_files(cdx, in, k)) != 0)
        snprintf(failed, n, "--cdx: cannot write %s", cdx);
    for (size_t i = 0; i < k; i++) {
        if (!rc)
            unlink(in[i]);
        free(in[i]);
    }
    free(in);
    if (rc == -ENOMEM && n)
        snprintf(failed, n, "--cdx: cannot write %s", cdx);
    return rc;
}

/* ---- an earlier crawl's index, for revisits ------------------------------ */

/* Reads one CDXJ line ("KEY STAMP {json}") into the set: a response of a
 * 2xx status with a digest, as put_cdx writes it (pywb's and warcio's
 * lines too: a digest without "sha1:", a status as a number). Returns 1
 * when it went in (or was in already), 0 for a line that is no such
 * response (a revisit, another status), -1 for one that is not read. */
static int cdx_line(struct dedupe *seen, const char *line)
{
    const char *sp = strchr(line, ' ');
    const char *js = sp ? strchr(sp + 1, ' ') : NULL;
    if (!js || js - sp - 1 < 14 || strspn(sp + 1, "0123456789") < 14)
        return -1;
    const char *t = sp + 1;
    char date[32];
    snprintf(date, sizeof date, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", t, t + 4, t + 6, t + 8,
             t + 10, t + 12);
    struct strbuf url = { 0 }, mime = { 0 }, status = { 0 }, dig = { 0 };
    int rc = -1;
    unsigned char md[DIGEST_LEN];
    if (json_member(js + 1, "url", &url) == 1 && json_member(js + 1, "status", &status) >= 0 &&
        json_member(js + 1, "mime", &mime) >= 0 && json_member(js + 1, "digest", &dig) == 1 &&
        !url.nomem && !status.nomem && !mime.nomem && !dig.nomem &&
        digest_parse(dig.data, dig.len, md) == 0) {
        rc = 0;
        long st = status.data ? strtol(status.data, NULL, 10) : 0;
        if (st >= 200 && st < 300 && !(mime.data && strcmp(mime.data, "warc/revisit") == 0)) {
            struct dedupe_first first = { url.data, date, NULL }, got;
            (void)dedupe_claim(seen, DEDUPE_PAYLOAD, md, &first, &got);
            rc = 1;
        }
    }
    sb_free(&url);
    sb_free(&mime);
    sb_free(&status);
    sb_free(&dig);
    return rc;
}

int warc_cdx_load(const char *path, struct dedupe *seen, size_t *taken, size_t *unread)
{
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    *taken = *unread = 0;
    if (!f)
        return -errno;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '!')      /* a blank line; a header ("!OpenWayback...") */
            continue;
        int r = cdx_line(seen, line);
        if (r > 0)
            (*taken)++;
        else if (r < 0)
            (*unread)++;
    }
    int rc = ferror(f) ? -EIO : 0;
    free(line);
    fclose(f);
    return rc;
}

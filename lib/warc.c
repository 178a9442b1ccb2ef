/* warc.c: the WARC/1.1 writer. Each record is one gzip member (so that a
 * reader can seek to any record, as the WARC standard's annex D asks); a
 * transfer's payload is spooled (memory, then a temporary file) while it
 * arrives and its SHA-1 digests are taken as it goes, so that writing a
 * record holds the writer's lock for one copy and nothing more. The
 * digests are OpenSSL's; what goes over the network is fetch's business. */
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
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <zlib.h>

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
    EVP_MD_CTX *pay, *block;  /* SHA-1 of the payload, and of head + payload */
    int    head_done;         /* the blank line ending the head was seen */
    int    block_started;     /* the head went into block */
    const char *proto;        /* "h2", "h3" or NULL */
    char   mime[96];          /* Content-Type's media type, for the index */
    long   status;
    char   date[40];          /* WARC-Date of the transfer's start */
    char   stamp[16];         /* the same as 14 digits, for the index */
    int    err;               /* a spool write failed (-errno) */
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

char *warc_base32(const unsigned char *p, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8) | p[i];
        bits += 8;
        while (bits >= 5) {
            out[o++] = abc[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out[o++] = abc[(acc << (5 - bits)) & 31];
    out[o] = '\0';
    return out;
}

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
    if (!(cap->body = spool_new(WARC_MEM_BOUND)) || !(cap->pay = EVP_MD_CTX_new()) ||
        !(cap->block = EVP_MD_CTX_new())) {
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
    EVP_MD_CTX_free(cap->pay);
    EVP_MD_CTX_free(cap->block);
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
    EVP_DigestInit_ex(cap->pay, EVP_sha1(), NULL);
    EVP_DigestInit_ex(cap->block, EVP_sha1(), NULL);
}

void warc_capture_reset(struct warc_capture *cap)
{
    sb_reset(&cap->req);
    response_reset(cap);
    cap->err = 0;
    now_text(cap->date, cap->stamp);
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
    EVP_DigestUpdate(cap->block, cap->head.data, cap->head.len);
}

int warc_capture_body(struct warc_capture *cap, const char *p, size_t n)
{
    start_block(cap);
    if (cap->err)
        return cap->err;
    EVP_DigestUpdate(cap->pay, p, n);
    EVP_DigestUpdate(cap->block, p, n);
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

/* The CDXJ line of a response record at offset off, len bytes long. */
static int put_cdx(struct warc *w, const struct warc_capture *cap, const char *uri,
                   const char *digest, uint64_t off, uint64_t len)
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
    json_string_sb(&b, cap->mime[0] ? cap->mime : "unk");
    sb_printf(&b, ",\"status\":\"%03ld\",\"digest\":\"sha1:%s\",\"length\":\"%llu\","
              "\"offset\":\"%llu\",\"filename\":", cap->status, digest,
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

static void digest_text(EVP_MD_CTX *ctx, char out[40])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    EVP_MD_CTX *copy = EVP_MD_CTX_new();
    if (copy && EVP_MD_CTX_copy_ex(copy, ctx) && EVP_DigestFinal_ex(copy, md, &mdlen))
        warc_base32(md, mdlen, out);
    else
        out[0] = '\0';
    EVP_MD_CTX_free(copy);
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

static int write_pair(struct warc *w, struct warc_capture *cap, const char *uri,
                      const char *ip, const char *truncated)
{
    char req_id[64], resp_id[64], pay[40], block[40], rblock[40];
    struct strbuf h = { 0 };
    int rc;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;

    start_block(cap);
    record_id(req_id);
    record_id(resp_id);
    digest_text(cap->pay, pay);
    digest_text(cap->block, block);
    EVP_MD_CTX *r = EVP_MD_CTX_new();
    if (!r || !EVP_DigestInit_ex(r, EVP_sha1(), NULL) ||
        !EVP_DigestUpdate(r, cap->req.data ? cap->req.data : "", cap->req.len) ||
        !EVP_DigestFinal_ex(r, md, &mdlen)) {
        EVP_MD_CTX_free(r);
        return -ENOMEM;
    }
    EVP_MD_CTX_free(r);
    warc_base32(md, mdlen, rblock);
    if (cap->req.len) {
        common_fields(&h, "request", req_id, cap->date, uri, ip, resp_id, w->info_id);
        sb_printf(&h, "WARC-Block-Digest: sha1:%s\r\n"
                  "Content-Type: application/http;msgtype=request\r\n", rblock);
        if ((rc = h.nomem ? -ENOMEM : put_record(w, h.data, &cap->req, NULL)))
            goto out;
        sb_reset(&h);
    }
    common_fields(&h, "response", resp_id, cap->date, uri, ip, req_id, w->info_id);
    if (cap->proto)
        sb_printf(&h, "WARC-Protocol: %s\r\n", cap->proto);
    if (truncated)
        sb_printf(&h, "WARC-Truncated: %s\r\n", truncated);
    sb_printf(&h, "WARC-Block-Digest: sha1:%s\r\nWARC-Payload-Digest: sha1:%s\r\n"
              "Content-Type: application/http;msgtype=response\r\n", block, pay);
    uint64_t off = w->size;
    if ((rc = h.nomem ? -ENOMEM : put_record(w, h.data, &cap->head, cap->body)))
        goto out;
    if (w->cdx)
        rc = put_cdx(w, cap, uri, pay, off, w->size - off);
out:
    sb_free(&h);
    return rc;
}

int warc_write(struct warc *w, struct warc_capture *cap, const char *uri,
               const char *ip, const char *truncated)
{
    int rc;
    if (cap->err)
        return cap->err;
    if (cap->req.nomem || cap->head.nomem)
        return -ENOMEM;
    pthread_mutex_lock(&w->lock);
    if (!(rc = w->err) && w->conf.max_size && w->records > 1 && w->size >= w->conf.max_size) {
        w->part++;
        if (!(rc = close_part(w)))
            rc = open_part(w);
    }
    if (!rc)
        rc = write_pair(w, cap, uri, ip, truncated);
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

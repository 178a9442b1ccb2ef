/* validators.c: --validators FILE and --if-modified-since DATE (see
 * validators.h): a table of each URL's ETag and Last-Modified, read from
 * the file before the run, handed to the listed jobs by the core's made
 * hook, updated from the rows, and written back whole after the run. What
 * a 304 means for the crawl is the core's and the store's business; here
 * it only keeps the validators the URL had. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>

#include "hooks.h"
#include "hset.h"
#include "io.h"
#include "strbuf.h"
#include "validators.h"

struct entry {
    char *url;
    char *etag;                 /* as sent; NULL: none */
    char *modified;             /* an HTTP-date; NULL: none */
};

struct validators {
    char *path;                 /* the file; NULL: none (--if-modified-since alone) */
    char *since;                /* the If-Modified-Since of URLs without one; NULL: none */
    struct entry **v;           /* in the file's order, then as rows came */
    size_t n, cap;
    struct hset by_url;         /* url -> entry */
    int nomem;                  /* an entry was lost for want of memory */
    pthread_mutex_t lock;
};

/* ---- dates ------------------------------------------------------------------ */

/* Days from 1970-01-01 to civil date y-m-d (proleptic Gregorian). */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

/* The n digits at *p as a number (moving *p past them), or -1. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

/* ISO 8601's calendar date and time of day, as validators.h says. */
static int iso_date(const char *s, time_t *t)
{
    const char *p = s;
    int y = digits(&p, 4), mo = (*p == '-' ? p++, digits(&p, 2) : -1),
        d = (*p == '-' ? p++, digits(&p, 2) : -1), hh = 0, mi = 0, ss = 0;
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31)
        return -1;
    long long days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    if (days_from_civil(mo == 12 ? y + 1 : y, mo == 12 ? 1 : (unsigned)mo + 1, 1) <= days)
        return -1;              /* no such day in that month */
    long off = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if ((hh = digits(&p, 2)) < 0 || *p++ != ':' || (mi = digits(&p, 2)) < 0)
            return -1;
        if (*p == ':' && (p++, (ss = digits(&p, 2)) < 0))
            return -1;
        if (hh > 23 || mi > 59 || ss > 60)
            return -1;
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh = digits(&p, 2), om;
            if (*p == ':')
                p++;
            if (oh < 0 || oh > 23 || (om = digits(&p, 2)) < 0 || om > 59)
                return -1;
            off = sign * (oh * 3600L + om * 60L);
        }
    }
    if (*p)
        return -1;
    *t = (time_t)(days * 86400 + hh * 3600L + mi * 60L + ss - off);
    return 0;
}

int validators_parse_date(const char *s, time_t *t)
{
    if (isdigit((unsigned char)*s))
        return iso_date(s, t);
    /* libcurl's date parser reads the three forms RFC 9110, 5.6.7 lists. */
    time_t v = curl_getdate(s, NULL);
    if (v == -1)
        return -1;
    *t = v;
    return 0;
}

char *validators_format_date(time_t t, char *out)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    /* The C locale's names, whatever the program's: the ones HTTP has. */
    static const char days[] = "SunMonTueWedThuFriSat";
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    snprintf(out, VALIDATORS_DATE, "%.3s, %02d %.3s %04d %02d:%02d:%02d GMT",
             days + 3 * (tm.tm_wday % 7), tm.tm_mday % 100, months + 3 * (tm.tm_mon % 12),
             (tm.tm_year + 1900) % 10000, tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
    return out;
}

/* ---- the table -------------------------------------------------------------- */

/* Whether s is an entity tag (RFC 9110, 8.8.3: [W/] DQUOTE *etagc
 * DQUOTE, etagc a visible character but DQUOTE, or obs-text): what a line
 * of the file can hold, a space-free token. */
static int entity_tag(const char *s)
{
    size_t n = strlen(s);
    if (n >= 2 && s[0] == 'W' && s[1] == '/')
        s += 2, n -= 2;
    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return 0;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch <= 0x20 || ch == 0x7f)
            return 0;
    }
    return 1;
}

/* Whether s can be a field of a line: no control character (a URL, too,
 * no space). */
static int printable(const char *s, int spaces)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f || (*s == ' ' && !spaces))
            return 0;
    return 1;
}

static int entry_is(const void *item, const void *key)
{
    return strcmp(((const struct entry *)item)->url, key) == 0;
}

static struct entry *find(const struct validators *v, const char *url)
{
    return hset_find(&v->by_url, hset_hash(url, strlen(url)), entry_is, url);
}

/* Sets url's validators (copied; NULL: none), making its entry when it
 * has none. Returns 0 or -1 (out of memory: the entry as it was). */
static int put(struct validators *v, const char *url, const char *etag, const char *modified)
{
    struct entry *e = find(v, url);
    char *et = etag ? strdup(etag) : NULL, *lm = modified ? strdup(modified) : NULL;
    if ((etag && !et) || (modified && !lm))
        goto nomem;
    if (!e) {
        if (v->n == v->cap) {
            size_t cap = v->cap ? 2 * v->cap : 64;
            struct entry **nv = realloc(v->v, cap * sizeof *nv);
            if (!nv)
                goto nomem;
            v->v = nv, v->cap = cap;
        }
        if (!(e = calloc(1, sizeof *e)) || !(e->url = strdup(url)) ||
            hset_add(&v->by_url, hset_hash(url, strlen(url)), e) != 0) {
            if (e)
                free(e->url);
            free(e);
            goto nomem;
        }
        v->v[v->n++] = e;
    }
    free(e->etag);
    free(e->modified);
    e->etag = et;
    e->modified = lm;
    return 0;
nomem:
    free(et);
    free(lm);
    v->nomem = 1;
    return -1;
}

/* Reads line (its end cut off) into *url, *etag and *modified, which
 * point into it (NULL for "-"). Returns 1, 0 for a line with nothing
 * (blank, a comment), or -1 with what is wrong in why. */
static int parse_line(char *line, char **url, char **etag, char **modified, char *why,
                      size_t n)
{
    if (!*line || *line == '#')
        return 0;
    char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp2 || !sp2[1]) {
        snprintf(why, n, "expected URL ETAG LAST-MODIFIED, '-' for a validator there is none "
                 "of");
        return -1;
    }
    *sp1 = *sp2 = '\0';
    *url = line;
    *etag = strcmp(sp1 + 1, "-") ? sp1 + 1 : NULL;
    *modified = strcmp(sp2 + 1, "-") ? sp2 + 1 : NULL;
    if ((strncasecmp(line, "http://", 7) != 0 && strncasecmp(line, "https://", 8) != 0) ||
        !printable(line, 0))
        snprintf(why, n, "'%.200s' is not an http or https URL", line);
    else if (*etag && !entity_tag(*etag))
        snprintf(why, n, "ETag %.200s is not an entity tag (\"...\", or W/\"...\" for a weak "
                 "one)", *etag);
    else if (*modified && (!printable(*modified, 1) || curl_getdate(*modified, NULL) == -1))
        snprintf(why, n, "Last-Modified '%.200s' is not an HTTP date", *modified);
    else
        return 1;
    return -1;
}

/* Reads the file open as f into v, warning of each line it cannot read. */
static int read_file(struct validators *v, FILE *f,
                     void (*warn)(const char *msg, void *data), void *data)
{
    char *line = NULL, *url, *etag, *modified, why[400], msg[800];
    size_t cap = 0;
    ssize_t len;
    long no = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        int rc = parse_line(line, &url, &etag, &modified, why, sizeof why);
        if (rc < 0 && warn) {
            snprintf(msg, sizeof msg, "%s:%ld: %s; line left out", v->path, no, why);
            warn(msg, data);
        }
        if (rc > 0 && put(v, url, etag, modified) != 0)
            break;
    }
    int e = ferror(f) ? errno : v->nomem ? ENOMEM : 0;
    free(line);
    return -e;
}

int validators_open(struct validators **out, const char *path, const char *since,
                    void (*warn)(const char *msg, void *data), void *data, char *why,
                    size_t n)
{
    struct validators *v = calloc(1, sizeof *v);
    int rc;
    if (v)
        pthread_mutex_init(&v->lock, NULL);
    if (!v || (path && !(v->path = strdup(path))) || (since && !(v->since = strdup(since)))) {
        validators_free(v);
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    FILE *f = path ? fopen(path, "re") : NULL;
    if (path && !f && errno != ENOENT) {
        rc = -errno;
        snprintf(why, n, "%s", strerror(errno));
        validators_free(v);
        return rc;
    }
    rc = f ? read_file(v, f, warn, data) : 0;
    if (f)
        fclose(f);
    if (rc != 0) {
        snprintf(why, n, "%s", strerror(-rc));
        validators_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* The made hook: a listed job's request carries its URL's validators. */
static void on_made(void *data, struct crawl_job *job)
{
    struct validators *v = data;
    pthread_mutex_lock(&v->lock);
    const struct entry *e = find(v, job->url);
    const char *etag = e ? e->etag : NULL, *lm = e ? e->modified : NULL;
    if (!etag && !lm)
        lm = v->since;
    /* Out of memory, the request goes without: it is made whole. */
    if (etag && !job->if_etag)
        job->if_etag = strdup(etag);
    if (lm && !job->if_modified)
        job->if_modified = strdup(lm);
    pthread_mutex_unlock(&v->lock);
}

/* The row hook: a whole page's validators are the URL's now; a 304 and
 * every failure leave those it had. */
static void on_row(void *data, struct crawl *c, struct crawl_job *job)
{
    struct validators *v = data;
    const struct crawl_result *r = &job->res;
    if (!v->path || r->fail != CRAWL_FAIL_NONE || r->status < 200 || r->status > 299 ||
        !printable(job->url, 0))
        return;
    const char *etag = r->etag && entity_tag(r->etag) ? r->etag : NULL;
    const char *lm = r->last_modified && printable(r->last_modified, 1) &&
                     curl_getdate(r->last_modified, NULL) != -1 ? r->last_modified : NULL;
    pthread_mutex_lock(&v->lock);
    if (etag || lm || find(v, job->url))
        (void)put(v, job->url, etag, lm);
    pthread_mutex_unlock(&v->lock);
}

const struct crawl_hook *validators_hook(void)
{
    static const struct crawl_hook h = { .made = on_made, .row = on_row };
    return &h;
}

static int by_url(const void *a, const void *b)
{
    return strcmp((*(const struct entry *const *)a)->url, (*(const struct entry *const *)b)->url);
}

int validators_write(struct validators *v, char *why, size_t n)
{
    if (!v->path)
        return 0;
    struct strbuf b = { 0 };
    sb_adds(&b, "# crawl --validators: URL ETAG LAST-MODIFIED, '-' for a validator there "
                "is none of\n");
    pthread_mutex_lock(&v->lock);
    if (v->n)
        qsort(v->v, v->n, sizeof *v->v, by_url);
    for (size_t i = 0; i < v->n; i++) {
        const struct entry *e = v->v[i];
        if (e->etag || e->modified)
            sb_printf(&b, "%s %s %s\n", e->url, e->etag ? e->etag : "-",
                      e->modified ? e->modified : "-");
    }
    pthread_mutex_unlock(&v->lock);
    int rc = b.nomem ? -ENOMEM : io_replace(v->path, b.data, b.len);
    if (rc != 0)
        snprintf(why, n, "%s", strerror(-rc));
    sb_free(&b);
    return rc;
}

void validators_free(struct validators *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        free(v->v[i]->url);
        free(v->v[i]->etag);
        free(v->v[i]->modified);
        free(v->v[i]);
    }
    free(v->v);
    hset_free(&v->by_url);
    free(v->path);
    free(v->since);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

/* crawl.c: the core. It owns the job list (input order, then discovered
 * links), hands jobs to a backend, takes results back, and knows when a
 * crawl is over. Every call that a backend makes is thread-safe. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "crawl.h"
#include "frontier.h"
#include "html.h"

const struct crawl_backend *const crawl_backends[] = {
    &crawl_backend_seq, &crawl_backend_thread, &crawl_backend_pool,
    &crawl_backend_coro, NULL
};

const struct crawl_backend *crawl_backend_find(const char *name)
{
    for (int i = 0; crawl_backends[i]; i++)
        if (strcmp(crawl_backends[i]->name, name) == 0)
            return crawl_backends[i];
    return NULL;
}

const char *crawl_strerror(int err)
{
    switch (err) {
    case CRAWL_OK:      return "success";
    case CRAWL_ENOMEM:  return "out of memory";
    case CRAWL_EINPUT:  return "cannot read the URL list";
    case CRAWL_ECURL:   return "libcurl could not be initialised";
    case CRAWL_EMODE:   return "no such mode";
    case CRAWL_ETHREAD: return "no thread could be started";
    case CRAWL_EAGAIN:  return "no job queued yet";
    }
    if (err < 0 && err > -4096)
        return strerror(-err);
    return "unknown error";
}

const char *crawl_fail_name(enum crawl_fail f)
{
    static const char *const names[] = {
        [CRAWL_FAIL_NONE] = "none",         [CRAWL_FAIL_INPUT] = "input",
        [CRAWL_FAIL_DNS] = "dns",           [CRAWL_FAIL_CONNECT] = "connect",
        [CRAWL_FAIL_TIMEOUT] = "timeout",   [CRAWL_FAIL_TLS] = "tls",
        [CRAWL_FAIL_PROTOCOL] = "protocol", [CRAWL_FAIL_RECV] = "recv",
        [CRAWL_FAIL_REDIRECTS] = "redirects", [CRAWL_FAIL_TOO_LARGE] = "too-large",
        [CRAWL_FAIL_HTTP] = "http",         [CRAWL_FAIL_THREAD] = "thread",
        [CRAWL_FAIL_CANCELLED] = "cancelled", [CRAWL_FAIL_ROBOTS] = "robots",
        [CRAWL_FAIL_OTHER] = "other",
    };
    if ((unsigned)f < sizeof names / sizeof names[0] && names[f])
        return names[f];
    return "other";
}

/* The error of a failure whose text could not be copied, per class. */
static const char *const fail_texts[] = {
    [CRAWL_FAIL_NONE] = "failed",
    [CRAWL_FAIL_INPUT] = "not a URL crawl fetches",
    [CRAWL_FAIL_DNS] = "host name not resolved",
    [CRAWL_FAIL_CONNECT] = "could not connect",
    [CRAWL_FAIL_TIMEOUT] = "timed out",
    [CRAWL_FAIL_TLS] = "TLS failed",
    [CRAWL_FAIL_PROTOCOL] = "protocol error",
    [CRAWL_FAIL_RECV] = "receiving the response failed",
    [CRAWL_FAIL_REDIRECTS] = "too many redirects",
    [CRAWL_FAIL_TOO_LARGE] = "body larger than --max-size",
    [CRAWL_FAIL_HTTP] = "HTTP error status",
    [CRAWL_FAIL_THREAD] = "no thread could be started",
    [CRAWL_FAIL_CANCELLED] = "cancelled",
    [CRAWL_FAIL_ROBOTS] = "disallowed by robots.txt",
    [CRAWL_FAIL_OTHER] = "failed",
};

void crawl_result_set_error(struct crawl_result *r, enum crawl_fail fail, const char *text)
{
    crawl_error_free(r->error);
    r->fail = fail;
    /* The copy fails exactly when memory is short, which is also when
     * threads and transfers fail: a row that says nothing then would hide
     * the one thing worth knowing. */
    r->error = strdup(text);
    if (!r->error) {
        size_t k = (unsigned)fail < sizeof fail_texts / sizeof *fail_texts ? (size_t)fail
                                                                           : CRAWL_FAIL_OTHER;
        r->error = (char *)fail_texts[k];   /* never written to, never freed */
    }
}

void crawl_error_free(char *error)
{
    for (size_t k = 0; k < sizeof fail_texts / sizeof *fail_texts; k++)
        if (error == fail_texts[k])
            return;
    free(error);
}

void crawl_opts_init(struct crawl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->timeout = 30;
    o->connect_timeout = 10;
    o->max_redirs = 10;
    o->reuse = CRAWL_REUSE_AUTO;
    o->user_agent = "crawl/" CRAWL_VERSION;
    o->max_size = (curl_off_t)64 << 20;
    o->loops = 1;
    o->robots = 1;
}

size_t crawl_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n;
    unsigned min;
    unsigned cp;
    if ((s[0] & 0xe0) == 0xc0) { n = 2; cp = s[0] & 0x1f; min = 0x80; }
    else if ((s[0] & 0xf0) == 0xe0) { n = 3; cp = s[0] & 0x0f; min = 0x800; }
    else if ((s[0] & 0xf8) == 0xf0) { n = 4; cp = s[0] & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

double crawl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int crawl_init(struct crawl *c, const struct crawl_opts *o)
{
    memset(c, 0, sizeof *c);
    c->opts = o;
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        return CRAWL_ENOMEM;
    if (pthread_cond_init(&c->cond, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        return CRAWL_ENOMEM;
    }
    atomic_init(&c->cancelled, 0);
    atomic_init(&c->warned, 0);
    if (frontier_init(c) != 0) {
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        return CRAWL_ENOMEM;
    }
    return 0;
}

static void job_free(struct crawl_job *j)
{
    free(j->url);
    free(j->res.final_url);
    crawl_error_free(j->res.error);
    for (size_t i = 0; i < j->res.nextracts; i++) {
        free(j->res.extracts[i].name);
        free(j->res.extracts[i].value);
    }
    free(j->res.extracts);
    for (size_t i = 0; i < j->nlinks; i++)
        free(j->links[i]);
    free(j->links);
    free(j->body);
    free(j->scope);
    free(j);
}

void crawl_free(struct crawl *c)
{
    for (size_t i = 0; i < c->njobs; i++)
        job_free(c->jobs[i]);
    free(c->jobs);
    frontier_free(c);
    curl_slist_free_all(c->headers);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
}

/* Appends j to the list of every job; the caller holds the lock. */
int crawl__push_job(struct crawl *c, struct crawl_job *j)
{
    if (c->njobs == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct crawl_job **jobs = realloc(c->jobs, cap * sizeof *jobs);
        if (!jobs)
            return CRAWL_ENOMEM;
        c->jobs = jobs;
        c->cap = cap;
    }
    j->id = c->njobs;
    c->jobs[c->njobs++] = j;
    return 0;
}

/* Returns NULL when s is an absolute http or https URL that libcurl accepts,
 * else why not (a static string). */
static const char *url_problem(const char *s)
{
    static const char *const msgs[] = {
        "empty URL",
        "contains control characters",
        "contains spaces",
        "not an absolute http or https URL (no scheme)",
        "unsupported scheme: only http and https are fetched",
        "malformed URL",
        "URL has no host",
    };
    if (!*s)
        return msgs[0];
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return msgs[1];
    const char *colon = strchr(s, ':');
    const char *scheme_end = s;
    while (isalnum((unsigned char)*scheme_end) || *scheme_end == '+' ||
           *scheme_end == '-' || *scheme_end == '.')
        scheme_end++;
    if (!colon || colon != scheme_end || scheme_end == s ||
        !isalpha((unsigned char)*s))
        return msgs[3];
    size_t n = (size_t)(colon - s);
    if (!((n == 4 && strncasecmp(s, "http", 4) == 0) ||
          (n == 5 && strncasecmp(s, "https", 5) == 0)))
        return msgs[4];
    if (strncmp(colon, "://", 3) != 0)
        return msgs[5];
    if (strchr(s, ' '))
        return msgs[2];
    CURLU *u = curl_url();
    if (!u)
        return msgs[5];
    const char *why = NULL;
    char *host = NULL;
    if (curl_url_set(u, CURLUPART_URL, s, 0) != CURLUE_OK)
        why = msgs[5];
    else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
        why = msgs[6];
    curl_free(host);
    curl_url_cleanup(u);
    return why;
}

static void set_error(struct crawl_job *j, enum crawl_fail fail, const char *fmt,
                      va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    crawl_result_set_error(&j->res, fail, buf);
}

/* Adds url as a job, or as a failed one when problem is not NULL. */
static int add_job(struct crawl *c, const char *url, const char *source, long line,
                   const char *problem)
{
    struct crawl_job *j = calloc(1, sizeof *j);
    if (!j || !(j->url = strdup(url)))
        goto err;
    j->line = line;
    j->source = source;
    if (problem) {
        j->state = JOB_DONE;
        crawl_result_set_error(&j->res, CRAWL_FAIL_INPUT, problem);
    }
    pthread_mutex_lock(&c->lock);
    int rc = crawl__push_job(c, j);
    if (rc == 0) {
        if (problem) {
            j->done_seq = c->ndone++;
            c->nfailed++;
        } else {
            c->fetchable++;
            /* A job the frontier cannot queue is recorded as failed; it is
             * in the list either way, so it is not freed here. */
            int q = frontier_push(c, j);
            if (q == CRAWL_ENOMEM && j->state != JOB_DONE) {
                j->state = JOB_DONE;
                j->done_seq = c->ndone++;
                crawl_result_set_error(&j->res, CRAWL_FAIL_OTHER, "out of memory");
                c->nfailed++;
            }
        }
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    if (rc)
        goto err;
    return problem ? 1 : 0;
err:
    if (j)
        job_free(j);
    return CRAWL_ENOMEM;
}

int crawl_add(struct crawl *c, const char *url, const char *source, long line,
              const char **why)
{
    const char *problem = url_problem(url);
    if (why)
        *why = problem;
    return add_job(c, url, source, line, problem);
}

int crawl_add_failed(struct crawl *c, const char *text, const char *source,
                     long line, const char *why)
{
    int rc = add_job(c, text, source, line, why);
    return rc < 0 ? rc : 0;
}

int crawl_next(struct crawl *c, struct crawl_job **job, int wait)
{
    int rc;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        if (atomic_load(&c->cancelled)) {
            rc = 0;
            break;
        }
        double wake = 0;
        struct crawl_job *j = frontier_pick(c, &wake);
        if (j) {
            j->state = JOB_RUNNING;
            c->running++;
            *job = j;
            rc = 1;
            break;
        }
        if (c->running == 0 && frontier_queued(c) == 0) {
            rc = 0;
            break;
        }
        if (!wait) {
            rc = CRAWL_EAGAIN;
            break;
        }
        if (wake > 0) {
            /* Only a host's --delay holds the queued jobs back. The
             * condition variable runs on CLOCK_REALTIME. */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + (wake - crawl_now());
            ts.tv_sec = (time_t)at;
            ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
            pthread_cond_timedwait(&c->cond, &c->lock, &ts);
        } else {
            pthread_cond_wait(&c->cond, &c->lock);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void crawl_done(struct crawl *c, struct crawl_job *job)
{
    pthread_mutex_lock(&c->lock);
    job->state = JOB_DONE;
    c->running--;
    if (job->kind == JOB_PAGE) {
        job->done_seq = c->ndone++;
        if (job->res.fail != CRAWL_FAIL_NONE)
            c->nfailed++;
    }
    frontier_done(c, job);
    if (job->kind == JOB_PAGE && c->on_done)
        c->on_done(c, job, c->on_done_data);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

void crawl_fail(struct crawl *c, struct crawl_job *job, enum crawl_fail fail,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(job, fail, fmt, ap);
    va_end(ap);
    crawl_done(c, job);
}

void crawl_cancel(struct crawl *c, enum crawl_cancel_why why)
{
    int none = 0;
    atomic_compare_exchange_strong(&c->cancelled, &none, (int)why);
}

const char *crawl_cancel_text(struct crawl *c)
{
    switch (atomic_load(&c->cancelled)) {
    case CRAWL_CANCEL_DEADLINE: return "cancelled: --deadline reached";
    case CRAWL_CANCEL_SIGNAL:   return "cancelled: interrupted";
    default:                    return "cancelled";
    }
}

int crawl_is_cancelled(struct crawl *c)
{
    return atomic_load(&c->cancelled);
}

size_t crawl_queued(struct crawl *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = frontier_queued(c);
    pthread_mutex_unlock(&c->lock);
    return n;
}

void crawl_count_conns(struct crawl *c, long n)
{
    if (n <= 0)
        return;
    pthread_mutex_lock(&c->lock);
    c->conns += (size_t)n;
    pthread_mutex_unlock(&c->lock);
}

/* Marks every job that never ran as cancelled, so that each still gets its
 * one row. */
static void cancel_rest(struct crawl *c)
{
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->njobs; i++) {
        struct crawl_job *j = c->jobs[i];
        if (j->state == JOB_DONE)
            continue;
        j->state = JOB_DONE;
        j->done_seq = c->ndone++;
        crawl_result_set_error(&j->res, CRAWL_FAIL_CANCELLED, crawl_cancel_text(c));
        c->nfailed++;
    }
    frontier_clear(c);
    pthread_mutex_unlock(&c->lock);
}

void crawl_warn_once(struct crawl *c, const char *fmt, ...)
{
    if (atomic_exchange(&c->warned, 1) || !c->on_warn)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->on_warn(buf, c->on_warn_data);
}

size_t crawl_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = { rl.rlim_max, rl.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl.rlim_cur = rl.rlim_max;
    }
    return rl.rlim_cur == RLIM_INFINITY ? (size_t)1 << 20 : (size_t)rl.rlim_cur;
}

/* Whether a URL to fetch is an https one. */
static int any_https(const struct crawl *c)
{
    for (size_t i = 0; i < c->njobs; i++)
        if (c->jobs[i]->state != JOB_DONE && strncasecmp(c->jobs[i]->url, "https:", 6) == 0)
            return 1;
    return 0;
}

/* Builds the run's request headers. A connection that will not be reused
 * is announced with "Connection: close" (RFC 9112, 9.6), unless the caller
 * set a Connection header: the server then closes first, and the TIME_WAIT
 * state that follows an active close stays on the server's side instead of
 * tying up one of the client's ephemeral ports per URL for a minute (28,000
 * on a default Linux; 10,000 x /delay/1000 twice in a row: 1.55 s, then
 * 1.75 s while the first run's 10,000 ports were still held). */
static int run_headers(struct crawl *c)
{
    struct curl_slist *l = NULL, *n;
    int connection = 0;
    curl_slist_free_all(c->headers);
    c->headers = NULL;
    for (const struct curl_slist *h = c->opts->headers; h; h = h->next) {
        if (strncasecmp(h->data, "Connection:", 11) == 0 ||
            strncasecmp(h->data, "Connection;", 11) == 0)
            connection = 1;
        if (!(n = curl_slist_append(l, h->data)))
            goto nomem;
        l = n;
    }
    if (!c->reuse && !connection) {
        if (!(n = curl_slist_append(l, "Connection: close")))
            goto nomem;
        l = n;
    }
    c->headers = l;
    return 0;
nomem:
    curl_slist_free_all(l);
    return CRAWL_ENOMEM;
}

int crawl_run(struct crawl *c, const struct crawl_backend *b)
{
    const struct crawl_opts *o = c->opts;
    c->backend = b;
    c->limit = o->concurrency > 0 ? o->concurrency : b->default_concurrency;
    if (b->max_concurrency > 0 && (c->limit == 0 || c->limit > b->max_concurrency))
        c->limit = b->max_concurrency;
    /* Reuse cannot help when every URL is in flight at once over HTTP/1.1:
     * each needs a connection of its own, and libcurl's connection cache
     * then only costs scans on every connect. Over https the server may
     * offer HTTP/2, and then one connection carries many transfers at once
     * (1,000 https URLs to an HTTP/2 server, all at once: 1,000 TLS
     * connections in 0.79 s without reuse; with it, and each transfer
     * waiting to see whether the host multiplexes, 1 to 6 in 0.03 s). */
    switch (o->reuse) {
    case CRAWL_REUSE_ON:  c->reuse = 1; break;
    case CRAWL_REUSE_OFF: c->reuse = 0; break;
    case CRAWL_REUSE_AUTO:
        /* A link-following crawl finds its pages as it goes: keep reuse. */
        c->reuse = o->depth > 0 || !(c->limit == 0 || (size_t)c->limit >= c->fetchable) ||
                   any_https(c);
        break;
    }
    if (run_headers(c) != 0) {
        cancel_rest(c);
        return CRAWL_ENOMEM;
    }
    c->nofile = crawl_raise_nofile();
    pthread_mutex_lock(&c->lock);
    c->t0 = crawl_now();
    pthread_mutex_unlock(&c->lock);
    int rc = b->run(c);
    c->wall = crawl_now() - c->t0;
    cancel_rest(c);
    return rc;
}

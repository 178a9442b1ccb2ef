/* job.c: a job's life cycle and its result's error, which is never
 * missing: when memory is too short to copy a failure's text, a static text
 * for its class stands in. */
#include <stdlib.h>
#include <string.h>

#include "job.h"

struct crawl_job *job_new(void)
{
    return calloc(1, sizeof(struct crawl_job));
}

void job_free(struct crawl_job *j)
{
    if (!j)
        return;
    job_clear(j);
    free(j->url);
    free(j->scope);
    free(j->parent);
    free(j->if_etag);
    free(j->if_modified);
    free(j->path);
    free(j);
}

void job_fail_early(struct crawl_job *j, enum crawl_fail fail, const char *why)
{
    job_error_set(&j->res, fail, why);
    j->failed_early = 1;
}

void job_clear(struct crawl_job *j)
{
    struct crawl_result *r = &j->res;
    int attempts = r->attempts;
    free(r->final_url);
    free(r->digest);
    free(r->duplicate_of);
    free(r->location);
    job_error_free(r->error);
    for (size_t i = 0; i < r->nextracts; i++) {
        free(r->extracts[i].name);
        free(r->extracts[i].value);
    }
    free(r->extracts);
    free(r->etag);
    free(r->last_modified);
    for (size_t i = 0; i < j->nlinks; i++)
        free(j->links[i]);
    free(j->links);
    j->links = NULL;
    j->nlinks = 0;
    for (size_t i = 0; i < j->nverdicts; i++)
        free(j->verdicts[i].url);
    free(j->verdicts);
    j->verdicts = NULL;
    j->nverdicts = 0;
    free(j->body);
    j->body = NULL;
    j->body_len = 0;
    memset(r, 0, sizeof *r);
    r->attempts = attempts;
}

const char *job_fail_name(enum crawl_fail f)
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

const char *job_verdict_reason(enum job_verdict v)
{
    static const char *const reasons[] = {
        [JOB_LINK_SEEN] = "seen",             [JOB_LINK_SCOPE] = "out of scope",
        [JOB_LINK_EXCLUDED] = "excluded",     [JOB_LINK_ROBOTS] = "robots",
        [JOB_LINK_DEPTH] = "depth",           [JOB_LINK_NOT_HTTP] = "not http",
        [JOB_LINK_QUEUE_FULL] = "queue full", [JOB_LINK_MAX_PAGES] = "max pages",
        [JOB_LINK_CANCELLED] = "cancelled",   [JOB_LINK_STORE] = "store failed",
        [JOB_LINK_NOMEM] = "out of memory",
    };
    return (unsigned)v < sizeof reasons / sizeof *reasons ? reasons[v] : NULL;
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

void job_error_set(struct crawl_result *r, enum crawl_fail fail, const char *text)
{
    job_error_free(r->error);
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

void job_error_free(char *error)
{
    for (size_t k = 0; k < sizeof fail_texts / sizeof *fail_texts; k++)
        if (error == fail_texts[k])
            return;
    free(error);
}

int job_transient(const struct crawl_result *r)
{
    switch (r->fail) {
    case CRAWL_FAIL_CONNECT:
    case CRAWL_FAIL_TIMEOUT:
    case CRAWL_FAIL_RECV:
        return 1;
    case CRAWL_FAIL_NONE:
    case CRAWL_FAIL_HTTP:
        break;
    default:
        return 0;
    }
    switch (r->status) {
    case 408: case 429: case 500: case 502: case 503: case 504:
        return 1;
    }
    return 0;
}

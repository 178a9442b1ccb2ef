/* errors.c: what the core says when something fails: the texts of its
 * error codes, the names of the failure classes, a result's error text
 * that is never missing, even when memory is, and the run's warnings. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawl_internal.h"

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
    case CRAWL_EOUTPUT: return "the output could not be written";
    case CRAWL_ESTATE:  return "the state file cannot be used for this crawl";
    case CRAWL_EFRONTIER: return "the --frontier server cannot be reached";
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

static void warn(struct crawl *c, const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    c->on_warn(buf, c->on_warn_data);
}

void crawl_warn_once(struct crawl *c, const char *fmt, ...)
{
    if (atomic_exchange(&c->warned, 1) || !c->on_warn)
        return;
    va_list ap;
    va_start(ap, fmt);
    warn(c, fmt, ap);
    va_end(ap);
}

void crawl_warn(struct crawl *c, const char *fmt, ...)
{
    if (!c->on_warn)
        return;
    va_list ap;
    va_start(ap, fmt);
    warn(c, fmt, ap);
    va_end(ap);
}

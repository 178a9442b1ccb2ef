/* html_rules.c: libxml2's one-time set-up, keeping it quiet, and the
 * rules of --follow and --extract (their XPaths checked as they are made);
 * html.c applies them to pages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xpath.h>

#include "ascii.h"
#include "errors.h"
#include "html.h"
#include "html_internal.h"

/* ---- global ------------------------------------------------------------ */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libxml(void)
{
    LIBXML_TEST_VERSION
    xmlInitParser();
}

void html_global_init(void)
{
    pthread_once(&init_once, init_libxml);
}

void html_global_cleanup(void)
{
    xmlCleanupParser();
}

static void quiet_generic(void *ctx, const char *msg, ...)
{
}

void html__quiet_structured(void *ctx, xmlErrorPtr e)
{
}

void html__quiet_begin(struct quiet *q)
{
    q->generic = xmlGenericError;
    q->generic_ctx = xmlGenericErrorContext;
    q->structured = xmlStructuredError;
    q->structured_ctx = xmlStructuredErrorContext;
    xmlSetGenericErrorFunc(NULL, quiet_generic);
    xmlSetStructuredErrorFunc(NULL, html__quiet_structured);
}

void html__quiet_end(const struct quiet *q)
{
    /* Assigned directly: xmlSetGenericErrorFunc would turn a NULL handler
     * into the default one that prints. */
    xmlGenericError = q->generic;
    xmlGenericErrorContext = q->generic_ctx;
    xmlStructuredError = q->structured;
    xmlStructuredErrorContext = q->structured_ctx;
}


char *html__dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    if (d)
        memcpy(d, s, n);
    return d;
}

/* ---- rules -------------------------------------------------------------- */


struct xpath_error {
    char msg[160];
    int code;                   /* libxml2's code, 0 when nothing was reported */
};

/* A structured error handler that keeps the first message for
 * html_rules_new. */
static void xpath_error(void *data, xmlErrorPtr e)
{
    struct xpath_error *xe = data;
    size_t n;

    if (xe->code != 0 || !e)
        return;
    xe->code = e->code ? e->code : -1;
    snprintf(xe->msg, sizeof xe->msg, "%s", e->message ? e->message : "error");
    n = strlen(xe->msg);
    while (n > 0 && ascii_ws((unsigned char)xe->msg[n - 1]))
        xe->msg[--n] = '\0';
    if (e->domain == XML_FROM_XPATH && e->int1 >= 0 && n + 1 < sizeof xe->msg)
        snprintf(xe->msg + n, sizeof xe->msg - n, " at character %d", e->int1);
}

static int xpath_nomem(const struct xpath_error *xe)
{
    return xe->code == XML_XPATH_EXPRESSION_OK + XPATH_MEMORY_ERROR - XPATH_EXPRESSION_OK;
}

/* Compiles expr and evaluates it once on an empty document, which catches
 * what only evaluation reports, like an unknown function. Returns 0,
 * -EINVAL with a message in err, or CRAWL_ENOMEM. Runs inside quiet_begin. */
static int check_xpath(const char *what, const char *expr, char *err, size_t errlen)
{
    struct xpath_error xe = { .code = 0 };
    xmlDocPtr doc = NULL;
    xmlXPathContextPtr xc = NULL;
    xmlXPathCompExprPtr comp = NULL;
    xmlXPathObjectPtr obj = NULL;
    int ret = CRAWL_ENOMEM;

    /* The text of an XPath error (xmlXPathErrorMessages) is not public and
     * only reaches a structured handler when the context has no error
     * callback of its own, so the thread's handler collects it here. */
    xmlSetStructuredErrorFunc(&xe, xpath_error);
    doc = htmlNewDocNoDtD(NULL, NULL);
    if (!doc)
        goto out;
    xc = xmlXPathNewContext(doc);
    if (!xc)
        goto out;
    comp = xmlXPathCtxtCompile(xc, (const xmlChar *)expr);
    if (comp)
        obj = xmlXPathCompiledEval(comp, xc);
    if (obj) {
        ret = 0;
    } else if (!xpath_nomem(&xe)) {
        ret = -EINVAL;
        if (errlen)
            snprintf(err, errlen, "%s: bad XPath \"%s\": %s", what, expr,
                     xe.code ? xe.msg : "invalid expression");
    }
out:
    xmlXPathFreeObject(obj);
    xmlXPathFreeCompExpr(comp);
    xmlXPathFreeContext(xc);
    xmlFreeDoc(doc);
    xmlSetStructuredErrorFunc(NULL, html__quiet_structured);
    return ret;
}

/* Splits "NAME=XPATH" (white space allowed around NAME) into *name and
 * *xpath; without a valid NAME= prefix the whole text is the XPath and the
 * name is "extractI". Returns 0 or CRAWL_ENOMEM. */
static int split_rule(const char *text, int i, struct html_rule *rule)
{
    const char *eq = strchr(text, '='), *a = text, *b = eq;
    char buf[32];

    if (eq) {
        while (a < eq && ascii_ws((unsigned char)*a))
            a++;
        while (b > a && ascii_ws((unsigned char)b[-1]))
            b--;
        if (b > a && (ascii_alpha((unsigned char)*a) || *a == '_')) {
            const char *p = a + 1;
            while (p < b && (ascii_alpha((unsigned char)*p) || ascii_digit((unsigned char)*p) ||
                             *p == '_' || *p == '-'))
                p++;
            if (p != b)
                eq = NULL;
        } else {
            eq = NULL;
        }
    }
    if (eq) {
        rule->name = strndup(a, (size_t)(b - a));
        rule->xpath = html__dup(eq + 1);
    } else {
        snprintf(buf, sizeof buf, "extract%d", i + 1);
        rule->name = html__dup(buf);
        rule->xpath = html__dup(text);
    }
    return rule->name && rule->xpath ? 0 : CRAWL_ENOMEM;
}

int html_rules_new(const char *follow, const char *const *extract, int n,
                   struct html_rules **out, char *err, size_t errlen)
{
    struct html_rules *r;
    struct quiet q;
    char what[64];
    int ret;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    if (n < 0 || (n > 0 && !extract)) {
        if (errlen)
            snprintf(err, errlen, "bad extract list");
        return -EINVAL;
    }
    r = calloc(1, sizeof *r);
    if (!r)
        return CRAWL_ENOMEM;
    html__quiet_begin(&q);
    if (n > 0) {
        r->extract = calloc((size_t)n, sizeof *r->extract);
        if (!r->extract)
            goto nomem;
    }
    /* The default rule streams; it needs a tree only to share one with
     * extracts. */
    if ((follow && strcmp(follow, DEFAULT_FOLLOW) != 0) || n > 0) {
        r->follow = html__dup(follow ? follow : DEFAULT_FOLLOW);
        if (!r->follow)
            goto nomem;
        ret = check_xpath("follow", r->follow, err, errlen);
        if (ret)
            goto fail;
    }
    for (int i = 0; i < n; i++) {
        ret = split_rule(extract[i], i, &r->extract[i]);
        r->nextract = i + 1;
        if (ret)
            goto fail;
        snprintf(what, sizeof what, "extract \"%s\"", r->extract[i].name);
        ret = check_xpath(what, r->extract[i].xpath, err, errlen);
        if (ret)
            goto fail;
    }
    html__quiet_end(&q);
    *out = r;
    return 0;
nomem:
    ret = CRAWL_ENOMEM;
fail:
    html__quiet_end(&q);
    if (ret == CRAWL_ENOMEM && errlen)
        snprintf(err, errlen, "%s", crawl_strerror(ret));
    html_rules_free(r);
    return ret;
}

void html_rules_free(struct html_rules *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nextract; i++) {
        free(r->extract[i].name);
        free(r->extract[i].xpath);
    }
    free(r->extract);
    free(r->follow);
    free(r);
}

int html_rules_nextract(const struct html_rules *r)
{
    return r->nextract;
}

const char *html_rules_extract_name(const struct html_rules *r, int i)
{
    return i >= 0 && i < r->nextract ? r->extract[i].name : NULL;
}

/* html_internal.h: what html.c and html_rules.c share, and nothing else
 * includes. */
#ifndef CRAWL_HTML_INTERNAL_H
#define CRAWL_HTML_INTERNAL_H

#include <libxml/xmlerror.h>

#include "html.h"

#define DEFAULT_FOLLOW HTML_DEFAULT_FOLLOW

struct html_rule {
    char *name;
    char *xpath;
};

struct html_rules {
    char *follow;               /* NULL: the default rule, streamed without a tree */
    struct html_rule *extract;
    int nextract;
};

/* Keeping libxml2 quiet. With HTML_PARSE_NOERROR the parser's own errors
 * go nowhere, but some messages bypass the parser context: encoding conversion failures (raised
 * with no context, so they reach the generic handler) and XPath evaluation
 * messages printed with xmlGenericError directly. Both handlers are
 * per-thread state in a threaded libxml2 (the main thread's are the process
 * globals, which only the main thread reads), so each entry point swaps in
 * no-op handlers for the calling thread and puts the caller's back before
 * returning: nothing yields in between, so coroutines sharing a thread are
 * safe too. */

struct quiet {
    xmlGenericErrorFunc generic;
    void *generic_ctx;
    xmlStructuredErrorFunc structured;
    void *structured_ctx;
};

void html__quiet_begin(struct quiet *q);
void html__quiet_end(const struct quiet *q);

/* A structured error handler that says nothing. */
void html__quiet_structured(void *ctx, xmlErrorPtr e);

/* Returns a malloc'd copy of s, or NULL. */
char *html__dup(const char *s);

#endif

/* html.h: the HTML side of a link-following crawl. A page's body is fed, as
 * it arrives, to scan.c's tokenizer for the default rule or to libxml2's
 * push parser for XPath rules; at its end come the links to follow,
 * resolved and normalised, and the values of the extract XPaths. Reentrant:
 * any number of pages may be parsed at once, on any threads, sharing one
 * read-only struct html_rules. Nothing is ever printed: while an html_ call
 * runs, the calling thread's libxml2 error handlers are swapped for silent
 * ones, and the caller's are back when it returns. */
#ifndef CRAWL_HTML_H
#define CRAWL_HTML_H

#include <stddef.h>

#include "url.h"

#define HTML_MAX_LINKS    10000 /* links kept per page; past it, truncated */
#define HTML_MAX_EXTRACTS 10000 /* extracted values kept per page, all names */
#define HTML_MAX_URL      URL_MAX /* a longer link, before or after resolution, is dropped */

/* Prepares libxml2 (xmlInitParser) once for the whole program. Call it from
 * the main thread before any other html_ call or any thread that uses them;
 * later calls do nothing. */
void html_global_init(void);

/* Releases libxml2's global state (xmlCleanupParser). Only at exit, once no
 * thread will use html_ (or libxml2) again. */
void html_global_cleanup(void);

/* What to do with each page, compiled once per crawl and then shared
 * read-only by every thread. */
struct html_rules;

/* The links followed when no --follow is given. */
#define HTML_DEFAULT_FOLLOW "//a/@href"

/* follow: an XPath selecting the link values to follow (NULL: "//a/@href",
 * which streams without building a tree). extract: n rules "NAME=XPATH"
 * (NAME: a letter or '_', then letters, digits, '_' or '-'); a rule without a
 * NAME= prefix is named "extract1", "extract2", ... after its position.
 * Every XPath is compiled and evaluated once on an empty document here, to
 * report mistakes early; pages compile their own copies (libxml2 2.9 writes
 * into a compiled XPath while evaluating it, so one copy cannot be shared by
 * threads). Copies what it needs from follow and extract. Returns 0 and the
 * rules in *out, which the caller frees with html_rules_free; -EINVAL with a
 * message in err (of size errlen, may be 0) for an XPath that does not
 * compile or fails to evaluate; or CRAWL_ENOMEM. */
int html_rules_new(const char *follow, const char *const *extract, int n,
                   struct html_rules **out, char *err, size_t errlen);
void html_rules_free(struct html_rules *r);

/* Returns the number of extract rules in r. */
int html_rules_nextract(const struct html_rules *r);

/* Returns the name of extract rule i (0-based), owned by r, or NULL when i
 * is out of range. */
const char *html_rules_extract_name(const struct html_rules *r, int i);

/* One extracted value. */
struct html_extract {
    char *name;                 /* the rule's name */
    char *value;                /* raw: never resolved against the page's URL */
};

/* Why the tree of a page (built for XPath rules) holds only the part of the
 * page before some point: its links and values come from that part. */
enum html_stop {
    HTML_STOP_NONE = 0,
    HTML_STOP_DEPTH,            /* elements nested deeper than libxml2 allows
                                   (xmlParserMaxDepth, 256): it stops parsing there */
    HTML_STOP_TREE,             /* the tree reached the bound html_page_set_tree_max set */
};

/* Returns the deepest nesting of elements libxml2 builds a tree for. */
unsigned html_max_depth(void);

/* What a page gives, owned by the caller once html_page_finish has filled it;
 * freed with html_links_free. */
struct html_links {
    char **links;               /* absolute http(s) URLs, first-seen order, no duplicates */
    size_t nlinks;
    struct html_extract *extracts; /* in rule order, then document order */
    size_t nextracts;
    int truncated;              /* links or values were dropped at a cap (HTML_MAX_LINKS,
                                   HTML_MAX_EXTRACTS, or twice HTML_MAX_LINKS distinct
                                   raw hrefs while streaming) */
    enum html_stop stopped;     /* the tree was built from the page's beginning only */
};

/* Frees everything in l and zeroes it; l itself belongs to the caller. */
void html_links_free(struct html_links *l);

/* One page being parsed; used by one thread at a time (it may move between
 * threads or coroutines between calls). */
struct html_page;

/* url: the page's URL as requested, the base for relative links until
 * html_page_finish says otherwise (copied). r must outlive the page.
 * Returns a new page, freed with html_page_free, or NULL when out of
 * memory. */
struct html_page *html_page_new(const struct html_rules *r, const char *url);

/* Sets the charset the HTTP Content-Type gave the page (charset[0..len),
 * copied), before the first html_page_feed. A name that is not a plain
 * token of at most 40 characters is ignored, and so is one that libxml2
 * cannot convert from. Returns 0, CRAWL_ENOMEM, or -EINVAL when the body
 * has started or a charset was set already. */
int html_page_set_charset(struct html_page *p, const char *charset, size_t len);

/* Bounds the tree that XPath rules need (none is built for the default
 * rule) at about max bytes of libxml2's nodes and their text, as counted
 * while it grows; past that the page is parsed no further (html_links'
 * stopped says so). A link-only page builds some 24 times its size in
 * nodes. 0, the default, sets no bound. Call it before the first
 * html_page_feed. */
void html_page_set_tree_max(struct html_page *p, size_t max);

/* Parses the next len bytes of the (decoded) body, as they arrive; the
 * default rule keeps only the hrefs, any other builds the page's tree.
 * Broken markup is not an error. The encoding: a byte order mark (UTF-8,
 * UTF-16) if there is one, else the charset html_page_set_charset gave,
 * else a <meta> charset, else UTF-8, falling back to ISO-8859-1 from the
 * first byte that is not UTF-8; bytes the encoding cannot convert end the
 * page there (libxml2 2.9 stops parsing). Returns 0, or CRAWL_ENOMEM, which
 * sticks: later calls do nothing and return it again. */
int html_page_feed(struct html_page *p, const char *buf, size_t len);

/* Ends the body and fills *out (which it zeroes first) with the links and
 * extracted values. final_url: the URL after redirects, the base of relative
 * links unless the page has a <base href> (NULL: keep url); with no http(s)
 * base only absolute links are kept. A body that is not HTML gives no links
 * and no error; an empty one gives no values either. Links are cleaned
 * (url_clean: white space trimmed, fragments dropped, only http and https
 * kept) and resolved as a browser resolves them (url_resolve: the WHATWG
 * URL Standard's parser, each link as a browser would request it), each
 * distinct link once. An extract rule whose XPath gives a node set gives
 * one value per node (an attribute's value as is, other nodes' text
 * trimmed with white space collapsed); one that gives a string, number or
 * boolean gives that one value unchanged ("" for string(//missing)).
 * Returns 0; CRAWL_ENOMEM with *out empty; or -EINVAL, with *out empty,
 * when called a second time. */
int html_page_finish(struct html_page *p, const char *final_url,
                     struct html_links *out);

/* Frees p and everything it holds; p may be NULL. */
void html_page_free(struct html_page *p);

#endif

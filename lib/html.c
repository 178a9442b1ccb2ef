/* html.c: links and XPath extracts from pages as they arrive. The default
 * rule (//a/@href) streams through scan.c's tokenizer, or through libxml2's
 * SAX callbacks for a page in an encoding the scanner does not read (UTF-16,
 * or a charset other than UTF-8 and ISO-8859-1); any other rule builds
 * libxml2's tree and runs its XPaths at the end of the body. What a link means (cleaning, its base,
 * resolution, the normal form) is url.c's; this file finds the hrefs and
 * the <base href>, and keeps each link once. Nothing here is global but
 * libxml2's own one-time initialisation. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/SAX2.h>
#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/xpath.h>

#include "ascii.h"
#include "errors.h"
#include "html.h"
#include "html_internal.h"
#include "scan.h"
#include "url.h"
#include "vec.h"

/* Distinct raw hrefs kept while streaming. Several raw forms may resolve to
 * one link ("a", "./a"), so this is larger than the cap on links. */
#define RAW_MAX (2 * HTML_MAX_LINKS)

/* htmlParseChunk takes an int; feed it at most this much at a time. */
#define CHUNK_MAX (1 << 20)

/* The longest charset name taken from a Content-Type. */
#define CHARSET_MAX 40

#define PARSE_OPTIONS (HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | \
                       HTML_PARSE_NOWARNING | HTML_PARSE_NONET | \
                       HTML_PARSE_COMPACT)

/* ---- small helpers --------------------------------------------------------- */

/* Trims s and turns every run of white space inside it into one space, in
 * place. */
static void collapse_ws(char *s)
{
    char *w = s;
    int pending = 0;

    for (const char *r = s; *r; r++) {
        if (ascii_ws((unsigned char)*r)) {
            pending = w != s;
            continue;
        }
        if (pending)
            *w++ = ' ';
        pending = 0;
        *w++ = *r;
    }
    *w = '\0';
}

/* ---- pages ---------------------------------------------------------------- */

struct html_page {
    const struct html_rules *r;
    char *url;
    htmlParserCtxtPtr ctxt;     /* NULL until the first 4 bytes show whether there is a BOM */
    struct scan *scan;          /* the default rule's tokenizer, when it reads the page */
    int handed;                 /* a <meta> charset handed the rest to libxml2 */
    char handoff[CHARSET_MAX + 1]; /* that charset */
    unsigned char head[4];      /* those bytes, until then */
    size_t nhead;
    char *charset;              /* the HTTP Content-Type's, if any */
    char *base;                 /* the first <base href>, raw */
    struct url_list raw;        /* streaming: distinct cleaned <a href> values */
    int truncated;
    size_t tree_max;            /* bound of tree_size; 0: none */
    size_t tree_size;           /* bytes of the tree so far, as tree_add counts them */
    enum html_stop stopped;     /* parsing ended early, and why */
    int err;                    /* sticky: CRAWL_ENOMEM */
    int finished;
};

static const char *attr(const xmlChar **atts, const char *name)
{
    for (; atts && atts[0]; atts += 2)
        if (strcmp((const char *)atts[0], name) == 0)
            return atts[1] ? (const char *)atts[1] : "";
    return NULL;
}

static void page_fail(struct html_page *p, int err)
{
    p->err = err;
    if (p->ctxt)
        xmlStopParser(p->ctxt);
}

/* Keeps a streamed href, cleaned, unless an equal one is kept already. */
static void keep_raw(struct html_page *p, const char *href, size_t len)
{
    char *s;
    int err = url_clean_n(href, len, &s);

    if (!err && s && (err = url_list_add(&p->raw, s, RAW_MAX)) == 2)
        p->truncated = 1;
    if (err < 0)
        page_fail(p, err);
}

/* The cost of one allocation in the tree: its bytes and malloc's header. */
#define TREE_ALLOC(n) ((n) + 16)

/* Counts bytes about to join the tree; when they would take it past its
 * bound, stops the parser instead and returns -1. */
static int tree_add(struct html_page *p, size_t bytes)
{
    if (p->tree_max && bytes > p->tree_max - p->tree_size) {
        p->stopped = HTML_STOP_TREE;
        xmlStopParser(p->ctxt);
        return -1;
    }
    p->tree_size += bytes;
    return 0;
}

/* An element and its attributes, as xmlSAX2StartElement builds them: the
 * element node, and per attribute an attribute node with a text node that
 * holds its value. Names live in the parser's dictionary, shared. */
static size_t element_cost(const xmlChar **atts)
{
    size_t n = TREE_ALLOC(sizeof(xmlNode));
    for (; atts && atts[0]; atts += 2)
        n += TREE_ALLOC(sizeof(xmlAttr)) + TREE_ALLOC(sizeof(xmlNode)) +
             (atts[1] ? TREE_ALLOC(strlen((const char *)atts[1]) + 1) : 0);
    return n;
}

/* charactersSAXFunc and cdataBlockSAXFunc when there is a tree: a text node
 * per call (libxml2 appends to the last one when it can, so this counts on
 * the high side). */
static void on_characters(void *ctx, const xmlChar *ch, int len)
{
    htmlParserCtxtPtr ctxt = ctx;
    if (tree_add(ctxt->_private, TREE_ALLOC(sizeof(xmlNode)) + TREE_ALLOC((size_t)len + 1)) == 0)
        xmlSAX2Characters(ctx, ch, len);
}

static void on_cdata(void *ctx, const xmlChar *ch, int len)
{
    htmlParserCtxtPtr ctxt = ctx;
    if (tree_add(ctxt->_private, TREE_ALLOC(sizeof(xmlNode)) + TREE_ALLOC((size_t)len + 1)) == 0)
        xmlSAX2CDataBlock(ctx, ch, len);
}

static void on_comment(void *ctx, const xmlChar *value)
{
    htmlParserCtxtPtr ctxt = ctx;
    size_t len = strlen((const char *)value);
    if (tree_add(ctxt->_private, TREE_ALLOC(sizeof(xmlNode)) + TREE_ALLOC(len + 1)) == 0)
        xmlSAX2Comment(ctx, value);
}

/* startElementSAXFunc, in both modes: the tree builder's work when there is
 * a tree, then the first <base href> and, when streaming, every <a href>.
 * The HTML parser hands names in lower case. */
static void on_start_element(void *ctx, const xmlChar *name, const xmlChar **atts)
{
    htmlParserCtxtPtr ctxt = ctx;
    struct html_page *p = ctxt->_private;
    const char *n = (const char *)name, *href;

    if (p->r->follow) {
        /* libxml2 2.9 refuses to build a tree deeper than
         * xmlParserMaxDepth without XML_PARSE_HUGE, which the HTML parser
         * does not take, and halts the parser (nodePush, with the same
         * test): say why the rest of the page is missing. */
        if ((unsigned)ctxt->nodeNr > xmlParserMaxDepth)
            p->stopped = HTML_STOP_DEPTH;
        if (tree_add(p, element_cost(atts)) != 0)
            return;
        xmlSAX2StartElement(ctx, name, atts);
    }
    if (p->err || !atts)
        return;
    if (!p->r->follow && n[0] == 'a' && n[1] == '\0') {
        href = attr(atts, "href");
        if (href)
            keep_raw(p, href, strlen(href));
    } else if (!p->base && strcmp(n, "base") == 0) {
        href = attr(atts, "href");
        if (href) {
            p->base = html__dup(href);
            if (!p->base)
                page_fail(p, CRAWL_ENOMEM);
        }
    }
}

/* Turns a memory error inside libxml2 into the page's error. */
static void check_parser(struct html_page *p)
{
    if (!p->err && p->ctxt->errNo == XML_ERR_NO_MEMORY)
        page_fail(p, CRAWL_ENOMEM);
}

/* Creates the parser once the first bytes are in p->head. The HTML push
 * parser of libxml2 2.9 does not look for a byte order mark, so it is done
 * here: a BOM selects the encoding, is not parsed, and wins over the HTTP
 * charset, which wins over any <meta charset> (an encoding set on the input
 * is never changed), as in a browser. Otherwise the page is read as UTF-8
 * until a <meta charset> says otherwise or a byte is not UTF-8, from which
 * point libxml2 reads ISO-8859-1; left to itself it would take ISO-8859-1
 * at the first non-ASCII byte. A charset libxml2 (and iconv) does not know
 * is ignored. Returns 0 or CRAWL_ENOMEM. */
static int page_start(struct html_page *p, const unsigned char *h, size_t nh, int bom)
{
    htmlSAXHandler sax;
    xmlCharEncoding enc = XML_CHAR_ENCODING_UTF8;
    xmlCharEncodingHandlerPtr handler = NULL;
    const char *pin = NULL;
    size_t skip = 0;

    if (bom && nh >= 3 && h[0] == 0xEF && h[1] == 0xBB && h[2] == 0xBF) {
        enc = XML_CHAR_ENCODING_UTF8;
        pin = "UTF-8";
        skip = 3;
    } else if (bom && nh >= 2 && h[0] == 0xFF && h[1] == 0xFE) {
        enc = XML_CHAR_ENCODING_UTF16LE;
        pin = "UTF-16LE";
        skip = 2;
    } else if (bom && nh >= 2 && h[0] == 0xFE && h[1] == 0xFF) {
        enc = XML_CHAR_ENCODING_UTF16BE;
        pin = "UTF-16BE";
        skip = 2;
    } else if (p->charset) {
        if (strcasecmp(p->charset, "utf-8") == 0 || strcasecmp(p->charset, "utf8") == 0) {
            pin = "UTF-8";
        } else if ((handler = xmlFindCharEncodingHandler(p->charset))) {
            enc = XML_CHAR_ENCODING_NONE;
            pin = p->charset;
        }
    }

    memset(&sax, 0, sizeof sax);
    if (p->r->follow) {
        xmlSAX2InitHtmlDefaultSAXHandler(&sax);
        sax.characters = on_characters;
        sax.cdataBlock = on_cdata;
        sax.comment = on_comment;
    }
    sax.startElement = on_start_element;
    sax.warning = NULL;
    sax.error = NULL;
    sax.fatalError = NULL;
    /* user_data NULL: callbacks get the parser context, which the tree
     * builder needs; the page rides in its _private. */
    p->ctxt = htmlCreatePushParserCtxt(&sax, NULL, NULL, 0, NULL, enc);
    if (!p->ctxt) {
        if (handler)
            xmlCharEncCloseFunc(handler);
        return CRAWL_ENOMEM;
    }
    p->ctxt->_private = p;
    htmlCtxtUseOptions(p->ctxt, PARSE_OPTIONS);
    if (handler && xmlSwitchToEncoding(p->ctxt, handler) != 0)
        pin = NULL;
    if (pin && !p->ctxt->input->encoding) {
        p->ctxt->input->encoding = xmlStrdup((const xmlChar *)pin);
        if (!p->ctxt->input->encoding)
            return CRAWL_ENOMEM;
    }
    if (nh > skip) {
        htmlParseChunk(p->ctxt, (const char *)h + skip, (int)(nh - skip), 0);
        check_parser(p);
    }
    return p->err;
}

/* ---- the scanner, for the default rule -------------------------------------- */

static int on_scan_link(void *data, const char *href, size_t len)
{
    struct html_page *p = data;

    keep_raw(p, href, len);
    return p->err;
}

static int on_scan_base(void *data, const char *href, size_t len)
{
    struct html_page *p = data;

    if (!p->base) {
        if (!(p->base = malloc(len + 1))) {
            page_fail(p, CRAWL_ENOMEM);
            return p->err;
        }
        memcpy(p->base, href, len);
        p->base[len] = '\0';
    }
    return 0;
}

/* A <meta> charset, as libxml2 2.9 would take it (htmlCheckEncodingDirect):
 * UTF-8, and the UTF-16 and UCS-4 names it refuses on a byte stream, change
 * nothing; ISO-8859-1 the scanner reads itself; any other charset libxml2
 * can convert from hands the rest of the page to libxml2, which converts it
 * (p->charset then names it). */
static int on_scan_charset(void *data, const char *name)
{
    struct html_page *p = data;
    xmlCharEncodingHandlerPtr handler;
    size_t n = strlen(name);

    switch (xmlParseCharEncoding(name)) {
    case XML_CHAR_ENCODING_UTF8: case XML_CHAR_ENCODING_UTF16LE: case XML_CHAR_ENCODING_UTF16BE:
    case XML_CHAR_ENCODING_UCS4LE: case XML_CHAR_ENCODING_UCS4BE: case XML_CHAR_ENCODING_UCS4_2143:
    case XML_CHAR_ENCODING_UCS4_3412: case XML_CHAR_ENCODING_UCS2: case XML_CHAR_ENCODING_ASCII:
        return SCAN_GO;
    case XML_CHAR_ENCODING_8859_1:
        return SCAN_LATIN1;
    default:
        break;
    }
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("-_.:+()", name[i]))
            return SCAN_GO;
    if (n > CHARSET_MAX || !(handler = xmlFindCharEncodingHandler(name)))
        return SCAN_GO;
    xmlCharEncCloseFunc(handler);
    memcpy(p->handoff, name, n + 1);
    p->handed = 1;
    return SCAN_STOP;
}

static const struct scan_cb scan_callbacks = {
    .link = on_scan_link, .base = on_scan_base, .charset = on_scan_charset,
};

/* Scans len bytes; when a <meta> charset hands the page over, starts
 * libxml2 on the rest. Returns 0 or CRAWL_ENOMEM. */
static int scan_bytes(struct html_page *p, const char *buf, size_t len)
{
    size_t used = scan_feed(p->scan, buf, len);
    char meta[CHARSET_MAX + 32];
    int n;

    if (p->err || !p->handed || p->ctxt)
        return p->err;
    /* libxml2 takes the charset from a <meta> of its own, so that it
     * switches as it would have in the page. It is fed a byte at a time:
     * libxml2 2.9 parses less of what follows a chunk that switched the
     * encoding before it, and a conversion error soon after would lose it. */
    free(p->charset);
    p->charset = NULL;
    if (page_start(p, NULL, 0, 0) != 0)
        return p->err ? p->err : CRAWL_ENOMEM;
    n = snprintf(meta, sizeof meta, "<meta charset=\"%s\">", p->handoff);
    for (int i = 0; i < n; i++)
        htmlParseChunk(p->ctxt, meta + i, 1, 0);
    if (len > used)
        htmlParseChunk(p->ctxt, buf + used, (int)(len - used), 0);
    check_parser(p);
    return p->err;
}

/* Chooses between the scanner and libxml2 once the first bytes (up to 4)
 * are in p->head, as page_start would read them, and gives them to it.
 * Returns 0 or CRAWL_ENOMEM. */
static int page_begin(struct html_page *p)
{
    const unsigned char *h = p->head;
    size_t skip = 0;
    int pinned = 0, latin1 = 0;

    if (p->r->follow || (p->nhead >= 2 && ((h[0] == 0xFF && h[1] == 0xFE) ||
                                           (h[0] == 0xFE && h[1] == 0xFF))))
        return page_start(p, h, p->nhead, 1);
    if (p->nhead >= 3 && h[0] == 0xEF && h[1] == 0xBB && h[2] == 0xBF) {
        pinned = 1;
        skip = 3;
    } else if (p->charset) {
        xmlCharEncodingHandlerPtr handler;
        if (strcasecmp(p->charset, "utf-8") == 0 || strcasecmp(p->charset, "utf8") == 0) {
            pinned = 1;
        } else if ((handler = xmlFindCharEncodingHandler(p->charset))) {
            xmlCharEncCloseFunc(handler);
            if (xmlParseCharEncoding(p->charset) != XML_CHAR_ENCODING_8859_1)
                return page_start(p, h, p->nhead, 1);
            pinned = latin1 = 1;
        }
    }
    if (!(p->scan = scan_new(&scan_callbacks, p)))
        return CRAWL_ENOMEM;
    if (pinned)
        scan_pin_charset(p->scan, latin1);
    return p->nhead > skip ? scan_bytes(p, (const char *)h + skip, p->nhead - skip) : 0;
}

struct html_page *html_page_new(const struct html_rules *r, const char *url)
{
    struct html_page *p = calloc(1, sizeof *p);

    if (!p)
        return NULL;
    p->r = r;
    if (url) {
        p->url = html__dup(url);
        if (!p->url)
            goto err;
    }
    return p;
err:
    free(p);
    return NULL;
}

int html_page_set_charset(struct html_page *p, const char *charset, size_t len)
{
    if (p->ctxt || p->scan || p->charset)
        return -EINVAL;
    if (len == 0 || len > CHARSET_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)charset[i];
        if (!isalnum(ch) && !strchr("-_.:+()", ch))
            return 0;
    }
    if (!(p->charset = malloc(len + 1)))
        return CRAWL_ENOMEM;
    memcpy(p->charset, charset, len);
    p->charset[len] = '\0';
    return 0;
}

unsigned html_max_depth(void)
{
    return xmlParserMaxDepth;
}

void html_page_set_tree_max(struct html_page *p, size_t max)
{
    p->tree_max = max;
}

int html_page_feed(struct html_page *p, const char *buf, size_t len)
{
    struct quiet q;

    if (p->err || p->finished || p->stopped || len == 0)
        return p->err;
    html__quiet_begin(&q);
    if (!p->ctxt && !p->scan) {
        size_t k = sizeof p->head - p->nhead;
        if (k > len)
            k = len;
        memcpy(p->head + p->nhead, buf, k);
        p->nhead += k;
        buf += k;
        len -= k;
        if (p->nhead < sizeof p->head)
            goto out;
        if (page_begin(p) != 0) {
            p->err = CRAWL_ENOMEM;
            goto out;
        }
    }
    if (!p->ctxt) {
        if (len > 0 && scan_bytes(p, buf, len) != 0)
            p->err = CRAWL_ENOMEM;
        goto out;
    }
    while (len > 0 && !p->err) {
        int k = len > CHUNK_MAX ? CHUNK_MAX : (int)len;
        htmlParseChunk(p->ctxt, buf, k, 0);
        check_parser(p);
        buf += k;
        len -= (size_t)k;
    }
out:
    html__quiet_end(&q);
    return p->err;
}

/* What html_page_finish gathers before handing it over. */
struct gather {
    struct html_links *out;
    struct url_list links;
    const struct url_base *base;
    size_t nextracts, capextracts;
};

/* Resolves one follow value and keeps it when it is new. Returns 0 or
 * CRAWL_ENOMEM. */
static int gather_link(struct gather *g, const char *value, int cleaned)
{
    char *href = NULL, *url = NULL;
    int err = 0;

    if (!cleaned) {
        err = url_clean(value, &href);
        if (err || !href)
            return err;
        value = href;
    }
    err = url_resolve(g->base, value, &url);
    free(href);
    if (!err && url && (err = url_list_add(&g->links, url, HTML_MAX_LINKS)) == 2)
        g->out->truncated = 1;
    return err < 0 ? err : 0;
}

static int gather_extract(struct gather *g, const char *name, const char *value)
{
    struct html_extract *e;

    if (g->nextracts == HTML_MAX_EXTRACTS) {
        g->out->truncated = 1;
        return 0;
    }
    if (vec_reserve(&g->out->extracts, &g->capextracts, g->nextracts + 1,
                    sizeof *g->out->extracts, 8) != 0)
        return CRAWL_ENOMEM;
    e = &g->out->extracts[g->nextracts];
    e->name = html__dup(name);
    e->value = html__dup(value);
    if (!e->name || !e->value) {
        free(e->name);
        free(e->value);
        return CRAWL_ENOMEM;
    }
    g->out->nextracts = ++g->nextracts;
    return 0;
}

/* Evaluates expr on the page's document and calls use(g, name, value) for
 * each value it gives (see html.h for what a value is). A run-time XPath
 * error gives no value. Returns 0 or CRAWL_ENOMEM.
 *
 * The expression is compiled here, per page, rather than once per crawl:
 * libxml2 2.9's xmlXPathCompiledEval is not read-only on the compiled
 * expression. On the first evaluation of a function call it stores the
 * function it looked up in the step (op->cache, op->cacheURI in xpath.c),
 * an unsynchronised write that threads sharing one compiled expression
 * would race on. Compiling a typical rule takes well under a microsecond,
 * against tens of microseconds to parse even a small page. */
static int each_value(xmlXPathContextPtr xc, const char *expr, struct gather *g,
                      const char *name,
                      int (*use)(struct gather *, const char *, const char *))
{
    xmlXPathCompExprPtr comp;
    xmlXPathObjectPtr obj = NULL;
    xmlChar *s = NULL;
    int err = 0;

    comp = xmlXPathCtxtCompile(xc, (const xmlChar *)expr);
    if (comp)
        obj = xmlXPathCompiledEval(comp, xc);
    if (!obj)
        goto out;       /* checked by html_rules_new: out of memory, or a run-time error */
    if (obj->type == XPATH_NODESET) {
        xmlNodeSetPtr set = obj->nodesetval;
        for (int i = 0; set && i < set->nodeNr && !err; i++) {
            xmlNodePtr node = set->nodeTab[i];
            s = xmlNodeGetContent(node);
            if (!s)
                s = xmlStrdup((const xmlChar *)"");
            if (!s) {
                err = CRAWL_ENOMEM;
                break;
            }
            if (node->type != XML_ATTRIBUTE_NODE)
                collapse_ws((char *)s);
            err = use(g, name, (const char *)s);
            xmlFree(s);
            s = NULL;
        }
    } else {
        s = xmlXPathCastToString(obj);
        err = s ? use(g, name, (const char *)s) : CRAWL_ENOMEM;
    }
out:
    xmlFree(s);
    xmlXPathFreeObject(obj);
    xmlXPathFreeCompExpr(comp);
    return err;
}

static int use_link(struct gather *g, const char *name, const char *value)
{
    return gather_link(g, value, 0);
}

/* Runs the follow and extract XPaths on the page's tree. */
static int gather_tree(struct html_page *p, xmlDocPtr doc, struct gather *g)
{
    xmlXPathContextPtr xc = xmlXPathNewContext(doc);
    int err;

    if (!xc)
        return CRAWL_ENOMEM;
    /* Run-time errors go to this context's handler, not to a thread's. */
    xc->error = html__quiet_structured;
    err = each_value(xc, p->r->follow, g, NULL, use_link);
    for (int i = 0; i < p->r->nextract && !err; i++)
        err = each_value(xc, p->r->extract[i].xpath, g, p->r->extract[i].name,
                         gather_extract);
    xmlXPathFreeContext(xc);
    return err;
}

int html_page_finish(struct html_page *p, const char *final_url, struct html_links *out)
{
    struct gather g = { .out = out };
    xmlDocPtr doc = NULL;
    struct url_base *base = NULL;
    struct quiet q;
    int err;

    memset(out, 0, sizeof *out);
    if (p->finished)
        return p->err ? p->err : -EINVAL;
    p->finished = 1;
    if (p->err)
        return p->err;

    html__quiet_begin(&q);
    if (!p->ctxt && !p->scan && (err = page_begin(p)) != 0)
        goto fail;
    if (p->ctxt) {
        htmlParseChunk(p->ctxt, NULL, 0, 1);
        check_parser(p);
        doc = p->ctxt->myDoc;
        p->ctxt->myDoc = NULL;
    } else {
        scan_finish(p->scan);
    }
    if ((err = p->err) != 0)
        goto fail;

    err = url_base_new(final_url ? final_url : p->url, p->base, &base);
    if (err)
        goto fail;
    g.base = base;
    out->truncated = p->truncated;
    out->stopped = p->stopped;
    if (!p->r->follow) {
        for (size_t i = 0; i < p->raw.n && !err; i++)
            err = gather_link(&g, p->raw.v[i], 1);
    } else if (doc) {
        err = gather_tree(p, doc, &g);
    }
    if (err)
        goto fail;
    out->links = url_list_take(&g.links, &out->nlinks);
    url_base_free(base);
    xmlFreeDoc(doc);
    html__quiet_end(&q);
    return 0;
fail:
    p->err = err;
    url_list_free(&g.links);
    url_base_free(base);
    xmlFreeDoc(doc);
    html__quiet_end(&q);
    html_links_free(out);
    return err;
}

void html_page_free(struct html_page *p)
{
    if (!p)
        return;
    if (p->ctxt) {
        if (p->ctxt->myDoc)
            xmlFreeDoc(p->ctxt->myDoc);
        htmlFreeParserCtxt(p->ctxt);
    }
    scan_free(p->scan);
    url_list_free(&p->raw);
    free(p->base);
    free(p->charset);
    free(p->url);
    free(p);
}

void html_links_free(struct html_links *l)
{
    for (size_t i = 0; i < l->nlinks; i++)
        free(l->links[i]);
    free(l->links);
    for (size_t i = 0; i < l->nextracts; i++) {
        free(l->extracts[i].name);
        free(l->extracts[i].value);
    }
    free(l->extracts);
    memset(l, 0, sizeof *l);
}

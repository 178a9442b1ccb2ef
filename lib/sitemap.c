/* sitemap.c: the sitemaps.org protocol, streamed. Bytes come as libcurl
 * gives them; a body that starts with gzip's magic number goes through
 * zlib first (a .xml.gz sitemap is a gzip file, not a Content-Encoding,
 * which libcurl would have decoded already). The XML goes to libxml2's
 * SAX2 push parser, which calls back per element: only <loc> inside <url>
 * (in a <urlset>) or inside <sitemap> (in a <sitemapindex>) is kept, by
 * local name, whatever the namespace prefix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include <zlib.h>

#include "sitemap.h"
#include "strbuf.h"
#include "vec.h"

/* The longest <loc> kept: the protocol asks for URLs under 2,048
 * characters; a longer one is skipped, not cut. */
#define SITEMAP_MAX_LOC 2048

enum root { ROOT_NONE, ROOT_URLSET, ROOT_INDEX, ROOT_OTHER };

struct sitemap {
    xmlParserCtxtPtr ctxt;
    z_stream z;
    int gz;                     /* -1: not known yet; 0 plain; 1 gzip */
    int z_ready;                /* inflateInit2 was called */
    int over;                   /* reading is over: the rest is ignored */
    long bytes;                 /* uncompressed bytes given to the parser */
    int depth;                  /* elements open */
    enum root root;
    int in_entry;               /* inside <url> or <sitemap> */
    int in_loc;
    struct strbuf loc;
    char **urls;
    size_t nurls, cap;
    int nomem;
    char problem[160];
};

static int is(const xmlChar *name, const char *s)
{
    return strcmp((const char *)name, s) == 0;
}

static void stop(struct sitemap *s, const char *why)
{
    if (!s->problem[0] && why)
        snprintf(s->problem, sizeof s->problem, "%s", why);
    s->over = 1;
    if (s->ctxt)
        xmlStopParser(s->ctxt);
}

/* SAX2 startElementNs */
static void on_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                     int nns, const xmlChar **ns, int nattr, int ndef, const xmlChar **attr)
{
    struct sitemap *s = ((xmlParserCtxtPtr)ctx)->_private;
    s->depth++;
    if (s->depth == 1) {
        s->root = is(local, "urlset") ? ROOT_URLSET
                : is(local, "sitemapindex") ? ROOT_INDEX : ROOT_OTHER;
        if (s->root == ROOT_OTHER)
            stop(s, "not a sitemap (no urlset or sitemapindex)");
    } else if (s->depth == 2) {
        s->in_entry = (s->root == ROOT_URLSET && is(local, "url")) ||
                      (s->root == ROOT_INDEX && is(local, "sitemap"));
    } else if (s->depth == 3 && s->in_entry && is(local, "loc")) {
        s->in_loc = 1;
        sb_reset(&s->loc);
    }
}

/* Keeps the <loc> just ended, its white space trimmed. */
static void keep_loc(struct sitemap *s)
{
    const char *p = s->loc.data ? s->loc.data : "";
    size_t n = s->loc.len;
    while (n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r'))
        n--;
    if (n == 0 || n >= SITEMAP_MAX_LOC || s->loc.nomem)
        return;
    if (s->nurls == SITEMAP_MAX_URLS) {
        stop(s, "more than 50,000 URLs: the rest ignored");
        return;
    }
    char *u = strndup(p, n);
    if (!u || vec_reserve(&s->urls, &s->cap, s->nurls + 1, sizeof *s->urls, 64) != 0) {
        free(u);
        s->nomem = 1;
        stop(s, NULL);
        return;
    }
    s->urls[s->nurls++] = u;
}

/* SAX2 endElementNs */
static void on_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
    struct sitemap *s = ((xmlParserCtxtPtr)ctx)->_private;
    if (s->depth == 3 && s->in_loc) {
        s->in_loc = 0;
        keep_loc(s);
    } else if (s->depth == 2) {
        s->in_entry = 0;
    }
    s->depth--;
}

/* SAX2 characters (and CDATA blocks) */
static void on_text(void *ctx, const xmlChar *ch, int len)
{
    struct sitemap *s = ((xmlParserCtxtPtr)ctx)->_private;
    if (s->in_loc && s->loc.len < SITEMAP_MAX_LOC)
        sb_add(&s->loc, ch, (size_t)len);
}

/* SAX2 serror: the first error is kept for the message; libxml2 prints
 * nothing. A fatal one ends the parse, and what came before counts. */
static void on_error(void *ctx, xmlErrorPtr e)
{
    struct sitemap *s = ((xmlParserCtxtPtr)ctx)->_private;
    if (e && e->level == XML_ERR_FATAL && !s->problem[0])
        snprintf(s->problem, sizeof s->problem, "not well-formed XML at line %d: the rest ignored",
                 e->line);
}

struct sitemap *sitemap_new(const char *url)
{
    struct sitemap *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->gz = -1;
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_text;
    sax.cdataBlock = on_text;
    sax.serror = on_error;
    /* No entity is loaded from the network or substituted: a sitemap has
     * none that matter, and a hostile one gets no expansion. */
    s->ctxt = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, url);
    if (!s->ctxt) {
        free(s);
        return NULL;
    }
    /* Every callback gets the parser's context (no user data was given),
     * whose _private is ours. */
    s->ctxt->_private = s;
    xmlCtxtUseOptions(s->ctxt, XML_PARSE_NONET);
    return s;
}

/* Gives the parser len bytes of XML, up to the 50 MiB limit. */
static void parse(struct sitemap *s, const char *p, size_t len, int end)
{
    if (s->over)
        return;
    if ((long)len > SITEMAP_MAX_BYTES - s->bytes) {
        len = (size_t)(SITEMAP_MAX_BYTES - s->bytes);
        xmlParseChunk(s->ctxt, p, (int)len, 0);
        s->bytes += (long)len;
        stop(s, "over 50 MiB: the rest ignored");
        return;
    }
    s->bytes += (long)len;
    if (xmlParseChunk(s->ctxt, p, (int)len, end) != 0 && !s->over)
        stop(s, NULL);
}

int sitemap_feed(struct sitemap *s, const char *data, size_t len)
{
    if (s->gz < 0 && len > 0) {
        /* gzip's magic number starts with a byte no XML document does. */
        s->gz = (unsigned char)data[0] == 0x1f;
        if (s->gz) {
            if (inflateInit2(&s->z, 15 + 32) != Z_OK)
                return -1;
            s->z_ready = 1;
        }
    }
    if (!s->gz) {
        parse(s, data, len, 0);
    } else {
        unsigned char out[16384];
        s->z.next_in = (unsigned char *)data;
        s->z.avail_in = (uInt)len;
        while (!s->over && s->z.avail_in > 0) {
            s->z.next_out = out;
            s->z.avail_out = sizeof out;
            int rc = inflate(&s->z, Z_NO_FLUSH);
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
                stop(s, "broken gzip data: the rest ignored");
                break;
            }
            parse(s, (const char *)out, sizeof out - s->z.avail_out, 0);
            if (rc == Z_STREAM_END || (rc == Z_BUF_ERROR && s->z.avail_out > 0))
                break;
        }
    }
    if (s->nomem)
        return -1;
    return s->over ? 1 : 0;
}

int sitemap_end(struct sitemap *s)
{
    parse(s, "", 0, 1);
    if (s->root == ROOT_NONE && !s->nomem)
        snprintf(s->problem, sizeof s->problem, "not a sitemap (not XML)");
    return s->nomem ? -1 : 0;
}

int sitemap_is_index(const struct sitemap *s)
{
    return s->root == ROOT_INDEX;
}

size_t sitemap_take(struct sitemap *s, char ***urls)
{
    size_t n = s->nurls;
    *urls = s->urls;
    s->urls = NULL;
    s->nurls = s->cap = 0;
    return n;
}

const char *sitemap_problem(const struct sitemap *s)
{
    return s->problem[0] ? s->problem : NULL;
}

void sitemap_free(struct sitemap *s)
{
    if (!s)
        return;
    if (s->ctxt) {
        xmlFreeDoc(s->ctxt->myDoc);
        xmlFreeParserCtxt(s->ctxt);
    }
    if (s->z_ready)
        inflateEnd(&s->z);
    for (size_t i = 0; i < s->nurls; i++)
        free(s->urls[i]);
    free(s->urls);
    sb_free(&s->loc);
    free(s);
}

/* fuzz_html.c: libFuzzer target for the HTML link extractor. The first byte
 * picks the rules (streamed links, or a tree with XPath follow and
 * extracts) and the chunk size, the last one the charset an HTTP header
 * would give (or none); the rest is the page, fed in chunks as a transfer
 * would feed it. Every link out must be an absolute http(s) URL. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "html.h"

static struct html_rules *streamed, *tree;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char *const extract[] = { "title=string(//title)", "img=//img/@src" };
    char err[256];
    html_global_init();
    if (html_rules_new(NULL, NULL, 0, &streamed, err, sizeof err) != 0 ||
        html_rules_new("//div//a/@href | //a/@href", extract, 2, &tree, err, sizeof err) != 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const struct html_rules *r = (data[0] & 1) ? tree : streamed;
    size_t chunk = (size_t)(data[0] >> 1) + 1;
    static const char *const charsets[] = {
        NULL, "utf-8", "windows-1251", "iso-8859-1", "shift_jis", "utf-16le", "no-such",
    };
    const char *cs = charsets[data[size - 1] % (sizeof charsets / sizeof *charsets)];
    struct html_page *p = html_page_new(r, "http://127.0.0.1:8080/dir/page.html");
    if (!p)
        return 0;
    if (cs && html_page_set_charset(p, cs, strlen(cs)) != 0)
        abort();
    for (size_t off = 1; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        html_page_feed(p, (const char *)data + off, n);
    }
    struct html_links l;
    if (html_page_finish(p, (data[0] & 2) ? "https://example.invalid/a/b?c" : NULL, &l) == 0) {
        for (size_t i = 0; i < l.nlinks; i++)
            if (strncasecmp(l.links[i], "http://", 7) != 0 &&
                strncasecmp(l.links[i], "https://", 8) != 0)
                abort();
        html_links_free(&l);
    }
    html_page_free(p);
    return 0;
}

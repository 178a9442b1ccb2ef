/* fuzz_scan.c: libFuzzer target for the link scanner (lib/scan.c) behind
 * html.c's default rule. The first byte picks a chunk size; the page is
 * fed whole, then in those chunks, then a byte at a time, and the three
 * must give the same links. When the page holds none of the markup where
 * the scanner and libxml2 2.9 part on purpose (test_scan.c lists them) and
 * is plain ASCII, the links must also be libxml2's, in the same order. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

static struct html_rules *scanner, *libxml2;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[256];
    html_global_init();
    if (html_rules_new(NULL, NULL, 0, &scanner, err, sizeof err) != 0 ||
        html_rules_new("(//a/@href)", NULL, 0, &libxml2, err, sizeof err) != 0)
        abort();
    return 0;
}

static void parse(const struct html_rules *r, const uint8_t *data, size_t size, size_t chunk,
                  struct html_links *l)
{
    struct html_page *p = html_page_new(r, "http://127.0.0.1:8080/dir/page.html");
    if (!p)
        abort();
    for (size_t off = 0; off < size; off += chunk)
        html_page_feed(p, (const char *)data + off, size - off < chunk ? size - off : chunk);
    if (html_page_finish(p, NULL, l) != 0)
        abort();
    html_page_free(p);
}

static int same(const struct html_links *a, const struct html_links *b)
{
    if (a->nlinks != b->nlinks)
        return 0;
    for (size_t i = 0; i < a->nlinks; i++)
        if (strcmp(a->links[i], b->links[i]) != 0)
            return 0;
    return 1;
}

/* Pages where the two are compared: letters, digits, white space and the
 * characters of tags, names and values only (none of '!', '?', '&', '/':
 * no comments, declarations, end tags or references; no quotes or other
 * punctuation, and '=' only between a name and a value: libxml2 2.9 ends
 * a name at them, or skips a bogus attribute up to a blank, where WHATWG
 * reads on),
 * no text elements, and every '<' starts a tag name outside a tag (in
 * "<a<a" WHATWG reads one tag named "a<a", libxml2 two). */
static int tame(const uint8_t *d, size_t n)
{
    static const char *const text[] = { "title", "textarea", "xmp", "iframe", "noembed",
                                        "noframes", "plaintext", "script", "style", "meta" };
    char *s;
    int ok = 1;

    int in_tag = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isalnum(d[i]) || strchr(" \t\n\r<>=.-_:", d[i])) || d[i] == 0 ||
            (d[i] == '=' && (i == 0 || i + 1 >= n || !isalnum(d[i - 1]) || !isalnum(d[i + 1]))) ||
            (d[i] == '<' && (in_tag || i + 1 >= n ||
                             !((d[i + 1] | 0x20) >= 'a' && (d[i + 1] | 0x20) <= 'z'))))
            return 0;
        if (d[i] == '<')
            in_tag = 1;
        else if (d[i] == '>')
            in_tag = 0;
    }
    if (!(s = malloc(n + 1)))
        return 0;
    for (size_t i = 0; i < n; i++)
        s[i] = (char)((d[i] >= 'A' && d[i] <= 'Z') ? d[i] + 32 : d[i]);
    s[n] = '\0';
    for (size_t i = 0; ok && i < sizeof text / sizeof *text; i++)
        ok = !strstr(s, text[i]);
    free(s);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct html_links whole, pieces, bytes, other;

    if (size < 1)
        return 0;
    size_t chunk = (size_t)data[0] % 97 + 1;
    data++, size--;
    parse(scanner, data, size, size ? size : 1, &whole);
    parse(scanner, data, size, chunk, &pieces);
    parse(scanner, data, size, 1, &bytes);
    if (!same(&whole, &pieces) || !same(&whole, &bytes))
        abort();
    if (tame(data, size)) {
        parse(libxml2, data, size, size ? size : 1, &other);
        if (!same(&whole, &other))
            abort();
        html_links_free(&other);
    }
    html_links_free(&whole);
    html_links_free(&pieces);
    html_links_free(&bytes);
    return 0;
}

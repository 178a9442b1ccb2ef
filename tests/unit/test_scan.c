/* test_scan.c: the scanner (lib/scan.c) against libxml2. Every test page
 * under testdata/ is parsed twice, with the default rule (the scanner) and
 * with an XPath rule that selects the same attributes, "(//a/@href)" (a
 * libxml2 tree), and the links must be the same in the same order, save
 * for the pages listed in differences[], where the scanner reads the page
 * as the WHATWG HTML Standard does, or as its own rule for ISO-8859-1
 * says, and libxml2 2.9 does not. Each page is
 * also fed to the scanner in every kind of piece. With SCAN_DOCS=dir set,
 * the same comparison runs over every .html file under dir (scripts/
 * scan-diff.sh points it at python3.11-doc) and prints what it found. */
#define _XOPEN_SOURCE 700
#include <ftw.h>

#include "html_helpers.h"

#define LIBXML2_RULE "(//a/@href)"

/* Where the scanner and libxml2 2.9 part, each on purpose. */
static const struct {
    const char *page, *why;
} differences[] = {
    { "testdata/fuzz/scan/comments.html",
      "<!--> is a whole comment (WHATWG); libxml2 reads on to the next -->" },
    { "testdata/fuzz/scan/decls.html",
      "<![CDATA[ in HTML is a bogus comment up to the first '>'; libxml2 reads the tag in it" },
    { "testdata/fuzz/scan/odd-tags.html",
      "<a/href=x> has an href (WHATWG); a NUL byte in a value is U+FFFD, where libxml2 ends the value" },
    { "testdata/fuzz/scan/utf8-cut-twice.html",
      "the page's first byte that is not UTF-8 starts an href: the scanner reads it as ISO-8859-1, "
      "as every byte after it; libxml2 2.9 switches mid-character and gives U+00C3" },
    { "testdata/fuzz/scan/tag-in-tag.html",
      "<a<a href=x> is one tag named \"a<a\" (WHATWG), not a link; libxml2 reads a second <a> "
      "with its href" },
    { "testdata/fuzz/scan/text-elements.html",
      "title, textarea, xmp, iframe, noembed, noframes hold text up to their end tag; "
      "libxml2 reads tags in them" },
};

static const char *expected_difference(const char *page)
{
    for (size_t i = 0; i < sizeof differences / sizeof *differences; i++)
        if (strcmp(differences[i].page, page) == 0)
            return differences[i].why;
    return NULL;
}

static struct html_rules *scanner, *libxml2;

static int same_list(const struct html_links *a, const struct html_links *b)
{
    if (a->nlinks != b->nlinks)
        return 0;
    for (size_t i = 0; i < a->nlinks; i++)
        if (strcmp(a->links[i], b->links[i]) != 0)
            return 0;
    return 1;
}

static void print_both(const char *path, const struct html_links *a, const struct html_links *b)
{
    print_message("%s:\n", path);
    for (size_t i = 0; i < a->nlinks; i++)
        print_message("  scan   %s\n", a->links[i]);
    for (size_t i = 0; i < b->nlinks; i++)
        print_message("  libxml %s\n", b->links[i]);
}

/* Compares the two on one page. Returns 1 when they agree. */
static int compare_page(const char *path, size_t *nlinks, int verbose)
{
    struct body b = read_body(path);
    struct html_links s, x;
    int same;

    assert_int_equal(parse_in_steps(scanner, PAGE_URL, NULL, b.data, b.len, 0, &s), 0);
    assert_int_equal(parse_in_steps(libxml2, PAGE_URL, NULL, b.data, b.len, 0, &x), 0);
    same = same_list(&s, &x);
    if (!same && verbose)
        print_both(path, &s, &x);
    *nlinks += s.nlinks;
    html_links_free(&s);
    html_links_free(&x);
    free(b.data);
    return same;
}

/* Every page the tests hold, found by nftw. */
static char *pages[512];
static size_t npages;

static int add_page(const char *path, const struct stat *st, int type, struct FTW *f)
{
    if (type == FTW_F && npages < sizeof pages / sizeof *pages &&
        (strstr(path, ".htm") || strstr(path, "/scan/") || strstr(path, "/html/")))
        assert_non_null(pages[npages++] = strdup(path));
    return 0;
}

static void the_scanner_finds_what_libxml2_finds_on_every_test_page(void **state)
{
    size_t links = 0, agreed = 0;

    for (size_t i = 0; i < npages; i++) {
        const char *why = expected_difference(pages[i]);
        int same = compare_page(pages[i], &links, !why);
        if (why && same)
            fail_msg("%s: listed as a difference (%s) but the links agree", pages[i], why);
        if (!why && !same)
            fail_msg("%s: the scanner and libxml2 differ", pages[i]);
        agreed += same;
    }
    assert_true(npages >= 30);
    print_message("  %zu pages, %zu links, %zu agree, %zu listed differences\n", npages,
                  links, agreed, npages - agreed);
}

static void the_scanner_gives_the_same_links_in_any_pieces(void **state)
{
    unsigned seed = 15;

    for (size_t i = 0; i < npages; i++) {
        struct body b = read_body(pages[i]);
        struct html_links whole, piece;
        assert_int_equal(parse_in_steps(scanner, PAGE_URL, NULL, b.data, b.len, 0, &whole), 0);
        for (int k = 0; k < 8; k++) {
            struct html_page *p = html_page_new(scanner, PAGE_URL);
            size_t step = k == 0 ? 1 : k == 1 ? 2 : 0;
            assert_non_null(p);
            for (size_t off = 0; off < b.len; ) {
                size_t n = step ? step : 1 + (size_t)rand_r(&seed) % 64;
                if (n > b.len - off)
                    n = b.len - off;
                assert_int_equal(html_page_feed(p, b.data + off, n), 0);
                off += n;
            }
            assert_int_equal(html_page_finish(p, NULL, &piece), 0);
            html_page_free(p);
            if (!same_links(&whole, &piece))
                fail_msg("%s: different links in pieces (%s)", pages[i], step ? "steps" : "random");
            html_links_free(&piece);
        }
        html_links_free(&whole);
        free(b.data);
    }
}

/* SCAN_DOCS=dir: the comparison over a whole tree, reported. */
static size_t docs_pages, docs_links, docs_diff;

static int docs_page(const char *path, const struct stat *st, int type, struct FTW *f)
{
    size_t n = strlen(path);
    if (type == FTW_F && n > 5 && strcmp(path + n - 5, ".html") == 0) {
        docs_pages++;
        docs_diff += !compare_page(path, &docs_links, 1);
    }
    return 0;
}

static void the_scanner_finds_what_libxml2_finds_in_a_documentation_tree(void **state)
{
    const char *dir = getenv("SCAN_DOCS");

    if (!dir || !*dir)
        skip();
    assert_int_equal(nftw(dir, docs_page, 16, FTW_PHYS), 0);
    print_message("  %s: %zu pages, %zu links, %zu pages differ\n", dir, docs_pages,
                  docs_links, docs_diff);
    assert_true(docs_pages > 0);
    assert_int_equal(docs_diff, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_scanner_finds_what_libxml2_finds_on_every_test_page),
        cmocka_unit_test(the_scanner_gives_the_same_links_in_any_pieces),
        cmocka_unit_test(the_scanner_finds_what_libxml2_finds_in_a_documentation_tree),
    };
    int rc;

    html_global_init();
    scanner = rules(NULL, NULL, 0);
    libxml2 = rules(LIBXML2_RULE, NULL, 0);
    nftw("testdata", add_page, 16, FTW_PHYS);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (size_t i = 0; i < npages; i++)
        free(pages[i]);
    html_rules_free(scanner);
    html_rules_free(libxml2);
    html_global_cleanup();
    return rc;
}

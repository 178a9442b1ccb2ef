/* fuzz_url.c: libFuzzer target for the URL module. The input, up to its
 * first newline, is a reference; the rest, if any, a page URL. Whatever
 * comes out must hold what url.h promises: a listed URL that passes
 * url_validate splits, a link is an http(s) URL no longer than URL_MAX
 * that parses back to itself, and the normal form of a normal form is
 * itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crawl.h"
#include "url.h"

/* Aborts unless s is an http(s) URL that the parser gives back as it is. */
static void check_link(const char *s)
{
    char *again = NULL;
    if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        abort();
    if (url_resolve(NULL, s, &again) == CRAWL_ENOMEM)
        return;
    if (!again || strcmp(again, s) != 0)
        abort();
    free(again);
    if (url_normalise(s, &again) == CRAWL_ENOMEM)
        return;
    if (!again)
        abort();
    free(again);
}

/* Aborts unless s is an http(s) URL that is its own normal form. */
static void check_normal(const char *s)
{
    char *again = NULL;
    if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        abort();
    if (url_normalise(s, &again) == CRAWL_ENOMEM)
        return;
    if (!again || strcmp(again, s) != 0)
        abort();
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1), *page, *nl, *s = NULL;
    const char *why;
    struct url_parts p;
    struct url_base *b = NULL;

    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    nl = strchr(in, '\n');
    page = nl ? nl + 1 : NULL;
    if (nl)
        *nl = '\0';

    if (url_validate(in, &why) == 0) {
        int rc = url_split(in, &p);
        if (rc != 0 && rc != CRAWL_ENOMEM)
            abort();
        if (rc == 0)
            check_normal(p.norm);
        url_parts_free(&p);
    }
    if (url_normalise(in, &s) == 0)
        check_normal(s);
    free(s);
    s = NULL;
    if (url_base_new(page, NULL, &b) == 0 && url_clean(in, &s) == 0 && s) {
        char *link = NULL;
        if (url_resolve(b, s, &link) == 0 && link) {
            if (strlen(link) > URL_MAX)
                abort();
            check_link(link);
        }
        free(link);
    }
    free(s);
    url_base_free(b);
    free(in);
    return 0;
}

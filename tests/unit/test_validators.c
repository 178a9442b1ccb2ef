/* Unit tests for --validators and --if-modified-since (lib/validators.c):
 * the dates --if-modified-since reads and the one form it writes; a file
 * read, each line it cannot read told by its number and left out; a
 * listed job given its URL's validators, or the date; rows that replace
 * and keep them; the file written back whole, sorted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "validators.h"

static void test_dates_are_http_dates_or_iso_8601_ones_and_go_out_as_imf_fixdates(void **state)
{
    (void)state;
    static const char *const same[] = {
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37Z", "1994-11-06 08:49:37",
        "1994-11-06T09:49:37+01:00", "1994-11-06T07:19:37-0130", "1994-11-06t08:49:37z",
    };
    char out[VALIDATORS_DATE];
    time_t t;
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        assert_int_equal(validators_parse_date(same[i], &t), 0);
        assert_string_equal(validators_format_date(t, out), "Sun, 06 Nov 1994 08:49:37 GMT");
    }
    assert_int_equal(validators_parse_date("2024-02-29", &t), 0);
    assert_string_equal(validators_format_date(t, out), "Thu, 29 Feb 2024 00:00:00 GMT");
    assert_int_equal(validators_parse_date("2024-01-31T12:00Z", &t), 0);
    assert_string_equal(validators_format_date(t, out), "Wed, 31 Jan 2024 12:00:00 GMT");
    static const char *const bad[] = {
        "", "yesterday", "2023-02-29", "2024-13-01", "2024-1-01", "2024-01-01T25:00Z",
        "2024-01-01T12", "2024-01-01T12:00+24:00", "2024-01-01T12:00:00Zx", "1704067200",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(validators_parse_date(bad[i], &t), -1);
}

struct told {
    char msg[8][512];
    int n;
};

static void tell(const char *msg, void *data)
{
    struct told *t = data;
    if (t->n < 8)
        snprintf(t->msg[t->n++], sizeof t->msg[0], "%s", msg);
}

/* A file with the given text, in a folder of the test's own. */
static char *file_with(const char *text, char *dir)
{
    static char path[300];
    strcpy(dir, "/tmp/test_validators.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/v.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static char *read_all(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A listed job for url, made as the core makes one: the hook's made. */
static void made(struct validators *v, struct crawl_job *j, char *url)
{
    memset(j, 0, sizeof *j);
    j->url = url;
    validators_hook()->made(v, j);
}

static void test_a_file_read_gives_each_listed_job_its_validators_and_is_written_back_sorted(
    void **state)
{
    (void)state;
    char dir[64], why[256];
    const char *path = file_with(
        "# comment\n"
        "\n"
        "http://h/b \"b-0\" Mon, 01 Jan 2024 00:00:00 GMT\r\n"
        "http://h/a W/\"a\" -\n"
        "http://h/c b-0 -\n"
        "http://h/d - Mon, 01 Jan 2024\n"
        "http://h/e \"e\"\n", dir);
    struct validators *v;
    struct told t = { 0 };
    assert_int_equal(validators_open(&v, path, "Sun, 06 Nov 1994 08:49:37 GMT", tell, &t, why,
                                     sizeof why), 0);
    assert_int_equal(t.n, 2);
    assert_non_null(strstr(t.msg[0], "v.txt:5: ETag b-0 is not an entity tag"));
    assert_non_null(strstr(t.msg[1], "v.txt:7: expected URL ETAG LAST-MODIFIED"));
    struct crawl_job j;
    made(v, &j, "http://h/b");
    assert_string_equal(j.if_etag, "\"b-0\"");
    assert_string_equal(j.if_modified, "Mon, 01 Jan 2024 00:00:00 GMT");
    free(j.if_etag);
    free(j.if_modified);
    made(v, &j, "http://h/a");
    assert_string_equal(j.if_etag, "W/\"a\"");
    assert_null(j.if_modified);
    free(j.if_etag);
    /* A URL the file does not name: --if-modified-since's date. */
    made(v, &j, "http://h/new");
    assert_null(j.if_etag);
    assert_string_equal(j.if_modified, "Sun, 06 Nov 1994 08:49:37 GMT");
    free(j.if_modified);
    /* Rows: a 2xx's validators replace, a 304 and an error keep. */
    const struct crawl_hook *h = validators_hook();
    memset(&j, 0, sizeof j);
    j.url = "http://h/b";
    j.res.status = 200;
    j.res.etag = "\"b-1\"";
    h->row(v, NULL, &j);
    j.url = "http://h/a";
    j.res.status = 304;
    j.res.not_modified = 1;
    j.res.etag = "\"other\"";
    h->row(v, NULL, &j);
    j.url = "http://h/d";
    j.res.status = 500;
    j.res.not_modified = 0;
    h->row(v, NULL, &j);
    j.url = "http://h/0";
    j.res.status = 200;
    j.res.etag = "not an entity tag";
    j.res.last_modified = "Tue, 02 Jan 2024 00:00:00 GMT";
    h->row(v, NULL, &j);
    assert_int_equal(validators_write(v, why, sizeof why), 0);
    assert_string_equal(read_all(path),
        "# crawl --validators: URL ETAG LAST-MODIFIED, '-' for a validator there is none of\n"
        "http://h/0 - Tue, 02 Jan 2024 00:00:00 GMT\n"
        "http://h/a W/\"a\" -\n"
        "http://h/b \"b-1\" -\n"
        "http://h/d - Mon, 01 Jan 2024\n");
    validators_free(v);
    unlink(path);
    rmdir(dir);
}

static void test_a_file_that_is_not_there_is_an_empty_one(void **state)
{
    (void)state;
    char why[256];
    struct validators *v;
    assert_int_equal(validators_open(&v, "/tmp/test_validators-none/v.txt", NULL, NULL, NULL,
                                     why, sizeof why), 0);
    struct crawl_job j;
    made(v, &j, "http://h/a");
    assert_null(j.if_etag);
    assert_null(j.if_modified);
    /* Its folder is not there either: the write says so. */
    assert_true(validators_write(v, why, sizeof why) < 0);
    assert_string_equal(why, "No such file or directory");
    validators_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dates_are_http_dates_or_iso_8601_ones_and_go_out_as_imf_fixdates),
        cmocka_unit_test(
            test_a_file_read_gives_each_listed_job_its_validators_and_is_written_back_sorted),
        cmocka_unit_test(test_a_file_that_is_not_there_is_an_empty_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

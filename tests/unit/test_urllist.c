/* Unit tests for reading URL lists: what is handed to the taker, and,
 * through the core's taker, what becomes a job, what becomes a failed row,
 * and the messages that name the line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "crawl_internal.h"
#include "clock.h"
#include "io.h"
#include "urllist.h"

/* What a job's row said, kept after the core has freed the job. */
struct row {
    char *url;
    long line;
    enum crawl_fail fail;
    char *error;
    uint64_t seq;
};

struct fixture {
    struct crawl_opts o;
    struct crawl c;
    char *msgs;
    size_t msgs_len;
    FILE *err;
    struct row rows[16];
    size_t n;
};

static void keep_row(void *data, struct crawl *c, struct crawl_job *j)
{
    struct fixture *f = data;
    if (f->n == sizeof f->rows / sizeof f->rows[0])
        return;
    struct row *r = &f->rows[f->n++];
    r->url = strdup(j->url);
    r->line = j->line;
    r->fail = j->res.fail;
    r->error = j->res.error ? strdup(j->res.error) : NULL;
    r->seq = j->seq;
}

static int by_seq(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Hands every queued job back as if fetched, so that each gives its row,
 * and puts the rows in input order. */
static void drain(struct fixture *f)
{
    struct crawl_job *j;
    while (crawl_take(&f->c, &j, NULL) == 1)
        crawl_done(&f->c, j);
    qsort(f->rows, f->n, sizeof f->rows[0], by_seq);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    crawl_opts_init(&f->o);
    crawl__init(&f->c, &f->o);
    f->err = open_memstream(&f->msgs, &f->msgs_len);
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(&f->c, CRAWL_HOOK_OUTPUT, &rows, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fclose(f->err);
    free(f->msgs);
    crawl__fini(&f->c);
    for (size_t i = 0; i < f->n; i++) {
        free(f->rows[i].url);
        free(f->rows[i].error);
    }
    free(f);
    return 0;
}

/* Reads the sources of l into f's crawl, as the core reads them, and
 * gives every job its row. Returns the number of bad lines, or the
 * input's negative code. */
static int read_all(struct fixture *f, struct urllist *l)
{
    crawl_set_lists(&f->c, l);
    int rc = crawl_fill(&f->c);
    fflush(f->err);
    drain(f);
    return rc < 0 ? rc : urllist_bad(l);
}

/* Reads text (of length len) as a list named "list.txt". */
static int read_text(struct fixture *f, const char *text, size_t len)
{
    FILE *in = fmemopen((void *)text, len, "r");
    struct urllist *l = urllist_new(f->err);
    assert_non_null(l);
    assert_int_equal(urllist_add_file(l, in, "list.txt", 1), 0);
    int rc = read_all(f, l);
    urllist_free(l);
    return rc;
}

static void test_blank_and_comment_lines_are_skipped(void **state)
{
    struct fixture *f = *state;
    const char text[] = "\n# a comment\nhttp://127.0.0.1/a\n   \n\t# indented comment\nhttp://127.0.0.1/b\n";
    assert_int_equal(read_text(f, text, sizeof text - 1), 0);
    assert_int_equal(f->n, 2);
    assert_string_equal(f->rows[0].url, "http://127.0.0.1/a");
    assert_int_equal(f->rows[0].line, 3);
    assert_string_equal(f->rows[1].url, "http://127.0.0.1/b");
    assert_int_equal(f->rows[1].line, 6);
    assert_int_equal(f->msgs_len, 0);
}

static void test_crlf_spaces_and_bom_are_trimmed(void **state)
{
    struct fixture *f = *state;
    const char text[] = "\xEF\xBB\xBFhttp://127.0.0.1/a\r\n  https://127.0.0.1/b  \r\n";
    assert_int_equal(read_text(f, text, sizeof text - 1), 0);
    assert_int_equal(f->n, 2);
    assert_string_equal(f->rows[0].url, "http://127.0.0.1/a");
    assert_string_equal(f->rows[1].url, "https://127.0.0.1/b");
    assert_int_equal(f->rows[0].fail, CRAWL_FAIL_NONE);
}

static void test_last_line_without_newline_is_read(void **state)
{
    struct fixture *f = *state;
    const char text[] = "http://127.0.0.1/a\nhttp://127.0.0.1/b";
    assert_int_equal(read_text(f, text, sizeof text - 1), 0);
    assert_int_equal(f->n, 2);
}

static void test_bad_lines_fail_with_a_message_naming_the_line(void **state)
{
    struct fixture *f = *state;
    const char text[] =
        "http://127.0.0.1/ok\n"
        "ftp://127.0.0.1/file\n"
        "example.com/page\n"
        "file:///etc/passwd\n"
        "javascript:alert(1)\n"
        "http://127.0.0.1/with space\n"
        "http://\n";
    assert_int_equal(read_text(f, text, sizeof text - 1), 6);
    assert_int_equal(f->n, 7);
    assert_int_equal(f->rows[0].fail, CRAWL_FAIL_NONE);
    for (size_t i = 1; i < 7; i++) {
        assert_int_equal(f->rows[i].fail, CRAWL_FAIL_INPUT);
        assert_int_equal(f->rows[i].line, (long)i + 1);
        assert_non_null(f->rows[i].error);
    }
    assert_non_null(strstr(f->msgs, "list.txt:2: unsupported scheme"));
    assert_non_null(strstr(f->msgs, "list.txt:3: not an absolute http or https URL"));
    assert_non_null(strstr(f->msgs, "list.txt:4: unsupported scheme"));
    assert_non_null(strstr(f->msgs, "list.txt:5: unsupported scheme"));
    assert_non_null(strstr(f->msgs, "list.txt:6: contains spaces"));
    assert_non_null(strstr(f->msgs, "list.txt:7: "));
    assert_int_equal(f->c.nfailed, 6);
    assert_int_equal(f->c.fetchable, 1);
}

static void test_nul_bytes_fail_the_line_and_are_shown_escaped(void **state)
{
    struct fixture *f = *state;
    const char text[] = "http://127.0.0.1/a\0b\nhttp://127.0.0.1/c\n";
    assert_int_equal(read_text(f, text, sizeof text - 1), 1);
    assert_int_equal(f->n, 2);
    assert_string_equal(f->rows[0].url, "http://127.0.0.1/a\\x00b");
    assert_string_equal(f->rows[0].error, "contains a NUL byte");
    assert_non_null(strstr(f->msgs, "list.txt:1: contains a NUL byte"));
    assert_int_equal(f->rows[1].fail, CRAWL_FAIL_NONE);
}

static void test_overlong_line_fails_with_a_short_row(void **state)
{
    struct fixture *f = *state;
    size_t n = 1 << 20;
    char *text = malloc(n + 32);
    memcpy(text, "http://127.0.0.1/", 17);
    memset(text + 17, 'a', n - 17);
    memcpy(text + n, "\nhttp://127.0.0.1/b\n", 20);
    assert_int_equal(read_text(f, text, n + 20), 1);
    assert_int_equal(f->n, 2);
    assert_true(strlen(f->rows[0].url) < 300);
    assert_string_equal(f->rows[0].error, "line longer than 8192 bytes");
    assert_non_null(strstr(f->msgs, "list.txt:1: line longer than 8192 bytes"));
    assert_true(f->msgs_len < 400);
    free(text);
}

/* A line whose text is longer than LINE_KEEP (n bytes at text) followed by
 * fill: the kept start and whether the dropped rest held text decide. */
static char *long_line(const char *start, char fill, size_t n, const char *after, size_t *len)
{
    size_t a = strlen(start), b = strlen(after);
    char *text = malloc(a + n + b);
    memcpy(text, start, a);
    memset(text + a, fill, n);
    memcpy(text + a + n, after, b);
    *len = a + n + b;
    return text;
}

static void test_a_url_followed_by_100_000_spaces_is_that_url(void **state)
{
    struct fixture *f = *state;
    size_t len;
    char *text = long_line("http://127.0.0.1/a", ' ', 100000, "\r\nhttp://127.0.0.1/b\n", &len);
    assert_int_equal(read_text(f, text, len), 0);
    assert_int_equal(f->n, 2);
    assert_string_equal(f->rows[0].url, "http://127.0.0.1/a");
    assert_int_equal(f->rows[0].fail, CRAWL_FAIL_NONE);
    assert_string_equal(f->rows[1].url, "http://127.0.0.1/b");
    assert_int_equal(f->rows[1].line, 2);
    assert_int_equal(f->msgs_len, 0);
    free(text);
}

static void test_a_comment_of_100_000_bytes_is_skipped_whole(void **state)
{
    struct fixture *f = *state;
    size_t len;
    char *text = long_line("# ", 'x', 100000, "\nhttp://127.0.0.1/b\n", &len);
    assert_int_equal(read_text(f, text, len), 0);
    assert_int_equal(f->n, 1);
    assert_string_equal(f->rows[0].url, "http://127.0.0.1/b");
    assert_int_equal(f->rows[0].line, 2);
    assert_int_equal(f->msgs_len, 0);
    free(text);
}

static void test_a_line_that_never_ends_is_one_bad_line_at_the_end(void **state)
{
    struct fixture *f = *state;
    size_t len;
    char *text = long_line("http://127.0.0.1/", '\0', 3 << 20, "", &len);
    assert_int_equal(read_text(f, text, len), 1);
    assert_int_equal(f->n, 1);
    assert_int_equal(f->rows[0].line, 1);
    assert_string_equal(f->rows[0].error, "line longer than 8192 bytes");
    assert_int_equal(strncmp(f->rows[0].url, "http://127.0.0.1/\\x00\\x00", 25), 0);
    assert_int_equal(strncmp(f->msgs, "list.txt:1: line longer than 8192 bytes: http://127.0.0.1/\\x00", 62), 0);
    free(text);
}

static void test_scheme_is_case_insensitive(void **state)
{
    struct fixture *f = *state;
    const char text[] = "HTTP://127.0.0.1/a\nHttpS://127.0.0.1/b\n";
    assert_int_equal(read_text(f, text, sizeof text - 1), 0);
    assert_int_equal(f->c.fetchable, 2);
}

static void test_empty_list_gives_no_jobs(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(read_text(f, "", 0), 0);
    assert_int_equal(f->n, 0);
}

static void test_argument_urls_are_checked_the_same_way(void **state)
{
    struct fixture *f = *state;
    struct urllist *l = urllist_new(f->err);
    assert_non_null(l);
    assert_int_equal(urllist_add_url(l, "http://127.0.0.1/x", 1), 0);
    assert_int_equal(urllist_add_url(l, "gopher://127.0.0.1/x", 2), 0);
    assert_int_equal(read_all(f, l), 1);
    urllist_free(l);
    assert_int_equal(f->n, 2);
    assert_int_equal(f->rows[0].fail, CRAWL_FAIL_NONE);
    assert_int_equal(f->rows[1].fail, CRAWL_FAIL_INPUT);
    assert_int_equal(f->rows[1].line, 2);
    assert_string_equal(f->msgs, "argument:2: unsupported scheme: only http and https are fetched: "
                                 "gopher://127.0.0.1/x\n");
}

/* A taker of its own, with no crawl behind it: keeps what it is handed,
 * refuses a URL that ends in "/no" for a reason of its own, and fails on
 * "http://127.0.0.1/oom" as a taker out of memory would. */
struct taken {
    char text[8][64];
    char source[8][16];
    long line[8];
    const char *why[8];       /* as handed: NULL, or the list's reason */
    size_t n;
    int cancelled;
};

static int take(void *data, const char *text, const char *source, long line, const char **why)
{
    struct taken *t = data;
    if (strcmp(text, "http://127.0.0.1/oom") == 0)
        return CRAWL_ENOMEM;
    assert_true(t->n < 8);
    snprintf(t->text[t->n], sizeof t->text[t->n], "%s", text);
    snprintf(t->source[t->n], sizeof t->source[t->n], "%s", source);
    t->line[t->n] = line;
    t->why[t->n++] = *why;
    size_t len = strlen(text);
    if (!*why && len >= 3 && strcmp(text + len - 3, "/no") == 0)
        *why = "not wanted here";
    return *why ? 1 : 0;
}

static int is_cancelled(void *data)
{
    return ((struct taken *)data)->cancelled;
}

static const struct urllist_taker recorder = { take, is_cancelled };

static void test_each_line_goes_to_the_taker_with_its_list_and_number(void **state)
{
    (void)state;
    char *msgs = NULL;
    size_t msgs_len = 0;
    FILE *err = open_memstream(&msgs, &msgs_len);
    const char text[] = "# a list\nhttp://127.0.0.1/a\n  http://127.0.0.1/no\r\n"
                        "http://127.0.0.1/x\0y\n";
    struct urllist *l = urllist_new(err);
    struct taken t = {0};
    assert_int_equal(urllist_add_file(l, fmemopen((void *)text, sizeof text - 1, "r"),
                                      "list.txt", 1), 0);
    assert_int_equal(urllist_next(l, 100, &recorder, &t), 0);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.text[0], "http://127.0.0.1/a");
    assert_string_equal(t.source[0], "list.txt");
    assert_int_equal(t.line[0], 2);
    assert_null(t.why[0]);
    assert_string_equal(t.text[1], "http://127.0.0.1/no");
    assert_int_equal(t.line[1], 3);
    assert_null(t.why[1]);
    assert_string_equal(t.text[2], "http://127.0.0.1/x\\x00y");
    assert_int_equal(t.line[2], 4);
    assert_string_equal(t.why[2], "contains a NUL byte");
    assert_int_equal(urllist_bad(l), 2);
    urllist_free(l);
    fclose(err);
    assert_string_equal(msgs, "list.txt:3: not wanted here: http://127.0.0.1/no\n"
                              "list.txt:4: contains a NUL byte: http://127.0.0.1/x\\x00y\n");
    free(msgs);
}

static void test_a_taker_that_fails_ends_the_reading(void **state)
{
    (void)state;
    const char text[] = "http://127.0.0.1/a\nhttp://127.0.0.1/oom\nhttp://127.0.0.1/b\n";
    struct urllist *l = urllist_new(stderr);
    struct taken t = {0};
    assert_int_equal(urllist_add_file(l, fmemopen((void *)text, sizeof text - 1, "r"),
                                      "list.txt", 1), 0);
    assert_int_equal(urllist_next(l, 100, &recorder, &t), CRAWL_ENOMEM);
    assert_int_equal(urllist_next(l, 100, &recorder, &t), 0);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.text[0], "http://127.0.0.1/a");
    urllist_free(l);
}

static void test_once_cancelled_a_pipe_gives_what_was_read_and_no_more(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const char first[] = "http://127.0.0.1/a\nhttp://127.0.0.1/b\n", later[] = "http://127.0.0.1/c\n";
    assert_int_equal(write(fds[1], first, sizeof first - 1), (ssize_t)(sizeof first - 1));
    struct urllist *l = urllist_new(stderr);
    struct taken t = {0};
    assert_int_equal(urllist_add_file(l, fdopen(fds[0], "r"), "-", 1), 0);
    assert_int_equal(urllist_streams(l), 1);
    assert_int_equal(urllist_next(l, 1, &recorder, &t), 1);
    assert_int_equal(t.n, 1);
    /* b was read with a; c comes after the cancel. */
    assert_int_equal(write(fds[1], later, sizeof later - 1), (ssize_t)(sizeof later - 1));
    t.cancelled = 1;
    assert_int_equal(urllist_next(l, 100, &recorder, &t), 0);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.text[1], "http://127.0.0.1/b");
    assert_int_equal(urllist_streams(l), 0);
    urllist_free(l);
    close(fds[1]);
}

struct waiting_read {
    struct urllist *l;
    struct taken t;
    int rc;
    double took;            /* seconds the call took */
};

static void *read_waiting(void *arg)
{
    struct waiting_read *w = arg;
    double t0 = clock_now();
    w->rc = urllist_next(w->l, 100, &recorder, &w->t);
    w->took = clock_now() - t0;
    return NULL;
}

/* A pipe with nothing in it is waited on until a line comes or the reading
 * is woken, not every 100 ms: a reader thread sleeps while the pipe is
 * idle, and urllist_wake ends its wait at once; the wait after waits. */
static void test_an_idle_pipe_is_waited_on_until_a_line_or_a_wake_up(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct waiting_read w = { .l = urllist_new(stderr) };
    assert_int_equal(urllist_add_file(w.l, fdopen(fds[0], "r"), "-", 1), 0);
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, read_waiting, &w), 0);
    usleep(300000);
    const char line[] = "http://127.0.0.1/a\n";
    assert_int_equal(write(fds[1], line, sizeof line - 1), (ssize_t)(sizeof line - 1));
    pthread_join(tid, NULL);
    assert_int_equal(w.rc, 1);
    assert_int_equal(w.t.n, 1);
    assert_true(w.took >= 0.25);        /* it waited for the line */
    assert_int_equal(pthread_create(&tid, NULL, read_waiting, &w), 0);
    usleep(300000);
    urllist_wake(w.l);
    pthread_join(tid, NULL);
    assert_int_equal(w.rc, 1);
    assert_int_equal(w.t.n, 1);
    assert_true(w.took >= 0.25 && w.took < 2);
    /* The wake-up is spent: the next read waits for its line again. */
    assert_int_equal(pthread_create(&tid, NULL, read_waiting, &w), 0);
    usleep(300000);
    assert_int_equal(write(fds[1], line, sizeof line - 1), (ssize_t)(sizeof line - 1));
    pthread_join(tid, NULL);
    assert_int_equal(w.rc, 1);
    assert_int_equal(w.t.n, 2);
    assert_true(w.took >= 0.25);
    urllist_free(w.l);
    close(fds[1]);
}

/* io_wait, the wait of the lists' reader and a procs worker's: a wake-up
 * ends it and is read away, so that the next wait waits again (a byte
 * left in the pipe would end every later wait at once); a readable
 * descriptor is said as such, woken or not. */
static void test_a_wait_woken_reads_the_wake_up_away(void **state)
{
    (void)state;
    int data[2], wake[2];
    assert_int_equal(pipe(data), 0);
    assert_int_equal(io_wake_pipe(wake), 0);
    io_wake(wake);
    io_wake(wake);
    assert_int_equal(io_wait(data[0], wake, -1), 0);
    double t0 = clock_now();
    assert_int_equal(io_wait(data[0], wake, 50), 0);
    assert_true(clock_now() - t0 >= 0.045);
    assert_int_equal(write(data[1], "x", 1), 1);
    io_wake(wake);
    assert_int_equal(io_wait(data[0], wake, -1), 1);
    t0 = clock_now();
    assert_int_equal(io_wait(-1, wake, 50), 0);
    assert_true(clock_now() - t0 >= 0.045);
    static const int none[2] = { -1, -1 };
    assert_int_equal(io_wait(data[0], none, 0), 1);
    io_wake_close(wake);
    assert_int_equal(wake[0], -1);
    close(data[0]);
    close(data[1]);
}

static void test_printable_escapes_and_truncates(void **state)
{
    char out[16];
    assert_string_equal(urllist_printable("a\tb", 3, out, sizeof out), "a\\x09b");
    urllist_printable("0123456789abcdefghij", 20, out, sizeof out);
    assert_true(strlen(out) < sizeof out);
    assert_non_null(strstr(out, "..."));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_wait_woken_reads_the_wake_up_away),
        cmocka_unit_test_setup_teardown(test_blank_and_comment_lines_are_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crlf_spaces_and_bom_are_trimmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_last_line_without_newline_is_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_lines_fail_with_a_message_naming_the_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_bytes_fail_the_line_and_are_shown_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlong_line_fails_with_a_short_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_url_followed_by_100_000_spaces_is_that_url, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_comment_of_100_000_bytes_is_skipped_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_line_that_never_ends_is_one_bad_line_at_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scheme_is_case_insensitive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_list_gives_no_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argument_urls_are_checked_the_same_way, setup, teardown),
        cmocka_unit_test(test_each_line_goes_to_the_taker_with_its_list_and_number),
        cmocka_unit_test(test_a_taker_that_fails_ends_the_reading),
        cmocka_unit_test(test_once_cancelled_a_pipe_gives_what_was_read_and_no_more),
        cmocka_unit_test(test_an_idle_pipe_is_waited_on_until_a_line_or_a_wake_up),
        cmocka_unit_test(test_printable_escapes_and_truncates),
    };
    return cmocka_run_group_tests_name("urllist", tests, NULL, NULL);
}

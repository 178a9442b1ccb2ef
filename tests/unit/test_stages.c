/* Unit tests of the body stages (fetch_stage.h) on real transfers:
 * recording stages are listed in the options and a sequential run fetches
 * from the fixture server (the one built beside this test). What each
 * stage saw, and in which order, is checked: every response of a followed
 * redirect and the gzip body as sent for a raw stage, the decoded body of
 * the last response alone for a decoded one, raw stages first whatever
 * the listed order, a stage's failure ending the body there and naming the
 * row's error, and a run whose stage cannot open fetching nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crawl.h"
#include "digest.h"
#include "fetch.h"
#include "fetch_stage.h"
#include "hooks.h"
#include "model.h"

static char server[PATH_MAX];
static pid_t server_pid;
static int port;

/* ---- Recording stages --------------------------------------------------- */

/* Every stage's events in the order they came, "NAME EVENT[ ARG]\n". */
static char events[16384];
static size_t nevents;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(events + nevents, sizeof events - nevents, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof events - nevents)
        nevents += (size_t)n;
}

/* A recording stage's run: its name and what it is to do. The run's
 * stages take these in the order listed (run_open is called so). */
struct rec {
    const char *name;
    int fail_open;              /* run_open fails */
    int fail_body;              /* the first body bytes fail the transfer */
    size_t bytes;               /* body bytes of the response being read */
    unsigned char first[2];     /* its first two */
};

static struct rec *recs[4];
static int nrecs;

static int rec_run_open(struct fetch_ctx *ctx, void **conf)
{
    struct rec *r = recs[nrecs++];
    note("%s run_open\n", r->name);
    *conf = r;
    return r->fail_open ? CRAWL_EOUTPUT : 0;
}

static int rec_run_close(struct fetch_ctx *ctx, void *conf)
{
    note("%s run_close\n", ((struct rec *)conf)->name);
    return 0;
}

static int rec_open(void *conf, struct fetch_xfer *x, void **st)
{
    note("%s open\n", ((struct rec *)conf)->name);
    *st = conf;
    return 0;
}

/* The request line of the head as sent, "GET /path HTTP/1.1". */
static void rec_request(void *st, const char *p, size_t n)
{
    const char *eol = memchr(p, '\r', n);
    note("%s request %.*s\n", ((struct rec *)st)->name, (int)(eol ? (size_t)(eol - p) : n), p);
}

static void rec_header(void *st, const char *p, size_t n)
{
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0)
        note("%s status line\n", ((struct rec *)st)->name);
}

static int rec_begin(void *st, struct fetch_xfer *x, long status)
{
    struct rec *r = st;
    r->bytes = 0;
    r->first[0] = r->first[1] = 0;
    note("%s begin %ld\n", r->name, status);
    return 0;
}

static int rec_body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    struct rec *r = st;
    for (size_t i = 0; i < n && r->bytes + i < 2; i++)
        r->first[r->bytes + i] = (unsigned char)p[i];
    r->bytes += n;
    if (r->fail_body) {
        note("%s body fails\n", r->name);
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "%s: no room for the body", r->name);
        return -1;
    }
    return 0;
}

static void rec_ended(void *st, struct fetch_xfer *x, CURLcode rc)
{
    struct rec *r = st;
    note("%s ended %zu bytes %02x%02x\n", r->name, r->bytes, r->first[0], r->first[1]);
}

static void rec_finish(void *st, struct fetch_xfer *x, int ok)
{
    struct rec *r = st;
    note("%s finish %s, %zu bytes\n", r->name, ok ? "ok" : "failed", r->bytes);
}

static void rec_free(void *st)
{
    note("%s free\n", ((struct rec *)st)->name);
}

static const struct fetch_stage raw_stage = {
    .name = "raw", .raw = 1, .run_open = rec_run_open, .run_close = rec_run_close,
    .open = rec_open, .request = rec_request, .header = rec_header, .begin = rec_begin,
    .body = rec_body, .ended = rec_ended, .finish = rec_finish, .free = rec_free,
};

/* A decoded stage is told of no request, header or response's end. */
static const struct fetch_stage decoded_stage = {
    .name = "decoded", .raw = 0, .run_open = rec_run_open, .run_close = rec_run_close,
    .open = rec_open, .begin = rec_begin, .body = rec_body, .finish = rec_finish,
    .free = rec_free,
};

/* ---- A run --------------------------------------------------------------- */

struct row {
    int n;
    long status;
    int64_t length;
    enum crawl_fail fail;
    char error[256];
    char digest[64];
};

static void keep_row(void *data, struct crawl *c, struct crawl_job *j)
{
    struct row *r = data;
    r->n++;
    r->status = j->res.status;
    r->length = j->res.length;
    r->fail = j->res.fail;
    snprintf(r->error, sizeof r->error, "%s", j->res.error ? j->res.error : "");
    snprintf(r->digest, sizeof r->digest, "%s", j->res.digest ? j->res.digest : "");
}

static void quiet(const char *msg, uint64_t once, void *data)
{
}

/* What the next run sets of o.digests and o.dedupe. */
static int run_digests = 1, run_dedupe;

/* Fetches PATH of the fixture in the seq model through the n stages, each
 * with its rec; returns crawl_run's code and the row in *row. */
static int run(const char *path, const struct fetch_stage *const *stages, struct rec **r, int n,
               struct row *row)
{
    struct crawl_opts o;
    crawl_opts_init(&o);
    o.user_agent = "crawl/test";
    o.stages = stages;
    o.nstages = n;
    o.digests = run_digests;
    o.dedupe = run_dedupe;
    run_digests = 1;
    run_dedupe = 0;
    nevents = 0;
    events[0] = '\0';
    nrecs = 0;
    for (int i = 0; i < n; i++)
        recs[i] = r[i];
    memset(row, 0, sizeof *row);
    struct crawl *c = crawl_new(&o);
    assert_non_null(c);
    crawl_on_warn(c, quiet, NULL);
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(c, CRAWL_HOOK_OUTPUT, &rows, row);
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    assert_int_equal(crawl_add(c, url, "test", 1, NULL), 0);
    int rc = crawl_run(c, crawl_backend_find("seq"));
    crawl_free(c);
    return rc;
}

/* ---- The tests ------------------------------------------------------------ */

/* /redirect-to answers 302 to /gzip/100, which sends 100 bytes
 * gzip-compressed since crawl offers gzip. */
#define CHAIN "/redirect-to?url=%2Fgzip%2F100"

static void test_a_raw_stage_sees_every_response_as_sent_a_decoded_one_the_last_decoded(void **state)
{
    struct rec raw = { .name = "raw" }, dec = { .name = "decoded" };
    const struct fetch_stage *stages[] = { &raw_stage, &decoded_stage };
    struct rec *r[] = { &raw, &dec };
    struct row row;
    assert_int_equal(run(CHAIN, stages, r, 2, &row), 0);
    assert_int_equal(row.n, 1);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 100);
    assert_string_equal(row.error, "");
    /* The raw stage: both requests, both responses, the 302's "302 Found\n"
     * (3330: "30") and the 200's body as gzip (1f8b); the decoded stage:
     * the 200 alone, its 100 bytes decoded. The run opens and closes each
     * once, the last opened closed first. */
    assert_string_equal(events,
        "raw run_open\n"
        "decoded run_open\n"
        "raw open\n"
        "decoded open\n"
        "raw request GET " CHAIN " HTTP/1.1\n"
        "raw status line\n"
        "raw begin 302\n"
        "raw ended 10 bytes 3330\n"
        "raw request GET /gzip/100 HTTP/1.1\n"
        "raw status line\n"
        "raw begin 200\n"
        "decoded begin 200\n"
        "raw ended 87 bytes 1f8b\n"
        "raw finish ok, 87 bytes\n"
        "decoded finish ok, 100 bytes\n"
        "raw free\n"
        "decoded free\n"
        "decoded run_close\n"
        "raw run_close\n");
}

static void test_raw_stages_run_before_decoded_ones_whatever_the_order_listed(void **state)
{
    struct rec raw = { .name = "raw" }, dec = { .name = "decoded" };
    const struct fetch_stage *stages[] = { &decoded_stage, &raw_stage };
    struct rec *r[] = { &dec, &raw };
    struct row row;
    assert_int_equal(run("/gzip/100", stages, r, 2, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 100);
    /* Listed first, the decoded stage is opened, told of the end and
     * closed in its turn; the body reaches the raw one first. */
    assert_string_equal(events,
        "decoded run_open\n"
        "raw run_open\n"
        "decoded open\n"
        "raw open\n"
        "raw request GET /gzip/100 HTTP/1.1\n"
        "raw status line\n"
        "raw begin 200\n"
        "decoded begin 200\n"
        "raw ended 87 bytes 1f8b\n"
        "decoded finish ok, 100 bytes\n"
        "raw finish ok, 87 bytes\n"
        "decoded free\n"
        "raw free\n"
        "raw run_close\n"
        "decoded run_close\n");
}

static void test_a_failing_stage_ends_the_body_there_and_names_the_rows_error(void **state)
{
    struct rec a = { .name = "A", .fail_body = 1 }, b = { .name = "B" };
    const struct fetch_stage *stages[] = { &decoded_stage, &decoded_stage };
    struct rec *r[] = { &a, &b };
    struct row row;
    assert_int_equal(run("/bytes/100", stages, r, 2, &row), 0);
    assert_int_equal(row.n, 1);
    assert_int_equal(row.fail, CRAWL_FAIL_OTHER);
    assert_string_equal(row.error, "A: no room for the body");
    /* B, after A, gets none of the body; both hear the transfer failed. */
    assert_string_equal(events,
        "A run_open\n"
        "B run_open\n"
        "A open\n"
        "B open\n"
        "A begin 200\n"
        "B begin 200\n"
        "A body fails\n"
        "A finish failed, 100 bytes\n"
        "B finish failed, 0 bytes\n"
        "A free\n"
        "B free\n"
        "B run_close\n"
        "A run_close\n");
}

static void test_a_stage_whose_run_cannot_open_fetches_nothing_and_closes_those_opened(void **state)
{
    struct rec a = { .name = "A" }, b = { .name = "B", .fail_open = 1 };
    const struct fetch_stage *stages[] = { &raw_stage, &decoded_stage };
    struct rec *r[] = { &a, &b };
    struct row row;
    assert_int_equal(run("/bytes/100", stages, r, 2, &row), CRAWL_EOUTPUT);
    assert_string_equal(events, "A run_open\nB run_open\nA run_close\n");
    assert_int_equal(row.n, 1);
    assert_int_equal(row.status, 0);
    assert_int_equal(row.fail, CRAWL_FAIL_CANCELLED);
}

/* The row's digest is taken by default; off, no body's is, unless
 * --dedupe claims it. */
static void test_a_rows_digest_is_taken_when_asked_for_or_deduped(void **state)
{
    struct row row;
    assert_int_equal(run("/bytes/100", NULL, NULL, 0, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(strlen(row.digest), DIGEST_TEXT - 1);
    assert_memory_equal(row.digest, "sha1:", 5);
    char first[64];
    snprintf(first, sizeof first, "%s", row.digest);
    run_digests = 0;
    assert_int_equal(run("/bytes/100", NULL, NULL, 0, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 100);
    assert_string_equal(row.digest, "");
    run_digests = 0;
    run_dedupe = 1;
    assert_int_equal(run("/bytes/100", NULL, NULL, 0, &row), 0);
    assert_string_equal(row.digest, first);
}

/* ---- The fixture server -------------------------------------------------- */

static int server_up(void **state)
{
    char port_file[] = "/tmp/test_stages.XXXXXX";
    int fd = mkstemp(port_file);
    assert_true(fd >= 0);
    close(fd);
    unlink(port_file);
    server_pid = fork();
    if (server_pid == 0) {
        execl(server, server, "--port", "0", "--port-file", port_file, "-q", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && port == 0; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (port == 0)
            nanosleep(&(struct timespec){ 0, 25000000 }, NULL);
    }
    unlink(port_file);
    return port > 0 ? 0 : -1;
}

static int server_down(void **state)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        waitpid(server_pid, NULL, 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* BUILD/tests/test_stages: the server is BUILD/fixture-server. */
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(server, sizeof server, "%s/../fixture-server", dirname(self));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_raw_stage_sees_every_response_as_sent_a_decoded_one_the_last_decoded),
        cmocka_unit_test(test_raw_stages_run_before_decoded_ones_whatever_the_order_listed),
        cmocka_unit_test(test_a_failing_stage_ends_the_body_there_and_names_the_rows_error),
        cmocka_unit_test(test_a_stage_whose_run_cannot_open_fetches_nothing_and_closes_those_opened),
        cmocka_unit_test(test_a_rows_digest_is_taken_when_asked_for_or_deduped),
    };
    int rc = cmocka_run_group_tests(tests, server_up, server_down);
    curl_global_cleanup();
    return rc;
}

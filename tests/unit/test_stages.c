/* Unit tests of the body stages (fetch_stage.h) on real transfers:
 * recording stages are listed in the options, the core's own (the
 * decoder, the digest, the parser) are watched through spies put in their
 * place in the run's context, and a run fetches from the fixture server
 * (the one built beside this test). What each stage saw, and in which
 * order, is checked: every response of a followed redirect and the gzip
 * body as sent for a raw stage, the decoded body of the last response
 * alone for a decoded one; the chain raw stages, decoder, decoded stages,
 * digest, parser whatever the listed order, the parser getting the bytes
 * the decoded stages got; a list crawl with no parser at all; the parse
 * put off to the coro model's parse pool; a stage's failure ending the
 * body there and naming the row's error; and a run whose stages cannot
 * open fetching nothing. */
#include <errno.h>
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
#include "html.h"
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

/* What a stage saw of the body of the response being read: its bytes,
 * the first two, and their FNV-1a hash (the same hash: the same bytes). */
struct seen {
    size_t bytes;
    unsigned char first[2];
    uint32_t hash;
    int told;                   /* its first body call was noted */
};

static void seen_begin(struct seen *s)
{
    memset(s, 0, sizeof *s);
    s->hash = 2166136261u;
}

static void seen_add(struct seen *s, const char *name, const char *p, size_t n)
{
    if (!s->told)
        note("%s body\n", name);
    s->told = 1;
    for (size_t i = 0; i < n; i++) {
        if (s->bytes + i < 2)
            s->first[s->bytes + i] = (unsigned char)p[i];
        s->hash = (s->hash ^ (unsigned char)p[i]) * 16777619u;
    }
    s->bytes += n;
}

/* A recording stage's run: its name and what it is to do. */
struct rec {
    const char *name;
    int fail_open;              /* run_open fails */
    int fail_body;              /* the first body bytes fail the transfer */
    struct seen seen;
};

/* The recs of the next run, each kind in the order its stages are listed
 * (run_open takes them so, whatever the chain's order). */
static struct rec *raw_recs[4], *decoded_recs[4];
static int nraw, ndecoded;

static int rec_open_run(struct rec *r, void **conf)
{
    note("%s run_open\n", r->name);
    *conf = r;
    return r->fail_open ? CRAWL_EOUTPUT : 0;
}

static int raw_run_open(struct fetch_ctx *ctx, void **conf)
{
    return rec_open_run(raw_recs[nraw++], conf);
}

static int decoded_run_open(struct fetch_ctx *ctx, void **conf)
{
    return rec_open_run(decoded_recs[ndecoded++], conf);
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
    seen_begin(&r->seen);
    note("%s begin %ld\n", r->name, status);
    return 0;
}

static int rec_body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    struct rec *r = st;
    if (r->fail_body) {
        r->seen.told = 1;
        note("%s body fails\n", r->name);
    }
    seen_add(&r->seen, r->name, p, n);
    if (r->fail_body) {
        fetch_stage_fail(x, CRAWL_FAIL_OTHER, "%s: no room for the body", r->name);
        return -1;
    }
    return 0;
}

static void rec_ended(void *st, struct fetch_xfer *x, CURLcode rc)
{
    struct rec *r = st;
    note("%s ended %zu bytes %02x%02x\n", r->name, r->seen.bytes, r->seen.first[0],
         r->seen.first[1]);
}

static int rec_finish(void *st, struct fetch_xfer *x, int ok)
{
    struct rec *r = st;
    note("%s finish %s, %zu bytes %08x\n", r->name, ok ? "ok" : "failed", r->seen.bytes,
         r->seen.hash);
    return 0;
}

static void rec_free(void *st)
{
    note("%s free\n", ((struct rec *)st)->name);
}

static const struct fetch_stage raw_stage = {
    .name = "raw", .kind = FETCH_STAGE_RAW, .run_open = raw_run_open,
    .run_close = rec_run_close, .open = rec_open, .request = rec_request, .header = rec_header,
    .begin = rec_begin, .body = rec_body, .ended = rec_ended, .finish = rec_finish,
    .free = rec_free,
};

/* A decoded stage is told of no request, header or response's end. */
static const struct fetch_stage decoded_stage = {
    .name = "decoded", .kind = FETCH_STAGE_DECODED, .run_open = decoded_run_open,
    .run_close = rec_run_close, .open = rec_open, .begin = rec_begin, .body = rec_body,
    .finish = rec_finish, .free = rec_free,
};

/* ---- Spies on the core's own stages -------------------------------------- */

/* A spy stands in a stage's place in the run's context: it notes what
 * the stage is told and passes every call on to it. */
struct spy {
    struct fetch_stage s;       /* the stage's name and kind, the spy's calls */
    const struct fetch_stage *real;
    void *conf;                 /* the real stage's */
};

static struct spy spies[FETCH_STAGES_MAX];

/* A transfer's state: the real stage's, and what went through. */
struct spied {
    struct spy *spy;
    void *st;
    struct seen seen;
};

/* run_open is given no stage: one function a slot tells the spies apart. */
static int spy_run_open(int i, struct fetch_ctx *ctx, void **conf)
{
    struct spy *sp = &spies[i];
    sp->conf = NULL;
    *conf = sp;
    return sp->real->run_open ? sp->real->run_open(ctx, &sp->conf) : 0;
}

#define SPY_RUN_OPEN(i) \
    static int spy_run_open##i(struct fetch_ctx *ctx, void **conf) \
    { \
        return spy_run_open(i, ctx, conf); \
    }
SPY_RUN_OPEN(0) SPY_RUN_OPEN(1) SPY_RUN_OPEN(2) SPY_RUN_OPEN(3)
SPY_RUN_OPEN(4) SPY_RUN_OPEN(5) SPY_RUN_OPEN(6) SPY_RUN_OPEN(7)

static int (*const spy_run_opens[FETCH_STAGES_MAX])(struct fetch_ctx *, void **) = {
    spy_run_open0, spy_run_open1, spy_run_open2, spy_run_open3,
    spy_run_open4, spy_run_open5, spy_run_open6, spy_run_open7,
};

static int spy_run_close(struct fetch_ctx *ctx, void *conf)
{
    struct spy *sp = conf;
    return sp->real->run_close ? sp->real->run_close(ctx, sp->conf) : 0;
}

/* A stage that takes no part in the transfer is not noted. */
static int spy_open(void *conf, struct fetch_xfer *x, void **st)
{
    struct spy *sp = conf;
    void *real = NULL;
    int rc = sp->real->open(sp->conf, x, &real);
    *st = NULL;
    if (!real)
        return rc;
    struct spied *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->spy = sp;
    w->st = real;
    seen_begin(&w->seen);
    note("%s open\n", sp->s.name);
    *st = w;
    return rc;
}

static int spy_begin(void *st, struct fetch_xfer *x, long status)
{
    struct spied *w = st;
    seen_begin(&w->seen);
    note("%s begin %ld\n", w->spy->s.name, status);
    return w->spy->real->begin ? w->spy->real->begin(w->st, x, status) : 0;
}

static int spy_body(void *st, struct fetch_xfer *x, const char *p, size_t n)
{
    struct spied *w = st;
    seen_add(&w->seen, w->spy->s.name, p, n);
    return w->spy->real->body(w->st, x, p, n);
}

static int spy_finish(void *st, struct fetch_xfer *x, int ok)
{
    struct spied *w = st;
    int rc = w->spy->real->finish ? w->spy->real->finish(w->st, x, ok) : 0;
    note("%s finish %s, %zu bytes %08x%s\n", w->spy->s.name, ok ? "ok" : "failed",
         w->seen.bytes, w->seen.hash, rc == 1 ? ", later" : "");
    return rc;
}

static void spy_later(void *st, struct fetch_xfer *x)
{
    struct spied *w = st;
    note("%s later\n", w->spy->s.name);
    w->spy->real->later(w->st, x);
}

static void spy_free(void *st)
{
    struct spied *w = st;
    w->spy->real->free(w->st);
    note("%s free\n", w->spy->s.name);
    free(w);
}

/* Puts a spy in the place of each stage of c's context that is not a
 * recording one: the core's own. */
static void spy_on_core(struct crawl *c)
{
    struct fetch_ctx *fx = crawl_fetch_ctx(c);
    for (int i = 0; i < fx->nstages; i++) {
        const struct fetch_stage *s = fx->stages[i];
        if (s == &raw_stage || s == &decoded_stage)
            continue;
        spies[i].real = s;
        spies[i].s = (struct fetch_stage){
            .name = s->name, .kind = s->kind, .fds = s->fds, .run_open = spy_run_opens[i],
            .run_close = spy_run_close, .open = spy_open, .begin = spy_begin,
            .body = spy_body, .finish = spy_finish, .later = s->later ? spy_later : NULL,
            .free = spy_free,
        };
        fx->stages[i] = &spies[i].s;
    }
}

/* ---- A run --------------------------------------------------------------- */

struct row {
    int n;
    long status;
    int64_t length;
    enum crawl_fail fail;
    char error[256];
    char digest[64];
    size_t nlinks;
    char extract[64];           /* the first extracted value */
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
    r->nlinks = j->res.nlinks;
    snprintf(r->extract, sizeof r->extract, "%s",
             j->res.nextracts ? j->res.extracts[0].value : "");
}

static void quiet(const char *msg, uint64_t once, void *data)
{
}

/* What a run does besides its defaults. */
struct setup {
    const char *path;
    const struct fetch_stage *const *stages;  /* listed by the program */
    struct rec **recs;          /* each one's rec, in the same order */
    int n;
    int no_digests;             /* o.digests off */
    int dedupe;
    const char *extract;        /* an --extract rule: the pages are parsed */
    const char *model;          /* NULL: seq */
    int spy;                    /* spies on the core's stages */
    const char *drop;           /* a stage taken out of the context */
    const char *listed;         /* set: the names of the context's stages, "a b" */
};

/* Fetches s->path of the fixture as s says; returns crawl_run's code and
 * the row in *row. */
static int run(struct setup *s, struct row *row)
{
    struct crawl_opts o;
    crawl_opts_init(&o);
    o.user_agent = "crawl/test";
    o.stages = s->stages;
    o.nstages = s->n;
    o.digests = !s->no_digests;
    o.dedupe = s->dedupe;
    o.parse_threads = 1;
    struct html_rules *rules = NULL;
    if (s->extract) {
        char err[256];
        assert_int_equal(html_rules_new(NULL, &s->extract, 1, &rules, err, sizeof err), 0);
        o.rules = rules;
    }
    nevents = 0;
    events[0] = '\0';
    nraw = ndecoded = 0;
    for (int i = 0, r = 0, d = 0; i < s->n; i++)
        if (s->stages[i] == &raw_stage)
            raw_recs[r++] = s->recs[i];
        else
            decoded_recs[d++] = s->recs[i];
    memset(row, 0, sizeof *row);
    struct crawl *c = crawl_new(&o);
    assert_non_null(c);
    crawl_on_warn(c, quiet, NULL);
    static const struct crawl_hook rows = { .row = keep_row };
    crawl_hook(c, CRAWL_HOOK_OUTPUT, &rows, row);
    struct fetch_ctx *fx = crawl_fetch_ctx(c);
    if (s->listed) {
        char names[128] = "";
        for (int i = 0; i < fx->nstages; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? " " : "",
                     fx->stages[i]->name);
        assert_string_equal(names, s->listed);
    }
    for (int i = 0; s->drop && i < fx->nstages; i++)
        if (strcmp(fx->stages[i]->name, s->drop) == 0) {
            memmove(&fx->stages[i], &fx->stages[i + 1],
                    (size_t)(fx->nstages - i - 1) * sizeof fx->stages[0]);
            fx->nstages--;
        }
    if (s->spy)
        spy_on_core(c);
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, s->path);
    assert_int_equal(crawl_add(c, url, "test", 1, NULL), 0);
    int rc = crawl_run(c, crawl_backend_find(s->model ? s->model : "seq"));
    crawl_free(c);
    html_rules_free(rules);
    return rc;
}

/* ---- The tests ------------------------------------------------------------ */

/* /redirect-to answers 302 to /gzip/100, which sends 100 bytes
 * gzip-compressed since crawl offers gzip. */
#define CHAIN "/redirect-to?url=%2Fgzip%2F100"

/* The FNV-1a hashes of /gzip/100's body as sent, and of the fixture's
 * first 100 pattern bytes: its body decoded, and /bytes/100's. */
#define GZIP_SENT    "92e2c976"
#define PATTERN_100  "e4ee883a"

static void test_a_raw_stage_sees_every_response_as_sent_a_decoded_one_the_last_decoded(void **state)
{
    struct rec raw = { .name = "raw" }, dec = { .name = "decoded" };
    const struct fetch_stage *stages[] = { &raw_stage, &decoded_stage };
    struct rec *r[] = { &raw, &dec };
    struct setup s = { .path = CHAIN, .stages = stages, .recs = r, .n = 2 };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
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
        "raw body\n"
        "raw ended 10 bytes 3330\n"
        "raw request GET /gzip/100 HTTP/1.1\n"
        "raw status line\n"
        "raw begin 200\n"
        "decoded begin 200\n"
        "raw body\n"
        "decoded body\n"
        "raw ended 87 bytes 1f8b\n"
        "raw finish ok, 87 bytes " GZIP_SENT "\n"
        "decoded finish ok, 100 bytes " PATTERN_100 "\n"
        "raw free\n"
        "decoded free\n"
        "decoded run_close\n"
        "raw run_close\n");
}

/* The core's own stages go where the chain puts them: the decoder after
 * the raw stages, the digest and the parser after the program's decoded
 * ones. The decoder gets the body as sent, the decoded stage, the digest
 * and the parser the same 100 bytes decoded (a text/plain body, which the
 * parser lets pass unparsed). */
static void test_a_gzip_body_goes_raw_then_decoder_then_decoded_stages_then_digest_and_parser(void **state)
{
    struct rec raw = { .name = "raw" }, dec = { .name = "decoded" };
    const struct fetch_stage *stages[] = { &decoded_stage, &raw_stage };
    struct rec *r[] = { &dec, &raw };
    struct setup s = { .path = "/gzip/100", .stages = stages, .recs = r, .n = 2,
                       .extract = "title=//title", .spy = 1,
                       .listed = "decoded raw decode digest parse" };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 100);
    assert_int_equal(strlen(row.digest), DIGEST_TEXT - 1);
    assert_string_equal(events,
        "raw run_open\n"
        "decoded run_open\n"
        "raw open\n"
        "decode open\n"
        "decoded open\n"
        "digest open\n"
        "parse open\n"
        "raw request GET /gzip/100 HTTP/1.1\n"
        "raw status line\n"
        "raw begin 200\n"
        "decode begin 200\n"
        "decoded begin 200\n"
        "digest begin 200\n"
        "parse begin 200\n"
        "raw body\n"
        "decode body\n"
        "decoded body\n"
        "digest body\n"
        "parse body\n"
        "raw ended 87 bytes 1f8b\n"
        "raw finish ok, 87 bytes " GZIP_SENT "\n"
        "decode finish ok, 87 bytes " GZIP_SENT "\n"
        "decoded finish ok, 100 bytes " PATTERN_100 "\n"
        "digest finish ok, 100 bytes " PATTERN_100 "\n"
        "parse finish ok, 100 bytes " PATTERN_100 "\n"
        "raw free\n"
        "decode free\n"
        "decoded free\n"
        "digest free\n"
        "parse free\n"
        "decoded run_close\n"
        "raw run_close\n");
}

/* /links?u=...: an HTML page of two links to another host. */
#define LINKS "/links?u=http%3A%2F%2Fother.test%2Fa&u=http%3A%2F%2Fother.test%2Fb"

/* Without a raw stage libcurl decodes: no decoder in the chain. The
 * parser takes the page the decoded stage took, and gives its links and
 * its title. */
static void test_the_parser_parses_the_bytes_the_decoded_stages_saw(void **state)
{
    struct rec dec = { .name = "decoded" };
    const struct fetch_stage *stages[] = { &decoded_stage };
    struct rec *r[] = { &dec };
    struct setup s = { .path = LINKS, .stages = stages, .recs = r, .n = 1,
                       .extract = "title=//title", .spy = 1,
                       .listed = "decoded digest parse" };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.nlinks, 2);
    assert_string_equal(row.extract, "links");
    char hash[16];
    snprintf(hash, sizeof hash, "%08x", dec.seen.hash);
    char want[2048];
    snprintf(want, sizeof want,
        "decoded run_open\n"
        "decoded open\n"
        "digest open\n"
        "parse open\n"
        "decoded begin 200\n"
        "digest begin 200\n"
        "parse begin 200\n"
        "decoded body\n"
        "digest body\n"
        "parse body\n"
        "decoded finish ok, %zu bytes %s\n"
        "digest finish ok, %zu bytes %s\n"
        "parse finish ok, %zu bytes %s\n"
        "decoded free\n"
        "digest free\n"
        "parse free\n"
        "decoded run_close\n",
        (size_t)row.length, hash, (size_t)row.length, hash, (size_t)row.length, hash);
    assert_string_equal(events, want);
}

/* A list crawl without --depth, --extract or --links-out has no parser:
 * the chain is the digest alone, and with no digest wanted, nothing. */
static void test_a_list_crawl_fetches_with_no_parser_and_no_stage_at_all(void **state)
{
    struct setup s = { .path = LINKS, .spy = 1, .listed = "digest" };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.nlinks, 0);
    assert_int_equal(strlen(row.digest), DIGEST_TEXT - 1);
    assert_string_equal(events,
        "digest open\n"
        "digest begin 200\n"
        "digest body\n"
        "digest finish ok, 155 bytes 03067e95\n"
        "digest free\n");
    struct setup none = { .path = LINKS, .no_digests = 1, .listed = "" };
    assert_int_equal(run(&none, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 155);
    assert_string_equal(row.digest, "");
    assert_string_equal(events, "");
}

/* A model that parses elsewhere (coro with a parse pool) has the parser
 * hold a page of 8 KiB or more: its finish puts the parse off, and the
 * pool's thread runs it (fetch_parse) before the job is handed back. */
static void test_a_held_page_is_parsed_later_by_the_pool_then_freed(void **state)
{
    struct setup s = { .path = "/wide/400", .extract = "title=//title", .spy = 1,
                       .model = "coro" };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 11460);
    assert_int_equal(row.nlinks, 400);
    assert_string_equal(row.extract, "wide");
    assert_string_equal(events,
        "digest open\n"
        "parse open\n"
        "digest begin 200\n"
        "parse begin 200\n"
        "digest body\n"
        "parse body\n"
        "digest finish ok, 11460 bytes acafe122\n"
        "parse finish ok, 11460 bytes acafe122, later\n"
        "digest free\n"
        "parse later\n"
        "parse free\n");
}

static void test_raw_stages_come_first_in_the_chain_whatever_the_order_listed(void **state)
{
    struct rec raw = { .name = "raw" }, dec = { .name = "decoded" };
    const struct fetch_stage *stages[] = { &decoded_stage, &raw_stage };
    struct rec *r[] = { &dec, &raw };
    struct setup s = { .path = "/gzip/100", .stages = stages, .recs = r, .n = 2 };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 100);
    /* Listed second, the raw stage is opened, told and closed as the
     * chain's first. */
    assert_string_equal(events,
        "raw run_open\n"
        "decoded run_open\n"
        "raw open\n"
        "decoded open\n"
        "raw request GET /gzip/100 HTTP/1.1\n"
        "raw status line\n"
        "raw begin 200\n"
        "decoded begin 200\n"
        "raw body\n"
        "decoded body\n"
        "raw ended 87 bytes 1f8b\n"
        "raw finish ok, 87 bytes " GZIP_SENT "\n"
        "decoded finish ok, 100 bytes " PATTERN_100 "\n"
        "raw free\n"
        "decoded free\n"
        "decoded run_close\n"
        "raw run_close\n");
}

static void test_a_failing_stage_ends_the_body_there_and_names_the_rows_error(void **state)
{
    struct rec a = { .name = "A", .fail_body = 1 }, b = { .name = "B" };
    const struct fetch_stage *stages[] = { &decoded_stage, &decoded_stage };
    struct rec *r[] = { &a, &b };
    struct setup s = { .path = "/bytes/100", .stages = stages, .recs = r, .n = 2, .spy = 1 };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.n, 1);
    assert_int_equal(row.fail, CRAWL_FAIL_OTHER);
    assert_string_equal(row.error, "A: no room for the body");
    assert_string_equal(row.digest, "");
    /* B and the digest, after A, get none of the body; all hear the
     * transfer failed. */
    assert_string_equal(events,
        "A run_open\n"
        "B run_open\n"
        "A open\n"
        "B open\n"
        "digest open\n"
        "A begin 200\n"
        "B begin 200\n"
        "digest begin 200\n"
        "A body fails\n"
        "A finish failed, 100 bytes " PATTERN_100 "\n"
        "B finish failed, 0 bytes 811c9dc5\n"
        "digest finish failed, 0 bytes 811c9dc5\n"
        "A free\n"
        "B free\n"
        "digest free\n"
        "B run_close\n"
        "A run_close\n");
}

static void test_a_stage_whose_run_cannot_open_fetches_nothing_and_closes_those_opened(void **state)
{
    struct rec a = { .name = "A" }, b = { .name = "B", .fail_open = 1 };
    const struct fetch_stage *stages[] = { &raw_stage, &decoded_stage };
    struct rec *r[] = { &a, &b };
    struct setup s = { .path = "/bytes/100", .stages = stages, .recs = r, .n = 2 };
    struct row row;
    assert_int_equal(run(&s, &row), CRAWL_EOUTPUT);
    assert_string_equal(events, "A run_open\nB run_open\nA run_close\n");
    assert_int_equal(row.n, 1);
    assert_int_equal(row.status, 0);
    assert_int_equal(row.fail, CRAWL_FAIL_CANCELLED);
}

/* Bodies as sent cannot reach decoded stages: a raw stage without a
 * decoder is refused before anything is opened. */
static void test_a_raw_stage_without_a_decoder_is_refused(void **state)
{
    struct rec a = { .name = "A" };
    const struct fetch_stage *stages[] = { &raw_stage };
    struct rec *r[] = { &a };
    struct setup s = { .path = "/bytes/100", .stages = stages, .recs = r, .n = 1,
                       .drop = "decode" };
    struct row row;
    assert_int_equal(run(&s, &row), -EINVAL);
    assert_string_equal(events, "");
    assert_int_equal(row.n, 1);
    assert_int_equal(row.fail, CRAWL_FAIL_CANCELLED);
}

/* The row's digest is taken by default; off, no body's is, unless
 * --dedupe claims it. */
static void test_a_rows_digest_is_taken_when_asked_for_or_deduped(void **state)
{
    struct setup s = { .path = "/bytes/100" };
    struct row row;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(strlen(row.digest), DIGEST_TEXT - 1);
    assert_memory_equal(row.digest, "sha1:", 5);
    char first[64];
    snprintf(first, sizeof first, "%s", row.digest);
    s.no_digests = 1;
    assert_int_equal(run(&s, &row), 0);
    assert_int_equal(row.status, 200);
    assert_int_equal(row.length, 100);
    assert_string_equal(row.digest, "");
    s.dedupe = 1;
    assert_int_equal(run(&s, &row), 0);
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
    html_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_raw_stage_sees_every_response_as_sent_a_decoded_one_the_last_decoded),
        cmocka_unit_test(test_a_gzip_body_goes_raw_then_decoder_then_decoded_stages_then_digest_and_parser),
        cmocka_unit_test(test_the_parser_parses_the_bytes_the_decoded_stages_saw),
        cmocka_unit_test(test_a_list_crawl_fetches_with_no_parser_and_no_stage_at_all),
        cmocka_unit_test(test_a_held_page_is_parsed_later_by_the_pool_then_freed),
        cmocka_unit_test(test_raw_stages_come_first_in_the_chain_whatever_the_order_listed),
        cmocka_unit_test(test_a_failing_stage_ends_the_body_there_and_names_the_rows_error),
        cmocka_unit_test(test_a_stage_whose_run_cannot_open_fetches_nothing_and_closes_those_opened),
        cmocka_unit_test(test_a_raw_stage_without_a_decoder_is_refused),
        cmocka_unit_test(test_a_rows_digest_is_taken_when_asked_for_or_deduped),
    };
    int rc = cmocka_run_group_tests(tests, server_up, server_down);
    curl_global_cleanup();
    return rc;
}

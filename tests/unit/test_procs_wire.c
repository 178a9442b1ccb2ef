/* Unit tests for the procs model's tables (lib/procs_wire.c): a result put
 * by a worker reads back whole at the coordinator, field by field; each
 * table covers every field of its struct; a worker's options have the
 * frontier's off and keep the rest. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procs.h"

/* The field of table t (n of them) called name. */
static const struct procs_field *field(const struct procs_field *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    fail_msg("no field %s", name);
    return NULL;
}

/* The table lists the fields in declaration order, one after the other
 * with no room between them but alignment padding, up to the struct's
 * end: a field of the struct it does not list leaves a hole (the build's
 * own check in procs_wire.c catches one that fits in padding). */
static void covers(const struct procs_field *t, size_t n, size_t size, size_t align)
{
    size_t end = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at = (end + t[i].align - 1) / t[i].align * t[i].align;
        if (t[i].offset != at)
            fail_msg("%s at %zu, where the field before it ends at %zu: a field between them "
                     "is not in the table", t[i].name, t[i].offset, end);
        end = t[i].offset + t[i].size;
    }
    assert_int_equal((end + align - 1) / align * align, size);
}

static void test_the_result_table_covers_every_field_of_the_result(void **state)
{
    (void)state;
    covers(procs_result_fields, procs_result_nfields, sizeof(struct crawl_result),
           _Alignof(struct crawl_result));
}

static void test_the_option_table_classifies_every_option(void **state)
{
    (void)state;
    covers(procs_opts_fields, procs_opts_nfields, sizeof(struct crawl_opts),
           _Alignof(struct crawl_opts));
}

/* A distinct value for each field, made from its place in the table. */
static void populate(struct crawl_result *r)
{
    char *base = (char *)r;
    for (size_t i = 0; i < procs_result_nfields; i++) {
        const struct procs_field *f = &procs_result_fields[i];
        void *p = base + f->offset;
        if (f->kind == PROCS_WIRE_INT && f->size == 8) {
            int64_t v = -(int64_t)(1000003 * (i + 1)) * 4096;  /* needs 64 bits, negative */
            memcpy(p, &v, 8);
        } else if (f->kind == PROCS_WIRE_INT || f->kind == PROCS_WIRE_LOCAL) {
            int32_t v = (int32_t)(-7 * (int)(i + 1));
            memcpy(p, &v, 4);
        } else if (f->kind == PROCS_WIRE_F64 || f->kind == PROCS_WIRE_INSTANT) {
            double v = (double)i + 0.25;
            memcpy(p, &v, 8);
        } else if (f->kind == PROCS_WIRE_STR || f->kind == PROCS_WIRE_ERROR) {
            char buf[64], *s;
            snprintf(buf, sizeof buf, "the %s", f->name);
            assert_non_null(s = strdup(buf));
            memcpy(p, &s, sizeof s);
        }
    }
    r->fail = CRAWL_FAIL_TIMEOUT;       /* a class the error goes with */
    r->nextracts = 2;
    assert_non_null(r->extracts = calloc(2, sizeof *r->extracts));
    r->extracts[0].name = strdup("title");
    r->extracts[0].value = strdup("A page");
    r->extracts[1].name = strdup("h1");
    r->extracts[1].value = NULL;
}

static void result_free(struct crawl_result *r)
{
    free(r->final_url);
    free(r->digest);
    free(r->duplicate_of);
    job_error_free(r->error);
    for (size_t k = 0; k < r->nextracts; k++) {
        free(r->extracts[k].name);
        free(r->extracts[k].value);
    }
    free(r->extracts);
}

/* Every field the table sends reads back as it was (times shifted from
 * the sender's start to the receiver's); what it keeps local does not. */
static void test_a_fully_populated_result_reads_back_field_by_field(void **state)
{
    (void)state;
    struct crawl_result in, out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    populate(&in);
    struct strbuf b = { 0 };
    size_t at = wire_frame_begin(&b, MSG_RESULT);
    procs_result_put(&b, &in, 100.0);   /* the worker's crawl started at 100 */
    assert_int_equal(wire_frame_end(&b, at), 0);
    size_t pos = 0;
    struct wire_rd rd;
    char type;
    assert_int_equal(wire_frame_next(&b, &pos, &rd, &type), 1);
    procs_result_get(&rd, &out, 40.0);  /* the coordinator's at 40 */
    assert_false(rd.bad);
    assert_int_equal(rd.n, 0);          /* all of it read */

    const char *ib = (const char *)&in, *ob = (const char *)&out;
    size_t checked = 0;
    for (size_t i = 0; i < procs_result_nfields; i++) {
        const struct procs_field *f = &procs_result_fields[i];
        const void *p = ib + f->offset, *q = ob + f->offset;
        double a, c;
        const char *s, *t;
        switch (f->kind) {
        case PROCS_WIRE_INT:
        case PROCS_WIRE_F64:
            if (memcmp(p, q, f->size) != 0)
                fail_msg("%s did not read back", f->name);
            break;
        case PROCS_WIRE_INSTANT:
            memcpy(&a, p, 8);
            memcpy(&c, q, 8);
            if (c != a + 60.0)
                fail_msg("%s: %g read back as %g, not %g", f->name, a, c, a + 60.0);
            break;
        case PROCS_WIRE_STR:
        case PROCS_WIRE_ERROR:
            memcpy(&s, p, sizeof s);
            memcpy(&t, q, sizeof t);
            if (!t || strcmp(s, t) != 0)
                fail_msg("%s: \"%s\" read back as \"%s\"", f->name, s, t ? t : "(null)");
            break;
        case PROCS_WIRE_LOCAL: {
            static const char zero[16];
            if (memcmp(q, zero, f->size) != 0)
                fail_msg("%s is the receiver's own, yet came over", f->name);
            break;
        }
        default:
            checked--;
            break;
        }
        checked++;
    }
    assert_int_equal(checked + 2, procs_result_nfields);    /* all but extracts, nextracts */
    assert_int_equal(out.nextracts, 2);
    assert_string_equal(out.extracts[0].name, "title");
    assert_string_equal(out.extracts[0].value, "A page");
    assert_string_equal(out.extracts[1].name, "h1");
    assert_null(out.extracts[1].value);
    assert_int_equal(out.fail, CRAWL_FAIL_TIMEOUT);
    assert_string_equal(out.error, "the error");
    sb_free(&b);
    result_free(&in);
    result_free(&out);
}

/* A start or end of 0 (none) stays 0, whatever the two starts. */
static void test_a_time_that_is_none_stays_none(void **state)
{
    (void)state;
    struct crawl_result in, out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    in.end = 2.0;
    struct strbuf b = { 0 };
    procs_result_put(&b, &in, 100.0);
    struct wire_rd rd = { b.data, b.len, 0 };
    procs_result_get(&rd, &out, 40.0);
    assert_false(rd.bad);
    assert_true(out.start == 0 && out.queued == 0 && out.end == 62.0);
    assert_int_equal(out.fail, CRAWL_FAIL_NONE);
    assert_null(out.error);
    sb_free(&b);
}

/* A result cut short at any byte is a bad read, and what was read is the
 * result's to free (no leak under the sanitizers). */
static void test_a_result_cut_short_anywhere_is_bad(void **state)
{
    (void)state;
    struct crawl_result in;
    memset(&in, 0, sizeof in);
    populate(&in);
    struct strbuf b = { 0 };
    procs_result_put(&b, &in, 1.0);
    for (size_t cut = 0; cut < b.len; cut++) {
        struct crawl_result out;
        memset(&out, 0, sizeof out);
        struct wire_rd rd = { b.data, cut, 0 };
        procs_result_get(&rd, &out, 1.0);
        if (!rd.bad)
            fail_msg("cut at %zu of %zu bytes, yet not bad", cut, b.len);
        result_free(&out);
    }
    sb_free(&b);
    result_free(&in);
}

/* The frontier's options are off in a worker, or they would apply twice
 * (once by the coordinator's frontier, once by the worker's); the rest
 * are as given. */
static void test_a_worker_has_the_frontier_options_off_and_the_rest_as_given(void **state)
{
    (void)state;
    struct crawl_opts o, w;
    crawl_opts_init(&o);
    o.robots = 1;
    o.per_host = 3;
    o.delay = 0.5;
    o.auto_throttle = 1;
    o.sitemaps = 1;
    o.max_pages = 10;
    o.deadline = 8;
    o.timeout = 7;
    o.depth = 2;
    o.user_agent = "ua";
    procs_worker_opts(&o, &w);
    assert_int_equal(w.robots, 0);
    assert_int_equal(w.per_host, 0);
    assert_true(w.delay == 0);
    assert_int_equal(w.auto_throttle, 0);
    assert_int_equal(w.sitemaps, 0);
    assert_int_equal(w.max_pages, 0);
    assert_true(w.deadline == 0);
    assert_true(w.timeout == 7);
    assert_int_equal(w.depth, 2);
    assert_string_equal(w.user_agent, "ua");
    assert_int_equal(field(procs_opts_fields, procs_opts_nfields, "robots")->kind, PROCS_OPT_OFF);
    assert_int_equal(field(procs_opts_fields, procs_opts_nfields, "timeout")->kind,
                     PROCS_OPT_KEEP);
    /* Every OFF field, whatever its type, is zero in a worker. */
    memset(&o, 0x5a, sizeof o);
    procs_worker_opts(&o, &w);
    for (size_t i = 0; i < procs_opts_nfields; i++) {
        const struct procs_field *f = &procs_opts_fields[i];
        const unsigned char *p = (const unsigned char *)&w + f->offset;
        for (size_t k = 0; k < f->size; k++)
            if (p[k] != (f->kind == PROCS_OPT_OFF ? 0 : 0x5a))
                fail_msg("%s: byte %zu is %#x", f->name, k, p[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_result_table_covers_every_field_of_the_result),
        cmocka_unit_test(test_the_option_table_classifies_every_option),
        cmocka_unit_test(test_a_fully_populated_result_reads_back_field_by_field),
        cmocka_unit_test(test_a_time_that_is_none_stays_none),
        cmocka_unit_test(test_a_result_cut_short_anywhere_is_bad),
        cmocka_unit_test(test_a_worker_has_the_frontier_options_off_and_the_rest_as_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

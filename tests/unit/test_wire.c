/* Unit tests for the procs model's frames (lib/wire.c): what goes in comes
 * out, a count set after what it counts, and frames cut short. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* A frame of numbers and strings reads back as it was put. */
static void test_a_frame_reads_back_as_put(void **state)
{
    (void)state;
    struct strbuf b = {0};
    size_t at = wire_frame_begin(&b, 'J');
    wire_put_u64(&b, 42);
    wire_put_u32(&b, 7);
    wire_put_f64(&b, 1.5);
    wire_put_str(&b, "http://h/a");
    wire_put_str(&b, NULL);
    wire_put_bytes(&b, "a\0b", 3);
    assert_int_equal(wire_frame_end(&b, at), 0);

    size_t pos = 0;
    struct wire_rd r;
    char type = 0;
    assert_int_equal(wire_frame_next(&b, &pos, &r, &type), 1);
    assert_int_equal(type, 'J');
    assert_int_equal(wire_get_u64(&r), 42);
    assert_int_equal(wire_get_u32(&r), 7);
    assert_true(wire_get_f64(&r) == 1.5);
    size_t n = 0;
    char *s = wire_get_bytes(&r, &n);
    assert_string_equal(s, "http://h/a");
    assert_int_equal(n, 10);
    free(s);
    assert_null(wire_get_bytes(&r, NULL));
    s = wire_get_bytes(&r, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(s, "a\0b", 3);
    free(s);
    assert_int_equal(r.n, 0);
    assert_false(r.bad);
    wire_get_u32(&r);
    assert_true(r.bad);                 /* past its end */
    assert_int_equal(wire_frame_next(&b, &pos, &r, &type), 0);
    sb_free(&b);
}

/* A count put as 0 and set once known (a page's links, some left out)
 * reads back as set, and the strings after it are intact. */
static void test_a_count_set_afterwards_reads_back(void **state)
{
    (void)state;
    struct strbuf b = {0};
    size_t at = wire_frame_begin(&b, 'R');
    size_t count_at = b.len;
    wire_put_u32(&b, 0);
    const char *links[] = { "http://h/1", "http://h/2", "http://h/3" };
    uint32_t sent = 0;
    for (size_t i = 0; i < 3; i++)
        if (i != 1) {
            wire_put_str(&b, links[i]);
            sent++;
        }
    wire_set_u32(&b, count_at, sent);
    wire_put_u64(&b, 9);
    assert_int_equal(wire_frame_end(&b, at), 0);

    size_t pos = 0;
    struct wire_rd r;
    char type;
    assert_int_equal(wire_frame_next(&b, &pos, &r, &type), 1);
    assert_int_equal(wire_get_u32(&r), 2);
    char *s = wire_get_bytes(&r, NULL);
    assert_string_equal(s, "http://h/1");
    free(s);
    s = wire_get_bytes(&r, NULL);
    assert_string_equal(s, "http://h/3");
    free(s);
    assert_int_equal(wire_get_u64(&r), 9);
    assert_false(r.bad);

    /* Past what b holds, nothing is written. */
    size_t len = b.len;
    wire_set_u32(&b, len - 2, 5);
    assert_int_equal(b.len, len);
    uint64_t last;
    memcpy(&last, b.data + len - sizeof last, sizeof last);
    assert_int_equal(last, 9);
    sb_free(&b);
}

/* A frame is taken only once all of it is in; the rest waits. */
static void test_a_frame_cut_short_waits_for_the_rest(void **state)
{
    (void)state;
    struct strbuf b = {0};
    size_t at = wire_frame_begin(&b, 'W');
    wire_put_str(&b, "warning");
    assert_int_equal(wire_frame_end(&b, at), 0);
    size_t whole = b.len;

    struct strbuf in = {0};
    sb_add(&in, b.data, whole - 1);
    size_t pos = 0;
    struct wire_rd r;
    char type;
    assert_int_equal(wire_frame_next(&in, &pos, &r, &type), 0);
    assert_int_equal(pos, 0);
    sb_add(&in, b.data + whole - 1, 1);
    sb_add(&in, b.data, 3);             /* the start of another */
    assert_int_equal(wire_frame_next(&in, &pos, &r, &type), 1);
    assert_int_equal(type, 'W');
    assert_int_equal(wire_frame_next(&in, &pos, &r, &type), 0);
    wire_frames_taken(&in, pos);
    assert_int_equal(in.len, 3);
    assert_memory_equal(in.data, b.data, 3);
    sb_free(&in);
    sb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_frame_reads_back_as_put),
        cmocka_unit_test(test_a_count_set_afterwards_reads_back),
        cmocka_unit_test(test_a_frame_cut_short_waits_for_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the --state store (lib/state_lmdb.c) and the sink's commits
 * (lib/sink.c): what is committed survives, what is not is gone, a store
 * made with other options or in use is refused, and a row's mark reaches
 * the commit only once the row is in the file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sink.h"
#include "state.h"

static const char opts[] = "depth=2\nmax-pages=0\n";

struct dir {
    char path[64];
    char db[96];
};

static int dir_setup(void **st)
{
    struct dir *d = calloc(1, sizeof *d);
    snprintf(d->path, sizeof d->path, "/tmp/test_state.XXXXXX");
    assert_non_null(mkdtemp(d->path));
    snprintf(d->db, sizeof d->db, "%s/s.db", d->path);
    *st = d;
    return 0;
}

static int dir_teardown(void **st)
{
    struct dir *d = *st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d->path);
    assert_int_equal(system(cmd), 0);
    free(d);
    return 0;
}

static struct state *open_ok(const char *db, enum state_phase want)
{
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, db, opts, NULL, &ph, why, sizeof why), 0);
    assert_int_equal(ph, want);
    return s;
}

static uint64_t add(struct state *s, const char *url, int depth)
{
    struct state_page p = { .url = url, .scope = "h", .depth = depth };
    uint64_t id = 0;
    assert_int_equal(state_queue_add(s, &p, &id), 0);
    return id;
}

struct loaded {
    uint64_t id[16];
    char url[16][64];
    int depth[16];
    int n;
};

static void collect(uint64_t id, const struct state_page *p, void *data)
{
    struct loaded *l = data;
    l->id[l->n] = id;
    snprintf(l->url[l->n], sizeof l->url[0], "%s", p->url);
    l->depth[l->n++] = p->depth;
}

static void test_a_new_store_is_new_and_a_reopened_one_resumes(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    add(s, "http://h/a", 0);
    assert_int_equal(state_commit(s, NULL, 0, 10), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);
    int64_t off = -1;
    assert_int_equal(state_get(s, "offset", &off), 0);
    assert_int_equal(off, 10);
    assert_int_equal(state_queue_left(s), 1);
    state_close(s);
}

static void test_what_was_not_committed_is_gone(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    add(s, "http://h/kept", 0);
    assert_int_equal(state_seen_add(s, 7), 1);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    add(s, "http://h/lost", 1);
    assert_int_equal(state_seen_add(s, 8), 1);
    state_close(s);     /* as a kill would: no commit */
    s = open_ok(d->db, STATE_RESUMED);
    struct loaded l = {0};
    assert_int_equal(state_queue_load(s, 0, 16, collect, &l), 1);
    assert_string_equal(l.url[0], "http://h/kept");
    assert_int_equal(state_seen_add(s, 7), 0);
    assert_int_equal(state_seen_add(s, 8), 1);
    state_close(s);
}

static void test_the_queue_loads_in_order_past_a_cursor_without_the_pages_done(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    uint64_t a = add(s, "http://h/a", 0), b = add(s, "http://h/b", 1),
             c = add(s, "http://h/c", 1), e = add(s, "http://h/e", 2);
    assert_true(a < b && b < c && c < e);
    uint64_t marks[] = { b | STATE_FETCHED };
    assert_int_equal(state_commit(s, marks, 1, 5), 0);
    assert_int_equal(state_drop(s, c), 0);
    struct loaded l = {0};
    assert_int_equal(state_queue_load(s, 0, 16, collect, &l), 2);
    assert_string_equal(l.url[0], "http://h/a");
    assert_string_equal(l.url[1], "http://h/e");
    assert_int_equal(l.depth[1], 2);
    memset(&l, 0, sizeof l);
    assert_int_equal(state_queue_load(s, a, 1, collect, &l), 1);
    assert_int_equal(l.id[0], e);
    assert_int_equal(state_queue_left(s), 2);
    assert_int_equal(state_fetched(s), 1);
    state_close(s);
}

static void test_a_page_done_without_a_fetch_does_not_count_as_fetched(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    uint64_t a = add(s, "http://h/a", 0), b = add(s, "http://h/b", 0);
    uint64_t marks[] = { a, b | STATE_FETCHED };
    assert_int_equal(state_commit(s, marks, 2, 0), 0);
    assert_int_equal(state_fetched(s), 1);
    assert_int_equal(state_queue_left(s), 0);
    state_close(s);
}

static void test_other_options_are_refused_with_the_difference(void **st)
{
    struct dir *d = *st;
    state_close(open_ok(d->db, STATE_NEW));
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, d->db, "depth=3\nmax-pages=0\n", NULL, &ph, why, sizeof why), -1);
    assert_null(s);
    assert_string_equal(why, "started with depth=2, not depth=3");
}

static void test_a_store_in_use_is_refused(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW), *t = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&t, d->db, opts, NULL, &ph, why, sizeof why), -1);
    assert_string_equal(why, "in use by another crawl");
    state_close(s);
    state_close(open_ok(d->db, STATE_RESUMED));
}

static void test_a_file_that_is_no_store_is_refused(void **st)
{
    struct dir *d = *st;
    FILE *f = fopen(d->db, "w");
    fputs("not a database, but long enough to be read as a header of one ............"
          "................................................................", f);
    fclose(f);
    struct state *s = NULL;
    enum state_phase ph;
    char why[256] = "";
    assert_int_equal(state_open(&s, d->db, opts, NULL, &ph, why, sizeof why), -1);
    assert_string_equal(why, "not a state file");
}

static void test_a_finished_crawl_says_so(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    assert_int_equal(state_set(s, "finished", 1), 0);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    state_close(open_ok(d->db, STATE_FINISHED));
}

static void test_robots_txt_is_kept_per_host(void **st)
{
    struct dir *d = *st;
    struct state *s = open_ok(d->db, STATE_NEW);
    assert_int_equal(state_robots_put(s, "http://h:80", 200, 0, "User-agent: *\n", 14), 0);
    assert_int_equal(state_commit(s, NULL, 0, 0), 0);
    state_close(s);
    s = open_ok(d->db, STATE_RESUMED);
    long status = 0;
    int fail = -1;
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(state_robots_get(s, "http://h:80", &status, &fail, &body, &len), 1);
    assert_int_equal(status, 200);
    assert_int_equal(fail, 0);
    assert_int_equal(len, 14);
    assert_string_equal(body, "User-agent: *\n");
    free(body);
    assert_int_equal(state_robots_get(s, "http://other:80", &status, &fail, &body, &len), 0);
    state_close(s);
}

/* ---- the sink's commits ---- */

struct commits {
    uint64_t marks[16];
    size_t nmarks;
    uint64_t offset;
    int calls;
    int fd;
    off_t size_at_commit;       /* the file's size when the marks came */
};

static int on_commit(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    struct commits *c = data;
    struct stat sb;
    for (size_t i = 0; i < n; i++)
        c->marks[c->nmarks++] = marks[i];
    c->offset = offset;
    c->calls++;
    fstat(c->fd, &sb);
    c->size_at_commit = sb.st_size;
    return 0;
}

static void test_a_rows_mark_is_committed_once_the_row_is_in_the_file(void **st)
{
    struct dir *d = *st;
    char path[128];
    snprintf(path, sizeof path, "%s/out", d->path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "old\n", 4), 4);
    struct commits c = { .fd = fd };
    struct sink *s;
    assert_int_equal(sink_new(&s, fd, 0, NULL, NULL), 0);
    sink_set_commit(s, 4, on_commit, &c);
    assert_int_equal(sink_put_mark(s, "row1\n", 5, 11), 0);
    assert_int_equal(sink_put_mark(s, "row2\n", 5, 12), 0);
    assert_int_equal(c.calls, 0);       /* buffered: nothing is in the file yet */
    assert_int_equal(sink_flush(s), 0);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.nmarks, 2);
    assert_int_equal(c.marks[0], 11);
    assert_int_equal(c.marks[1], 12);
    assert_int_equal(c.offset, 14);
    assert_int_equal(c.size_at_commit, 14);
    assert_int_equal(sink_put(s, "tail\n", 5), 0);
    assert_int_equal(sink_free(s), 0);
    assert_int_equal(c.nmarks, 2);
    assert_int_equal(c.offset, 19);
    close(fd);
}

static int refuse(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    return -EIO;
}

static void note_error(int err, void *data)
{
    *(int *)data = err;
}

static void test_a_failed_commit_fails_the_sink(void **st)
{
    struct dir *d = *st;
    char path[128];
    snprintf(path, sizeof path, "%s/out", d->path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int told = 0;
    struct sink *s;
    assert_int_equal(sink_new(&s, fd, 0, note_error, &told), 0);
    sink_set_commit(s, 0, refuse, NULL);
    assert_int_equal(sink_put_mark(s, "r\n", 2, 1), 0);
    assert_int_equal(sink_flush(s), -EIO);
    assert_int_equal(told, -EIO);
    assert_int_equal(sink_put_mark(s, "s\n", 2, 2), -EIO);
    assert_int_equal(sink_free(s), -EIO);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_new_store_is_new_and_a_reopened_one_resumes,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_what_was_not_committed_is_gone,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_the_queue_loads_in_order_past_a_cursor_without_the_pages_done,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_page_done_without_a_fetch_does_not_count_as_fetched,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_other_options_are_refused_with_the_difference,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_store_in_use_is_refused,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_file_that_is_no_store_is_refused,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_finished_crawl_says_so,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_robots_txt_is_kept_per_host,
                                        dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_rows_mark_is_committed_once_the_row_is_in_the_file,
            dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_commit_fails_the_sink,
                                        dir_setup, dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

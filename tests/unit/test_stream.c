/* Unit tests for the output path: the spool that holds rows in memory and
 * then on disk, the reorder that puts rows back into input order, and the
 * sink that writes whole rows and keeps its first error. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "reorder.h"
#include "sink.h"
#include "spool.h"
#include "strbuf.h"

static int collect(const char *p, size_t n, void *data)
{
    sb_add(data, p, n);
    return 0;
}

static void test_spool_keeps_bytes_in_order_across_memory_and_file(void **state)
{
    struct spool *sp = spool_new(10);
    uint64_t off[3];
    assert_int_equal(spool_add(sp, "abcdef", 6, &off[0]), 0);
    assert_int_equal(spool_add(sp, "ghijkl", 6, &off[1]), 0);   /* past 10: to the file */
    assert_int_equal(spool_add(sp, "mn", 2, &off[2]), 0);
    assert_int_equal(off[1], 6);
    assert_int_equal(off[2], 12);
    assert_int_equal(spool_size(sp), 14);
    char got[7] = {0};
    assert_int_equal(spool_get(sp, off[1], got, 6), 0);
    assert_string_equal(got, "ghijkl");
    assert_int_equal(spool_get(sp, 4, got, 4), 0);       /* across the boundary */
    got[4] = '\0';
    assert_string_equal(got, "efgh");
    struct strbuf all = {0};
    assert_int_equal(spool_each(sp, collect, &all), 0);
    assert_string_equal(all.data, "abcdefghijklmn");
    spool_reset(sp);
    assert_int_equal(spool_size(sp), 0);
    assert_int_equal(spool_add(sp, "xy", 2, &off[0]), 0);
    assert_int_equal(off[0], 0);
    sb_reset(&all);
    assert_int_equal(spool_each(sp, collect, &all), 0);
    assert_string_equal(all.data, "xy");
    sb_free(&all);
    spool_free(sp);
}

static void test_reorder_passes_rows_on_in_sequence_whatever_the_arrival(void **state)
{
    struct strbuf out = {0};
    /* 16 bytes of memory: most held rows go to the file. */
    struct reorder *r = reorder_new(16, collect, &out);
    const int order[] = { 3, 1, 4, 0, 9, 2, 6, 5, 8, 7 };
    char row[32];
    for (size_t i = 0; i < 10; i++) {
        int n = snprintf(row, sizeof row, "row %d\n", order[i]);
        assert_int_equal(reorder_put(r, (uint64_t)order[i], row, (size_t)n), 0);
        if (order[i] == 0)
            assert_string_equal(out.data, "row 0\nrow 1\n");
    }
    assert_int_equal(reorder_held(r), 0);
    assert_string_equal(out.data, "row 0\nrow 1\nrow 2\nrow 3\nrow 4\nrow 5\nrow 6\nrow 7\nrow 8\nrow 9\n");
    reorder_free(r);
    sb_free(&out);
}

static void test_reorder_holds_many_rows_behind_a_slow_one(void **state)
{
    struct strbuf out = {0};
    struct reorder *r = reorder_new(1024, collect, &out);
    char row[32];
    for (int i = 1; i <= 5000; i++) {
        int n = snprintf(row, sizeof row, "%d\n", i);
        assert_int_equal(reorder_put(r, (uint64_t)i, row, (size_t)n), 0);
    }
    assert_int_equal(reorder_held(r), 5000);
    assert_int_equal(out.len, 0);
    assert_int_equal(reorder_put(r, 0, "0\n", 2), 0);
    assert_int_equal(reorder_held(r), 0);
    /* Every number once, in order. */
    char *p = out.data;
    for (int i = 0; i <= 5000; i++) {
        char *end;
        assert_int_equal(strtol(p, &end, 10), i);
        p = end + 1;
    }
    reorder_free(r);
    sb_free(&out);
}

static int sink_err;
static void on_sink_error(int err, void *data)
{
    sink_err = err;
    (*(int *)data)++;
}

static void test_sink_reports_the_first_write_error_once(void **state)
{
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0)
        skip();
    int calls = 0;
    struct sink *s;
    assert_int_equal(sink_new(&s, fd, 0, on_sink_error, &calls), 0);
    assert_int_equal(sink_put(s, "row\n", 4), 0);       /* buffered */
    assert_int_equal(sink_flush(s), -ENOSPC);
    assert_int_equal(sink_put(s, "row\n", 4), -ENOSPC);
    assert_int_equal(sink_error(s), -ENOSPC);
    assert_int_equal(sink_free(s), -ENOSPC);
    assert_int_equal(calls, 1);
    assert_int_equal(sink_err, -ENOSPC);
    close(fd);
}

static void test_sink_writes_rows_larger_than_its_buffer_whole(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct sink *s;
    assert_int_equal(sink_new(&s, fds[1], 0, NULL, NULL), 0);
    size_t n = 200 * 1024;
    char *big = malloc(n);
    memset(big, 'x', n - 1);
    big[n - 1] = '\n';
    assert_int_equal(sink_put(s, "a\n", 2), 0);
    /* A reader keeps the pipe from filling. */
    pid_t pid = fork();
    if (pid == 0) {
        char buf[4096];
        size_t total = 0;
        ssize_t r;
        close(fds[1]);
        while ((r = read(fds[0], buf, sizeof buf)) > 0)
            total += (size_t)r;
        _exit(total == n + 2 ? 0 : 1);
    }
    close(fds[0]);
    assert_int_equal(sink_put(s, big, n), 0);
    assert_int_equal(sink_free(s), 0);
    close(fds[1]);
    int st;
    waitpid(pid, &st, 0);
    assert_int_equal(st, 0);
    free(big);
}

/* The row "row\n" put into s, writing to the pipe fds, comes out of it
 * within a second; then s and the pipe are closed. */
static void row_comes_within_a_second(int fds[2], struct sink *s)
{
    char buf[16];
    ssize_t r = -1;
    for (int i = 0; i < 100 && r <= 0; i++) {
        usleep(10000);
        r = read(fds[0], buf, sizeof buf);
    }
    assert_int_equal(r, 4);
    assert_int_equal(sink_free(s), 0);
    close(fds[0]);
    close(fds[1]);
}

static void test_sink_flushes_on_its_own_within_the_interval(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    struct sink *s;
    assert_int_equal(sink_new(&s, fds[1], 20, NULL, NULL), 0);
    assert_int_equal(sink_put(s, "row\n", 4), 0);
    row_comes_within_a_second(fds, s);
}

/* The voluntary context switches of this process's threads but those in
 * skip (NULL-terminated list of their ids), and the id of one of them. */
static long switches_of_others(const pid_t *skip, size_t nskip, pid_t *one)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long sum = 0;
    assert_non_null(d);
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        int skipped = tid <= 0;
        for (size_t i = 0; i < nskip && !skipped; i++)
            skipped = skip[i] == tid;
        if (skipped)
            continue;
        char path[64], line[128];
        snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                sum += atol(line + 24);
        fclose(f);
        if (one)
            *one = tid;
    }
    closedir(d);
    return sum;
}

/* With nothing to write, the flushing thread sleeps until a row comes:
 * over half a second of a 10 ms interval it is not woken once (a timer
 * would wake it 50 times), and the row that comes still goes out. */
static void test_an_idle_sinks_flushing_thread_sleeps_until_a_row_comes(void **state)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    pid_t before[64];
    size_t n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (atoi(e->d_name) > 0)
            before[n++] = (pid_t)atoi(e->d_name);
    closedir(d);
    struct sink *s;
    assert_int_equal(sink_new(&s, fds[1], 10, NULL, NULL), 0);
    usleep(50000);                  /* the thread is asleep by now */
    pid_t flusher = 0;
    long at = switches_of_others(before, n, &flusher);
    assert_int_not_equal(flusher, 0);
    usleep(500000);
    long later = switches_of_others(before, n, NULL);
    assert_true(later - at <= 1);
    assert_int_equal(sink_put(s, "row\n", 4), 0);
    row_comes_within_a_second(fds, s);
}

/* A commit callback whose first call waits (at most 2 s) until the test
 * lets it go, as a store's round trip does; it keeps what it was told. */
struct slow_commit {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int entered, released, timed_out;
    uint64_t marks[400], offsets[400];
    size_t nmarks, ncalls;
};

static int slow_commit(const uint64_t *marks, size_t n, uint64_t offset, void *data)
{
    struct slow_commit *c = data;
    pthread_mutex_lock(&c->lock);
    if (c->ncalls == 0) {
        c->entered = 1;
        pthread_cond_broadcast(&c->cond);
        struct timespec ts = clock_timespec(clock_now() + 2);
        while (!c->released && !c->timed_out)
            c->timed_out = pthread_cond_timedwait(&c->cond, &c->lock, &ts) != 0;
    }
    for (size_t i = 0; i < n && c->nmarks < 400; i++)
        c->marks[c->nmarks++] = marks[i];
    if (c->ncalls < 400)
        c->offsets[c->ncalls] = offset;
    c->ncalls++;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

static void test_sink_puts_rows_while_a_commit_waits_and_tells_the_writes_in_order(void **state)
{
    (void)state;
    struct slow_commit c = { .lock = PTHREAD_MUTEX_INITIALIZER };
    assert_int_equal(clock_cond_init(&c.cond), 0);
    int fd = open("/dev/null", O_WRONLY);
    assert_true(fd >= 0);
    struct sink *s;
    assert_int_equal(sink_new(&s, fd, 5, NULL, NULL), 0);
    sink_set_commit(s, 100, slow_commit, &c);
    char row[1024];
    memset(row, 'x', sizeof row);
    row[sizeof row - 1] = '\n';
    assert_int_equal(sink_put_mark(s, row, sizeof row, 1), 0);
    /* The flushing thread writes that row and tells the callback, which
     * waits; meanwhile rows that fill the buffer three times over go in. */
    pthread_mutex_lock(&c.lock);
    struct timespec ts = clock_timespec(clock_now() + 2);
    while (!c.entered && pthread_cond_timedwait(&c.cond, &c.lock, &ts) == 0)
        ;
    assert_true(c.entered);
    pthread_mutex_unlock(&c.lock);
    for (uint64_t m = 2; m <= 200; m++)
        assert_int_equal(sink_put_mark(s, row, sizeof row, m), 0);
    pthread_mutex_lock(&c.lock);
    int blocked = c.timed_out;
    c.released = 1;
    pthread_cond_broadcast(&c.cond);
    pthread_mutex_unlock(&c.lock);
    assert_int_equal(sink_flush(s), 0);
    /* Every row's mark once, in order, each write's offset past the last. */
    assert_false(blocked);
    assert_int_equal(c.nmarks, 200);
    for (size_t i = 0; i < c.nmarks; i++)
        assert_int_equal(c.marks[i], i + 1);
    assert_true(c.ncalls >= 2);
    for (size_t i = 1; i < c.ncalls; i++)
        assert_true(c.offsets[i] > c.offsets[i - 1]);
    assert_int_equal(c.offsets[c.ncalls - 1], 100 + 200 * sizeof row);
    assert_int_equal(sink_free(s), 0);
    close(fd);
    pthread_cond_destroy(&c.cond);
}

/* A row built in the caller's buffer stays there while it fits, moves to
 * the heap whole when it outgrows it, and the caller's buffer is never
 * freed (ASan would say so) nor written past its size. */
static void test_a_lent_strbuf_moves_to_the_heap_whole_when_it_outgrows_the_buffer(void **state)
{
    char buf[16 + 4];
    memset(buf, 'x', sizeof buf);
    struct strbuf b;
    sb_init_lent(&b, buf, 16);
    sb_adds(&b, "0123456789");
    sb_printf(&b, "%s", "abcd");
    assert_ptr_equal(b.data, buf);
    assert_string_equal(buf, "0123456789abcd");
    sb_adds(&b, "EFGH");            /* 18 bytes and a NUL: past 16 */
    assert_ptr_not_equal(b.data, buf);
    assert_string_equal(b.data, "0123456789abcdEFGH");
    assert_int_equal(b.len, 18);
    assert_memory_equal(buf + 16, "xxxx", 4);
    for (int i = 0; i < 100; i++)
        sb_addc(&b, 'z');
    assert_int_equal(b.len, 118);
    assert_int_equal(b.nomem, 0);
    sb_free(&b);
    sb_init_lent(&b, buf, 16);
    sb_add(&b, "short", 5);
    sb_free(&b);                    /* frees nothing: buf is the caller's */
    assert_null(b.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spool_keeps_bytes_in_order_across_memory_and_file),
        cmocka_unit_test(test_a_lent_strbuf_moves_to_the_heap_whole_when_it_outgrows_the_buffer),
        cmocka_unit_test(test_reorder_passes_rows_on_in_sequence_whatever_the_arrival),
        cmocka_unit_test(test_reorder_holds_many_rows_behind_a_slow_one),
        cmocka_unit_test(test_sink_reports_the_first_write_error_once),
        cmocka_unit_test(test_sink_writes_rows_larger_than_its_buffer_whole),
        cmocka_unit_test(test_sink_flushes_on_its_own_within_the_interval),
        cmocka_unit_test(test_an_idle_sinks_flushing_thread_sleeps_until_a_row_comes),
        cmocka_unit_test(test_sink_puts_rows_while_a_commit_waits_and_tells_the_writes_in_order),
    };
    return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}

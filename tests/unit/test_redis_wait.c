/* Unit tests for the deadline of a --frontier request (state_redis_conn.c),
 * on a socket pair whose other end plays a server: one that never replies
 * gives RW_TIMEOUT once the request's budget is spent ("no reply in N s"),
 * a cancelled request gives up after its grace, not its budget, and a
 * reply that comes in pieces is read whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "state_redis_internal.h"

/* A context on one end of a socket pair; the other end in *peer. */
static redisContext *pair(int *peer)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    redisContext *x = redisConnectFd(sv[0]);
    assert_non_null(x);
    x->flags &= ~REDIS_BLOCK;
    *peer = sv[1];
    return x;
}

static int cancelled_yes(void *data)
{
    return *(int *)data;
}

static void test_a_server_that_never_replies_times_out_after_the_budget(void **state)
{
    int peer;
    redisContext *x = pair(&peer);
    struct redis_wait w = { .grace = REDIS_GRACE };
    redis_wait_begin(&w, 0.3);
    const char *argv[] = { "PING" };
    int rc = 0;
    double t0 = clock_now();
    redisReply *y = redis_call(x, 1, argv, NULL, &w, &rc);
    double took = clock_now() - t0;
    assert_null(y);
    assert_int_equal(rc, RW_TIMEOUT);
    assert_true(took >= 0.29 && took < 0.6);
    char err[100];
    struct redis_addr a = { .host = "127.0.0.1", .port = 6379 };
    redis_wait_text(rc, &w, x, &a, err, sizeof err);
    assert_string_equal(err, "no reply in 0.3 s");
    redisFree(x);
    close(peer);
}

static void test_a_cancelled_request_gives_up_after_its_grace_not_its_budget(void **state)
{
    int peer, yes = 1;
    redisContext *x = pair(&peer);
    struct redis_wait w = { .grace = 0.2, .cancelled = cancelled_yes, .data = &yes };
    redis_wait_begin(&w, 30);
    const char *argv[] = { "PING" };
    int rc = 0;
    double t0 = clock_now();
    assert_null(redis_call(x, 1, argv, NULL, &w, &rc));
    double took = clock_now() - t0;
    assert_int_equal(rc, RW_CANCELLED);
    assert_true(took >= 0.19 && took < 0.5);
    /* The next request on the same wait has its grace from its own
     * start: a goodbye still gets a moment. */
    redis_wait_begin(&w, 30);
    t0 = clock_now();
    assert_int_equal(redis_nap(&w, 5), RW_CANCELLED);
    took = clock_now() - t0;
    assert_true(took >= 0.19 && took < 0.5);
    redisFree(x);
    close(peer);
}

static void test_a_nap_shorter_than_the_deadline_sleeps_it_through(void **state)
{
    struct redis_wait w = { .grace = REDIS_GRACE };
    redis_wait_begin(&w, 5);
    double t0 = clock_now();
    assert_int_equal(redis_nap(&w, 0.15), 0);
    assert_true(clock_now() - t0 >= 0.14);
    redis_wait_begin(&w, 0.1);
    assert_int_equal(redis_nap(&w, 5), RW_TIMEOUT);
}

static void test_a_reply_in_pieces_is_read_whole(void **state)
{
    int peer;
    redisContext *x = pair(&peer);
    struct redis_wait w = { .grace = REDIS_GRACE };
    redis_wait_begin(&w, 5);
    assert_int_equal(redisAppendCommand(x, "GET k"), REDIS_OK);
    assert_int_equal(redis_flush(x, &w), 0);
    char req[64];
    assert_true(read(peer, req, sizeof req) > 0);
    assert_int_equal(write(peer, "$5\r\nhel", 7), 7);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        usleep(150000);
        _exit(write(peer, "lo\r\n", 4) == 4 ? 0 : 1);
    }
    redisReply *y = NULL;
    assert_int_equal(redis_read(x, &y, &w), 0);
    assert_int_equal(y->type, REDIS_REPLY_STRING);
    assert_string_equal(y->str, "hello");
    freeReplyObject(y);
    redisFree(x);
    close(peer);
}

static void test_a_closed_connection_is_an_io_error_at_once(void **state)
{
    int peer;
    redisContext *x = pair(&peer);
    close(peer);
    struct redis_wait w = { .grace = REDIS_GRACE };
    redis_wait_begin(&w, 5);
    const char *argv[] = { "PING" };
    int rc = 0;
    double t0 = clock_now();
    assert_null(redis_call(x, 1, argv, NULL, &w, &rc));
    assert_int_equal(rc, RW_IO);
    assert_true(clock_now() - t0 < 1);
    redisFree(x);
}

int main(void)
{
    /* As crawl does (signals_block): a write to a closed peer is EPIPE. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_server_that_never_replies_times_out_after_the_budget),
        cmocka_unit_test(test_a_cancelled_request_gives_up_after_its_grace_not_its_budget),
        cmocka_unit_test(test_a_nap_shorter_than_the_deadline_sleeps_it_through),
        cmocka_unit_test(test_a_reply_in_pieces_is_read_whole),
        cmocka_unit_test(test_a_closed_connection_is_an_io_error_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_coro.c: the coroutine library's behaviour: switching and passing
 * values, finishing, freeing, reuse, many at once, threads, stack
 * accounting, the guard page and floating-point state. */
#include <errno.h>
#include <fenv.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include "sanitizers.h"
#if CRAWL_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "coro.h"

/* ---- ping-pong and values ---------------------------------------------- */

static void count_up(void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        coro_yield((void *)(intptr_t)i);
}

static void resume_and_yield_ping_pong_between_thread_and_coroutine(void **state)
{
    coro *co = coro_new(count_up, (void *)(intptr_t)1000, 0);
    int err = 1;

    assert_non_null(co);
    assert_int_equal(coro_status(co), CORO_SUSPENDED);
    for (long i = 0; i < 1000; i++) {
        void *v = coro_resume(co, NULL, &err);
        assert_int_equal(err, 0);
        assert_int_equal((intptr_t)v, i);
        assert_int_equal(coro_status(co), CORO_SUSPENDED);
    }
    assert_null(coro_resume(co, NULL, &err)); /* the loop ends, fn returns */
    assert_int_equal(err, 0);
    assert_int_equal(coro_status(co), CORO_DEAD);
    coro_free(co);
}

/* Doubles whatever it is resumed with and yields it back, until 0. */
static void doubler(void *arg)
{
    long *first = arg;
    long v = *first;
    while (v != 0)
        v = (long)(intptr_t)coro_yield((void *)(intptr_t)(v * 2));
}

static void values_pass_both_ways_across_yields(void **state)
{
    long first = 21;
    coro *co = coro_new(doubler, &first, 0);

    assert_non_null(co);
    /* The first resume's value is ignored: the argument carries input. */
    assert_int_equal((intptr_t)coro_resume(co, (void *)(intptr_t)999, NULL), 42);
    assert_int_equal((intptr_t)coro_resume(co, (void *)(intptr_t)5, NULL), 10);
    assert_int_equal((intptr_t)coro_resume(co, (void *)(intptr_t)-7, NULL), -14);
    assert_null(coro_resume(co, (void *)(intptr_t)0, NULL));
    assert_int_equal(coro_status(co), CORO_DEAD);
    coro_free(co);
}

/* ---- nested resume: a coroutine resuming another ----------------------- */

struct nest {
    coro *outer, *inner;
    int inner_resumes_outer_err;
    enum coro_status outer_status_seen_by_inner;
    coro *current_in_inner, *current_in_outer_after;
};

static void inner_fn(void *arg)
{
    struct nest *n = arg;
    int err = 0;

    n->current_in_inner = coro_current();
    n->outer_status_seen_by_inner = coro_status(n->outer);
    /* The outer coroutine is running (it resumed us): resuming it from
     * here must be refused, not switch into a stack that is in use. */
    coro_resume(n->outer, NULL, &err);
    n->inner_resumes_outer_err = err;
    for (long i = 1; i <= 3; i++)
        coro_yield((void *)(intptr_t)(i * 100));
}

static void outer_fn(void *arg)
{
    struct nest *n = arg;
    long sum = 0;
    void *v;

    while ((v = coro_resume(n->inner, NULL, NULL)) != NULL) {
        n->current_in_outer_after = coro_current();
        sum += (long)(intptr_t)v;
        coro_yield((void *)(intptr_t)sum); /* pass each step up to the thread */
    }
}

static void coroutine_resumes_another_and_each_yield_returns_to_its_resumer(void **state)
{
    struct nest n = {0};
    long expect[] = {100, 300, 600};

    n.outer = coro_new(outer_fn, &n, 0);
    n.inner = coro_new(inner_fn, &n, 0);
    assert_non_null(n.outer);
    assert_non_null(n.inner);
    for (int i = 0; i < 3; i++) {
        assert_int_equal((intptr_t)coro_resume(n.outer, NULL, NULL), expect[i]);
        assert_int_equal(coro_status(n.inner), CORO_SUSPENDED);
        assert_null(coro_current());
    }
    assert_null(coro_resume(n.outer, NULL, NULL));
    assert_int_equal(coro_status(n.outer), CORO_DEAD);
    assert_int_equal(coro_status(n.inner), CORO_DEAD);
    assert_ptr_equal(n.current_in_inner, n.inner);
    assert_ptr_equal(n.current_in_outer_after, n.outer);
    assert_int_equal(n.outer_status_seen_by_inner, CORO_RUNNING);
    assert_int_equal(n.inner_resumes_outer_err, -EINVAL);
    coro_free(n.inner);
    coro_free(n.outer);
}

/* The same coroutine resumed first by the thread, then by a coroutine:
 * each yield goes back to whoever resumed it this time. */
static void resume_inner_once(void *arg)
{
    coro *inner = arg;
    coro_yield(coro_resume(inner, NULL, NULL));
}

static void yield_goes_back_to_the_latest_resumer(void **state)
{
    coro *inner = coro_new(count_up, (void *)(intptr_t)3, 0);
    coro *outer = coro_new(resume_inner_once, inner, 0);

    assert_int_equal((intptr_t)coro_resume(inner, NULL, NULL), 0);
    assert_int_equal((intptr_t)coro_resume(outer, NULL, NULL), 1);
    assert_int_equal((intptr_t)coro_resume(inner, NULL, NULL), 2);
    assert_null(coro_resume(outer, NULL, NULL));
    assert_int_equal(coro_status(outer), CORO_DEAD);
    assert_int_equal(coro_status(inner), CORO_SUSPENDED);
    coro_free(outer);
    coro_free(inner);
}

/* ---- finishing, freeing, reuse ----------------------------------------- */

static void set_flag(void *arg)
{
    *(int *)arg = 1;
}

static void finished_coroutine_is_dead_and_cannot_be_resumed(void **state)
{
    int ran = 0, err = 1;
    coro *co = coro_new(set_flag, &ran, 0);

    assert_null(coro_resume(co, NULL, &err));
    assert_int_equal(err, 0);
    assert_int_equal(ran, 1);
    assert_int_equal(coro_status(co), CORO_DEAD);
    assert_null(coro_resume(co, (void *)1, &err));
    assert_int_equal(err, -EINVAL);
    assert_null(coro_resume(co, NULL, NULL)); /* err is optional */
    assert_int_equal(coro_status(co), CORO_DEAD);
    coro_free(co);
}

struct halfway {
    int before, after;
};

static void stop_halfway(void *arg)
{
    struct halfway *h = arg;
    char buf[512];

    memset(buf, 'x', sizeof buf); /* live data on the stack when freed */
    h->before = buf[0];
    coro_yield(NULL);
    h->after = buf[1];
}

static void free_of_suspended_coroutine_drops_it_without_running_the_rest(void **state)
{
    struct halfway h = {0};
    coro *co = coro_new(stop_halfway, &h, 0);

    coro_resume(co, NULL, NULL);
    assert_int_equal(h.before, 'x');
    assert_int_equal(coro_status(co), CORO_SUSPENDED);
    coro_free(co);
    assert_int_equal(h.after, 0);
    coro_free(NULL); /* like free(NULL) */
}

static void add_ten(void *arg)
{
    *(int *)arg += 10;
}

static void try_reset_self(void *arg)
{
    *(int *)arg = coro_reset(coro_current(), add_ten, arg);
}

static void reset_rearms_a_dead_or_unstarted_coroutine_on_the_same_stack(void **state)
{
    int ran = 0, value = 0, rc = 1;
    coro *co = coro_new(set_flag, &ran, 0);
    size_t size = coro_stack_size(co);

    /* Never started: rearm before the first resume. */
    assert_int_equal(coro_reset(co, add_ten, &value), 0);
    coro_resume(co, NULL, NULL);
    assert_int_equal(value, 10);
    assert_int_equal(ran, 0);
    assert_int_equal(coro_status(co), CORO_DEAD);

    /* Dead: run again, many times, as a free list would. */
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(coro_reset(co, add_ten, &value), 0);
        assert_int_equal(coro_status(co), CORO_SUSPENDED);
        coro_resume(co, NULL, NULL);
    }
    assert_int_equal(value, 10010);
    assert_int_equal(coro_stack_size(co), size);

    /* Suspended inside its function: refused. */
    assert_int_equal(coro_reset(co, count_up, (void *)(intptr_t)5), 0);
    coro_resume(co, NULL, NULL);
    assert_int_equal(coro_reset(co, add_ten, &value), -EINVAL);
    assert_int_equal(coro_status(co), CORO_SUSPENDED);
    assert_int_equal((intptr_t)coro_resume(co, NULL, NULL), 1); /* untouched */

    /* Running: refused. */
    coro_free(co);
    co = coro_new(try_reset_self, &rc, 0);
    coro_resume(co, NULL, NULL);
    assert_int_equal(rc, -EINVAL);
    coro_free(co);
}

/* ---- many at once ------------------------------------------------------- */

/* Under ThreadSanitizer every started coroutine is a TSan fiber, a whole
 * thread state of some 850 KB and nine mappings: 10,000 of them exceed the
 * default vm.max_map_count, so that build checks fewer. */
#if CRAWL_TSAN
#define MANY 1000
#endif
#ifndef MANY
#define MANY 10000
#endif

static void yield_once_then_count(void *arg)
{
    volatile char small[64];
    small[0] = 1;
    coro_yield(NULL);
    *(int *)arg += small[0];
}

static void thousands_of_coroutines_are_suspended_at_once_then_all_finish(void **state)
{
    coro **cos = calloc(MANY, sizeof *cos);
    int finished = 0;
    size_t resident = 0;

    assert_non_null(cos);
    for (int i = 0; i < MANY; i++) {
        cos[i] = coro_new(yield_once_then_count, &finished, 0);
        assert_non_null(cos[i]);
        coro_resume(cos[i], NULL, NULL);
    }
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(coro_status(cos[i]), CORO_SUSPENDED);
        resident += coro_stack_resident(cos[i]);
    }
    assert_int_equal(finished, 0);
    print_message("%d suspended coroutines: %zu KiB of stack resident (%.1f KiB each)\n",
                  MANY, resident / 1024, (double)resident / 1024 / MANY);
    for (int i = 0; i < MANY; i++) {
        assert_null(coro_resume(cos[i], NULL, NULL));
        assert_int_equal(coro_status(cos[i]), CORO_DEAD);
    }
    assert_int_equal(finished, MANY);
    for (int i = 0; i < MANY; i++)
        coro_free(cos[i]);
    free(cos);
}

static void suspended_coroutine_that_used_little_stack_has_at_most_two_pages_resident(void **state)
{
    int finished = 0;
    long page = sysconf(_SC_PAGESIZE);
    coro *co = coro_new(yield_once_then_count, &finished, 1024 * 1024);

    assert_non_null(co);
    /* A new coroutine holds only the page with its initial frame (the
     * ucontext backend writes nothing until the first resume). */
    assert_in_range(coro_stack_resident(co), 0, (size_t)page);
    coro_resume(co, NULL, NULL);
    assert_in_range(coro_stack_resident(co), (size_t)page, 2 * (size_t)page);
    coro_resume(co, NULL, NULL);
    assert_int_equal(finished, 1);
    coro_free(co);
}

/* ---- threads ------------------------------------------------------------ */

#define PER_THREAD_SWITCHES 100000

struct worker {
    pthread_barrier_t *start;
    long sum;
    int mismatched_current;
    coro *seen[2];
};

static void sum_count_up(void *arg)
{
    struct worker *w = arg;
    for (long i = 0; i < PER_THREAD_SWITCHES; i++) {
        if (coro_current() == NULL)
            w->mismatched_current++;
        coro_yield((void *)(intptr_t)i);
    }
}

static void *thread_running_coroutines(void *arg)
{
    struct worker *w = arg;
    coro *a = coro_new(sum_count_up, w, 0);
    coro *b = coro_new(sum_count_up, w, 0);

    if (a == NULL || b == NULL)
        return NULL;
    w->seen[0] = a;
    w->seen[1] = b;
    pthread_barrier_wait(w->start);
    /* Interleave two coroutines so each thread really switches between
     * stacks while the other thread does the same. */
    for (;;) {
        void *va = coro_resume(a, NULL, NULL);
        void *vb = coro_resume(b, NULL, NULL);
        if (coro_status(a) == CORO_DEAD && coro_status(b) == CORO_DEAD)
            break;
        w->sum += (long)(intptr_t)va + (long)(intptr_t)vb;
        if (coro_current() != NULL)
            w->mismatched_current++;
    }
    coro_free(a);
    coro_free(b);
    return w;
}

static void coroutines_run_on_two_threads_at_once(void **state)
{
    pthread_barrier_t start;
    pthread_t t[2];
    struct worker w[2] = {{0}};
    long expect = 2L * (PER_THREAD_SWITCHES - 1) * PER_THREAD_SWITCHES / 2;

    pthread_barrier_init(&start, NULL, 2);
    for (int i = 0; i < 2; i++) {
        w[i].start = &start;
        assert_int_equal(pthread_create(&t[i], NULL, thread_running_coroutines, &w[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        assert_ptr_equal(ret, &w[i]);
        assert_int_equal(w[i].sum, expect);
        assert_int_equal(w[i].mismatched_current, 0);
    }
    pthread_barrier_destroy(&start);
    assert_null(coro_current());
}

/* ---- stack accounting --------------------------------------------------- */

#define ARRAY_BYTES 16384

static void use_array(void *arg)
{
    volatile char buf[ARRAY_BYTES];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (char)i;
    *(int *)arg = buf[ARRAY_BYTES - 1];
}

static void do_nothing(void *arg)
{
}

static void painted_stack_reports_high_water_mark_near_a_known_array(void **state)
{
    int sink = 0;
    coro *idle = coro_new(do_nothing, NULL, 0);
    coro *deep = coro_new(use_array, &sink, 0);
    size_t idle_used, deep_used;

#if CRAWL_ASAN
    /* With detect_stack_use_after_return, ASan moves the array off the
     * stack, to a "fake stack": there is nothing to measure. */
    if (__asan_get_current_fake_stack() != NULL) {
        coro_free(idle);
        coro_free(deep);
        skip();
    }
#endif
    assert_int_equal(coro_stack_used(deep), 0); /* not painted */
    assert_int_equal(coro_paint(idle), 0);
    assert_int_equal(coro_paint(deep), 0);
    coro_resume(idle, NULL, NULL);
    coro_resume(deep, NULL, NULL);
    idle_used = coro_stack_used(idle);
    deep_used = coro_stack_used(deep);
    print_message("stack high-water mark: empty function %zu bytes, "
                  "%d-byte local array %zu bytes\n",
                  idle_used, ARRAY_BYTES, deep_used);
    /* The entry and switch frames cost about 100 bytes (a few KB under
     * clang's ASan, whose runtime runs on the coroutine's stack); the
     * array's frame adds little more than the array itself. */
    assert_in_range(idle_used, 16, 4096);
    assert_in_range(deep_used, ARRAY_BYTES, ARRAY_BYTES + 4096);
    coro_free(idle);
    coro_free(deep);
}

static void paint_is_refused_once_started(void **state)
{
    coro *co = coro_new(count_up, (void *)(intptr_t)2, 0);

    coro_resume(co, NULL, NULL);
    assert_int_equal(coro_paint(co), -EINVAL);
    assert_int_equal(coro_stack_used(co), 0);
    coro_free(co);
}

/* ---- the guard page ----------------------------------------------------- */

static volatile long recursion_limit = LONG_MAX;

static long recurse(long depth)
{
    volatile char frame[256];
    frame[0] = (char)depth;
    if (depth >= recursion_limit)
        return frame[0];
    return recurse(depth + 1) + frame[0]; /* not a tail call */
}

static void overflow(void *arg)
{
    *(long *)arg = recurse(0);
}

/* Restores the default SIGSEGV action straight through the system call:
 * sanitizers intercept sigaction and keep their own handler, which would
 * turn the fault into a report and an exit status. */
static void default_sigsegv(void)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        unsigned long mask;
    } kact = {0}; /* SIG_DFL, no flags, empty mask */
    syscall(SYS_rt_sigaction, SIGSEGV, &kact, NULL, sizeof kact.mask);
}

static void stack_overflow_runs_into_the_guard_page_and_dies_by_sigsegv(void **state)
{
    int status = 0;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit nocore = {0, 0};
        long sink = 0;
        coro *co;

        setrlimit(RLIMIT_CORE, &nocore);
        default_sigsegv();
        co = coro_new(overflow, &sink, 16 * 1024);
        if (co == NULL)
            _exit(2);
        coro_resume(co, NULL, NULL);
        _exit(0); /* not reached: the recursion has no end */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

/* ---- floating point ------------------------------------------------------ */

static void float_work(void *arg)
{
    double x = 1.0, sum = 0.0;
    int *rounding_ok = arg;

    for (int i = 0; i < 100; i++) {
        x *= 1.5;
        sum += x / 3.0;
        coro_yield(&sum);
    }
    /* The rounding mode belongs to the context that set it. */
    fesetround(FE_UPWARD);
    coro_yield(NULL);
    *rounding_ok = fegetround() == FE_UPWARD;
}

static void floating_point_state_survives_switches(void **state)
{
    int rounding_ok = 0;
    double x = 1.0, sum = 0.0, y = 0.25;
    coro *co = coro_new(float_work, &rounding_ok, 0);

    for (int i = 0; i < 100; i++) {
        double *theirs = coro_resume(co, NULL, NULL);
        x *= 1.5;
        sum += x / 3.0;
        y = y * 1.0001 + 0.5; /* the thread's own values in flight too */
        assert_true(*theirs == sum);
    }
    assert_true(y > 50.0);
    assert_null(coro_resume(co, NULL, NULL)); /* it set FE_UPWARD and yielded */
    if (strcmp(coro_backend(), "asm-aarch64") == 0) {
        /* The aarch64 switch keeps d8-d15 but not FPCR. */
        fesetround(FE_TONEAREST);
        coro_free(co);
        skip();
    }
    assert_int_equal(fegetround(), FE_TONEAREST);
    fesetround(FE_DOWNWARD);
    coro_resume(co, NULL, NULL);
    assert_int_equal(fegetround(), FE_DOWNWARD);
    fesetround(FE_TONEAREST);
    assert_int_equal(coro_status(co), CORO_DEAD);
    assert_int_equal(rounding_ok, 1);
    coro_free(co);
}

/* ---- current, misuse, accessors ----------------------------------------- */

static void record_current(void *arg)
{
    *(coro **)arg = coro_current();
    coro_yield(NULL);
    *(coro **)arg = coro_current();
}

static void current_is_null_outside_and_the_coroutine_inside(void **state)
{
    coro *seen = NULL;
    coro *co = coro_new(record_current, &seen, 0);

    assert_null(coro_current());
    coro_resume(co, NULL, NULL);
    assert_ptr_equal(seen, co);
    assert_null(coro_current());
    seen = NULL;
    coro_resume(co, NULL, NULL);
    assert_ptr_equal(seen, co);
    assert_null(coro_current());
    coro_free(co);
}

static void yield_outside_a_coroutine_returns_null_and_does_nothing(void **state)
{
    assert_null(coro_yield((void *)1));
    assert_null(coro_current());
}

/* ---- shared stacks ------------------------------------------------------ */

struct keeper {
    int id;
    int rounds;
    int bad;        /* rounds whose locals came back changed */
    int done;
};

/* Fills locals with its id, then checks them after every yield: other
 * coroutines on the same stack ran in between, over the same addresses. */
static void keep_locals(void *arg)
{
    struct keeper *k = arg;
    volatile int mine[32];
    for (int i = 0; i < 32; i++)
        mine[i] = k->id * 100 + i;
    for (int r = 0; r < k->rounds; r++) {
        coro_yield((void *)(intptr_t)k->id);
        for (int i = 0; i < 32; i++)
            if (mine[i] != k->id * 100 + i) {
                k->bad++;
                break;
            }
    }
    k->done = 1;
}

static void coroutines_on_a_shared_stack_keep_their_locals_across_switches(void **state)
{
    enum { N = 500, ROUNDS = 4 };
    coro_stack *st = coro_stack_new(0);
    coro **cos = calloc(N, sizeof *cos);
    struct keeper *ks = calloc(N, sizeof *ks);

    assert_non_null(st);
    for (int i = 0; i < N; i++) {
        ks[i].id = i + 1;
        ks[i].rounds = ROUNDS;
        assert_non_null(cos[i] = coro_new_on(keep_locals, &ks[i], st));
        assert_int_equal(coro_stack_size(cos[i]), CORO_STACK_DEFAULT);
    }
    /* Round-robin: every switch runs a different coroutine on the stack. */
    for (int r = 0; r <= ROUNDS; r++)
        for (int i = 0; i < N; i++) {
            int err = 1;
            void *v = coro_resume(cos[i], NULL, &err);
            assert_int_equal(err, 0);
            if (r < ROUNDS)
                assert_int_equal((intptr_t)v, i + 1);
        }
    for (int i = 0; i < N; i++) {
        assert_int_equal(ks[i].bad, 0);
        assert_int_equal(ks[i].done, 1);
        assert_int_equal(coro_status(cos[i]), CORO_DEAD);
        coro_free(cos[i]);
    }
    coro_stack_free(st);
    free(cos);
    free(ks);
}

/* Yields from depth levels of recursion, each with a 1 KiB frame, so that
 * the parked copy must grow past its first size. */
static long deep_sum(int level)
{
    volatile char pad[1024];
    pad[0] = (char)level;
    pad[sizeof pad - 1] = (char)(level + 1);
    if (level == 0) {
        coro_yield(NULL);
        return 0;
    }
    long below = deep_sum(level - 1);
    return below + pad[0] + pad[sizeof pad - 1];
}

static void yield_deep(void *arg)
{
    *(long *)arg = deep_sum(20);
}

static void a_deep_yield_on_a_shared_stack_is_parked_whole(void **state)
{
    long a = -1, b = -1;
    coro_stack *st = coro_stack_new(256 * 1024);
    coro *x = coro_new_on(yield_deep, &a, st);
    coro *y = coro_new_on(yield_deep, &b, st);

    coro_resume(x, NULL, NULL);
    coro_resume(y, NULL, NULL);     /* runs over x's frames */
    assert_true(coro_stack_resident(x) >= 20 * 1024);
    coro_resume(x, NULL, NULL);
    coro_resume(y, NULL, NULL);
    /* sum over levels 1..20 of level + level + 1 */
    assert_int_equal(a, 20 * 21 + 20);
    assert_int_equal(b, 20 * 21 + 20);
    coro_free(x);
    coro_free(y);
    coro_stack_free(st);
}

struct busy_pair {
    coro *other;    /* on the same shared stack */
    int err;
};

static void resume_other(void *arg)
{
    struct busy_pair *n = arg;
    n->err = 1;
    assert_null(coro_resume(n->other, NULL, &n->err));
}

static void a_shared_stack_in_use_refuses_a_second_coroutine_with_ebusy(void **state)
{
    int finished = 0;
    struct busy_pair n;
    if (strcmp(coro_backend(), "ucontext") == 0)
        skip();     /* every coroutine has a stack of its own there */
    coro_stack *st = coro_stack_new(0);
    coro *inner = coro_new_on(yield_once_then_count, &finished, st);
    coro *outer = coro_new_on(resume_other, &n, st);

    n.other = inner;
    coro_resume(outer, NULL, NULL);
    assert_int_equal(n.err, -EBUSY);
    assert_int_equal(coro_status(inner), CORO_SUSPENDED);
    /* Once the stack is free, the refused one runs as usual. */
    coro_resume(inner, NULL, NULL);
    coro_resume(inner, NULL, NULL);
    assert_int_equal(finished, 1);
    coro_free(inner);
    coro_free(outer);
    coro_stack_free(st);
}

static void a_parked_coroutine_costs_its_copy_not_a_page(void **state)
{
    int finished = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    coro_stack *st = coro_stack_new(0);
    coro *co = coro_new_on(yield_once_then_count, &finished, st);

    coro_resume(co, NULL, NULL);
    if (strcmp(coro_backend(), "ucontext") != 0)
        assert_in_range(coro_stack_resident(co), 64, page / 2);
    assert_int_equal(coro_paint(co), -EINVAL);
    coro_resume(co, NULL, NULL);
    assert_int_equal(finished, 1);
    /* Reset and free work as for a stack of its own, suspended included. */
    assert_int_equal(coro_reset(co, yield_once_then_count, &finished), 0);
    coro_resume(co, NULL, NULL);
    coro_free(co);
    assert_null(coro_new_on(do_nothing, NULL, NULL));
    assert_int_equal(errno, EINVAL);
    coro_stack_free(st);
}

static void stack_size_is_rounded_to_pages_and_data_is_kept(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int x = 0;
    coro *dflt = coro_new(do_nothing, NULL, 0);
    coro *odd = coro_new(do_nothing, NULL, page + 1);

    assert_int_equal(coro_stack_size(dflt), CORO_STACK_DEFAULT);
    assert_int_equal(coro_stack_size(odd), 2 * page);
    assert_null(coro_data(odd));
    coro_set_data(odd, &x);
    assert_ptr_equal(coro_data(odd), &x);
    coro_free(dflt);
    coro_free(odd);
}

static void new_without_a_function_fails_with_einval(void **state)
{
    errno = 0;
    assert_null(coro_new(NULL, NULL, 0));
    assert_int_equal(errno, EINVAL);
    assert_null(coro_resume(NULL, NULL, NULL));
}

static void backend_is_named(void **state)
{
    const char *b = coro_backend();
    assert_true(strcmp(b, "asm-x86_64") == 0 || strcmp(b, "asm-aarch64") == 0 ||
                strcmp(b, "ucontext") == 0);
#if defined(__x86_64__) && !defined(CORO_UCONTEXT)
    assert_string_equal(b, "asm-x86_64");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resume_and_yield_ping_pong_between_thread_and_coroutine),
        cmocka_unit_test(values_pass_both_ways_across_yields),
        cmocka_unit_test(coroutine_resumes_another_and_each_yield_returns_to_its_resumer),
        cmocka_unit_test(yield_goes_back_to_the_latest_resumer),
        cmocka_unit_test(finished_coroutine_is_dead_and_cannot_be_resumed),
        cmocka_unit_test(free_of_suspended_coroutine_drops_it_without_running_the_rest),
        cmocka_unit_test(reset_rearms_a_dead_or_unstarted_coroutine_on_the_same_stack),
        cmocka_unit_test(thousands_of_coroutines_are_suspended_at_once_then_all_finish),
        cmocka_unit_test(suspended_coroutine_that_used_little_stack_has_at_most_two_pages_resident),
        cmocka_unit_test(coroutines_run_on_two_threads_at_once),
        cmocka_unit_test(painted_stack_reports_high_water_mark_near_a_known_array),
        cmocka_unit_test(paint_is_refused_once_started),
        cmocka_unit_test(stack_overflow_runs_into_the_guard_page_and_dies_by_sigsegv),
        cmocka_unit_test(floating_point_state_survives_switches),
        cmocka_unit_test(current_is_null_outside_and_the_coroutine_inside),
        cmocka_unit_test(yield_outside_a_coroutine_returns_null_and_does_nothing),
        cmocka_unit_test(stack_size_is_rounded_to_pages_and_data_is_kept),
        cmocka_unit_test(new_without_a_function_fails_with_einval),
        cmocka_unit_test(backend_is_named),
        cmocka_unit_test(coroutines_on_a_shared_stack_keep_their_locals_across_switches),
        cmocka_unit_test(a_deep_yield_on_a_shared_stack_is_parked_whole),
        cmocka_unit_test(a_shared_stack_in_use_refuses_a_second_coroutine_with_ebusy),
        cmocka_unit_test(a_parked_coroutine_costs_its_copy_not_a_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

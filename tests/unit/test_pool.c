/* test_pool.c: the thread pool used as ThreadPoolExecutor: ordering of
 * results, worker indexes, concurrency bound, FIFO start, cancellation,
 * draining on free, nested submission, stack size and pool sizes.
 * cmocka's assertions are not thread-safe, so jobs only record what they
 * see and the main thread asserts on it after waiting on their futures. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "pool.h"

#include "sanitizers.h"
#define UNDER_TSAN CRAWL_TSAN
#define UNDER_SANITIZER (CRAWL_ASAN || CRAWL_TSAN)

#define GATE_TIMEOUT_S 20   /* a broken pool fails the test instead of hanging it */

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A gate: jobs arrive and block until it opens or until enough of them
 * have arrived; the main thread can wait for arrivals. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int arrived;
    int open;
};

static void gate_init(struct gate *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->arrived = 0;
    g->open = 0;
}

static void gate_destroy(struct gate *g)
{
    pthread_cond_destroy(&g->changed);
    pthread_mutex_destroy(&g->lock);
}

static struct timespec deadline(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += GATE_TIMEOUT_S;
    return ts;
}

/* Arrives, then blocks until the gate opens or need jobs have arrived.
 * Returns 1 if so, 0 on timeout. */
static int gate_pass(struct gate *g, int need)
{
    struct timespec until = deadline();
    int ok = 1;

    pthread_mutex_lock(&g->lock);
    g->arrived++;
    pthread_cond_broadcast(&g->changed);
    while (!g->open && (need <= 0 || g->arrived < need) && ok)
        ok = pthread_cond_timedwait(&g->changed, &g->lock, &until) == 0;
    ok = g->open || (need > 0 && g->arrived >= need);
    pthread_mutex_unlock(&g->lock);
    return ok;
}

/* Waits until n jobs have arrived. Returns 1, or 0 on timeout. */
static int gate_wait_arrived(struct gate *g, int n)
{
    struct timespec until = deadline();
    int ok = 1;

    pthread_mutex_lock(&g->lock);
    while (g->arrived < n && ok)
        ok = pthread_cond_timedwait(&g->changed, &g->lock, &until) == 0;
    ok = g->arrived >= n;
    pthread_mutex_unlock(&g->lock);
    return ok;
}

static void gate_open(struct gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = 1;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* Blocks its worker until the gate opens; returns &gate_passed or NULL. */
static int gate_passed;

static void *gate_job(void *arg, int worker)
{
    return gate_pass(arg, 0) ? &gate_passed : NULL;
}

/* Returns the worker index, offset by one so that worker 0 is not NULL. */
static void *worker_job(void *arg, int worker)
{
    return (void *)(intptr_t)(worker + 1);
}

static uint64_t mix(uint64_t x)
{
    int i;

    /* splitmix64, iterated so that a job does a little real work. */
    for (i = 0; i < 64; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        x ^= x >> 31;
    }
    return x;
}

static void *mix_job(void *arg, int worker)
{
    return (void *)(uintptr_t)mix((uintptr_t)arg);
}

static void test_results_in_submission_order_equal_serial_computation(void **state)
{
    enum { N = 10000 };
    struct future **f = calloc(N, sizeof(*f));
    struct pool *p = pool_new(4, 0);
    size_t i;

    assert_non_null(f);
    assert_non_null(p);
    assert_int_equal(pool_size(p), 4);
    for (i = 0; i < N; i++) {
        f[i] = pool_submit(p, mix_job, (void *)(uintptr_t)i);
        assert_non_null(f[i]);
    }
    for (i = 0; i < N; i++) {
        assert_true((uintptr_t)future_wait(f[i]) == (uintptr_t)mix(i));
        assert_int_equal(future_cancelled(f[i]), 0);
        future_free(f[i]);
    }
    pool_free(p);
    free(f);
}

static void test_hundred_thousand_submissions_all_complete(void **state)
{
    enum { N = 100000 };
    struct future **f = calloc(N, sizeof(*f));
    struct pool *p = pool_new(2, 0);
    uint64_t sum = 0, want = 0;
    size_t i;

    assert_non_null(f);
    assert_non_null(p);
    for (i = 0; i < N; i++) {
        f[i] = pool_submit(p, mix_job, (void *)(uintptr_t)i);
        assert_non_null(f[i]);
        want += mix(i);
    }
    for (i = 0; i < N; i++) {
        sum += (uintptr_t)future_wait(f[i]);
        future_free(f[i]);
    }
    assert_true(sum == want);
    pool_free(p);
    free(f);
}

/* Each job reports the worker it ran on; the first size jobs hold their
 * worker until all size have arrived, which can only happen if every
 * worker has one of them. */
struct index_check {
    struct gate gate;
    int size;
};

static void *hold_until_all_job(void *arg, int worker)
{
    struct index_check *c = arg;

    if (!gate_pass(&c->gate, c->size))
        return NULL;
    return (void *)(intptr_t)(worker + 1);
}

static void check_every_worker_used(int size)
{
    enum { EXTRA = 1000 };
    struct index_check c;
    struct future **f;
    struct pool *p;
    char *seen;
    int i, w;

    p = pool_new(size, 64 * 1024);
    assert_non_null(p);
    assert_int_equal(pool_size(p), size);
    gate_init(&c.gate);
    c.size = size;
    f = calloc((size_t)size + EXTRA, sizeof(*f));
    seen = calloc((size_t)size, 1);
    assert_non_null(f);
    assert_non_null(seen);
    for (i = 0; i < size; i++)
        assert_non_null(f[i] = pool_submit(p, hold_until_all_job, &c));
    for (; i < size + EXTRA; i++)
        assert_non_null(f[i] = pool_submit(p, worker_job, NULL));

    for (i = 0; i < size + EXTRA; i++) {
        w = (int)(intptr_t)future_wait(f[i]);
        assert_int_not_equal(w, 0);   /* 0: a gate timed out */
        w--;
        assert_in_range(w, 0, size - 1);
        if (i < size) {
            assert_int_equal(seen[w], 0);   /* one held job per worker */
            seen[w] = 1;
        }
        future_free(f[i]);
    }
    for (w = 0; w < size; w++)
        assert_int_equal(seen[w], 1);
    pool_free(p);
    gate_destroy(&c.gate);
    free(seen);
    free(f);
}

static void test_worker_indexes_in_range_and_every_worker_used_under_load(void **state)
{
    check_every_worker_used(8);
}

struct concurrency {
    atomic_int running;
    atomic_int max;
};

static void *count_concurrency_job(void *arg, int worker)
{
    struct concurrency *c = arg;
    int now = atomic_fetch_add(&c->running, 1) + 1;
    int max = atomic_load(&c->max);

    while (now > max && !atomic_compare_exchange_weak(&c->max, &max, now))
        ;
    sleep_ms(2);
    atomic_fetch_sub(&c->running, 1);
    return NULL;
}

static void test_at_most_size_jobs_run_at_once(void **state)
{
    enum { SIZE = 4, N = 200 };
    struct concurrency c;
    struct future *f[N];
    struct pool *p = pool_new(SIZE, 0);
    int i;

    assert_non_null(p);
    atomic_init(&c.running, 0);
    atomic_init(&c.max, 0);
    for (i = 0; i < N; i++)
        assert_non_null(f[i] = pool_submit(p, count_concurrency_job, &c));
    for (i = 0; i < N; i++) {
        future_wait(f[i]);
        future_free(f[i]);
    }
    pool_free(p);
    assert_int_equal(atomic_load(&c.running), 0);
    assert_true(atomic_load(&c.max) <= SIZE);
    /* 200 jobs of 2 ms on 4 workers: all four overlap at some point. */
    assert_int_equal(atomic_load(&c.max), SIZE);
}

/* Records the order in which jobs start. */
struct start_order {
    atomic_int next;
    int order[1024];   /* order[k]: the id of the k-th job to start */
};

struct order_arg {
    struct start_order *log;
    int id;
};

static void *record_start_job(void *arg, int worker)
{
    struct order_arg *a = arg;
    int k = atomic_fetch_add(&a->log->next, 1);

    if (k < 1024)
        a->log->order[k] = a->id;
    return NULL;
}

/* Queues n recording jobs with ids from first, behind a blocked worker. */
static void queue_recorded(struct pool *p, struct order_arg *args,
                           struct future **f, int first, int n)
{
    int i;

    for (i = first; i < first + n; i++)
        assert_non_null(f[i] = pool_submit(p, record_start_job, &args[i]));
}

static void test_jobs_start_in_fifo_order_with_one_worker(void **state)
{
    enum { N = 1000 };
    struct start_order *log = calloc(1, sizeof(*log));
    struct order_arg *args = calloc(N, sizeof(*args));
    struct future **f = calloc(N, sizeof(*f));
    struct future *blocker;
    struct gate g;
    struct pool *p = pool_new(1, 0);
    int i;

    assert_non_null(p);
    assert_non_null(log);
    assert_non_null(args);
    assert_non_null(f);
    gate_init(&g);
    for (i = 0; i < N; i++)
        args[i] = (struct order_arg){ log, i };

    /* Everything queues up behind the blocker, so the queue grows. */
    assert_non_null(blocker = pool_submit(p, gate_job, &g));
    assert_true(gate_wait_arrived(&g, 1));
    queue_recorded(p, args, f, 0, N);
    gate_open(&g);

    for (i = 0; i < N; i++) {
        future_wait(f[i]);
        future_free(f[i]);
    }
    assert_ptr_equal(future_wait(blocker), &gate_passed);
    future_free(blocker);
    pool_free(p);
    assert_int_equal(atomic_load(&log->next), N);
    for (i = 0; i < N; i++)
        assert_int_equal(log->order[i], i);
    gate_destroy(&g);
    free(f);
    free(args);
    free(log);
}

static void test_fifo_order_kept_when_queue_grows_after_wrapping(void **state)
{
    enum { FIRST = 50, SECOND = 300, N = FIRST + SECOND };
    struct start_order *log = calloc(1, sizeof(*log));
    struct order_arg *args = calloc(N, sizeof(*args));
    struct future **f = calloc(N, sizeof(*f));
    struct future *b1, *b2;
    struct gate g1, g2;
    struct pool *p = pool_new(1, 0);
    int i;

    assert_non_null(p);
    assert_non_null(log);
    gate_init(&g1);
    gate_init(&g2);
    for (i = 0; i < N; i++)
        args[i] = (struct order_arg){ log, i };

    /* Move the queue's head well into the ring, then queue behind a second
     * blocker until the ring is full and wrapped, and beyond. */
    assert_non_null(b1 = pool_submit(p, gate_job, &g1));
    queue_recorded(p, args, f, 0, FIRST);
    assert_non_null(b2 = pool_submit(p, gate_job, &g2));
    gate_open(&g1);
    assert_true(gate_wait_arrived(&g2, 1));
    queue_recorded(p, args, f, FIRST, SECOND);
    gate_open(&g2);

    for (i = 0; i < N; i++) {
        future_wait(f[i]);
        future_free(f[i]);
    }
    future_wait(b1);
    future_wait(b2);
    future_free(b1);
    future_free(b2);
    pool_free(p);
    assert_int_equal(atomic_load(&log->next), N);
    for (i = 0; i < N; i++)
        assert_int_equal(log->order[i], i);
    gate_destroy(&g1);
    gate_destroy(&g2);
    free(f);
    free(args);
    free(log);
}

static void *count_job(void *arg, int worker)
{
    atomic_fetch_add((atomic_int *)arg, 1);
    return arg;
}

static void test_pool_cancel_cancels_queued_jobs_which_never_run(void **state)
{
    enum { SIZE = 2, N = 100 };
    struct future *blocker[SIZE], *f[N];
    atomic_int ran;
    struct gate g;
    struct pool *p = pool_new(SIZE, 0);
    int i;

    assert_non_null(p);
    atomic_init(&ran, 0);
    gate_init(&g);
    for (i = 0; i < SIZE; i++)
        assert_non_null(blocker[i] = pool_submit(p, gate_job, &g));
    assert_true(gate_wait_arrived(&g, SIZE));   /* both workers busy */
    for (i = 0; i < N; i++)
        assert_non_null(f[i] = pool_submit(p, count_job, &ran));

    assert_int_equal(pool_cancel(p), N);
    for (i = 0; i < N; i++) {
        assert_int_equal(future_done(f[i]), 1);
        assert_int_equal(future_cancelled(f[i]), 1);
        assert_null(future_wait(f[i]));
        future_free(f[i]);
    }
    assert_int_equal(pool_cancel(p), 0);   /* nothing left to cancel */

    /* The started jobs were not touched and the pool still works. */
    gate_open(&g);
    for (i = 0; i < SIZE; i++) {
        assert_ptr_equal(future_wait(blocker[i]), &gate_passed);
        assert_int_equal(future_cancelled(blocker[i]), 0);
        future_free(blocker[i]);
    }
    assert_non_null(f[0] = pool_submit(p, count_job, &ran));
    assert_ptr_equal(future_wait(f[0]), &ran);
    future_free(f[0]);
    pool_free(p);
    assert_int_equal(atomic_load(&ran), 1);   /* only the one after the cancel */
    gate_destroy(&g);
}

static void test_cancelling_a_queued_future_skips_its_job(void **state)
{
    struct future *blocker, *skipped, *kept;
    atomic_int ran;
    struct gate g;
    struct pool *p = pool_new(1, 0);

    assert_non_null(p);
    atomic_init(&ran, 0);
    gate_init(&g);
    assert_non_null(blocker = pool_submit(p, gate_job, &g));
    assert_true(gate_wait_arrived(&g, 1));
    assert_non_null(skipped = pool_submit(p, count_job, &ran));
    assert_non_null(kept = pool_submit(p, count_job, &ran));

    assert_int_equal(future_cancel(skipped), 0);
    assert_int_equal(future_cancel(blocker), -EBUSY);   /* already running */
    assert_int_equal(pool_cancel(p), 1);   /* kept; skipped was cancelled already */
    assert_int_equal(future_cancelled(kept), 1);

    gate_open(&g);
    assert_ptr_equal(future_wait(blocker), &gate_passed);
    pool_free(p);
    assert_int_equal(atomic_load(&ran), 0);
    future_free(blocker);
    future_free(skipped);
    future_free(kept);
    gate_destroy(&g);
}

struct slow_arg {
    atomic_int *ran;
    int id;
};

static void *slow_job(void *arg, int worker)
{
    struct slow_arg *a = arg;

    if (a->id < 2)
        sleep_ms(50);   /* keeps the rest queued while pool_free starts */
    atomic_fetch_add(a->ran, 1);
    return (void *)(intptr_t)(a->id + 1);
}

static void test_pool_free_runs_every_queued_job(void **state)
{
    enum { N = 1000 };
    struct slow_arg args[N];
    struct future *f[N];
    atomic_int ran;
    struct pool *p = pool_new(2, 0);
    int i;

    assert_non_null(p);
    atomic_init(&ran, 0);
    for (i = 0; i < N; i++) {
        args[i] = (struct slow_arg){ &ran, i };
        assert_non_null(f[i] = pool_submit(p, slow_job, &args[i]));
    }
    pool_free(p);
    assert_int_equal(atomic_load(&ran), N);
    /* The futures outlive the pool. */
    for (i = 0; i < N; i++) {
        assert_int_equal(future_done(f[i]), 1);
        assert_int_equal((intptr_t)future_wait(f[i]), i + 1);
        future_free(f[i]);
    }
}

static void test_futures_freed_before_their_jobs_end_stay_safe(void **state)
{
    enum { N = 1000 };
    struct slow_arg args[N];
    struct future *f;
    atomic_int ran;
    struct pool *p = pool_new(2, 0);
    int i;

    assert_non_null(p);
    atomic_init(&ran, 0);
    for (i = 0; i < N; i++) {
        args[i] = (struct slow_arg){ &ran, i };
        assert_non_null(f = pool_submit(p, slow_job, &args[i]));
        future_free(f);   /* fire and forget */
    }
    pool_free(p);
    assert_int_equal(atomic_load(&ran), N);
}

struct nested_arg {
    struct pool *pool;
    intptr_t n;
};

static void *double_job(void *arg, int worker)
{
    return (void *)(((struct nested_arg *)arg)->n * 2);
}

/* Submits a child job from inside a job and returns the child's future. */
static void *parent_job(void *arg, int worker)
{
    return pool_submit(((struct nested_arg *)arg)->pool, double_job, arg);
}

static void check_nested_submission(int size)
{
    enum { N = 200 };
    struct nested_arg args[N];
    struct future *f[N], *child;
    struct pool *p = pool_new(size, 0);
    int i;

    assert_non_null(p);
    for (i = 0; i < N; i++) {
        args[i] = (struct nested_arg){ p, i + 1 };
        assert_non_null(f[i] = pool_submit(p, parent_job, &args[i]));
    }
    for (i = 0; i < N; i++) {
        child = future_wait(f[i]);
        assert_non_null(child);
        assert_int_equal((intptr_t)future_wait(child), 2 * (i + 1));
        future_free(child);
        future_free(f[i]);
    }
    pool_free(p);
}

static void test_jobs_can_submit_jobs(void **state)
{
    check_nested_submission(1);
    check_nested_submission(4);
}

struct late_submit {
    struct pool *pool;
    struct future *got;
    int err;
};

static void *late_submit_job(void *arg, int worker)
{
    struct late_submit *s = arg;

    sleep_ms(200);   /* by now the main thread is inside pool_free */
    errno = 0;
    s->got = pool_submit(s->pool, worker_job, NULL);
    s->err = errno;
    return NULL;
}

static void test_submit_during_pool_free_fails_with_eshutdown(void **state)
{
    struct late_submit s = { NULL, NULL, 0 };
    struct future *f;

    s.pool = pool_new(1, 0);
    assert_non_null(s.pool);
    assert_non_null(f = pool_submit(s.pool, late_submit_job, &s));
    pool_free(s.pool);
    assert_int_equal(future_done(f), 1);
    future_free(f);
    assert_null(s.got);
    assert_int_equal(s.err, ESHUTDOWN);
}

static void test_submit_without_a_function_fails_with_einval(void **state)
{
    struct pool *p = pool_new(1, 0);

    assert_non_null(p);
    errno = 0;
    assert_null(pool_submit(p, NULL, NULL));
    assert_int_equal(errno, EINVAL);
    pool_free(p);
}

static void *stack_size_job(void *arg, int worker)
{
    pthread_attr_t attr;
    size_t size = 0;

    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return NULL;
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    return (void *)(uintptr_t)size;
}

static size_t worker_stack_size(size_t asked)
{
    struct pool *p = pool_new(2, asked);
    struct future *f;
    size_t size;

    assert_non_null(p);
    assert_non_null(f = pool_submit(p, stack_size_job, NULL));
    size = (uintptr_t)future_wait(f);
    future_free(f);
    pool_free(p);
    return size;
}

/* A worker's stack is at least the size asked. glibc may hand a new thread
 * a cached stack up to four times larger than asked, and TSan raises small
 * stacks to a minimum of its own (so there only the lower bound holds);
 * either way a small request must not end up with the 8 MiB default. */
static void assert_stack_size(size_t got, size_t want)
{
    assert_true(got >= want);
    if (!UNDER_TSAN)
        assert_true(got <= 4 * want);
}

static void test_stack_size_is_honoured(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    assert_stack_size(worker_stack_size(256 * 1024), 256 * 1024);
    assert_stack_size(worker_stack_size(128 * 1024), 128 * 1024);
    /* Rounded up to whole pages ... */
    assert_stack_size(worker_stack_size(300000), (300000 + page - 1) / page * page);
    /* ... and to the smallest stack a thread may have. */
    assert_stack_size(worker_stack_size(1), (size_t)PTHREAD_STACK_MIN);
    assert_true(worker_stack_size(0) > 0);   /* the system default */
}

static void test_pool_of_one_runs_everything_on_worker_zero(void **state)
{
    enum { N = 100 };
    struct future *f[N];
    struct pool *p = pool_new(1, 0);
    int i;

    assert_non_null(p);
    assert_int_equal(pool_size(p), 1);
    for (i = 0; i < N; i++)
        assert_non_null(f[i] = pool_submit(p, worker_job, NULL));
    for (i = 0; i < N; i++) {
        assert_int_equal((intptr_t)future_wait(f[i]), 1);
        future_free(f[i]);
    }
    pool_free(p);
}

static void test_pool_of_256_uses_every_worker(void **state)
{
    check_every_worker_used(256);
}

static void test_pool_new_rejects_a_size_below_one(void **state)
{
    errno = 0;
    assert_null(pool_new(0, 0));
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(pool_new(-3, 0));
    assert_int_equal(errno, EINVAL);
}

static void test_pool_new_fails_with_errno_when_no_worker_starts(void **state)
{
    /* No address space holds a 4 EiB stack, so every pthread_create fails. */
    errno = 0;
    assert_null(pool_new(4, (size_t)1 << 62));
    assert_true(errno == EAGAIN || errno == ENOMEM || errno == EINVAL);
}

/* In a child process with an address-space limit that fits only a few
 * 64 MiB stacks: the pool keeps the workers that started. Exit status 0
 * on success, else a code saying what went wrong. */
static int partial_pool_child(void)
{
    enum { ASKED = 16, JOBS = 64 };
    const size_t stack = 64u << 20;
    struct future *f[JOBS];
    struct rlimit rl;
    unsigned long vsz_pages;
    struct pool *p;
    FILE *statm;
    int i, size, w;

    statm = fopen("/proc/self/statm", "r");
    if (statm == NULL || fscanf(statm, "%lu", &vsz_pages) != 1)
        return 10;
    fclose(statm);
    rl.rlim_cur = rl.rlim_max =
        vsz_pages * (rlim_t)sysconf(_SC_PAGESIZE) + 3 * stack + stack / 2;
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 11;

    p = pool_new(ASKED, stack);
    if (p == NULL)
        return 12;
    size = pool_size(p);
    if (size < 1 || size >= ASKED)
        return 13;
    for (i = 0; i < JOBS; i++)
        if ((f[i] = pool_submit(p, worker_job, NULL)) == NULL)
            return 14;
    for (i = 0; i < JOBS; i++) {
        w = (int)(intptr_t)future_wait(f[i]) - 1;
        if (w < 0 || w >= size)
            return 15;
        future_free(f[i]);
    }
    pool_free(p);
    return 0;
}

static void test_pool_keeps_the_workers_that_started(void **state)
{
    pid_t pid;
    int status;

    if (UNDER_SANITIZER)
        skip();   /* sanitizers reserve terabytes; an RLIMIT_AS breaks them */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(partial_pool_child());
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_in_submission_order_equal_serial_computation),
        cmocka_unit_test(test_hundred_thousand_submissions_all_complete),
        cmocka_unit_test(test_worker_indexes_in_range_and_every_worker_used_under_load),
        cmocka_unit_test(test_at_most_size_jobs_run_at_once),
        cmocka_unit_test(test_jobs_start_in_fifo_order_with_one_worker),
        cmocka_unit_test(test_fifo_order_kept_when_queue_grows_after_wrapping),
        cmocka_unit_test(test_pool_cancel_cancels_queued_jobs_which_never_run),
        cmocka_unit_test(test_cancelling_a_queued_future_skips_its_job),
        cmocka_unit_test(test_pool_free_runs_every_queued_job),
        cmocka_unit_test(test_futures_freed_before_their_jobs_end_stay_safe),
        cmocka_unit_test(test_jobs_can_submit_jobs),
        cmocka_unit_test(test_submit_during_pool_free_fails_with_eshutdown),
        cmocka_unit_test(test_submit_without_a_function_fails_with_einval),
        cmocka_unit_test(test_stack_size_is_honoured),
        cmocka_unit_test(test_pool_of_one_runs_everything_on_worker_zero),
        cmocka_unit_test(test_pool_of_256_uses_every_worker),
        cmocka_unit_test(test_pool_new_rejects_a_size_below_one),
        cmocka_unit_test(test_pool_new_fails_with_errno_when_no_worker_starts),
        cmocka_unit_test(test_pool_keeps_the_workers_that_started),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

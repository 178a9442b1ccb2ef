/* crawl-cost: measures, on this machine, the primitives that crawl's
 * concurrency models are made of (creating a thread or a coroutine,
 * switching between them, the memory each one holds while it waits) and
 * prints them as a table or CSV. Every figure is the median of several
 * bounded runs. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "coro.h"

#include "sanitizers.h"
#if CRAWL_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* A sanitizer build measures the sanitizer as much as the primitives; the
 * table says so. */
#if CRAWL_TSAN
#define COST_BUILD_NOTE "built with ThreadSanitizer: its overhead is in every figure\n"
#elif CRAWL_ASAN
#define COST_BUILD_NOTE "built with AddressSanitizer: its overhead is in every figure\n"
#else
#define COST_BUILD_NOTE ""
#endif

#define MAX_RUNS 31

struct opts {
    int runs;          /* repetitions per figure; the median is printed */
    double target_s;   /* wall time of one timing run */
    int k_threads;     /* idle threads for the memory figures */
    int k_coros;       /* suspended coroutines for the memory figures */
    bool csv;
};

/* Times n iterations of one primitive; sets *secs and returns 0, or
 * returns a negative errno. */
typedef int (*bench_fn)(long n, double *secs);

struct row {
    const char *key;    /* stable name, for CSV and scripts */
    const char *label;  /* what the table says */
    const char *unit;
    double median, min, max;
};

enum {
    R_THREAD_CREATE, R_CORO_CREATE, R_CORO_RESET,
    R_THREAD_SWITCH_CV, R_THREAD_SWITCH_PIPE, R_CORO_SWITCH, R_UCONTEXT_SWITCH,
    R_THREAD_RSS, R_CORO_RSS, R_THREAD_VM, R_CORO_VM,
    R_COUNT
};

static struct row rows[R_COUNT] = {
    [R_THREAD_CREATE]      = {"thread_create_join", "thread create+join", "us", 0, 0, 0},
    [R_CORO_CREATE]        = {"coro_create_run_free", "coroutine new+run+free", "us", 0, 0, 0},
    [R_CORO_RESET]         = {"coro_reset_run", "coroutine reset+run (reused)", "us", 0, 0, 0},
    [R_THREAD_SWITCH_CV]   = {"thread_switch_condvar", "thread switch (condvar)", "ns", 0, 0, 0},
    [R_THREAD_SWITCH_PIPE] = {"thread_switch_pipe", "thread switch (pipe)", "ns", 0, 0, 0},
    [R_CORO_SWITCH]        = {"coro_switch", "coroutine switch", "ns", 0, 0, 0},
    [R_UCONTEXT_SWITCH]    = {"ucontext_switch", "swapcontext switch", "ns", 0, 0, 0},
    [R_THREAD_RSS]         = {"thread_idle_rss", "memory per idle thread", "KiB", 0, 0, 0},
    [R_CORO_RSS]           = {"coro_suspended_rss", "memory per suspended coroutine", "KiB", 0, 0, 0},
    [R_THREAD_VM]          = {"thread_idle_vm", "address space per idle thread", "KiB", 0, 0, 0},
    [R_CORO_VM]            = {"coro_suspended_vm", "address space per suspended coroutine", "KiB", 0, 0, 0},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarize(struct row *r, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    r->min = v[0];
    r->max = v[n - 1];
    r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- pinning ------------------------------------------------------------- */

/* Both ends of a thread ping-pong run on one CPU, so that each hand-over
 * is a real context switch rather than a wake-up sent to another core
 * (which would measure idle-exit latency, not the switch). */
static int switch_cpu = -1;

static void pick_switch_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set)) {
            switch_cpu = i;
            return;
        }
}

static void pin_self(void)
{
    cpu_set_t set;
    if (switch_cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(switch_cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* ---- thread create + join ---------------------------------------------- */

static void *trivial(void *arg)
{
    return arg;
}

static int bench_thread_create(long n, double *secs)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, trivial, NULL);
        if (rc != 0)
            return -rc;
        pthread_join(t, NULL);
    }
    *secs = now_s() - t0;
    return 0;
}

/* ---- coroutine create / reset ------------------------------------------- */

static void coro_noop(void *arg)
{
}

static int bench_coro_create(long n, double *secs)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        coro *co = coro_new(coro_noop, NULL, 0);
        if (co == NULL)
            return -errno;
        coro_resume(co, NULL, NULL);
        coro_free(co);
    }
    *secs = now_s() - t0;
    return 0;
}

static int bench_coro_reset(long n, double *secs)
{
    coro *co = coro_new(coro_noop, NULL, 0);
    double t0;

    if (co == NULL)
        return -errno;
    coro_resume(co, NULL, NULL);
    t0 = now_s();
    for (long i = 0; i < n; i++) {
        coro_reset(co, coro_noop, NULL);
        coro_resume(co, NULL, NULL);
    }
    *secs = now_s() - t0;
    coro_free(co);
    return 0;
}

/* ---- thread switches ----------------------------------------------------- */

struct pingpong {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long turn;          /* even: main's turn, odd: the partner's */
    long n;             /* round trips */
    int to_partner[2];  /* pipes, for the pipe variant */
    int to_main[2];
};

static void *cv_partner(void *arg)
{
    struct pingpong *p = arg;

    pin_self();
    pthread_mutex_lock(&p->mu);
    for (long i = 0; i < p->n; i++) {
        while (p->turn % 2 == 0)
            pthread_cond_wait(&p->cv, &p->mu);
        p->turn++;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* One iteration is a round trip: two switches. */
static int bench_thread_switch_cv(long n, double *secs)
{
    struct pingpong p = {.turn = 0, .n = n};
    pthread_t t;
    double t0;
    int rc;

    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    rc = pthread_create(&t, NULL, cv_partner, &p);
    if (rc != 0)
        return -rc;
    pin_self();
    pthread_mutex_lock(&p.mu);
    t0 = now_s();
    for (long i = 0; i < n; i++) {
        p.turn++;
        pthread_cond_signal(&p.cv);
        while (p.turn % 2 == 1)
            pthread_cond_wait(&p.cv, &p.mu);
    }
    *secs = now_s() - t0;
    pthread_mutex_unlock(&p.mu);
    pthread_join(t, NULL);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    return 0;
}

static void *pipe_partner(void *arg)
{
    struct pingpong *p = arg;
    char c;

    pin_self();
    for (long i = 0; i < p->n; i++) {
        if (read(p->to_partner[0], &c, 1) != 1 || write(p->to_main[1], &c, 1) != 1)
            break;
    }
    return NULL;
}

static int bench_thread_switch_pipe(long n, double *secs)
{
    struct pingpong p = {.n = n};
    pthread_t t;
    double t0;
    int rc = 0;
    char c = 'x';

    if (pipe(p.to_partner) != 0)
        return -errno;
    if (pipe(p.to_main) != 0) {
        rc = -errno;
        goto err_pipe;
    }
    rc = -pthread_create(&t, NULL, pipe_partner, &p);
    if (rc != 0)
        goto err;
    pin_self();
    t0 = now_s();
    for (long i = 0; i < n; i++) {
        if (write(p.to_partner[1], &c, 1) != 1 || read(p.to_main[0], &c, 1) != 1) {
            rc = -EIO;
            break;
        }
    }
    *secs = now_s() - t0;
    pthread_join(t, NULL);
err:
    close(p.to_main[0]);
    close(p.to_main[1]);
err_pipe:
    close(p.to_partner[0]);
    close(p.to_partner[1]);
    return rc;
}

/* ---- coroutine switches -------------------------------------------------- */

static void yield_forever(void *arg)
{
    for (;;)
        coro_yield(NULL);
}

/* One iteration is a resume and a yield: two switches. */
static int bench_coro_switch(long n, double *secs)
{
    coro *co = coro_new(yield_forever, NULL, 0);
    double t0;

    if (co == NULL)
        return -errno;
    t0 = now_s();
    for (long i = 0; i < n; i++)
        coro_resume(co, NULL, NULL);
    *secs = now_s() - t0;
    coro_free(co);
    return 0;
}

/* Plain swapcontext, measured here rather than through lib/coro.c so that
 * the comparison holds whichever switch the library was built with. */
static ucontext_t uc_main, uc_side;
#if CRAWL_TSAN
static void *uc_main_fiber, *uc_side_fiber;
#endif

static void uc_side_loop(void)
{
    for (;;) {
#if CRAWL_TSAN
        __tsan_switch_to_fiber(uc_main_fiber, 0);
#endif
        swapcontext(&uc_side, &uc_main);
    }
}

static int bench_ucontext_switch(long n, double *secs)
{
    size_t size = CORO_STACK_DEFAULT;
    void *stack = malloc(size);
    double t0;

    if (stack == NULL)
        return -ENOMEM;
    if (getcontext(&uc_side) != 0) {
        free(stack);
        return -errno;
    }
    uc_side.uc_stack.ss_sp = stack;
    uc_side.uc_stack.ss_size = size;
    uc_side.uc_link = NULL;
    makecontext(&uc_side, uc_side_loop, 0);
#if CRAWL_TSAN
    uc_main_fiber = __tsan_get_current_fiber();
    uc_side_fiber = __tsan_create_fiber(0);
#endif
    t0 = now_s();
    for (long i = 0; i < n; i++) {
#if CRAWL_TSAN
        __tsan_switch_to_fiber(uc_side_fiber, 0);
#endif
        swapcontext(&uc_main, &uc_side);
    }
    *secs = now_s() - t0;
#if CRAWL_TSAN
    __tsan_destroy_fiber(uc_side_fiber);
#endif
    free(stack); /* the side context is abandoned mid-loop, as intended */
    return 0;
}

/* ---- memory --------------------------------------------------------------- */

struct mem {
    double rss_kib, vm_kib; /* growth per thread or coroutine */
};

/* Reads this process's address-space size and resident set in KiB. */
static int statm_kib(double *vm, double *rss)
{
    long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    double page = (double)sysconf(_SC_PAGESIZE) / 1024;

    if (f == NULL)
        return -errno;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) {
        fclose(f);
        return -EIO;
    }
    fclose(f);
    *vm = (double)size * page;
    *rss = (double)resident * page;
    return 0;
}

struct idle {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started;
    bool release;
};

static void *idle_thread(void *arg)
{
    struct idle *s = arg;
    volatile char little[256]; /* as much stack as the coroutines touch */

    little[0] = 1;
    pthread_mutex_lock(&s->mu);
    s->started += little[0];
    pthread_cond_broadcast(&s->cv);
    while (!s->release)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static int mem_threads(int k, struct mem *m)
{
    struct idle s = {.started = 0, .release = false};
    pthread_t *t = calloc((size_t)k, sizeof *t);
    double vm0, rss0, vm1, rss1;
    int made = 0, rc = 0;

    if (t == NULL)
        return -ENOMEM;
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    if ((rc = statm_kib(&vm0, &rss0)) != 0)
        goto out;
    for (made = 0; made < k; made++) {
        int e = pthread_create(&t[made], NULL, idle_thread, &s);
        if (e != 0) {
            rc = -e;
            break;
        }
    }
    pthread_mutex_lock(&s.mu);
    while (s.started < made)
        pthread_cond_wait(&s.cv, &s.mu);
    pthread_mutex_unlock(&s.mu);
    if (rc == 0 && (rc = statm_kib(&vm1, &rss1)) == 0) {
        m->vm_kib = (vm1 - vm0) / k;
        m->rss_kib = (rss1 - rss0) / k;
    }
    pthread_mutex_lock(&s.mu);
    s.release = true;
    pthread_cond_broadcast(&s.cv);
    pthread_mutex_unlock(&s.mu);
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
out:
    free(t);
    return rc;
}

static void touch_and_yield(void *arg)
{
    volatile char little[256];
    little[0] = 1;
    coro_yield(NULL);
    little[1] = little[0];
}

static int mem_coros(int k, struct mem *m)
{
    coro **cos = calloc((size_t)k, sizeof *cos);
    double vm0, rss0, vm1, rss1;
    int made = 0, rc;

    if (cos == NULL)
        return -ENOMEM;
    if ((rc = statm_kib(&vm0, &rss0)) != 0)
        goto out;
    for (made = 0; made < k; made++) {
        cos[made] = coro_new(touch_and_yield, NULL, 0);
        if (cos[made] == NULL) {
            rc = -errno;
            break;
        }
        coro_resume(cos[made], NULL, NULL);
    }
    if (rc == 0 && (rc = statm_kib(&vm1, &rss1)) == 0) {
        m->vm_kib = (vm1 - vm0) / k;
        m->rss_kib = (rss1 - rss0) / k;
    }
    for (int i = 0; i < made; i++)
        coro_free(cos[i]);
out:
    free(cos);
    return rc;
}

/* Runs one memory measurement in a child process, so that each run starts
 * from the same clean heap and without glibc's cache of thread stacks. */
static int in_child(int (*fn)(int, struct mem *), int k, struct mem *m)
{
    int fd[2], status, rc = 0;
    pid_t pid;
    struct { int rc; struct mem m; } msg = {0, {0, 0}};

    if (pipe(fd) != 0)
        return -errno;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        rc = -errno;
        close(fd[0]);
        close(fd[1]);
        return rc;
    }
    if (pid == 0) {
        close(fd[0]);
        msg.rc = fn(k, &msg.m);
        _exit(write(fd[1], &msg, sizeof msg) == sizeof msg ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], &msg, sizeof msg) != sizeof msg)
        rc = -EIO;
    close(fd[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = rc ? rc : -ECHILD;
    if (rc == 0)
        rc = msg.rc;
    if (rc == 0)
        *m = msg.m;
    return rc;
}

/* ---- the harness ------------------------------------------------------------ */

/* Finds how many iterations fill the target time (doubling from 1, which
 * also warms caches and glibc's stack cache up), then takes opts->runs
 * timed runs of that many. per_iter: switches per iteration. */
static int time_row(const struct opts *o, struct row *r, bench_fn fn, int per_iter)
{
    double v[MAX_RUNS], secs = 0, scale = strcmp(r->unit, "ns") == 0 ? 1e9 : 1e6;
    long n = 1;
    int rc;

    for (;;) {
        if ((rc = fn(n, &secs)) != 0)
            return rc;
        if (secs >= o->target_s / 8 || n >= (1L << 40))
            break;
        n *= 2;
    }
    n = (long)((double)n * o->target_s / (secs > 0 ? secs : 1e-9)) + 1;
    for (int i = 0; i < o->runs; i++) {
        if ((rc = fn(n, &secs)) != 0)
            return rc;
        v[i] = secs / (double)n / per_iter * scale;
    }
    summarize(r, v, o->runs);
    return 0;
}

static int mem_rows(const struct opts *o, int (*fn)(int, struct mem *), int k,
                    struct row *rss, struct row *vm)
{
    double vr[MAX_RUNS], vv[MAX_RUNS];
    struct mem m = {0, 0};
    int rc;

    for (int i = 0; i < o->runs; i++) {
        if ((rc = in_child(fn, k, &m)) != 0)
            return rc;
        vr[i] = m.rss_kib;
        vv[i] = m.vm_kib;
    }
    summarize(rss, vr, o->runs);
    summarize(vm, vv, o->runs);
    return 0;
}

/* Three significant digits, never an exponent. */
static void fmt(char *buf, size_t len, double v)
{
    int decimals = 0;
    if (v > 0 && v < 100)
        decimals = 2 - (int)floor(log10(v));
    if (decimals > 6)
        decimals = 6;
    snprintf(buf, len, "%.*f", decimals, v);
}

static void print_table(const struct opts *o)
{
    char med[32], lo[32], hi[32];

    printf("crawl-cost: the primitives of crawl's concurrency models, median of %d runs\n", o->runs);
    printf("coroutine switch: %s; thread switches %s; %ld CPUs online\n",
           coro_backend(), switch_cpu >= 0 ? "pinned to one CPU" : "not pinned",
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("memory: %d idle threads, %d suspended coroutines (%d KiB stacks)\n",
           o->k_threads, o->k_coros, CORO_STACK_DEFAULT / 1024);
    printf("%s\n", COST_BUILD_NOTE);
    printf("%-38s %10s %-4s %10s %10s\n", "primitive", "median", "unit", "min", "max");
    for (int i = 0; i < R_COUNT; i++) {
        const struct row *r = &rows[i];
        fmt(med, sizeof med, r->median);
        fmt(lo, sizeof lo, r->min);
        fmt(hi, sizeof hi, r->max);
        printf("%-38s %10s %-4s %10s %10s\n", r->label, med, r->unit, lo, hi);
    }
}

static void print_csv(const struct opts *o)
{
    printf("key,label,median,unit,min,max,runs\n");
    for (int i = 0; i < R_COUNT; i++) {
        const struct row *r = &rows[i];
        printf("%s,%s,%.6g,%s,%.6g,%.6g,%d\n", r->key, r->label, r->median, r->unit,
               r->min, r->max, o->runs);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
"usage: crawl-cost [--quick] [--runs=N] [--format=table|csv] [--help]\n"
"\n"
"Measures the primitives under crawl's concurrency models on this machine.\n"
"Each figure is the median (with min and max) of N timed runs of about\n"
"0.1 s each (0.01 s with --quick); the whole run takes under 10 s\n"
"(about 1 s with --quick).\n"
"\n"
"  thread create+join      pthread_create of a function that returns at\n"
"                          once, then pthread_join (glibc reuses cached stacks)\n"
"  coroutine new+run+free  coro_new (mmap + guard page), one resume that runs\n"
"                          it to the end, coro_free (munmap)\n"
"  coroutine reset+run     the same on one coroutine rearmed with coro_reset,\n"
"                          as a free list of coroutines would do\n"
"  thread switch (condvar) two threads pinned to one CPU hand a turn back and\n"
"                          forth under a mutex and condition variable; time per\n"
"                          one-way hand-over\n"
"  thread switch (pipe)    the same, passing one byte through two pipes\n"
"  coroutine switch        coro_resume + coro_yield pair / 2, with the switch\n"
"                          lib/coro.c was built with (named in the header)\n"
"  swapcontext switch      plain ucontext swapcontext between two contexts,\n"
"                          per one-way switch (it saves the signal mask with a\n"
"                          system call each time)\n"
"  memory per idle thread  growth of the resident set (/proc/self/statm) while\n"
"                          K threads (default attributes) block on a condition\n"
"                          variable, divided by K; kernel memory (kernel stack,\n"
"                          task struct, page tables) is not counted\n"
"  memory per suspended    the same for K coroutines (%d KiB stacks) each\n"
"  coroutine               suspended in coro_yield after touching 256 bytes\n"
"                          of stack; includes the control block\n"
"  address space per ...   growth of the virtual size for the same K: reserved,\n"
"                          not resident (a thread's stack is ulimit -s)\n"
"\n"
"  --quick        3 runs of 0.01 s, K = 200 threads and 2000 coroutines\n"
"  --runs=N       runs per figure (1 to %d; default 5)\n"
"  --format=csv   key,label,median,unit,min,max,runs rows under a header\n"
"  --help         this text\n"
"\n"
"Defaults: 5 runs, K = 1000 threads and 10000 coroutines. Memory figures\n"
"are taken in a fresh child process each run.\n",
            CORO_STACK_DEFAULT / 1024, MAX_RUNS);
}

/* Reads the command line into *o. Returns -1 to go on, or the exit
 * status (0 after --help, 2 on a usage error). */
static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, 'q'},
        {"runs", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool runs_set = false;
    char *end;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'q':
            o->target_s = 0.01;
            o->k_threads = 200;
            o->k_coros = 2000;
#if CRAWL_TSAN
            /* Each TSan thread or fiber holds some 850 KB: keep the quick
             * run quick in the TSan test tree. */
            o->k_threads = 50;
            o->k_coros = 200;
#endif
            if (!runs_set)
                o->runs = 3;
            break;
        case 'r':
            o->runs = (int)strtol(optarg, &end, 10);
            if (*end != '\0' || o->runs < 1 || o->runs > MAX_RUNS) {
                fprintf(stderr, "crawl-cost: --runs wants 1 to %d\n", MAX_RUNS);
                return 2;
            }
            runs_set = true;
            break;
        case 'f':
            if (strcmp(optarg, "csv") == 0) {
                o->csv = true;
            } else if (strcmp(optarg, "table") == 0) {
                o->csv = false;
            } else {
                fprintf(stderr, "crawl-cost: --format is table or csv\n");
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct opts o = {.runs = 5, .target_s = 0.1, .k_threads = 1000, .k_coros = 10000, .csv = false};
    struct {
        int row, per_iter;
        bench_fn fn;
    } timed[] = {
        {R_THREAD_CREATE, 1, bench_thread_create},
        {R_CORO_CREATE, 1, bench_coro_create},
        {R_CORO_RESET, 1, bench_coro_reset},
        {R_THREAD_SWITCH_CV, 2, bench_thread_switch_cv},
        {R_THREAD_SWITCH_PIPE, 2, bench_thread_switch_pipe},
        {R_CORO_SWITCH, 2, bench_coro_switch},
        {R_UCONTEXT_SWITCH, 2, bench_ucontext_switch},
    };
    int rc;
    cpu_set_t saved;
    bool have_saved;

    if ((rc = parse_args(argc, argv, &o)) >= 0)
        return rc;

    /* Memory first, before the timing loops have filled glibc's stack
     * cache and the heap. */
    if ((rc = mem_rows(&o, mem_threads, o.k_threads, &rows[R_THREAD_RSS], &rows[R_THREAD_VM])) != 0 ||
        (rc = mem_rows(&o, mem_coros, o.k_coros, &rows[R_CORO_RSS], &rows[R_CORO_VM])) != 0) {
        fprintf(stderr, "crawl-cost: memory measurement: %s\n", strerror(-rc));
        return 1;
    }

    have_saved = sched_getaffinity(0, sizeof saved, &saved) == 0;
    pick_switch_cpu();
    for (size_t i = 0; i < sizeof timed / sizeof timed[0]; i++) {
        struct row *r = &rows[timed[i].row];
        if ((rc = time_row(&o, r, timed[i].fn, timed[i].per_iter)) != 0) {
            fprintf(stderr, "crawl-cost: %s: %s\n", r->label, strerror(-rc));
            return 1;
        }
        /* The ping-pong benchmarks pin the main thread; undo it so the
         * other figures are taken as a normal program runs. */
        if (have_saved)
            sched_setaffinity(0, sizeof saved, &saved);
    }

    if (o.csv)
        print_csv(&o);
    else
        print_table(&o);
    return 0;
}

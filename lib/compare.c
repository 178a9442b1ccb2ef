/* compare.c: running several models on one list and lining their figures
 * up. Each model runs in a process of its own, a fresh exec of crawl, so
 * wait4 reports that model's resource use alone, counted as it is for any
 * other program (a forked child would not count the shared-library pages
 * its parent had already mapped); the child sends its crawl figures back
 * over a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "fetch.h"
#include "report.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void compare_fill(struct compare_run *r, struct crawl *c)
{
    struct crawl_summary s;
    crawl_get_summary(c, &s);
    snprintf(r->mode, sizeof r->mode, "%s", s.mode);
    r->urls = s.rows;
    r->failed = s.failed;
    r->ok = s.rows - s.failed;
    r->conns = s.conns;
    r->dns = s.dns_lookups;
    r->retries = s.retries;
    r->threads = s.threads;
    r->reuse = s.reuse;
    r->limit = s.limit;
    r->wall = s.wall;
    static const double qs[4] = { 0.50, 0.90, 0.99, 1 };
    for (int k = 0; k < 4; k++) {
        r->total_ms[k] = crawl_latency_ms(c, CRAWL_TIME_TOTAL, qs[k]);
        r->ttfb_ms[k] = crawl_latency_ms(c, CRAWL_TIME_TTFB, qs[k]);
    }
    /* A model of several processes sums their peak resident sets itself;
     * wait4 gives only the largest one's. */
    r->procs = s.rss_peak_kb > 0;
    r->rss_mb = (double)s.rss_peak_kb / 1024.0;
}

/* Runs b once in a process that spawn starts; fills r. */
static int run_child(const struct crawl_backend *b, compare_spawn_fn spawn, void *data,
                     struct compare_run *r)
{
    int fds[2];
    /* The read end stays here; the write end goes to the child alone, and
     * is closed here once it has started. */
    if (pipe(fds) != 0)
        return -errno;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = spawn(b, fds[1], data);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return (int)pid;
    }
    memset(r, 0, sizeof *r);
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int wstatus;
    struct rusage ru;
    while (wait4(pid, &wstatus, 0, &ru) < 0)
        if (errno != EINTR)
            return -errno;
    if (got != sizeof *r || !WIFEXITED(wstatus)) {
        memset(r, 0, sizeof *r);
        snprintf(r->mode, sizeof r->mode, "%s", b->name);
        r->status = -1;
    }
    r->user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    r->sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    /* RUSAGE_BOTH: the times and switches of the workers it reaped are in. */
    if ((double)ru.ru_maxrss / 1024.0 > r->rss_mb)
        r->rss_mb = (double)ru.ru_maxrss / 1024.0;
    r->vcsw = ru.ru_nvcsw;
    r->ivcsw = ru.ru_nivcsw;
    return 0;
}

int compare_models(const struct crawl_backend *const *list, int repeat,
                   compare_spawn_fn spawn, void *data, atomic_int *stop,
                   struct compare_run *results, double *min_wall, double *max_wall)
{
    int n = 0;
    while (list[n])
        n++;
    struct compare_run *all = calloc((size_t)(n * repeat), sizeof *all);
    if (!all)
        return -ENOMEM;
    int rc = 0, rounds = 0, last = n, stride = repeat;
    for (int round = 0; round < repeat && rc == 0; round++) {
        for (int i = 0; i < n && rc == 0; i++) {
            if (stop && atomic_load(stop)) {
                /* Report whole rounds only, or the part of the first. */
                if (round == 0)
                    last = i;
                goto done;
            }
            rc = run_child(list[i], spawn, data, &all[i * stride + round]);
        }
        rounds++;
    }
done:
    if (rounds > 0)
        last = n;
    else
        rounds = 1;
    repeat = rounds;
    if (rc == 0) {
        n = last;
        for (int i = 0; i < n; i++) {
            struct compare_run *runs = &all[i * stride];
            double walls[100];
            for (int k = 0; k < repeat; k++)
                walls[k] = runs[k].wall;
            qsort(walls, (size_t)repeat, sizeof walls[0], cmp_double);
            double median = walls[(repeat - 1) / 2];
            min_wall[i] = walls[0];
            max_wall[i] = walls[repeat - 1];
            results[i] = runs[0];
            for (int k = 0; k < repeat; k++)
                if (runs[k].wall == median) {
                    results[i] = runs[k];
                    break;
                }
        }
    }
    free(all);
    return rc < 0 ? rc : n;
}

static const char *columns[] = {
    "mode", "urls", "ok", "failed", "retries", "wall_s", "min_s", "max_s", "speedup",
    "user_s", "sys_s", "rss_mb", "threads", "vcsw", "ivcsw", "conns", "dns", "reuse", "concurrency",
    "p50_ms", "p90_ms", "p99_ms", "max_ms",
    "ttfb_p50_ms", "ttfb_p90_ms", "ttfb_p99_ms", "ttfb_max_ms",
};
#define NCOLS (sizeof columns / sizeof columns[0])

#define CELL 32
/* concurrency: in the data (0: every URL at once), not in the table, whose
 * Shared line says each model's in-flight limit. */
#define CONC 18

/* The comparison's cells, as text, for run x; its speed-up is against base.
 * For CSV (data set) the figures are unrounded and the speed-up a plain
 * number; the table rounds them for reading and writes 3.50x. */
static void fill_cells(const struct compare_run *x, double min_wall, double max_wall,
                       double base, int data, char (*c)[CELL])
{
    const char *sec = data ? "%.6f" : "%.2f", *ms = data ? "%.3f" : "%.1f";
    snprintf(c[0], CELL, "%s", x->mode);
    snprintf(c[1], CELL, "%zu", x->urls);
    snprintf(c[2], CELL, "%zu", x->ok);
    snprintf(c[3], CELL, "%zu", x->failed);
    snprintf(c[4], CELL, "%zu", x->retries);
    snprintf(c[5], CELL, sec, x->wall);
    snprintf(c[6], CELL, sec, min_wall);
    snprintf(c[7], CELL, sec, max_wall);
    snprintf(c[8], CELL, data ? "%.4f" : "%.2fx", x->wall > 0 ? base / x->wall : 0.0);
    snprintf(c[9], CELL, sec, x->user);
    snprintf(c[10], CELL, sec, x->sys);
    snprintf(c[11], CELL, data ? "%.2f" : "%.1f", x->rss_mb);
    snprintf(c[12], CELL, "%d", x->threads);
    snprintf(c[13], CELL, "%ld", x->vcsw);
    snprintf(c[14], CELL, "%ld", x->ivcsw);
    snprintf(c[15], CELL, "%zu", x->conns);
    snprintf(c[16], CELL, "%zu", x->dns);
    snprintf(c[17], CELL, "%s", x->reuse ? "on" : "off");
    snprintf(c[CONC], CELL, "%d", x->limit);
    for (int k = 0; k < 4; k++) {
        snprintf(c[19 + k], CELL, ms, x->total_ms[k]);
        snprintf(c[23 + k], CELL, ms, x->ttfb_ms[k]);
    }
}

/* JSON lines: the CSV's columns and values, as objects. */
static void print_jsonl(FILE *out, char (*cells)[NCOLS][CELL], int rows)
{
    for (int i = 0; i < rows; i++) {
        for (size_t k = 0; k < NCOLS; k++) {
            int text = k == 0 || k == 17;
            fprintf(out, "%s\"%s\":%s%s%s", k ? "," : "{", columns[k], text ? "\"" : "",
                    cells[i][k], text ? "\"" : "");
        }
        fputs("}\n", out);
    }
}

/* One line of cells: CSV, or the table's aligned columns (width set). */
static void print_line(FILE *out, const char *const *cells, const size_t *width)
{
    for (size_t k = 0; k < NCOLS; k++) {
        if (width && k == CONC)
            continue;
        if (!width)
            fprintf(out, "%s%s", k ? "," : "", cells[k]);
        else
            fprintf(out, k == 0 ? "%-*s" : "  %*s", (int)width[k], cells[k]);
    }
    fputc('\n', out);
}

void compare_print(FILE *out, enum crawl_format fmt, const char *shared,
                   const struct compare_run *r, const double *min_wall,
                   const double *max_wall, int n)
{
    /* Speed-up is against the registry's first model (the sequential
     * one) when it ran, else against the first model run. */
    double base = n ? r[0].wall : 0;
    for (int i = 0; i < n; i++)
        if (strcmp(r[i].mode, crawl_backends[0]->name) == 0)
            base = r[i].wall;
    char cells[64][NCOLS][CELL];
    const char *line[NCOLS];
    int rows = n < 64 ? n : 64;
    for (int i = 0; i < rows; i++)
        fill_cells(&r[i], min_wall[i], max_wall[i], base, fmt != CRAWL_FMT_TABLE, cells[i]);
    if (fmt == CRAWL_FMT_JSONL) {
        print_jsonl(out, cells, rows);
        return;
    }
    size_t width[NCOLS];
    for (size_t k = 0; k < NCOLS; k++) {
        width[k] = strlen(columns[k]);
        for (int i = 0; i < rows; i++)
            if (strlen(cells[i][k]) > width[k])
                width[k] = strlen(cells[i][k]);
    }
    size_t *w = fmt == CRAWL_FMT_CSV ? NULL : width;
    if (shared && w)
        fprintf(out, "%s\n", shared);
    int procs = 0;
    for (int i = 0; i < rows; i++)
        procs |= r[i].procs;
    if (procs && w)
        fprintf(out, "procs: user_s, sys_s, vcsw, ivcsw and threads summed over its "
                "processes; rss_mb the sum of\n       each process's own peak resident set "
                "(shared pages counted in each)\n");
    print_line(out, columns, w);
    for (int i = 0; i < rows; i++) {
        for (size_t k = 0; k < NCOLS; k++)
            line[k] = cells[i][k];
        print_line(out, line, w);
    }
}

char *compare_shared(const struct crawl_opts *o, const struct compare_run *r, int n,
                     char *buf, size_t size)
{
    char desc[256], limits[256];
    size_t at = 0;
    limits[0] = '\0';
    for (int i = 0; i < n && at < sizeof limits; i++) {
        if (r[i].limit > 0)
            at += (size_t)snprintf(limits + at, sizeof limits - at, "%s%s %d", i ? ", " : "",
                                   r[i].mode, r[i].limit);
        else
            at += (size_t)snprintf(limits + at, sizeof limits - at, "%s%s all", i ? ", " : "",
                                   r[i].mode);
    }
    snprintf(buf, size, "Shared: %s, reuse %s; in flight: %s",
             fetch_describe_opts(o, desc, sizeof desc),
             o->reuse == CRAWL_REUSE_AUTO ? "auto (on unless every URL is in flight at once and none is https)"
             : o->reuse == CRAWL_REUSE_ON ? "on" : "off",
             limits);
    return buf;
}

/* trace.c: the events of --trace. A transfer's slice and its phases come
 * from the times libcurl measured, which the result already holds; the
 * counters from the figures the fetch layer took as the transfer started
 * and ended. Nothing here decides what a result means. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "io.h"
#include "json.h"
#include "report.h"
#include "trace.h"

/* Procs workers that get a process track with a name (--procs allows 256). */
#define TRACE_NAMED_PROCS 256

struct trace {
    struct sink *sink;
    int base_pid;
    int processes;
    char name[32];              /* the model's */
    pthread_mutex_t lock;       /* guards named */
    unsigned char named[TRACE_NAMED_PROCS / 8];   /* worker processes named so far */
};

int trace_head(int fd)
{
    static const char head[] = "{\"traceEvents\":[\n";
    return io_write_all(fd, head, sizeof head - 1);
}

/* Every event is followed by a comma: the array ends on one last element,
 * which names the (empty) process 0 after the program. */
int trace_tail(int fd)
{
    static const char tail[] =
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"crawl\"}}\n"
        "],\"displayTimeUnit\":\"ms\"}\n";
    return io_write_all(fd, tail, sizeof tail - 1);
}

static void process_name(struct strbuf *b, int pid, const char *name, int index, int sort)
{
    sb_printf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":", pid);
    if (index >= 0) {
        char buf[96];
        snprintf(buf, sizeof buf, "%s worker process %d", name, index);
        json_string_sb(b, buf);
    } else {
        json_string_sb(b, name);
    }
    sb_printf(b, "}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,"
              "\"args\":{\"sort_index\":%d}},\n", pid, sort);
}

int trace_new(struct trace **out, int fd, const char *name, int base_pid, int processes,
              int flush_ms, sink_error_fn on_error, void *data)
{
    struct trace *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->base_pid = base_pid;
    t->processes = processes;
    snprintf(t->name, sizeof t->name, "%s", name);
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return -ENOMEM;
    }
    int rc = sink_new(&t->sink, fd, flush_ms, on_error, data);
    if (rc != 0) {
        pthread_mutex_destroy(&t->lock);
        free(t);
        return rc;
    }
    struct strbuf b = {0};
    process_name(&b, base_pid, name, -1, base_pid);
    rc = b.nomem ? -ENOMEM : sink_put(t->sink, b.data, b.len);
    sb_free(&b);
    if (rc != 0) {
        trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Microseconds from the run's start, whole: a slice and the phases nested
 * in it are cut from the same whole numbers, so none pokes out of another. */
static long long us(double seconds)
{
    return llround(seconds * 1e6);
}

/* Appends one slice ("X") of category cat. */
static void slice(struct strbuf *b, const char *cat, const char *name, int pid, int tid,
                  long long from, long long to)
{
    sb_printf(b, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
              "\"ts\":%lld,\"dur\":%lld},\n", name, cat, pid, tid, from, to - from);
}

/* Appends the two counters' samples at ts. */
static void counters(struct strbuf *b, int pid, long long ts, int flight, int conns)
{
    sb_printf(b, "{\"name\":\"transfers in flight\",\"ph\":\"C\",\"pid\":%d,\"ts\":%lld,"
              "\"args\":{\"transfers\":%d}},\n", pid, ts, flight);
    sb_printf(b, "{\"name\":\"connections open\",\"ph\":\"C\",\"pid\":%d,\"ts\":%lld,"
              "\"args\":{\"connections\":%d}},\n", pid, ts, conns);
}

/* The phases, from libcurl's times (each counted from the transfer's
 * start, and cumulative: DNS done, connected, TLS done, first byte, end).
 * A time libcurl did not reach (0: a reused connection has no DNS or
 * connect, a failed one no first byte) gives no phase; each boundary is
 * kept between the one before it and the end. */
static void phases(struct strbuf *b, const struct crawl_result *r, int pid, int tid,
                   long long s, long long e)
{
    long long at = s, next;
    const struct { const char *name; double t; } p[] = {
        { "dns", r->time_dns }, { "connect", r->time_connect }, { "tls", r->time_tls },
        { "waiting for the first byte", r->time_ttfb },
    };
    for (size_t k = 0; k < sizeof p / sizeof *p; k++) {
        if (p[k].t <= 0)
            continue;
        next = s + us(p[k].t);
        if (next > e)
            next = e;
        if (next > at)
            slice(b, "phase", p[k].name, pid, tid, at, next);
        if (next > at)
            at = next;
    }
    if (r->time_ttfb > 0 && e > at)
        slice(b, "phase", "body", pid, tid, at, e);
    else if (e > at)
        slice(b, "phase", "waiting for the first byte", pid, tid, at, e);
}

void trace_format(struct strbuf *b, const struct crawl_job *j, int base_pid, int processes)
{
    const struct crawl_result *r = &j->res;
    if (r->start <= 0 && r->end <= 0)
        return;     /* never fetched */
    int pid = base_pid + (processes ? 1 + r->worker / 1000000 : 0), tid = r->worker;
    long long s = us(r->start), e = s + us(r->time_total);
    /* Never past the moment the result was taken: the next transfer on the
     * worker started after it. */
    if (r->end > 0 && e > us(r->end))
        e = us(r->end);
    if (r->time_total <= 0 && r->end > r->start)
        e = us(r->end);
    if (r->queued > 0 && us(r->queued) < s) {
        /* The wait in the pool's queue, on an async track of the model's:
         * waits overlap each other and the workers' transfers. */
        sb_printf(b, "{\"name\":\"queued\",\"cat\":\"queue\",\"ph\":\"b\",\"id\":%llu,"
                  "\"pid\":%d,\"tid\":0,\"ts\":%lld},\n", (unsigned long long)j->seq,
                  base_pid, us(r->queued));
        sb_printf(b, "{\"name\":\"queued\",\"cat\":\"queue\",\"ph\":\"e\",\"id\":%llu,"
                  "\"pid\":%d,\"tid\":0,\"ts\":%lld},\n", (unsigned long long)j->seq,
                  base_pid, s);
    }
    sb_adds(b, "{\"name\":");
    json_string_sb(b, j->url);
    sb_printf(b, ",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%lld,"
              "\"dur\":%lld,\"args\":{\"url\":", pid, tid, s, e - s);
    json_string_sb(b, j->url);
    sb_printf(b, ",\"status\":%ld,\"length\":%lld,\"worker\":%d,\"row\":%llu", r->status,
              (long long)r->length, r->worker, (unsigned long long)j->seq);
    if (r->queued > 0)
        sb_printf(b, ",\"queued_ms\":%.3f", (r->start - r->queued) * 1000.0);
    if (r->fail) {
        sb_printf(b, ",\"fail\":\"%s\",\"error\":", job_fail_name(r->fail));
        json_string_sb(b, r->error ? r->error : job_fail_name(r->fail));
    }
    sb_adds(b, "}},\n");
    phases(b, r, pid, tid, s, e);
    if (r->flight_start > 0) {
        counters(b, pid, s, r->flight_start, r->conns_start);
        counters(b, pid, r->end > 0 ? us(r->end) : e, r->flight_end, r->conns_end);
    }
}

int trace_job(struct trace *t, const struct crawl_job *j)
{
    struct strbuf b = {0};
    const struct crawl_result *r = &j->res;
    if (t->processes && (r->start > 0 || r->end > 0)) {
        int proc = r->worker / 1000000;
        if (proc >= 0 && proc < TRACE_NAMED_PROCS) {
            pthread_mutex_lock(&t->lock);
            int named = t->named[proc / 8] & (1u << (proc % 8));
            t->named[proc / 8] |= (unsigned char)(1u << (proc % 8));
            pthread_mutex_unlock(&t->lock);
            if (!named)
                process_name(&b, t->base_pid + 1 + proc, t->name, proc,
                             t->base_pid + 1 + proc);
        }
    }
    trace_format(&b, j, t->base_pid, t->processes);
    int rc = b.nomem ? -ENOMEM : b.len ? sink_put(t->sink, b.data, b.len) : sink_error(t->sink);
    sb_free(&b);
    return rc;
}

int trace_free(struct trace *t)
{
    if (!t)
        return 0;
    int rc = sink_free(t->sink);
    pthread_mutex_destroy(&t->lock);
    free(t);
    return rc;
}

/* The trace hook: each page's transfer, as its row is final. */
static void trace_row(void *data, struct crawl *c, struct crawl_job *job)
{
    trace_job(data, job);
}

void trace_attach(struct trace *t, struct crawl *c)
{
    static const struct crawl_hook hook = { .row = trace_row };
    static const struct crawl_hook none;
    crawl_hook(c, CRAWL_HOOK_TRACE, t ? &hook : &none, t);
}

/* mode_procs.c: processes, each running coroutines (the primer's advice for
 * using every core: processes for the cores, coroutines for the waiting).
 *
 * The process that runs the crawl stays its one coordinator: it keeps the
 * frontier, the seen set, robots.txt and the per-host rules (the core's, as
 * in every model), writes every row, and hands each job to one of --procs
 * worker processes over a socket pair. A worker is a fork of it running the
 * model its registry entry names (.worker) on a crawl of its own whose
 * RELAY hook sends every job back (procs_worker.c): it
 * fetches and parses what it is given and sends each result back whole,
 * with the links the page gave that it has not sent before (the coordinator
 * would decide them as it did: procs_worker.c).
 *
 * Work is shared out by host: the first time a host (its name and port) is
 * seen it goes to the worker that owns the fewest hosts, and its jobs go
 * there, so that a host's connections, TLS sessions and DNS answers live in
 * one process. A plain hash of the host modulo the workers would be simpler,
 * but with two workers and two hosts it puts both on one worker half the
 * time. The per-host rules (robots.txt, --per-host, --delay, Crawl-delay,
 * the pauses a 429 asks for, --auto-throttle) and the seen
 * set are the coordinator's, as in every model: they hold across workers
 * whichever worker fetches, with no lock spanning processes. That frees the
 * split from serving them, so a host whose owner has two jobs more than the
 * least busy worker overflows to that worker: a crawl of one site uses
 * every core too, where a strict split would leave it on one. 
 *
 * A worker that dies (killed, crashed) does not hang the run: the jobs it
 * had are given once to another worker, and fail with a row saying why when
 * that one dies too or none is left. Nor does one that lives but no longer
 * answers (stopped by SIGSTOP, frozen, never scheduled): every worker sends
 * a heartbeat (procs_worker.c), and one not heard from for --worker-timeout
 * seconds is killed and lost the same way; once the crawl is cancelled,
 * a second of silence is enough, so that SIGTERM and --deadline are obeyed
 * at once. A worker that cannot be forked leaves the crawl to those that
 * could; with none, every URL fails with a row saying so. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "crawl.h"
#include "hset.h"
#include "html.h"
#include "io.h"
#include "parse_pool.h"
#include "procs.h"
#include "strbuf.h"
#include "url.h"
#include "warc.h"
#include "wire.h"

/* The model each worker runs (the registry entry's worker), and this
 * model's own entry, which names it. */
extern const struct crawl_backend crawl_backend_coro;
extern const struct crawl_backend crawl_backend_procs;

/* How long workers have to hand back cancelled jobs before they are killed
 * (a worker hands them back within milliseconds; what a kill loses is the
 * tail of its WARC file, never a row: the coordinator writes those). */
#define CANCEL_GRACE 2.0

/* The default of --worker-timeout: a worker heard from not at all for this
 * long is given up. Its heartbeat comes every PROCS_HEARTBEAT (procs.h)
 * from a thread of its own, whatever its transfers are doing, so a slow
 * worker is heard from as often as a quick one; the bound is there for a
 * machine so loaded that a process goes unscheduled for seconds. */
#define SILENCE_DEFAULT 10.0

/* Once the crawl is cancelled, the silence after which a worker is killed:
 * four heartbeats missed. */
#define SILENCE_CANCELLED 1.0

/* The coordinator itself may not listen for a while (its output blocked,
 * the whole process group stopped by ^Z): a stretch between two looks in
 * which it was busy this long, or slept this long past the time it asked
 * to be woken at, does not count as the workers' silence. */
#define LOOK_GAP 0.5

/* ---- the coordinator ------------------------------------------------------ */

struct proc {
    pid_t pid;
    int fd;                 /* -1 once it is closed */
    int started;            /* it was forked */
    int ready;              /* it sent MSG_READY: it has its threads */
    int ended;              /* it sent MSG_END: a clean end */
    double heard;           /* when it last sent anything (clock_now) */
    int hosts;              /* hosts it owns */
    size_t in_flight;       /* jobs it has */
    int threads;
    struct strbuf in;
    struct strbuf out;      /* job frames not yet sent (flush) */
};

struct slot {
    struct crawl_job *job;  /* NULL: free (next free in `next`) */
    int proc;
    int reruns;             /* given to another worker after one died */
    size_t next;
};

struct procs {
    struct crawl *c;
    struct proc *p;
    int n, alive, ready;        /* workers; alive; alive and ready */
    struct slot *slots;
    size_t nslots, free_slot;   /* free list head; nslots: none */
    size_t in_flight;
    struct hset hosts;          /* host hash -> the worker that owns it */
    int wake[2];                /* the core's waker: jobs came, or a cancel */
    long rss_kb;                /* the peak resident sets of the workers reaped, summed */
    int start_rc;               /* why a worker could not be forked, or 0 */
    const char *start_what;     /* the call that failed: "fork", "socketpair" */
    double silence;             /* --worker-timeout: a worker silent this long is killed */
    double looked;              /* when the watchdog last looked */
    double woke;                /* when the last wait ended */
    double wake_at;             /* when it was to end at the latest; 0: no bound */
    double began;               /* when the run began (the workers told to start) */
    int output_failed;          /* a worker's WARC could not be written */
};

/* The core's waker: one byte wakes the coordinator's poll. */
static void procs_wake(void *data)
{
    struct procs *P = data;
    io_wake(P->wake);
}

/* Whether worker p takes jobs: alive, and it said it can (MSG_READY). */
static int usable(const struct proc *p)
{
    return p->fd >= 0 && p->ready;
}

/* Returns the worker that owns url's host, giving the host to the live
 * worker with the fewest hosts when it has none (or its owner died);
 * -1 when no worker is usable. */
static int owner(struct procs *P, const char *url)
{
    if (P->ready == 0)
        return -1;
    uint64_t h = url_host_hash(url);
    h = h ? h : 1;              /* hset's empty slot */
    /* The hash alone names a host: two hosts of one hash share a worker. */
    struct hset_slot *x = hset_slot(&P->hosts, h, NULL, NULL);
    if (x && x->h) {
        int o = (int)(intptr_t)x->item;
        if (usable(&P->p[o]))
            return o;
    }
    int best = -1;
    for (int i = 0; i < P->n; i++)
        if (usable(&P->p[i]) && (best < 0 || P->p[i].hosts < P->p[best].hosts ||
                                 (P->p[i].hosts == P->p[best].hosts &&
                                  P->p[i].in_flight < P->p[best].in_flight)))
            best = i;
    /* best is usable: P->ready > 0 */
    if (x && x->h) {
        x->item = (void *)(intptr_t)best;       /* its owner died */
    } else if (hset_add(&P->hosts, h, (void *)(intptr_t)best) != 0) {
        /* Short of memory, the host is not recorded: still one owner a
         * host, by its hash, while that worker lives. */
        int o = (int)(h % (uint64_t)P->n);
        return usable(&P->p[o]) ? o : best;
    }
    P->p[best].hosts++;
    return best;
}

/* Returns the worker for url: its host's owner, unless the owner has two
 * jobs more than the least busy worker, which then takes this one. */
static int pick(struct procs *P, const char *url)
{
    int i = owner(P, url);
    if (i < 0)
        return -1;
    int m = i;
    for (int k = 0; k < P->n; k++)
        if (usable(&P->p[k]) && P->p[k].in_flight < P->p[m].in_flight)
            m = k;
    return P->p[i].in_flight > P->p[m].in_flight + 1 ? m : i;
}

static size_t slot_new(struct procs *P, struct crawl_job *job)
{
    if (P->free_slot == (size_t)-1) {
        size_t n = P->nslots ? 2 * P->nslots : 64;
        struct slot *v = realloc(P->slots, n * sizeof *v);
        if (!v)
            return (size_t)-1;
        for (size_t i = P->nslots; i < n; i++) {
            v[i].job = NULL;
            v[i].next = i + 1 < n ? i + 1 : (size_t)-1;
        }
        P->slots = v;
        P->free_slot = P->nslots;
        P->nslots = n;
    }
    size_t id = P->free_slot;
    P->free_slot = P->slots[id].next;
    P->slots[id].job = job;
    P->slots[id].reruns = 0;
    P->slots[id].proc = -1;
    return id;
}

static void slot_free(struct procs *P, size_t id)
{
    P->slots[id].job = NULL;
    P->slots[id].next = P->free_slot;
    P->free_slot = id;
}

static void proc_lost(struct procs *P, int i, const char *why);

/* The error of a job no worker is left for. */
static const char *none_left(const struct procs *P)
{
    for (int i = 0; i < P->n; i++)
        if (P->p[i].started)
            return "no worker process left";
    return "no worker process could be started";
}

/* Queues the job in slot id for the worker that owns its host; flush
 * sends it. Returns 0, or -1 when no worker is alive or memory is short
 * (the slot is then still the caller's). */
static int dispatch(struct procs *P, size_t id)
{
    struct crawl_job *job = P->slots[id].job;
    int i = pick(P, job->url);
    if (i < 0)
        return -1;
    struct strbuf *b = &P->p[i].out;
    size_t at = wire_frame_begin(b, MSG_JOB);
    wire_put_u64(b, id);
    wire_put_u32(b, (uint32_t)job->kind);
    wire_put_u32(b, (uint32_t)job->depth);
    const char *scope = crawl_job_scope(job);
    wire_put_u64(b, scope ? hset_hash(scope, strlen(scope)) : 0);
    wire_put_u32(b, (uint32_t)job->pace_start);
    wire_put_str(b, job->url);
    wire_put_str(b, job->if_etag);
    wire_put_str(b, job->if_modified);
    if (wire_frame_end(b, at) != 0) {
        b->len = at;
        b->nomem = 0;
        return -1;
    }
    P->slots[id].proc = i;
    P->p[i].in_flight++;
    P->in_flight++;
    crawl_count_transfers(P->c, 1);
    return 0;
}

/* Sends every worker the jobs queued for it, one write a worker. A worker
 * whose socket is gone is lost (its jobs, these among them, go to others,
 * and are sent in the next round). */
static void flush(struct procs *P)
{
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; i < P->n; i++) {
            struct proc *p = &P->p[i];
            if (p->fd < 0 || p->out.len == 0)
                continue;
            int rc = wire_send_all(p->fd, &p->out);
            sb_reset(&p->out);
            if (rc != 0) {
                proc_lost(P, i, NULL);
                again = 1;
            }
        }
    }
}

/* Hands job (taken with crawl_take) to a worker, or fails it when there is
 * none. */
static void give(struct procs *P, struct crawl_job *job)
{
    size_t id = slot_new(P, job);
    if (id == (size_t)-1) {
        crawl_fail_nomem(P->c, job);
        return;
    }
    if (dispatch(P, id) != 0) {
        slot_free(P, id);
        crawl_fail(P->c, job, CRAWL_FAIL_OTHER, "%s", none_left(P));
        return;
    }
}

/* Fills the job of a result frame and hands it back. */
static void take_result(struct procs *P, int i, struct wire_rd *r)
{
    uint64_t id = wire_get_u64(r);
    if (r->bad || id >= P->nslots || !P->slots[id].job || P->slots[id].proc != i)
        return;
    struct crawl_job *j = P->slots[id].job;
    struct crawl_result *res = &j->res;
    j->unrun = wire_get_u32(r) != 0;
    procs_result_get(r, res, crawl_started(P->c));
    res->worker = i * 1000000 + res->worker;
    uint32_t nl = wire_get_u32(r);
    if (!r->bad && nl > 0 && nl <= r->n / 4 && (j->links = calloc(nl, sizeof *j->links))) {
        for (uint32_t k = 0; k < nl && !r->bad; k++) {
            char *l = wire_get_bytes(r, NULL);
            if (l)
                j->links[j->nlinks++] = l;
        }
    }
    free(j->body);
    j->body = wire_get_bytes(r, &j->body_len);
    uint64_t conns = wire_get_u64(r);
    if (r->bad && res->fail == CRAWL_FAIL_NONE)
        job_error_set(res, CRAWL_FAIL_OTHER, "out of memory");
    crawl_count_conns(P->c, (long)conns);
    slot_free(P, id);
    P->p[i].in_flight--;
    P->in_flight--;
    crawl_count_transfers(P->c, -1);
    crawl_done(P->c, j);
}

/* Reads what worker i sent and acts on every whole frame. */
static void proc_read(struct procs *P, int i)
{
    struct proc *p = &P->p[i];
    ssize_t got = wire_fill(p->fd, &p->in);
    if (got == 0 || (got < 0 && got != -EINTR && got != -EAGAIN)) {
        proc_lost(P, i, NULL);
        return;
    }
    if (got > 0)
        p->heard = clock_now();
    size_t at = 0;
    struct wire_rd r;
    char type;
    while (p->fd >= 0 && wire_frame_next(&p->in, &at, &r, &type)) {
        if (type == MSG_RESULT) {
            take_result(P, i, &r);
        } else if (type == MSG_STARTED) {
            /* A paced host's next start counts from here. */
            uint64_t id = wire_get_u64(&r);
            if (!r.bad && id < P->nslots && P->slots[id].job && P->slots[id].proc == i)
                crawl_job_started(P->c, P->slots[id].job);
        } else if (type == MSG_WARN) {
            uint64_t once = wire_get_u64(&r);
            char *msg = wire_get_bytes(&r, NULL);
            if (msg && !r.bad)
                crawl_warn_relayed(P->c, once, msg);
            free(msg);
        } else if (type == MSG_COOKIE) {
            char *line = wire_get_bytes(&r, NULL);
            if (line && crawl_add_cookie(P->c, line) != 0)
                crawl_warn_once(P->c, "--cookie-jar: out of memory: a cookie is not saved");
            free(line);
        } else if (type == MSG_READY) {
            if (!p->ready)
                P->ready++;
            p->ready = 1;
        } else if (type == MSG_ALIVE) {
            /* Only the time it came, above. */
        } else if (type == MSG_END) {
            p->threads = (int)wire_get_u32(&r);
            if (wire_get_u32(&r) && !r.bad)
                P->output_failed = 1;
            p->ended = 1;
        }
    }
    wire_frames_taken(&p->in, at);
}

/* Says in buf how process pid ended (it is reaped here), and adds its
 * peak resident set (ru_maxrss, KiB) to *rss_kb unless that is NULL. */
static void reap(pid_t pid, int ended, char *buf, size_t n, long *rss_kb)
{
    int st = 0;
    struct rusage ru;
    if (!ended)
        kill(pid, SIGKILL);     /* dying anyway: its socket is closed */
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    if (rss_kb)
        *rss_kb += ru.ru_maxrss;
    if (WIFSIGNALED(st))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st) && !ended)
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(buf, n, "ended");
}

/* Worker i's socket closed (it ended or died), or, with why, it is given
 * up (why says what it did: it is killed). Its jobs still out are given
 * once to another worker, or failed with the reason. */
static void proc_lost(struct procs *P, int i, const char *why)
{
    struct proc *p = &P->p[i];
    if (p->fd < 0)
        return;
    close(p->fd);
    p->fd = -1;
    P->alive--;
    if (p->ready)
        P->ready--;
    p->ready = 0;
    char how[96];
    reap(p->pid, p->ended && !why, how, sizeof how, &P->rss_kb);
    if (why)
        snprintf(how, sizeof how, "%s", why);
    p->pid = 0;
    int cancelled = crawl_is_cancelled(P->c);
    if (why && !cancelled)
        crawl_warn(P->c, "worker process %d %s: killed, with %zu URLs in flight: %s", i, how,
                   p->in_flight, p->in_flight == 0 ? "none lost"
                   : P->alive ? "they go to another worker" : "no worker is left");
    if (p->in_flight == 0)
        return;
    if (!cancelled && !why)
        crawl_warn(P->c, "worker process %d %s with %zu URLs in flight: %s", i, how,
                   p->in_flight, P->alive ? "they go to another worker" : "no worker is left");
    for (size_t id = 0; id < P->nslots; id++) {
        struct slot *s = &P->slots[id];
        if (!s->job || s->proc != i)
            continue;
        struct crawl_job *job = s->job;
        p->in_flight--;
        P->in_flight--;
        crawl_count_transfers(P->c, -1);
        s->proc = -1;
        if (!cancelled && s->reruns == 0) {
            s->reruns = 1;
            if (dispatch(P, id) == 0)
                continue;
        }
        slot_free(P, id);
        if (cancelled)
            crawl_fail(P->c, job, CRAWL_FAIL_CANCELLED, "%s", crawl_cancel_text(P->c));
        else
            crawl_fail(P->c, job, CRAWL_FAIL_OTHER, "worker process %d %s while fetching it",
                       i, how);
    }
}

/* The watchdog: gives up every worker not heard from for the bound (a
 * second once the crawl is cancelled). Time the coordinator spent not
 * listening is not held against them: a stretch since the last look in
 * which it was busy for LOOK_GAP (its output blocked), or woke LOOK_GAP
 * past the time it asked for (the process group stopped). Returns when it
 * next has something to decide, or 0 when no worker is left to watch. */
static double watch(struct procs *P, int cancelled)
{
    double now = clock_now();
    if (now - P->woke > LOOK_GAP || (P->wake_at > 0 && P->woke - P->wake_at > LOOK_GAP))
        for (int i = 0; i < P->n; i++)
            P->p[i].heard += now - P->looked;
    P->looked = P->woke = now;
    P->wake_at = 0;
    double bound = cancelled && P->silence > SILENCE_CANCELLED ? SILENCE_CANCELLED : P->silence;
    double next = 0;
    for (int i = 0; i < P->n; i++) {
        struct proc *p = &P->p[i];
        if (p->fd < 0 || p->ended)
            continue;
        char why[96];
        if (now - p->heard > bound)
            snprintf(why, sizeof why, "stopped answering (not heard from for %.1f s)",
                     now - p->heard);
        else if (!p->ready && now - P->began > P->silence)
            snprintf(why, sizeof why, "was not ready after %.1f s", now - P->began);
        else {
            double at = p->heard + bound;
            if (!p->ready && P->began + P->silence < at)
                at = P->began + P->silence;
            if (next == 0 || at < next)
                next = at;
            continue;
        }
        proc_lost(P, i, why);
    }
    return next;
}

/* Forks worker i. Returns 0 or -errno, with the call that failed in
 * P->start_what. */
static int proc_start(struct procs *P, int i)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        P->start_what = "socketpair";
        return -errno;
    }
    pid_t coordinator = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        P->start_what = "fork";
        return -e;
    }
    if (pid == 0) {
        close(sv[0]);
        for (int k = 0; k < i; k++)
            if (P->p[k].fd >= 0)
                close(P->p[k].fd);
        io_wake_close(P->wake);
        procs_worker_main(P->c, crawl_backend_procs.worker, i, sv[1], coordinator);
    }
    close(sv[1]);
    P->p[i].pid = pid;
    P->p[i].fd = sv[0];
    P->p[i].started = 1;
    P->alive++;
    return 0;
}

/* Tells every worker the crawl is cancelled, and that no job follows. */
static void cancel_all(struct procs *P)
{
    for (int i = 0; i < P->n; i++)
        if (P->p[i].fd >= 0) {
            struct strbuf *b = &P->p[i].out;
            size_t at = wire_frame_begin(b, MSG_CANCEL);
            wire_put_u32(b, (uint32_t)crawl_is_cancelled(P->c));
            wire_frame_end(b, at);
        }
    flush(P);
    for (int i = 0; i < P->n; i++)
        if (P->p[i].fd >= 0)
            shutdown(P->p[i].fd, SHUT_WR);
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* Returns the tasks (threads) that processes of real user uid have now,
 * read from /proc, or -1. */
static long uid_tasks(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[2048];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (got <= 0)
            continue;
        buf[got] = '\0';
        const char *u = strstr(buf, "\nUid:"), *t = strstr(buf, "\nThreads:");
        if (u && t && strtoul(u + 6, NULL, 10) == (unsigned long)uid)
            n += strtol(t + 9, NULL, 10);
    }
    closedir(d);
    return n;
}

/* Returns how many of n workers fit under the process limit (ulimit -u,
 * which counts threads: a worker is a process with a reader thread and a
 * heartbeat thread, and its parse threads if pages are parsed), with room left for the
 * coordinator's own threads (signals, output, progress) started after it
 * forks: a fork that succeeds takes a place one of them then misses, and
 * the crawl would end without a row. */
static int procs_fit(const struct crawl_opts *o, int n)
{
    struct rlimit rl;
    if (geteuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return n;       /* root is not held to it */
    int parses = o->rules && (o->depth > 0 || html_rules_nextract(o->rules) > 0);
    int parse = !parses ? 0 : o->parse_threads >= 0 ? o->parse_threads
                                                    : parse_pool_default(n) / n;
    long each = 3 + parse, want = n * each + 3;
    struct sysinfo si;
    /* Every task of the system is fewer than the limit leaves: room. */
    if (sysinfo(&si) == 0 && (rlim_t)si.procs + (rlim_t)want < rl.rlim_cur)
        return n;
    long used = uid_tasks(getuid());
    if (used < 0)
        return n;
    long room = (long)rl.rlim_cur - used - 3;
    long fit = room > 0 ? room / each : 0;
    return fit < n ? (int)fit : n;
}

static void procs_free(struct procs *P)
{
    for (int i = 0; i < P->n; i++) {
        if (P->p[i].fd >= 0) {
            close(P->p[i].fd);
            char how[96];
            reap(P->p[i].pid, P->p[i].ended, how, sizeof how, &P->rss_kb);
        }
        sb_free(&P->p[i].in);
        sb_free(&P->p[i].out);
    }
    free(P->p);
    free(P->slots);
    hset_free(&P->hosts);
    io_wake_close(P->wake);
}

static void procs_done(void *data)
{
    procs_free(data);
    free(data);
}

/* Forks the workers, while the process has one thread (crawl_prepare):
 * they wait for MSG_START, which procs_run sends. */
static int procs_prepare(struct crawl *c)
{
    const struct crawl_opts *o = crawl_options(c);
    struct procs *P = calloc(1, sizeof *P);
    if (!P)
        return CRAWL_ENOMEM;
    P->c = c;
    P->n = o->procs > 0 ? o->procs : online_cpus();
    P->free_slot = (size_t)-1;
    int e = io_wake_pipe(P->wake);
    if (e != 0) {
        procs_done(P);
        return e;
    }
    if (!(P->p = calloc((size_t)P->n, sizeof *P->p))) {
        procs_done(P);
        return CRAWL_ENOMEM;
    }
    for (int i = 0; i < P->n; i++)
        P->p[i].fd = -1;
    int fit = procs_fit(o, P->n);
    for (int i = 0; i < fit; i++)
        if ((P->start_rc = proc_start(P, i)) != 0)
            break;
    if (fit < P->n && P->start_rc == 0) {
        P->start_rc = -EAGAIN;
        P->start_what = "the process limit (ulimit -u) leaves room for no more: fork";
    }
    /* Out of processes all the same (another process of the user took
     * the room): the coordinator still starts threads of its own after
     * this, and its workers theirs. One worker fewer leaves room for them;
     * a worker that cannot start its threads gives its jobs back anyway. */
    if (fit == P->n && P->start_rc == -EAGAIN && P->alive > 1) {
        struct proc *p = &P->p[P->alive - 1];
        close(p->fd);
        p->fd = -1;
        char how[96];
        reap(p->pid, 0, how, sizeof how, NULL);     /* it never ran */
        p->pid = 0;
        P->alive--;
    }
    crawl_set_model_data(c, P, procs_done);
    return 0;
}

/* The run begins: what could not be started is said, the watchdog set,
 * and every worker told to start (with the limit and reuse). */
static void run_begin(struct procs *P, int limit)
{
    struct crawl *c = P->c;
    int rc = P->start_rc;
    /* With no worker, the loop fails every job with a row. */
    if (rc != 0 && P->alive == 0)
        crawl_warn_once(c, "no worker process could be started: %s: %s; every URL fails",
                        P->start_what, crawl_strerror(rc));
    else if (rc != 0)
        crawl_warn_once(c, "only %d of %d worker processes could be started: %s: %s", P->alive,
                        P->n, P->start_what, crawl_strerror(rc));
    P->silence = crawl_options(c)->worker_timeout > 0 ? crawl_options(c)->worker_timeout
                                                      : SILENCE_DEFAULT;
    P->looked = P->woke = P->began = clock_now();
    for (int i = 0; i < P->n; i++)
        P->p[i].heard = P->looked;
    for (int i = 0; i < P->n; i++)
        if (P->p[i].fd >= 0) {
            struct strbuf *b = &P->p[i].out;
            size_t at = wire_frame_begin(b, MSG_START);
            wire_put_u32(b, (uint32_t)limit);
            wire_put_u32(b, (uint32_t)crawl_reuse(c));
            wire_put_u32(b, (uint32_t)crawl_links_whole(c));
            wire_frame_end(b, at);
        }
}

/* Nothing more to give: the workers end once their jobs are back (at
 * once, when cancelled). Returns when the cancel was told, or 0. */
static double tell_end(struct procs *P)
{
    if (crawl_is_cancelled(P->c)) {
        cancel_all(P);
        return clock_now();
    }
    for (int i = 0; i < P->n; i++)
        if (P->p[i].fd >= 0)
            shutdown(P->p[i].fd, SHUT_WR);
    return 0;
}

/* The earlier of two moments, either of which may be 0 (none). */
static double earlier(double a, double b)
{
    return a > 0 && (b <= 0 || a < b) ? a : b;
}

/* Waits for a worker, the core's waker, or the moment due (a job comes
 * due by itself, the watchdog or the deadline has something to decide;
 * 0: none), and reads what came. Nothing else wakes it: the workers'
 * memory is measured as they are reaped. pfd has room for every worker
 * and the waker. */
static void wait_workers(struct procs *P, struct pollfd *pfd, double due)
{
    int np = 0;
    pfd[np++] = (struct pollfd){ .fd = P->wake[0], .events = POLLIN };
    int map[256 + 1];
    for (int i = 0; i < P->n && np <= 256; i++)
        if (P->p[i].fd >= 0) {
            map[np] = i;
            pfd[np++] = (struct pollfd){ .fd = P->p[i].fd, .events = POLLIN };
        }
    int timeout = -1;
    if (due > 0) {
        double in = (due - clock_now()) * 1000;
        timeout = in <= 0 ? 0 : in < INT_MAX / 2 ? (int)in + 1 : INT_MAX / 2;
    }
    P->wake_at = due;
    int ready = poll(pfd, (nfds_t)np, timeout);
    P->woke = clock_now();
    if (ready <= 0)
        return;
    if (pfd[0].revents)
        io_wake_drain(P->wake);
    for (int k = 1; k < np; k++)
        if (pfd[k].revents)
            proc_read(P, map[k]);
}

/* The run ends: jobs never handed back (no worker left to run them) are
 * failed, the workers reaped, the figures set, and their indexes merged
 * into one for the crawl, where --cdx said, as in every model. The
 * memory figure is the sum of each process's own peak resident set: the
 * coordinator's (getrusage) and each worker's (wait4, as it was reaped).
 * Returns rc, or the output's error. */
static int run_end(struct procs *P, int rc)
{
    struct crawl *c = P->c;
    for (size_t id = 0; id < P->nslots; id++)
        if (P->slots[id].job) {
            struct crawl_job *job = P->slots[id].job;
            slot_free(P, id);
            crawl_fail(c, job, CRAWL_FAIL_OTHER, "%s", none_left(P));
        }
    int threads = 1;
    for (int i = 0; i < P->n; i++) {
        threads += P->p[i].threads;
        if (P->p[i].fd >= 0) {
            char how[96];
            close(P->p[i].fd);
            P->p[i].fd = -1;
            reap(P->p[i].pid, P->p[i].ended, how, sizeof how, &P->rss_kb);
        }
    }
    crawl_set_threads(c, threads);
    struct rusage self;
    long own = getrusage(RUSAGE_SELF, &self) == 0 ? self.ru_maxrss : 0;
    crawl_set_rss_peak(c, own + P->rss_kb);
    if (rc == 0 && P->output_failed)
        rc = CRAWL_EOUTPUT;         /* the worker's warning said why */
    int nworkers = P->n;
    procs_free(P);
    const struct crawl_opts *o = crawl_options(c);
    if (o->warc && o->cdx) {
        char failed[4200] = "";
        int mrc = warc_cdx_merge(o->cdx, nworkers, failed, sizeof failed);
        if (mrc != 0) {
            crawl_warn(c, "%s: %s (the workers' indexes are left beside it, one a worker)",
                       failed, strerror(-mrc));
            if (rc == 0)
                rc = CRAWL_EOUTPUT;
        }
    }
    return rc;
}

static int procs_run(struct crawl *c)
{
    struct procs *pp = crawl_take_model_data(c);
    if (!pp) {
        int prc = procs_prepare(c);
        if (prc != 0)
            return prc;
        pp = crawl_take_model_data(c);
    }
    struct procs P = *pp;
    free(pp);
    P.c = c;
    int limit = crawl_limit(c), rc = 0;
    run_begin(&P, limit);
    crawl_set_waker(c, procs_wake, &P);
    struct pollfd *pfd = calloc((size_t)P.n + 1, sizeof *pfd);
    if (!pfd) {
        crawl_cancel(c, CRAWL_CANCEL_OUTPUT);
        rc = CRAWL_ENOMEM;
    }
    int over = 0, told = 0;
    double cancel_at = 0;
    const struct crawl_opts *o = crawl_options(c);
    double deadline_at = o->deadline > 0 ? crawl_started(c) + o->deadline : 0;
    while (pfd) {
        double due = 0;
        /* Jobs wait until the workers are ready (their threads started:
         * one that cannot start them ends, MSG_READY otherwise comes in
         * milliseconds), so that hosts are shared among them all. */
        while (!over && !told && P.ready == P.alive &&
               (limit == 0 || P.in_flight < (size_t)limit)) {
            struct crawl_job *job;
            int n = crawl_take(c, &job, &due);
            if (n == 1) {
                give(&P, job);
                continue;
            }
            if (n == 0)
                over = 1;
            break;
        }
        flush(&P);
        if (!told && (over || crawl_is_cancelled(c))) {
            cancel_at = tell_end(&P);
            told = 1;
        }
        if (P.alive == 0) {
            crawl_abandon(c, none_left(&P));
            break;
        }
        if (cancel_at > 0 && clock_now() - cancel_at > CANCEL_GRACE)
            for (int i = 0; i < P.n; i++)
                if (P.p[i].fd >= 0)
                    proc_lost(&P, i, "did not hand its URLs back after the cancel");
        double look = watch(&P, cancel_at > 0);
        /* The deadline too, which a model at its limit takes no job to
         * learn of. */
        if (!told)
            look = earlier(look, deadline_at);
        else if (cancel_at > 0)
            look = earlier(look, cancel_at + CANCEL_GRACE);
        if (P.alive > 0)        /* else the jobs are failed above, next time round */
            wait_workers(&P, pfd, earlier(due, look));
    }
    free(pfd);
    crawl_set_waker(c, NULL, NULL);
    return run_end(&P, rc);
}

const struct crawl_backend crawl_backend_procs = {
    .name = "procs",
    .summary = "worker processes (--procs), each running the coro model, hosts shared out",
    .manual = "Worker processes (--procs), each running the coro model with one loop. The "
              "process started keeps the frontier, robots.txt and the per-host rules and "
              "writes every row; a host goes to the worker that owns the fewest hosts the "
              "first time it is seen, and its jobs follow it. The jobs of a worker that "
              "dies are given once to another worker.",
    .default_concurrency = 0,
    .processes = 1,
    .fds_per_transfer = 1,      /* a worker's socket; the workers have limits of their own */
    /* Its own, and those its workers' coroutines and parse threads read
     * (each has one loop: not --loops). */
    .options = CRAWL_MODEL_PROCS | CRAWL_MODEL_STACK | CRAWL_MODEL_PARSE_THREADS,
    .worker = &crawl_backend_coro,
    .run = procs_run,
    .prepare = procs_prepare,
};

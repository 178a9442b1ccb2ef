/* crawl: the command line. Turns flags into options, reads the URL lists,
 * runs one model (or compares several) and prints the result. All crawler
 * logic lives in lib/. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "crawl/cli.h"
#include "crawl.h"
#include "fetch.h"
#include "html.h"
#include "linkfile.h"
#include "persist.h"
#include "revisit.h"
#include "hooks.h"
#include "progress.h"
#include "report.h"
#include "retry.h"
#include "robots.h"
#include "stage.h"
#include "state.h"
#include "trace.h"
#include "urllist.h"
#include "validators.h"


/* Rows written are flushed at least this often, so that a run that is
 * killed keeps what was final a moment before. */
#define FLUSH_MS 50

/* Arms (seconds > 0) or disarms (0) the --deadline timer: its SIGALRM goes
 * to the signal thread (signals.c). The core also keeps the deadline on
 * its own clock. */
static void deadline_set(double seconds)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    if (seconds > 0 && it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Whether standard output was closed when the program started (errno's
 * value then), before hold_std_fds filled the gap. */
static int stdout_closed;

/* Opens /dev/null on whichever of descriptors 0, 1 and 2 is closed, so
 * that no descriptor of the run (a worker's socket, a pipe) takes the
 * place of standard output and gets its rows. Notes a closed standard
 * output first: writing the rows there is an error (open_output). */
static void hold_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFL) >= 0)
            continue;
        if (fd == STDOUT_FILENO)
            stdout_closed = errno;
        int n = open("/dev/null", O_RDWR);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

/* How often a FIFO with no reader yet is tried again (open_wait). */
#define FIFO_RETRY_MS 10

/* open(2) of a file to write, but a FIFO that has no reader yet is waited
 * for in a way a signal ends: a blocking open(2) would sleep in the kernel
 * until a reader came, deaf to SIGINT and SIGTERM, which every thread but
 * the signal thread blocks (signals.c), so that no EINTR comes either. A
 * FIFO is opened O_NONBLOCK, which fails with ENXIO while nobody reads
 * (fifo(7)), every FIFO_RETRY_MS until a reader comes or a signal is
 * caught; then the process exits quietly, with 130 after SIGINT and
 * 128 + N after signal N, as a crawl it interrupted would. Returns the
 * descriptor (blocking again) or -1 with errno set. */
static int open_wait(const char *path, int flags, mode_t mode)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
        return open(path, flags, mode);
    for (;;) {
        int fd = open(path, flags | O_NONBLOCK, mode);
        if (fd >= 0) {
            int fl = fcntl(fd, F_GETFL);
            if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
                int e = errno;
                close(fd);
                errno = e;
                return -1;
            }
            return fd;
        }
        if (errno != ENXIO)
            return -1;
        int sig = signals_caught();
        if (sig)
            exit(sig == SIGINT ? 130 : 128 + sig);
        poll(NULL, 0, FIFO_RETRY_MS);
    }
}

/* Opens the output: -o FILE, or standard output, which must be open.
 * Exits 2 when the file cannot be made, 23 when standard output is closed;
 * interrupted while FILE, a FIFO, waits for its reader, 130 or 143. */
static int open_output(const struct cli *cli)
{
    if (!cli->output) {
        if (stdout_closed) {
            fprintf(stderr, "crawl: writing output: %s\n", strerror(stdout_closed));
            exit(EXIT_OUTPUT);
        }
        return STDOUT_FILENO;
    }
    int fd = open_wait(cli->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        fprintf(stderr, "crawl: %s: %s\n", cli->output, strerror(errno));
        exit(EXIT_USAGE);
    }
    return fd;
}

static void warn_stderr(const char *msg, uint64_t once, void *data)
{
    fprintf(stderr, "crawl: %s\n", msg);
}

/* sink_error_fn: the output is gone; fetching on would be for nobody. */
static void output_failed(int err, void *data)
{
    crawl_cancel(data, CRAWL_CANCEL_OUTPUT);
}

/* The exit status of a run a signal stopped (130 for SIGINT, else 128 and
 * the signal), or 0 when none did. */
static int signal_status(void)
{
    int sig = signals_caught();
    return sig == SIGINT ? 130 : sig ? 128 + sig : 0;
}

/* The exit status of a crawl whose frontier's home was lost (crawl_frontier_lost):
 * unreachable, or lost data. */
static int lost_status(struct crawl *c)
{
    return crawl_frontier_lost(c) == CRAWL_ESTORE ? EXIT_STORE : EXIT_FRONTIER;
}

/* The exit status for an error err (-errno) writing what (output, trace),
 * after saying so. */
static int write_status(int err, const char *what)
{
    if (err == -EPIPE)
        return EXIT_PIPE;
    fprintf(stderr, "crawl: writing %s: %s\n", what, strerror(-err));
    return EXIT_OUTPUT;
}

static int output_status(int err)
{
    return write_status(err, "output");
}

/* Opens --trace FILE and writes its head: the models' parts follow, each
 * written by the process that runs the model (with --mode=all, a child of
 * this one, one after another on this descriptor), then trace_close's
 * tail. Exits 2 when the file cannot be made, 23 when it cannot be written;
 * interrupted while FILE, a FIFO, waits for its reader, 130 or 143. */
static void trace_open(struct cli *cli)
{
    cli->trace_fd = -1;
    if (!cli->trace)
        return;
    cli->trace_fd = open_wait(cli->trace, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (cli->trace_fd < 0) {
        fprintf(stderr, "crawl: %s: %s\n", cli->trace, strerror(errno));
        exit(EXIT_USAGE);
    }
    int rc = trace_head(cli->trace_fd);
    if (rc < 0) {
        fprintf(stderr, "crawl: writing trace: %s\n", strerror(-rc));
        exit(EXIT_OUTPUT);
    }
}

/* Ends the trace file; returns status, or 23 when it could not be written. */
static int trace_close(struct cli *cli, int status)
{
    if (cli->trace_fd < 0)
        return status;
    int rc = status == EXIT_OUTPUT ? 0 : trace_tail(cli->trace_fd);
    if (close(cli->trace_fd) != 0 && rc == 0)
        rc = -errno;
    return rc < 0 && status != EXIT_OUTPUT ? write_status(rc, "trace") : status;
}

/* Opens --links-out FILE (into *fd) and attaches its writer to c; NULL
 * without --links-out. Exits 2 when the file cannot be made, as -o;
 * interrupted while FILE, a FIFO, waits for its reader, 130 or 143. */
static struct linkfile *links_open(const struct cli *cli, struct crawl *c, int *fd)
{
    struct linkfile *l = NULL;
    *fd = -1;
    if (!cli->links_out)
        return NULL;
    *fd = open_wait(cli->links_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (*fd < 0) {
        fprintf(stderr, "crawl: %s: %s\n", cli->links_out, strerror(errno));
        exit(EXIT_USAGE);
    }
    int rc = linkfile_new(&l, *fd, FLUSH_MS, output_failed, c);
    if (rc < 0) {
        fprintf(stderr, "crawl: --links-out %s: %s\n", cli->links_out, strerror(-rc));
        exit(EXIT_FAILED);
    }
    linkfile_attach(l, c);
    return l;
}

/* Ends --links-out's file: returns 0, or -errno when it could not be
 * written (all of it, or closed). */
static int links_close(struct crawl *c, struct linkfile *l, int fd)
{
    if (!l)
        return 0;
    linkfile_attach(NULL, c);
    int rc = linkfile_free(l);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* Whether to draw the progress line. */
static int want_progress(const struct cli *cli)
{
    return cli->progress == 1 || (cli->progress == -1 && isatty(2));
}

/* Runs the loaded crawl c through b, publishing its counters in live (the
 * progress line's, drawn here when draw is set, else by whoever shares
 * live), and writes its report to fd as it goes. Returns the exit status. */
static int run_model(struct cli *cli, struct crawl *c, const struct crawl_backend *b,
                     int fd, enum crawl_format fmt, int quiet, struct crawl_live *live,
                     int draw)
{
    struct progress *prog = NULL;
    struct report *rep;

    /* Done in main unless this run was not foreseen there. */
    crawl_prepare(c, b);

    unsigned cols = (cli->rules ? REPORT_LINKS : 0) | (cli->nextract ? REPORT_EXTRACT : 0);
    int rrc = cli->state ? report_new_marked(&rep, fd, fmt, cols, STDERR_FILENO, FLUSH_MS,
                                             output_failed, c, persist_offset(c),
                                             persist_commit, c)
                         : report_new(&rep, fd, fmt, cli->order, quiet, cols, STDERR_FILENO,
                                      FLUSH_MS, output_failed, c);
    if (rrc < 0) {
        fprintf(stderr, "crawl: %s\n", crawl_strerror(rrc));
        return rrc == -EPIPE || rrc == -EBADF || rrc == -ENOSPC || rrc == -EIO ?
               output_status(rrc) : EXIT_FAILED;
    }
    struct trace *trace = NULL;
    int trc = 0;
    if (cli->trace_fd >= 0 &&
        (trc = trace_new(&trace, cli->trace_fd, b->name, cli->trace_pid, b->processes,
                         0, output_failed, c)) != 0) {
        report_free(rep);
        return write_status(trc, "trace");
    }
    int lfd;
    struct linkfile *links = links_open(cli, c, &lfd);
    crawl_on_warn(c, warn_stderr, NULL);
    report_attach(rep, c);
    trace_attach(trace, c);
    signals_watch(c, rep);
    crawl_set_live(c, live);
    if (draw && live)
        prog = progress_start(live, STDERR_FILENO);
    if (cli->opts.deadline > 0)
        deadline_set(cli->opts.deadline);
    int rc = crawl_run(c, b);
    if (cli->opts.deadline > 0)
        deadline_set(0);
    progress_stop(prog);
    crawl_set_live(c, NULL);
    signals_watch(NULL, rep);
    /* A WARC or a cookie jar that could not be written (CRAWL_EOUTPUT) was
     * named by its warning already, with the reason. */
    if (rc < 0 && rc != CRAWL_EOUTPUT)
        fprintf(stderr, "crawl: %s: %s\n", b->name, crawl_strerror(rc));
    int wrc = report_end(rep, c);
    signals_watch(NULL, NULL);
    report_free(rep);
    report_attach(NULL, c);
    trace_attach(NULL, c);
    trc = trace_free(trace);
    int lrc = links_close(c, links, lfd);
    /* A lost store (a --frontier server gone, a --state file on a full
     * disk) fails the commits, not the writes: the caller says so. */
    if (wrc < 0 && crawl_frontier_lost(c))
        return lost_status(c);
    if (wrc < 0)
        return output_status(wrc);
    if (trc < 0)
        return write_status(trc, "trace");
    if (lrc < 0)
        return write_status(lrc, cli->links_out);
    if (signal_status())
        return signal_status();
    if (crawl_input_error(c))
        return EXIT_USAGE;
    struct crawl_summary sum;
    crawl_get_summary(c, &sum);
    if (rc == CRAWL_EOUTPUT)
        return EXIT_OUTPUT;         /* the WARC or the cookie jar, whose warning said why */
    return sum.failed || rc < 0 ? EXIT_FAILED : 0;
}

/* validators_open's warn: a line of --validators FILE that is left out. */
static void validators_warn(const char *msg, void *data)
{
    fprintf(stderr, "crawl: --validators %s\n", msg);
}

/* --validators and --if-modified-since: the table of the list's
 * validators, its hook attached to c. Returns it (NULL: neither given), or
 * exits 2 when the file cannot be read. */
static struct validators *validators_begin(const struct cli *cli, struct crawl *c)
{
    char why[256];
    struct validators *v;
    const char *since = cli->if_modified_since[0] ? cli->if_modified_since : NULL;
    if (!cli->validators && !since)
        return NULL;
    if (validators_open(&v, cli->validators, since, validators_warn, NULL, why,
                        sizeof why) != 0) {
        fprintf(stderr, "crawl: --validators %s: %s\n", cli->validators, why);
        exit(EXIT_USAGE);
    }
    crawl_hook(c, CRAWL_HOOK_VALIDATORS, validators_hook(), v);
    return v;
}

/* Writes --validators FILE after the run and frees v; returns status, or
 * 23 when it could not be written. */
static int validators_end(const struct cli *cli, struct validators *v, int status)
{
    char why[256];
    if (v && validators_write(v, why, sizeof why) != 0) {
        fprintf(stderr, "crawl: --validators %s: %s\n", cli->validators, why);
        if (status != EXIT_OUTPUT && status != EXIT_PIPE)
            status = EXIT_OUTPUT;
    }
    validators_free(v);
    return status;
}

static int run_one(struct cli *cli, struct crawl *c)
{
    static struct crawl_live live;
    int fd = open_output(cli);
    cli->trace_pid = TRACE_PID_STEP;
    int draw = want_progress(cli);
    int status = run_model(cli, c, crawl_backend_find(cli->mode), fd, cli->format,
                           cli->quiet, draw ? &live : NULL, draw);
    if (fd != STDOUT_FILENO && close(fd) != 0 && status != EXIT_OUTPUT)
        status = output_status(-errno);
    return status;
}

/* The options that make a --state crawl what it is, as "name=value" lines:
 * a resumed run must give the same. The model, concurrency and timeouts
 * may change from run to run. */
static void state_options(const struct cli *cli, char *buf, size_t n)
{
    const struct crawl_opts *o = &cli->opts;
    size_t k = 0;
    #define ADD(...) (k += (size_t)snprintf(buf + k, k < n ? n - k : 0, __VA_ARGS__))
    ADD("format=%s\n", cli->format == CRAWL_FMT_CSV ? "csv" : "jsonl");
    ADD("depth=%d\nmax-pages=%ld\nspan-hosts=%d\n", o->depth, o->max_pages, o->span_hosts);
    ADD("includes=%zu\n", o->ninclude);
    for (size_t i = 0; i < o->ninclude; i++)
        ADD("include.%zu=%s\n", i, cli->include_src[i]);
    ADD("excludes=%zu\n", o->nexclude);
    for (size_t i = 0; i < o->nexclude; i++)
        ADD("exclude.%zu=%s\n", i, cli->exclude_src[i]);
    /* The default rule spelled out is the default: the crawl is the same. */
    const char *follow = cli->follow && strcmp(cli->follow, HTML_DEFAULT_FOLLOW) != 0
                         ? cli->follow : "";
    ADD("follow=%s\nrobots=%d\nrobots-agent=%s\n", follow, o->robots,
        o->robots_agent ? o->robots_agent : "");
    ADD("extracts=%d\n", cli->nextract);
    for (int i = 0; i < cli->nextract; i++)
        ADD("extract.%d=%s\n", i, cli->extract[i]);
    /* The seen set's key: another would fetch again what was fetched. */
    ADD("canonical=%d\nstrip-queries=%zu\n", o->canonical, o->nstrip_query);
    for (size_t i = 0; i < o->nstrip_query; i++)
        ADD("strip-query.%zu=%s\n", i, cli->strip_src[i]);
    #undef ADD
    if (k >= n)
        buf[n - 1] = '\0';
}

/* Opens -o FILE for a --state crawl (fd: a --frontier worker's, opened
 * already; -1: open it): cut back to the bytes the store says hold the
 * rows of pages done. Exits 2 when the file cannot be made or holds less
 * than that (it is not this crawl's output). */
static int open_state_output(const struct cli *cli, uint64_t offset, int fd)
{
    struct stat st;
    if (fd < 0)
        fd = open(cli->output, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "crawl: %s: %s\n", cli->output, strerror(errno));
        exit(EXIT_USAGE);
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < offset) {
        fprintf(stderr, "crawl: %s: holds %lld bytes, but the crawl in %s wrote %llu there: "
                "not its output\n", cli->output, (long long)st.st_size, cli->state,
                (unsigned long long)offset);
        exit(EXIT_USAGE);
    }
    if ((S_ISREG(st.st_mode) && ftruncate(fd, (off_t)offset) != 0) ||
        (offset > 0 && lseek(fd, (off_t)offset, SEEK_SET) < 0)) {
        fprintf(stderr, "crawl: %s: %s\n", cli->output, strerror(errno));
        exit(EXIT_USAGE);
    }
    return fd;
}

/* A --frontier worker's output, opened (not written) before the crawl is
 * joined: its name in the server, this host and the file's own absolute
 * path (symbolic links resolved), which a worker started again with the
 * same continues; and what the file is (host:device:inode), so that a
 * second worker on it under another name (a hard link) is refused too. */
struct worker_out {
    int fd;
    int made;                   /* the file was not there: removed if refused */
    char path[PATH_MAX];
    char name[PATH_MAX + 300];
    char id[320];
};

/* Opens -o FILE for a worker, making it (empty) when it is not there, the
 * file a dangling symbolic link names included. Exits 2 when it cannot. */
static void worker_open(const struct cli *cli, struct worker_out *o)
{
    char host[256] = "localhost";
    struct stat st;
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    o->made = 0;
    o->fd = open(cli->output, O_WRONLY | O_CLOEXEC);
    if (o->fd < 0 && errno == ENOENT) {
        o->fd = open(cli->output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd < 0 && errno == EEXIST)   /* O_EXCL refuses any symbolic link */
            o->fd = open(cli->output, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        o->made = o->fd >= 0;
    }
    if (o->fd < 0 || fstat(o->fd, &st) != 0 || !realpath(cli->output, o->path)) {
        fprintf(stderr, "crawl: %s: %s\n", cli->output, strerror(errno));
        exit(EXIT_USAGE);
    }
    snprintf(o->name, sizeof o->name, "%s:%s", host, o->path);
    snprintf(o->id, sizeof o->id, "%s:%llu:%llu", host, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
}

/* A worker refused before it wrote a byte: its output as it was. */
static void worker_leave(struct worker_out *o)
{
    if (o->fd < 0)
        return;
    close(o->fd);
    if (o->made)
        unlink(o->path);
    o->fd = -1;
}

/* state_conf's warn: what in the server's settings puts the crawl at risk. */
static void frontier_warn(const char *msg, void *data)
{
    fprintf(stderr, "crawl: --frontier %s: warning: %s\n", (const char *)data, msg);
}

/* Opens the store of a --state or --frontier crawl and reads the lists
 * into it (or, for a worker that joins a shared crawl, checks them).
 * Returns the phase (>= 0), or an exit status (< 0, negated) after saying
 * why; the output of a worker refused is left as it was. */
static int state_begin(struct cli *cli, struct crawl *c, struct worker_out *o)
{
    char opts[8192], why[512];
    const char *flag = cli->frontier ? "--frontier" : "--state";
    state_options(cli, opts, sizeof opts);
    struct state_conf conf = { .lease = cli->lease > 0 ? cli->lease : 15,
                               .retry = cli->frontier_retry > 0 ? cli->frontier_retry : 30,
                               .max_pages = cli->opts.max_pages, .worker = o->name,
                               .whole_hosts = cli->opts.per_host > 0 || cli->opts.delay > 0 ||
                                              cli->opts.auto_throttle,
                               .output_id = o->id, .warn = frontier_warn,
                               .warn_data = (void *)cli->state };
    int phase = persist_open(c, cli->state, opts, cli->frontier ? &conf : NULL, why,
                                 sizeof why);
    /* Not this crawl's store, or not whole (ESTORE): nothing was written
     * to it, nor to the output. */
    if (phase == CRAWL_EFRONTIER || phase == CRAWL_ESTORE) {
        fprintf(stderr, "crawl: %s %s: %s\n", flag, cli->state, why);
        worker_leave(o);
        return -(signal_status() ? signal_status()
                 : phase == CRAWL_ESTORE ? EXIT_STORE : EXIT_FRONTIER);
    }
    if (phase >= 0) {
        int rc = persist_seed(c, why, sizeof why);
        if (rc < 0 && rc != CRAWL_ESTATE) {
            worker_leave(o);
            return -EXIT_USAGE;     /* the list's error is told already */
        }
        if (rc < 0)
            phase = rc;
    }
    if (phase < 0 && crawl_frontier_lost(c)) {
        fprintf(stderr, "crawl: %s %s: %s\n", flag, cli->state, why);
        worker_leave(o);
        return -(signal_status() ? signal_status() : lost_status(c));
    }
    if (phase < 0) {
        fprintf(stderr, "crawl: %s %s: %s; not %s it (give the same list and options, or "
                "another %s)\n", flag, cli->state, why, cli->frontier ? "joining" : "continuing",
                cli->frontier ? "NAME" : "state file");
        worker_leave(o);
        return -EXIT_USAGE;
    }
    return phase;
}

/* The end of a --state or --frontier run whose store failed mid-crawl:
 * says so, cuts a worker's output back to its last commit when the
 * server refused that one (the rows after it are of pages others hold
 * now), and returns the exit status. */
static int state_lost_end(struct cli *cli, struct crawl *c, int fd)
{
    const char *flag = cli->frontier ? "--frontier" : "--state";
    struct stat st;
    uint64_t at = 0;
    int cut = persist_cut(c, &at);
    if (cut && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size >= at && ftruncate(fd, (off_t)at) == 0)
        fprintf(stderr, "crawl: %s %s: %s; %s cut back to %llu bytes, %s; stopped\n", flag,
                cli->state, persist_error(c), cli->output, (unsigned long long)at,
                cut == 2 ? "the last commit the server holds" : "its last commit");
    else
        fprintf(stderr, "crawl: %s %s: %s; stopped (the rows of the pages done are in %s)\n",
                flag, cli->state, persist_error(c), cli->output);
    return signal_status() ? signal_status() : lost_status(c);
}

/* --recrawl of a finished crawl: starts its next pass, and says so.
 * Returns the phase to run it in, or an exit status (negated) after
 * saying why it could not. */
static int recrawl_begin(struct cli *cli, struct crawl *c, uint64_t offset)
{
    const char *flag = cli->frontier ? "--frontier" : "--state";
    char why[512];
    long n = 0;
    int rc = persist_recrawl(c, cli->recrawl_older, &n, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "crawl: %s %s: %s; stopped\n", flag, cli->state, why);
        return -(signal_status() ? signal_status() : lost_status(c));
    }
    if (rc == 0)
        return PERSIST_RESUMED;     /* another worker began the pass */
    fprintf(stderr, "crawl: %s %s: recrawl, pass %lld: %ld listed URL%s again, each page asked "
            "for with its validators (%s holds %llu bytes of the passes before)\n", flag,
            cli->state, (long long)persist_pass(c), n, n == 1 ? "" : "s", cli->output,
            (unsigned long long)offset);
    return PERSIST_NEW;
}

/* A --state or --frontier crawl: opens the store, reads the lists into it
 * (or, for a worker that joins a shared crawl, checks them), and runs what
 * is left, unless the crawl there is finished or is another one. Signals
 * cancel the crawl from the start, so that a store waiting for its server
 * gives up within a second. */
static int run_state(struct cli *cli, struct crawl *c)
{
    struct worker_out o = { .fd = -1 };
    const char *flag = cli->frontier ? "--frontier" : "--state";
    signals_watch(c, NULL);
    if (cli->frontier)
        worker_open(cli, &o);
    int phase = state_begin(cli, c, &o);
    if (phase < 0) {
        signals_watch(NULL, NULL);
        return -phase;
    }
    uint64_t offset = persist_offset(c);
    int fd = open_state_output(cli, offset, o.fd);
    if (phase == PERSIST_FINISHED && cli->recrawl)
        phase = recrawl_begin(cli, c, offset);
    if (phase < 0) {
        signals_watch(NULL, NULL);
        close(fd);
        return -phase;
    }
    if (phase == PERSIST_FINISHED) {
        /* A worker killed before the end wrote rows past its last commit,
         * whose pages others fetched again: they are cut off. */
        fprintf(stderr, "crawl: %s %s: this crawl is finished (%ld pages fetched); "
                "nothing to do (%s holds %llu bytes of its rows)\n", flag, cli->state,
                persist_fetched(c), cli->output, (unsigned long long)offset);
        signals_watch(NULL, NULL);
        return close(fd) == 0 ? 0 : output_status(-errno);
    }
    char pass[32] = "";
    if (persist_pass(c) > 1)
        snprintf(pass, sizeof pass, "pass %lld, ", (long long)persist_pass(c));
    if (phase == PERSIST_RESUMED && cli->frontier)
        fprintf(stderr, "crawl: --frontier %s: joining (%s%ld pages fetched so far; %s cut "
                "back to %llu bytes)\n", cli->state, pass, persist_fetched(c), cli->output,
                (unsigned long long)offset);
    else if (phase == PERSIST_RESUMED)
        fprintf(stderr, "crawl: --state %s: continuing (%s%ld pages fetched before; %s cut "
                "back to %llu bytes)\n", cli->state, pass, persist_fetched(c), cli->output,
                (unsigned long long)offset);
    int draw = want_progress(cli);
    static struct crawl_live live;
    cli->trace_pid = TRACE_PID_STEP;
    int status = run_model(cli, c, crawl_backend_find(cli->mode), fd, cli->format, 0,
                           draw ? &live : NULL, draw);
    signals_watch(c, NULL);
    if (!crawl_frontier_lost(c) && status != EXIT_OUTPUT && status != EXIT_PIPE &&
        persist_finish(c) < 0 && !crawl_frontier_lost(c))
        status = EXIT_FAILED;
    if (crawl_frontier_lost(c))
        status = state_lost_end(cli, c, fd);
    if (close(fd) != 0 && status != EXIT_OUTPUT && !crawl_frontier_lost(c))
        status = output_status(-errno);
    signals_watch(NULL, NULL);
    return status;
}

struct all_ctx {
    struct cli *cli;
    int fd;                     /* the output, inherited by each model's process */
    const struct crawl_backend *const *list;
    int live_fd;                /* the shared counters, -1: no progress line */
    char inputs[256];           /* CLI_INPUTS_ENV's value */
};

extern char **environ;

/* compare_spawn_fn: one model's run, in a fresh crawl started with the same
 * command line and told by CLI_CHILD_ENV which model to run and where its
 * output, trace, counters and figures go. The article table comes first
 * unless -q or a data format was asked for. */
static pid_t all_spawn(const struct crawl_backend *b, int result_fd, void *data)
{
    struct all_ctx *a = data;
    int pid_base = 0;
    /* Each model's tracks under a pid of its own, in the order compared. */
    for (int i = 0; a->list[i]; i++)
        if (a->list[i] == b)
            pid_base = TRACE_PID_STEP * (i + 1);
    int tables = !a->cli->quiet && a->cli->format == CRAWL_FMT_TABLE;
    char child[256], inputs[300];
    snprintf(child, sizeof child, CLI_CHILD_ENV "=%s %d %d %d %d %d %d", b->name, result_fd,
             a->fd, a->cli->trace_fd, pid_base, a->live_fd, tables);
    snprintf(inputs, sizeof inputs, CLI_INPUTS_ENV "=%s", a->inputs);
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env)
        return -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], CLI_CHILD_ENV "=", sizeof CLI_CHILD_ENV) != 0 &&
            strncmp(environ[i], CLI_INPUTS_ENV "=", sizeof CLI_INPUTS_ENV) != 0)
            env[k++] = environ[i];
    env[k++] = child;
    env[k++] = inputs;
    env[k] = NULL;
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, a->cli->argv, env);
    free(env);
    return rc ? -rc : pid;
}

/* What a --mode=all parent told this process (CLI_CHILD_ENV). */
struct child_env {
    char model[32];
    int result_fd, out_fd, trace_fd, trace_pid, live_fd, tables;
};

/* One model's run for a --mode=all parent: its rows (the article table, or
 * nothing) to the parent's output, its figures to result_fd. Returns the
 * exit status: 0 once the figures are handed over, the run's own status
 * being among them. */
static int run_child(struct cli *cli, struct crawl *c, const struct child_env *e)
{
    const struct crawl_backend *b = crawl_backend_find(e->model);
    struct crawl_live *live = NULL;
    struct compare_run r;
    if (!b)
        return EXIT_USAGE;
    if (e->live_fd >= 0) {
        live = mmap(NULL, sizeof *live, PROT_READ | PROT_WRITE, MAP_SHARED, e->live_fd, 0);
        if (live == MAP_FAILED)
            live = NULL;
    }
    cli->trace_pid = e->trace_pid;
    int status;
    if (e->tables) {
        status = run_model(cli, c, b, e->out_fd, CRAWL_FMT_TABLE, 0, live, 0);
        if (status != EXIT_OUTPUT && status != EXIT_PIPE && write(e->out_fd, "\n", 1) != 1)
            status = output_status(-errno);
    } else {
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        status = run_model(cli, c, b, devnull >= 0 ? devnull : e->out_fd, CRAWL_FMT_TABLE, 1,
                           live, 0);
        if (devnull >= 0)
            close(devnull);
    }
    memset(&r, 0, sizeof r);
    compare_fill(&r, c);
    r.status = status;
    const char *p = (const char *)&r;
    size_t left = sizeof r;
    while (left) {
        ssize_t w = write(e->result_fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 3;
        p += w;
        left -= (size_t)w;
    }
    return 0;
}

/* The models --modes names, into list (room for 16, NULL-terminated).
 * Returns how many; exits 2 on a name that is none. */
static int modes_list(const struct cli *cli, const struct crawl_backend **list)
{
    int n = 0;
    char *modes = strdup(cli->modes), *save = NULL;
    for (char *m = strtok_r(modes, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
        const struct crawl_backend *b = crawl_backend_find(m);
        if (!b) {
            char name[64];
            snprintf(name, sizeof name, "%s", m);
            free(modes);
            char names[256];
            die_usage("--modes: unknown mode '%s' (%s)", name,
                      crawl_backend_names(names, sizeof names, ", "));
        }
        if (n == 15) {
            free(modes);
            die_usage("--modes: at most 15 models");
        }
        list[n++] = b;
    }
    free(modes);
    list[n] = NULL;
    if (n == 0)
        die_usage("--modes: no model given");
    return n;
}

/* The exit status of --mode=all from the models' own. */
static int all_status(const struct compare_run *res, int n)
{
    int status = 0;
    for (int i = 0; i < n; i++) {
        if (res[i].status == 130 || res[i].status > 128 || res[i].status == EXIT_OUTPUT)
            status = res[i].status;
        else if (res[i].status != 0 && status == 0)
            status = EXIT_FAILED;
    }
    return status;
}

static int run_all(struct cli *cli, struct crawl *c)
{
    const struct crawl_backend *list[16];
    int n = modes_list(cli, list);

    /* Every model runs the whole list, each in a process of its own. The
     * list is read here first, so that a bad line is reported once and the
     * lists that cannot be read twice are copied for every model. */
    if (crawl_fill(c) < 0)
        return EXIT_USAGE;
    int fd = open_output(cli);
    FILE *out = fd == STDOUT_FILENO ? stdout : fdopen(fd, "w");
    if (!out) {
        fprintf(stderr, "crawl: out of memory\n");
        return EXIT_FAILED;
    }
    /* The children write their tables and trace parts to these: not
     * close-on-exec (dup's copy never is). */
    struct all_ctx a = { .cli = cli, .fd = fd == STDOUT_FILENO ? fd : dup(fd), .list = list,
                         .live_fd = -1 };
    size_t at = 0;
    for (int i = 0; i < cli->ninputs && at < sizeof a.inputs; i++)
        if (cli->input_fd[i] >= 0)
            at += (size_t)snprintf(a.inputs + at, sizeof a.inputs - at, "%d:%d ", i,
                                   cli->input_fd[i]);
    /* The progress line is drawn here, from counters the children publish
     * in shared memory: no measured process pays for it. */
    struct progress *prog = NULL;
    struct crawl_live *live = NULL;
    if (want_progress(cli) && (a.live_fd = memfd_create("crawl-live", 0)) >= 0) {
        if (ftruncate(a.live_fd, sizeof *live) == 0)
            live = mmap(NULL, sizeof *live, PROT_READ | PROT_WRITE, MAP_SHARED, a.live_fd, 0);
        if (live == MAP_FAILED || !live) {
            live = NULL;
            close(a.live_fd);
            a.live_fd = -1;
        } else {
            prog = progress_start(live, STDERR_FILENO);
        }
    }
    struct compare_run res[16];
    double minw[16], maxw[16];
    int rc = compare_models(list, cli->repeat, all_spawn, &a, signals_flag(), res, minw, maxw);
    progress_stop(prog);
    if (live) {
        munmap(live, sizeof *live);
        close(a.live_fd);
    }
    if (a.fd != fd)
        close(a.fd);
    if (rc < 0) {
        fprintf(stderr, "crawl: cannot start a model's process: %s\n", strerror(-rc));
        return EXIT_FAILED;
    }
    n = rc;
    char shared[512];
    compare_shared(&cli->opts, res, n, shared, sizeof shared);
    compare_print(out, cli->format, shared, res, minw, maxw, n);
    int status = all_status(res, n);
    int werr = fflush(out) != 0 || ferror(out) ? errno : 0;
    if (out != stdout && fclose(out) != 0 && !werr)
        werr = errno;
    if (werr && status != EXIT_OUTPUT && status != EXIT_PIPE)
        status = output_status(-werr);
    if (signals_caught() == SIGINT)
        return 130;
    return status;
}

/* --status: prints the shared crawl's progress. Returns the exit status:
 * 0, EXIT_FRONTIER (unreachable, no reply), EXIT_STORE (no such crawl, or
 * part of one) or EXIT_USAGE. */
static int run_status(const struct cli *cli)
{
    char why[600];
    /* Nothing to keep: Ctrl-C ends a --status at once. */
    signals_default();
    int rc = state_status(cli->frontier, cli->frontier_retry, STDOUT_FILENO, why, sizeof why);
    if (rc != 0)
        fprintf(stderr, "crawl: --frontier %s: %s\n", cli->frontier, why);
    return rc == 0 ? 0 : rc == STATE_EUNREACHABLE ? EXIT_FRONTIER
           : rc == STATE_ELOST ? EXIT_STORE : EXIT_USAGE;
}

/* Frees what cli_parse compiled and built: the rules, the patterns, the
 * header and --resolve lists. */
static void cli_rules_free(struct cli *cli)
{
    html_rules_free(cli->rules);
    for (size_t i = 0; i < cli->opts.ninclude; i++)
        regfree(&cli->include[i]);
    for (size_t i = 0; i < cli->opts.nexclude; i++)
        regfree(&cli->exclude[i]);
    for (size_t i = 0; i < cli->opts.nstrip_query; i++)
        regfree(&cli->strip[i]);
    curl_slist_free_all(cli->opts.headers);
    curl_slist_free_all(cli->opts.resolve);
}

/* What each transfer's body passes through (lib/fetch_stage.h): the WARC
 * writer takes it as sent, --save as the row counts it. */
static void list_stages(struct crawl_opts *o)
{
    static const struct fetch_stage *stages[FETCH_STAGES_MAX];
    if (o->warc)
        stages[o->nstages++] = &stage_warc;
    if (o->save_dir)
        stages[o->nstages++] = &stage_mirror;
    o->stages = stages;
}

int main(int argc, char **argv)
{
    struct cli cli;
    memset(&cli, 0, sizeof cli);
    /* Before any thread: every one inherits the mask. */
    signals_block();
    hold_std_fds();
#ifdef M_MXFAST
    /* No fastbins: a freed small chunk is merged with its neighbours as it
     * is freed, not all at once by the next large malloc, which after
     * thousands of ended transfers would spend its time merging what they
     * freed; freed one by one, it fits between responses. Small chunks
     * still come and go through the thread cache. */
    mallopt(M_MXFAST, 0);
#endif
    if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK) {
        fprintf(stderr, "crawl: libcurl could not be initialised\n");
        return EXIT_USAGE;
    }
    html_global_init();
    fetch_set_locale();     /* for international host names; C without it */
    struct child_env ce;
    const char *env = getenv(CLI_CHILD_ENV);
    if (env && sscanf(env, "%31s %d %d %d %d %d %d", ce.model, &ce.result_fd, &ce.out_fd,
                      &ce.trace_fd, &ce.trace_pid, &ce.live_fd, &ce.tables) == 7)
        cli.child = 1;
    cli_parse(&cli, argc, argv);
    if (cli.status) {
        int rc = run_status(&cli);
        curl_global_cleanup();
        return rc;
    }
    list_stages(&cli.opts);
    struct crawl *c = crawl_new(&cli.opts);
    if (!c) {
        fprintf(stderr, "crawl: out of memory\n");
        return EXIT_USAGE;
    }
    /* A model whose workers are processes forks them now, and the
     * descriptor table grows to the run's transfers, while this process
     * has one thread and has opened no list (a failure is the run's to
     * report, with a row for every URL); then the signal thread. */
    const struct crawl_backend *one = cli.child ? crawl_backend_find(ce.model)
                                      : strcmp(cli.mode, "all") ? crawl_backend_find(cli.mode)
                                                                : NULL;
    /* Without the set (out of memory) the crawl goes on, as with one
     * that filled up: no duplicate_of, WARC records written whole. */
    if (revisit_attach(c) != 0)
        fprintf(stderr, "crawl: warning: %s\n", REVISIT_NOMEM);
    if (one)
        crawl_prepare(c, one);
    if (cli.opts.retry > 0 && retry_attach(c) != 0) {
        fprintf(stderr, "crawl: out of memory\n");
        crawl_free(c);
        return EXIT_FAILED;
    }
    if (signals_start() != 0) {
        fprintf(stderr, "crawl: cannot start a thread: out of resources\n");
        crawl_free(c);
        return EXIT_FAILED;
    }
    struct validators *valid = validators_begin(&cli, c);
    struct urllist *inputs = cli_open_inputs(&cli, c);
    int status;
    if (cli.child) {
        /* The parent opened the trace and ends it. */
        cli.trace_fd = ce.trace_fd;
        status = run_child(&cli, c, &ce);
    } else {
        trace_open(&cli);
        if (cli.state)
            status = run_state(&cli, c);
        else if (strcmp(cli.mode, "all") == 0)
            status = run_all(&cli, c);
        else
            status = run_one(&cli, c);
        status = trace_close(&cli, status);
    }
    status = validators_end(&cli, valid, status);
    for (int i = 0; i < cli.ninputs; i++)
        if (cli.input_fd[i] >= 0)
            close(cli.input_fd[i]);
    free(cli.input_fd);
    crawl_free(c);
    urllist_free(inputs);
    cli_rules_free(&cli);
    curl_global_cleanup();
    if (fflush(stdout) != 0 && status != EXIT_OUTPUT && status != EXIT_PIPE)
        status = output_status(-errno);
    return status;
}

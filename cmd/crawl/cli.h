/* cli.h: the crawl command's flags, shared by its files: args.c turns the
 * command line into a struct cli, inputs.c opens the lists it names,
 * signals.c takes the signals, crawl.c runs. */
#ifndef CRAWL_CLI_H
#define CRAWL_CLI_H

#include <regex.h>
#include <stdatomic.h>

#include "crawl.h"

#define EXIT_FAILED 1
#define EXIT_USAGE  2
#define EXIT_OUTPUT 23          /* as curl: the output could not be written */
#define EXIT_FRONTIER 7         /* as curl: the --frontier server cannot be reached */
#define EXIT_STORE  8           /* the --state file or the --frontier server lost
                                 * this crawl's data or holds another's */
#define EXIT_PIPE   141         /* as a tool that SIGPIPE ends: the reader left */

/* Flags that only some runs use, noted to say when one is ignored. */
enum {
    GIVEN_LOOPS = 2, GIVEN_PROCS = 4, GIVEN_MODES = 8, GIVEN_REPEAT = 16,
    GIVEN_INCLUDE = 32, GIVEN_EXCLUDE = 64, GIVEN_STACK = 128, GIVEN_IGNORE_CD = 256,
    GIVEN_ORDER = 512,
    GIVEN_PARSE = 1024, GIVEN_WTIMEOUT = 2048, GIVEN_MAX_QUEUE = 4096,
    GIVEN_CANONICAL = 8192, GIVEN_STRIP = 16384,
};

struct urllist;

struct cli {
    struct crawl_opts opts;
    const char *mode;
    const char *modes;
    int repeat;
    enum crawl_format format;
    enum crawl_order order;
    const char *output;
    const char *trace;      /* --trace FILE */
    int trace_fd;           /* its descriptor, or -1 */
    int trace_pid;          /* the base pid of the model that runs next */
    int quiet;
    int progress;           /* -1 auto, 0 off, 1 on */
    unsigned given;         /* GIVEN_* flags seen, for warn_ignored */
    struct urllist *list;   /* cli_open_inputs' (reachable when a usage error exits) */
    char **inputs;
    int ninputs;
    const char *follow;
    const char *extract[64];
    int nextract;
    regex_t include[32], exclude[32], strip[32];
    const char *include_src[32], *exclude_src[32], *strip_src[32];  /* their patterns */
    const char *links_out;  /* --links-out FILE */
    const char *state;      /* the store: --state FILE or --frontier URL */
    const char *state_file; /* --state FILE */
    const char *frontier;   /* --frontier URL */
    double lease;           /* --lease seconds; 0: the default */
    double frontier_retry;  /* --frontier-retry seconds; 0: the default */
    int status;             /* --status */
    int recrawl;            /* --recrawl: a finished store starts a new pass */
    double recrawl_older;   /* --recrawl-older seconds; 0: every page */
    const char *validators; /* --validators FILE */
    char if_modified_since[64]; /* --if-modified-since as an HTTP-date; "": none */
    struct html_rules *rules;
    int argc;               /* the command line, for --mode=all's children */
    char **argv;
    int *input_fd;          /* per input: a copy of a list that cannot be read
                             * twice (standard input, a pipe), or -1 */
    int child;              /* this process is one model of a --mode=all run:
                             * the parent has said everything about the flags
                             * and the lists already */
};

/* The environment variables by which --mode=all hands a model's run to a
 * fresh crawl: "MODEL RESULT_FD OUT_FD TRACE_FD TRACE_PID LIVE_FD TABLES",
 * and "INDEX:FD ..." for the lists read from copies. */
#define CLI_CHILD_ENV  "CRAWL_ALL_CHILD"
#define CLI_INPUTS_ENV "CRAWL_ALL_INPUTS"

struct report;

/* signals.c. Blocks SIGINT, SIGTERM and SIGALRM in the calling thread (and
 * so in every thread started after), and ignores SIGPIPE: call it first. */
void signals_block(void);

/* Unblocks them again, to their default action (the process ends): for a
 * run with nothing to keep (--status), called before any thread starts. */
void signals_default(void);

/* Starts the thread that takes those signals. Returns 0, or -1 when no
 * thread could be started. */
int signals_start(void);

/* The crawl a signal cancels and the report a second SIGINT flushes before
 * the process ends (either NULL: none now). A signal taken before c was
 * given cancels it now. */
void signals_watch(struct crawl *c, struct report *rep);

/* The first SIGINT or SIGTERM taken, or 0; and the flag itself, for a
 * loop that stops starting work once it is set. */
int signals_caught(void);
atomic_int *signals_flag(void);

/* args.c. Fills cli from the command line; prints help or the version and
 * exits 0, or exits 2 naming the flag that is wrong. */
void cli_parse(struct cli *cli, int argc, char **argv);

/* inputs.c. Opens every input and hands them to c, to be read as the
 * crawl needs them. With --mode=all, a list that cannot be read twice (standard input,
 * a pipe) is first copied into memory, for every model to read; a child of
 * --mode=all reads those copies (CLI_INPUTS_ENV). Exits 2 when a file
 * cannot be opened. */
struct urllist *cli_open_inputs(struct cli *cli, struct crawl *c);

/* args.c. Prints "crawl: MESSAGE" and the hint to try --help, and exits 2. */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif

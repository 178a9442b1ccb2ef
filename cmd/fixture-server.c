/* fixture-server: the command line of the local HTTP/1.1 fixture server that
 * the tests, the demo and the benchmarks run against. Turns flags into
 * options, starts the server, runs it until SIGINT or SIGTERM and sets the
 * exit status; the server itself is the fixture/ component. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"

#define EXIT_USAGE 2

/* The name it was run as: build/fixture-server in the tree, installed as
 * crawl-fixture-server (make install). */
static const char *prog = "fixture-server";

static const char usage_text[] =
"usage: %s [--port N] [--port-file FILE] [--root DIR]\n"
"         [--stall-port-file FILE] [--robots PATH] [-q]\n"
"\n"
"A deterministic HTTP/1.1 server on 127.0.0.1 for tests and benchmarks.\n"
"\n"
"  --port N          port to listen on; 0 picks a free one (default 0)\n"
"  --port-file FILE  write the port number to FILE once listening\n"
"  --root DIR        the files served under /site/ (default testdata/site)\n"
"  --stall-port-file FILE  also listen on a second port, whose queue of\n"
"                    connections is kept full so that a connect() to it\n"
"                    never completes (connect timeouts), and write its\n"
"                    port number to FILE\n"
"  --robots PATH     answer /robots.txt as the request for PATH would be\n"
"                    (e.g. /status/503, /hang, /robots/huge/104857600)\n"
"  -q, --quiet       do not print \"listening on http://127.0.0.1:PORT\"\n"
"  -h, --help        this text\n"
"\n";

static void die_usage(const char *fmt, const char *arg) __attribute__((noreturn));
static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fputs(" (see --help)\n", stderr);
    exit(EXIT_USAGE);
}

/* What the command line asked for. */
struct args {
    struct fixture_opts o;
    const char *port_file, *stall_file;
    int quiet, root_given;
};

enum { OPT_PORT = 256, OPT_PORT_FILE, OPT_STALL_PORT_FILE, OPT_ROOT, OPT_ROBOTS };
static const struct option long_opts[] = {
    { "port",            required_argument, NULL, OPT_PORT },
    { "port-file",       required_argument, NULL, OPT_PORT_FILE },
    { "stall-port-file", required_argument, NULL, OPT_STALL_PORT_FILE },
    { "root",            required_argument, NULL, OPT_ROOT },
    { "robots",          required_argument, NULL, OPT_ROBOTS },
    { "quiet",           no_argument,       NULL, 'q' },
    { "help",            no_argument,       NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Takes flag ch (its value in optarg) into a; exits on a bad value or
 * after --help. */
static void take_flag(struct args *a, int ch)
{
    switch (ch) {
    case OPT_PORT: {
        char *end;
        errno = 0;
        long port = strtol(optarg, &end, 10);
        if (errno || *optarg == '\0' || *end != '\0' || port < 0 || port > 65535)
            die_usage("--port: not a port number: '%s'", optarg);
        a->o.port = (int)port;
        break;
    }
    case OPT_PORT_FILE:
        a->port_file = optarg;
        break;
    case OPT_STALL_PORT_FILE:
        a->stall_file = optarg;
        a->o.stall = 1;
        break;
    case OPT_ROOT:
        a->o.root = optarg;
        a->root_given = 1;
        break;
    case OPT_ROBOTS:
        if (optarg[0] != '/' || strncmp(optarg, "/robots.txt", 11) == 0)
            die_usage("--robots: not a path of another endpoint: '%s'", optarg);
        a->o.robots = optarg;
        break;
    case 'q':
        a->quiet = 1;
        break;
    case 'h':
        printf(usage_text, prog);
        fixture_print_endpoints(stdout);
        exit(0);
    }
}

static void parse_args(int argc, char **argv, struct args *a)
{
    opterr = 0;
    for (;;) {
        /* The argument about to be read, for messages. A flag counts only
         * as written in full, one to an argument (no abbreviations, no -qh),
         * so that a misspelt flag in a script fails instead of meaning
         * another. '+' stops at the first operand, which is an error too. */
        const char *arg = optind < argc ? argv[optind] : NULL;
        int idx = -1;
        int ch = getopt_long(argc, argv, "+:qh", long_opts, &idx);
        if (ch == -1 && arg && strcmp(arg, "--") == 0)
            die_usage("unknown flag '%s'", arg);   /* getopt_long took it as the end */
        if (ch == -1)
            break;
        if (ch == ':')
            die_usage("%s needs a value", arg);
        if (ch == '?')
            die_usage("unknown flag '%s'", arg);
        if (idx >= 0) {
            size_t n = strlen(long_opts[idx].name);
            if (strncmp(arg + 2, long_opts[idx].name, n) != 0 ||
                (arg[2 + n] != '\0' && arg[2 + n] != '='))
                die_usage("unknown flag '%s'", arg);
        } else if (strlen(arg) != 2) {
            die_usage("unknown flag '%s'", arg);
        }
        take_flag(a, ch);
    }
    if (optind < argc)
        die_usage("unknown flag '%s'", argv[optind]);
    if (a->root_given) {
        struct stat st;
        if (stat(a->o.root, &st) < 0 || !S_ISDIR(st.st_mode))
            die_usage("--root: not a directory: '%s'", a->o.root);
    }
}

int main(int argc, char **argv)
{
    struct args a = { .port_file = NULL };
    if (argc > 0 && argv[0][0]) {
        const char *slash = strrchr(argv[0], '/');
        prog = slash ? slash + 1 : argv[0];
    }
    fixture_opts_init(&a.o);
    parse_args(argc, argv, &a);

    signal(SIGPIPE, SIG_IGN);
    struct fixture *fx;
    int err = fixture_new(&fx, &a.o);
    if (err == FIXTURE_ELISTEN) {
        fprintf(stderr, "%s: %s:%d: %s\n", prog, fixture_strerror(err), a.o.port,
                strerror(errno));
        return 1;
    }
    if (err == FIXTURE_ENOMEM || err == FIXTURE_ELOOP) {
        fprintf(stderr, "%s: %s\n", prog, fixture_strerror(err));
        return 1;
    }
    if (err < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, fixture_strerror(err), strerror(errno));
        return 1;
    }
    if (a.stall_file && fixture_write_port_file(a.stall_file, fixture_stall_port(fx)) < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, a.stall_file, strerror(errno));
        fixture_free(fx);
        return 1;
    }
    if (a.port_file && fixture_write_port_file(a.port_file, fixture_port(fx)) < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, a.port_file, strerror(errno));
        fixture_free(fx);
        return 1;
    }
    if (!a.quiet) {
        printf("listening on http://127.0.0.1:%d\n", fixture_port(fx));
        fflush(stdout);
    }
    fixture_run(fx);
    fixture_free(fx);
    return 0;
}

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
#include <arpa/inet.h>

#include "fixture.h"

#define EXIT_USAGE 2

/* The name it was run as: build/fixture-server in the tree, installed as
 * crawl-fixture-server (make install). */
static const char *prog = "fixture-server";

static const char usage_text[] =
"usage: %s [--port N] [--port-file FILE] [--root DIR]\n"
"         [--stall-port-file FILE] [--robots PATH] [-q]\n"
"       %s --web N [--seed S] [WEB OPTIONS] [--port N] [--port-file FILE]\n"
"         [--resolve-file FILE] [--hosts-file FILE] [-q]\n"
"       %s --web N [--seed S] [WEB OPTIONS] --port N --list-reachable\n"
"         [--failed-robots-allow] SEED-URL...\n"
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
"\n"
"The synthetic web (docs/web.md): N hosts h00000.web.test ... on addresses\n"
"of their own, every byte drawn from the seed, served from one process on\n"
"every address of the loopback interface.\n"
"\n"
"  --web N           serve a web of N hosts (1 to 65534)\n"
"  --seed S          the seed the web is drawn from (default 1)\n"
"  --web-pages M     a host's pages on average (1 to 1000, default 20)\n"
"  --web-ms MS       the time unit of latencies and Crawl-delays, in\n"
"                    milliseconds (1 to 1000, default 10)\n"
"  --web-slack MS    how much sooner than its host's rule a request may come\n"
"                    before the counters call it a short gap (0 to 10000,\n"
"                    default 20): two processes' clocks and turns differ\n"
"  --web-net ADDR    host I has address ADDR + 1 + I (default 127.77.0.0)\n"
"  --web-links KIND  links name other hosts by name (names, the default) or\n"
"                    by address (addrs)\n"
"  --web-any-dev     take connections through every interface of the\n"
"                    network namespace, not lo's alone: for a namespace\n"
"                    whose other interfaces lead to its lab only\n"
"  --resolve-file FILE  write \"NAME:PORT:ADDRESS\" for every host to FILE,\n"
"                    the lines crawl and curl resolve names from\n"
"  --hosts-file FILE write \"ADDRESS NAME\" for every host to FILE (a hosts\n"
"                    file, for a DNS server)\n"
"  --list-reachable  serve nothing: print the URL of every page a polite\n"
"                    crawl from the SEED-URLs fetches (robots.txt obeyed,\n"
"                    a failed one disallowing all), for the web on --port\n"
"  --failed-robots-allow  with --list-reachable: a robots.txt that fails\n"
"                    (5xx, no answer) allows all\n"
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
    struct fixture_web_opts web;
    const char *port_file, *stall_file;
    const char *resolve_file, *hosts_file;
    int quiet, root_given;
    int web_flags;              /* a web option was given */
    int list_reachable, failed_allows;
};

enum { OPT_PORT = 256, OPT_PORT_FILE, OPT_STALL_PORT_FILE, OPT_ROOT, OPT_ROBOTS,
       OPT_WEB, OPT_SEED, OPT_WEB_PAGES, OPT_WEB_MS, OPT_WEB_SLACK, OPT_WEB_NET, OPT_WEB_LINKS,
       OPT_WEB_ANY_DEV, OPT_RESOLVE_FILE, OPT_HOSTS_FILE, OPT_LIST_REACHABLE, OPT_FAILED_ALLOW };
static const struct option long_opts[] = {
    { "port",            required_argument, NULL, OPT_PORT },
    { "web",             required_argument, NULL, OPT_WEB },
    { "seed",            required_argument, NULL, OPT_SEED },
    { "web-pages",       required_argument, NULL, OPT_WEB_PAGES },
    { "web-ms",          required_argument, NULL, OPT_WEB_MS },
    { "web-slack",       required_argument, NULL, OPT_WEB_SLACK },
    { "web-net",         required_argument, NULL, OPT_WEB_NET },
    { "web-links",       required_argument, NULL, OPT_WEB_LINKS },
    { "web-any-dev",     no_argument,       NULL, OPT_WEB_ANY_DEV },
    { "resolve-file",    required_argument, NULL, OPT_RESOLVE_FILE },
    { "hosts-file",      required_argument, NULL, OPT_HOSTS_FILE },
    { "list-reachable",  no_argument,       NULL, OPT_LIST_REACHABLE },
    { "failed-robots-allow", no_argument,   NULL, OPT_FAILED_ALLOW },
    { "port-file",       required_argument, NULL, OPT_PORT_FILE },
    { "stall-port-file", required_argument, NULL, OPT_STALL_PORT_FILE },
    { "root",            required_argument, NULL, OPT_ROOT },
    { "robots",          required_argument, NULL, OPT_ROBOTS },
    { "quiet",           no_argument,       NULL, 'q' },
    { "help",            no_argument,       NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* A whole number from min to max of flag's value s; exits otherwise. */
static unsigned long long number(const char *flag, const char *s, unsigned long long min,
                                 unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *s < '0' || *s > '9' || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "%s: %s: expected a whole number from %llu to %llu, got '%s' (see --help)\n",
                prog, flag, min, max, s);
        exit(EXIT_USAGE);
    }
    return v;
}

/* Takes a web flag ch (its value in optarg) into a; returns 0, or -1 when
 * ch is none. */
static int take_web_flag(struct args *a, int ch)
{
    struct in_addr in;
    switch (ch) {
    case OPT_WEB:
        a->web.hosts = (unsigned)number("--web", optarg, 1, FIXTURE_WEB_MAX_HOSTS);
        a->o.web = &a->web;
        return 0;
    case OPT_SEED:
        a->web.seed = number("--seed", optarg, 0, UINT64_MAX);
        break;
    case OPT_WEB_PAGES:
        a->web.pages = (unsigned)number("--web-pages", optarg, 1, 1000);
        break;
    case OPT_WEB_MS:
        a->web.unit_ms = (unsigned)number("--web-ms", optarg, 1, 1000);
        break;
    case OPT_WEB_SLACK:
        a->web.slack_ms = (unsigned)number("--web-slack", optarg, 0, 10000);
        break;
    case OPT_WEB_NET:
        if (inet_pton(AF_INET, optarg, &in) != 1)
            die_usage("--web-net: not an IPv4 address: '%s'", optarg);
        a->web.net = ntohl(in.s_addr);
        break;
    case OPT_WEB_LINKS:
        if (strcmp(optarg, "names") != 0 && strcmp(optarg, "addrs") != 0)
            die_usage("--web-links: expected names or addrs, got '%s'", optarg);
        a->web.addrs = optarg[0] == 'a';
        break;
    case OPT_WEB_ANY_DEV:
        a->web.any_dev = 1;
        break;
    case OPT_RESOLVE_FILE:
        a->resolve_file = optarg;
        break;
    case OPT_HOSTS_FILE:
        a->hosts_file = optarg;
        break;
    case OPT_LIST_REACHABLE:
        a->list_reachable = 1;
        break;
    case OPT_FAILED_ALLOW:
        a->failed_allows = 1;
        break;
    default:
        return -1;
    }
    a->web_flags = 1;
    return 0;
}

/* Takes flag ch (its value in optarg) into a; exits on a bad value or
 * after --help. */
static void take_flag(struct args *a, int ch)
{
    if (take_web_flag(a, ch) == 0)
        return;
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
        printf(usage_text, prog, prog, prog);
        fixture_print_endpoints(stdout);
        exit(0);
    }
}

/* The web's flags together: each needs --web, and --list-reachable a
 * port and seeds (nseeds of them) and nothing served. */
static void check_web(const struct args *a, int nseeds)
{
    if (a->web_flags && !a->o.web)
        die_usage("%s", "the web's options need --web N");
    if (a->o.web && (uint64_t)a->web.net + a->web.hosts + 1 > UINT32_MAX)
        die_usage("--web-net: %s leaves no room for the hosts", "the range");
    if (!a->list_reachable) {
        if (a->failed_allows)
            die_usage("%s", "--failed-robots-allow needs --list-reachable");
        return;
    }
    if (a->o.port == 0)
        die_usage("%s", "--list-reachable needs the port of the web's links, --port N");
    if (nseeds == 0)
        die_usage("%s", "--list-reachable needs one seed URL or more");
    if (a->port_file || a->stall_file || a->resolve_file || a->hosts_file)
        die_usage("%s", "--list-reachable serves nothing: no --port-file, --stall-port-file, "
                  "--resolve-file or --hosts-file");
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
    if (optind < argc && !a->list_reachable)
        die_usage("unknown flag '%s'", argv[optind]);
    check_web(a, argc - optind);
    if (a->root_given) {
        struct stat st;
        if (stat(a->o.root, &st) < 0 || !S_ISDIR(st.st_mode))
            die_usage("--root: not a directory: '%s'", a->o.root);
    }
}

/* --list-reachable: the reachable set printed; 0, or 1 for a seed that is
 * no page of the web (or memory short). */
static int list_reachable(const struct args *a, char *const *seeds, size_t n)
{
    char err[256];
    long rc = fixture_web_reachable(&a->web, a->o.port, seeds, n, a->failed_allows, stdout,
                                    err, sizeof err);
    if (rc == -1) {
        fprintf(stderr, "%s: --list-reachable: %s\n", prog, err);
        return 1;
    }
    if (rc < 0) {
        fprintf(stderr, "%s: --list-reachable: %s\n", prog, fixture_strerror((int)rc));
        return 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: --list-reachable: cannot write: %s\n", prog, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct args a = { .port_file = NULL };
    if (argc > 0 && argv[0][0]) {
        const char *slash = strrchr(argv[0], '/');
        prog = slash ? slash + 1 : argv[0];
    }
    fixture_opts_init(&a.o);
    fixture_web_opts_init(&a.web, 0);
    parse_args(argc, argv, &a);
    if (a.list_reachable)
        return list_reachable(&a, argv + optind, (size_t)(argc - optind));

    signal(SIGPIPE, SIG_IGN);
    struct fixture *fx;
    int err = fixture_new(&fx, &a.o);
    if (err == FIXTURE_ELISTEN) {
        fprintf(stderr, "%s: %s:%d: %s\n", prog, fixture_strerror(err), a.o.port,
                strerror(errno));
        return 1;
    }
    if (err == FIXTURE_ENOMEM || err == FIXTURE_ELOOP || err == FIXTURE_EWEB) {
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
    if (a.resolve_file && fixture_web_write_names(fx, a.resolve_file, 1) < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, a.resolve_file, strerror(errno));
        fixture_free(fx);
        return 1;
    }
    if (a.hosts_file && fixture_web_write_names(fx, a.hosts_file, 0) < 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, a.hosts_file, strerror(errno));
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

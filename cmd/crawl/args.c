/* args.c: the crawl command's flags turned into options: the help text,
 * the option table, the checks of each value and of the flags together.
 * The lists the command line names are opened by inputs.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "cli.h"
#include "html.h"
#include "robots.h"
#include "validators.h"
#include "version.h"

static const char usage_text[] =
"Usage: crawl [options] FILE|URL|- ...\n"
"Fetch every URL (arguments starting with http:// or https://, lines of the\n"
"URL-list FILEs, or of standard input for -) with one concurrency model, and\n"
"print the body lengths and the wall time as lightless's asyncio crawler\n"
"article does (README names it).\n"
"\n"
"Models:\n"
"%s"
"  --mode=MODE            one of the above, or all to compare them (default\n"
"                         %s)\n"
"      --list-modes[=WHAT]  the models, one a line: their names (names),\n"
"                         with their most transfers in flight, 0 for no\n"
"                         bound (limits), or crawl(1)'s MODELS entries (man)\n"
"\n"
"Fetching (the same libcurl options in every model):\n"
"  -c, --concurrency=N    transfers in flight at most (pool: workers, default\n"
"                         10; thread, coro and procs: all at once by\n"
"                         default, 100 when following links or sitemaps)\n"
"      --timeout=SEC      limit for a whole transfer (default 30)\n"
"      --connect-timeout=SEC  limit for connecting (default 10)\n"
"      --deadline=SEC     limit for the whole run: what has not finished by\n"
"                         then is cancelled (with --mode=all, for each model)\n"
"      --max-redirs=N     redirects to follow (default 10; 0 follows none);\n"
"                         with --depth each is followed as a link, a row\n"
"                         each, held to robots.txt and its host's pace\n"
"      --retry=N          try a transient failure (no connection, timeout,\n"
"                         reset; HTTP 408, 429, 500, 502, 503, 504) up to N\n"
"                         more times (default 0)\n"
"      --retry-delay=SEC  base of the exponential backoff, with full jitter\n"
"                         (default 1)\n"
"      --retry-max-delay=SEC  the longest wait before a retry, Retry-After\n"
"                         included (default 30)\n"
"      --no-reuse         a fresh connection for every URL\n"
"      --reuse            keep connections for reuse even when every URL is\n"
"                         in flight at once (default: reuse unless so and\n"
"                         none is https, where HTTP/2 may multiplex)\n"
"  -A, --user-agent=UA    User-Agent header (default crawl/" CRAWL_VERSION ")\n"
"  -H, --header='K: V'    extra request header (repeatable)\n"
"      --cookie='N=V; ...'  cookies sent with every request\n"
"      --cookie-jar=FILE  keep cookies: read FILE if it exists, send what\n"
"                         responses set on later requests to their sites,\n"
"                         write the jar to FILE at the end\n"
"  -x, --proxy=URL        send every request through the proxy at URL\n"
"                         (http://, https://, socks5://...; \"\" for none),\n"
"                         instead of the one http_proxy/https_proxy/all_proxy\n"
"                         name\n"
"      --noproxy=LIST     hosts reached directly, comma-separated (a name\n"
"                         matches its subdomains too; * alone for all),\n"
"                         instead of no_proxy's list\n"
"      --resolve=HOST:PORT:ADDR  connect to ADDR (IPv4, or IPv6 in brackets;\n"
"                         several comma-separated) for HOST on PORT instead\n"
"                         of looking HOST up, as curl's --resolve\n"
"                         (repeatable); @FILE: one HOST:PORT:ADDR a line\n"
"      --validators=FILE  each listed URL's ETag and Last-Modified: read from\n"
"                         FILE (when there) and sent as If-None-Match and\n"
"                         If-Modified-Since, written back with the responses'\n"
"                         at the end (a line: URL ETAG LAST-MODIFIED, - for\n"
"                         none)\n"
"      --if-modified-since=DATE  ask for each listed URL only if it changed\n"
"                         since DATE (an HTTP date, or ISO 8601: 2024-01-31,\n"
"                         2024-01-31T12:00:00Z)\n"
"      --fail             HTTP status 400 and above counts as a failure\n"
"      --max-size=BYTES   largest body accepted, decoded (default 64M;\n"
"                         suffixes K, M, G; 0 for no limit)\n"
"      --buffer-size=BYTES  libcurl receive buffer (default 16K, or 2K when\n"
"                         more than 1,000 transfers can be in flight)\n"
"  -k, --insecure         do not verify TLS certificates\n"
"      --cacert=FILE      verify TLS certificates against the CA certificates\n"
"                         in FILE (PEM) instead of the system's\n"
"      --stack-size=BYTES coroutine stack size (coro; default 64K)\n"
"      --loops=N          coro: event loops, one thread each (default 1)\n"
"      --procs=N          procs: worker processes, each with one event loop\n"
"                         (default: the online CPUs)\n"
"      --worker-timeout=SECONDS\n"
"                         procs: a worker process not heard from this long\n"
"                         (each sends a heartbeat 4 times a second) is\n"
"                         killed and its URLs go to the others (default 10)\n"
"      --parse-threads=N  coro and procs: threads that parse pages while the\n"
"                         event loops fetch (default: the online CPUs the\n"
"                         loops or processes leave; 0: parse on the loops)\n"
"\n"
"Following links (HTML parsed by a link scanner, or libxml2 for XPath rules):\n"
"      --depth=N          follow links up to N hops from the listed URLs\n"
"                         (default 0: only the listed URLs)\n"
"      --max-pages=N      fetch at most N pages, listed ones included\n"
"      --max-queue=N      keep at most N links queued (in memory and the\n"
"                         spill file); links found past it are dropped,\n"
"                         warned of once and counted in the summary\n"
"                         (default 10000000; 0 for no bound)\n"
"      --span-hosts       follow links to other hosts than the listed URL's\n"
"      --include=REGEX    follow only links matching REGEX (repeatable)\n"
"      --exclude=REGEX    never follow links matching REGEX (repeatable)\n"
"      --canonical        one page whatever the order of its query's\n"
"                         arguments: the set of URLs seen keys on them\n"
"                         sorted by name (values as written); rows keep the\n"
"                         URL as found\n"
"      --strip-query=REGEX  leave the query arguments whose whole name\n"
"                         matches REGEX (utm_.*, sid) out of the key of the\n"
"                         set of URLs seen (repeatable)\n"
"      --follow=XPATH     the links to follow (default //a/@href)\n"
"      --extract=[NAME=]XPATH  values to take from every page (repeatable),\n"
"                         shown after the URL and in JSON lines and CSV\n"
"      --sitemaps         read the listed hosts' sitemaps (robots.txt's\n"
"                         Sitemap lines, or /sitemap.xml): their URLs join\n"
"                         the crawl at depth 0, under the rules links follow\n"
"      --no-robots        ignore robots.txt (obeyed by default with --depth\n"
"                         or --sitemaps)\n"
"      --robots-agent=TOKEN  the product token robots.txt is read for (default:\n"
"                         the one the user agent starts with, crawl)\n"
"      --per-host=N       transfers in flight to one host at most\n"
"      --delay=MS         milliseconds between requests to one host\n"
"      --ignore-crawl-delay  do not space requests by robots.txt's Crawl-delay\n"
"                         (honoured by default where robots.txt is read, at\n"
"                         least --delay)\n"
"      --auto-throttle    adapt each host's delay to its latency and errors\n"
"                         (after Scrapy's AutoThrottle; --delay the least)\n"
"\n"
"Output (JSON lines and CSV rows are written as URLs finish; the table's\n"
"rows follow its Use time line at the end):\n"
"      --format=FMT       table (default), jsonl or csv\n"
"      --order=ORDER      input (default: rows held back until the rows\n"
"                         before them are out) or completion\n"
"  -o, --output=FILE      write the output to FILE\n"
"      --state=FILE       keep the crawl in FILE (LMDB): run the same command\n"
"                         again after a kill and it continues, each page\n"
"                         once across the outputs (needs -o and jsonl or csv;\n"
"                         rows in completion order)\n"
"      --frontier=redis://[[USER]:PASSWORD@]HOST[:PORT]/NAME\n"
"                         share one crawl among many crawl processes, on\n"
"                         this machine or others, through a Redis server:\n"
"                         one queue, seen set, robots.txt and per-host\n"
"                         bounds; each process writes its own -o and needs\n"
"                         what --state needs; the first reads the list in\n"
"      --lease=SECONDS    with --frontier: a worker silent this long\n"
"                         (killed, cut off) has its pages given to the\n"
"                         others (default 15)\n"
"      --frontier-retry=SECONDS\n"
"                         with --frontier: how long one request to the\n"
"                         server may take, end to end, trying again a server\n"
"                         down or stalled; then stop with 7 (default 30)\n"
"      --status           with --frontier: print the shared crawl's progress\n"
"                         (queued, leased, done, failed, workers) and exit\n"
"      --links-out=FILE   write every link of every page parsed (pages are\n"
"                         parsed with it) to FILE, a JSON line each: from\n"
"                         (the page's final URL), to, admitted, reason\n"
"      --recrawl          with --state or --frontier: a finished crawl starts\n"
"                         a new pass over its pages and what they link to\n"
"                         now, each asked for with its validators\n"
"                         (If-None-Match, If-Modified-Since); a 304 is a row\n"
"                         of its own, the page's links kept from before\n"
"      --recrawl-older=SECONDS  with --recrawl: revisit only the pages\n"
"                         fetched more than SECONDS before the pass began\n"
"      --trace=FILE       write a Chrome trace-event file (Perfetto,\n"
"                         chrome://tracing): a track per worker, a slice per\n"
"                         transfer with its phases, counters of transfers in\n"
"                         flight and connections open\n"
"  -q, --quiet            only the summary: the Use time line, the JSON\n"
"                         summary object, or a CSV of it (with --mode=all the\n"
"                         comparison table)\n"
"      --progress         a live progress line on stderr (default when\n"
"                         stderr is a terminal)\n"
"      --no-progress      no progress line, even on a terminal\n"
"\n"
"Keeping what was fetched:\n"
"      --warc=FILE.warc.gz  write every request and response (redirects\n"
"                         included) as WARC/1.1 records, one gzip member\n"
"                         each; procs: one file per worker, FILE-wN.warc.gz\n"
"      --warc-max-size=BYTES  start a new WARC file past BYTES (FILE-00000,\n"
"                         FILE-00001, ...; suffixes K, M, G)\n"
"      --cdx=FILE         write a CDXJ index of the WARC's responses to FILE\n"
"                         (sorted at the end; procs: the workers' merged)\n"
"      --warc-dedupe-cdx=FILE  an earlier crawl's --cdx index: a 2xx payload\n"
"                         it lists is written as a revisit record, as is one\n"
"                         this crawl wrote before (identical payload digest)\n"
"      --dedupe           rows name in duplicate_of the first page of the\n"
"                         crawl with the same digest (decoded body); one at\n"
"                         that page's own final URL is not parsed again\n"
"      --save=DIR         write every 2xx body, decoded, as DIR/HOST[:PORT]/PATH\n"
"                         (index.html for a path ending in /, ?QUERY kept)\n"
"\n"
"Comparing (--mode=all):\n"
"      --modes=LIST       the models to compare, comma-separated\n"
"                         (default %s)\n"
"      --repeat=N         run each model N times; report the median\n"
"\n"
"  -h, --help             this text\n"
"  -V, --version          the versions of crawl, libcurl, libev and libxml2\n"
"\n"
"Input lines: one URL a line; blank lines and lines starting with # are\n"
"skipped. A line that is not an http or https URL is reported on stderr as\n"
"FILE:LINE: reason and gets a failed row.\n"
"\n"
"Exit status: 0 when every URL succeeded, 1 when any failed, 2 for usage and\n"
"input errors, 7 when the --frontier server cannot be reached or gives no\n"
"reply within --frontier-retry, gave this worker's pages to others, or went\n"
"back to an older copy of the crawl (the same command goes on), 8 when the --state file or the --frontier\n"
"server lost this crawl's data or holds another's (damaged, truncated, not\n"
"crawl's, another format, a full disk; keys restarted empty, evicted or of\n"
"another type; --status of a crawl the server does not hold),\n"
"23 when the output, the --warc file or the --cookie-jar file could not be\n"
"written,\n"
"141 when the reader of the output went away (quietly), 130 when\n"
"interrupted (SIGINT), 143 when terminated (SIGTERM).\n";

static void usage(FILE *out)
{
    char models[2048];
    size_t o = 0;
    int w = 7;
    for (int i = 0; crawl_backends[i]; i++)
        if ((int)strlen(crawl_backends[i]->name) > w)
            w = (int)strlen(crawl_backends[i]->name);
    for (int i = 0; crawl_backends[i] && o < sizeof models; i++)
        o += (size_t)snprintf(models + o, sizeof models - o, "  %-*s %s\n", w,
                              crawl_backends[i]->name, crawl_backends[i]->summary);
    char all[256];
    fprintf(out, usage_text, models, crawl_backend_default()->name,
            crawl_backend_names(all, sizeof all, ","));
}

void die_usage(const char *fmt, ...)
{
    va_list ap;
    fputs("crawl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\ncrawl: try 'crawl --help'\n", stderr);
    exit(EXIT_USAGE);
}

static long parse_long(const char *flag, const char *s, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        die_usage("%s: expected a whole number from %ld to %ld, got '%s'", flag,
                  min, max, s);
    return v;
}

static double parse_seconds(const char *flag, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 86400 * 365)
        die_usage("%s: expected a number of seconds above 0, got '%s'", flag, s);
    return v;
}

static long long parse_size(const char *flag, const char *s, long long min)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1LL << 10, end++;
    else if (*end == 'm' || *end == 'M') mul = 1LL << 20, end++;
    else if (*end == 'g' || *end == 'G') mul = 1LL << 30, end++;
    if (errno || end == s || *end || v < 0 || v > LLONG_MAX / mul || v * mul < min)
        die_usage("%s: expected a size in bytes (suffix K, M or G) of at least %lld, got '%s'",
                  flag, min, s);
    return v * mul;
}

enum {
    OPT_MODE = 256, OPT_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_MAX_REDIRS, OPT_NO_REUSE,
    OPT_REUSE, OPT_FORMAT, OPT_ORDER, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_FAIL,
    OPT_MAX_SIZE, OPT_BUFFER_SIZE, OPT_STACK_SIZE, OPT_LOOPS, OPT_PROCS, OPT_MODES, OPT_REPEAT,
    OPT_DEADLINE, OPT_DEPTH, OPT_MAX_PAGES, OPT_SPAN_HOSTS, OPT_INCLUDE, OPT_EXCLUDE,
    OPT_FOLLOW, OPT_EXTRACT, OPT_NO_ROBOTS, OPT_PER_HOST, OPT_DELAY, OPT_CACERT,
    OPT_LIST_MODES, OPT_ROBOTS_AGENT, OPT_RETRY, OPT_RETRY_DELAY, OPT_RETRY_MAX_DELAY,
    OPT_COOKIE, OPT_COOKIE_JAR, OPT_TRACE, OPT_WARC, OPT_WARC_MAX_SIZE, OPT_CDX, OPT_SAVE,
    OPT_WARC_DEDUPE_CDX, OPT_DEDUPE,
    OPT_NOPROXY, OPT_RESOLVE, OPT_IGNORE_CRAWL_DELAY, OPT_AUTO_THROTTLE, OPT_SITEMAPS,
    OPT_STATE, OPT_FRONTIER, OPT_LEASE, OPT_FRONTIER_RETRY, OPT_STATUS,
    OPT_PARSE_THREADS, OPT_WORKER_TIMEOUT, OPT_MAX_QUEUE, OPT_CANONICAL, OPT_STRIP_QUERY,
    OPT_LINKS_OUT, OPT_RECRAWL, OPT_RECRAWL_OLDER, OPT_VALIDATORS, OPT_IF_MODIFIED_SINCE,
};

static const struct option long_opts[] = {
    {"mode", required_argument, 0, OPT_MODE},
    {"concurrency", required_argument, 0, 'c'},
    {"timeout", required_argument, 0, OPT_TIMEOUT},
    {"connect-timeout", required_argument, 0, OPT_CONNECT_TIMEOUT},
    {"max-redirs", required_argument, 0, OPT_MAX_REDIRS},
    {"retry", required_argument, 0, OPT_RETRY},
    {"retry-delay", required_argument, 0, OPT_RETRY_DELAY},
    {"retry-max-delay", required_argument, 0, OPT_RETRY_MAX_DELAY},
    {"no-reuse", no_argument, 0, OPT_NO_REUSE},
    {"reuse", no_argument, 0, OPT_REUSE},
    {"user-agent", required_argument, 0, 'A'},
    {"header", required_argument, 0, 'H'},
    {"cookie", required_argument, 0, OPT_COOKIE},
    {"cookie-jar", required_argument, 0, OPT_COOKIE_JAR},
    {"proxy", required_argument, 0, 'x'},
    {"noproxy", required_argument, 0, OPT_NOPROXY},
    {"resolve", required_argument, 0, OPT_RESOLVE},
    {"fail", no_argument, 0, OPT_FAIL},
    {"max-size", required_argument, 0, OPT_MAX_SIZE},
    {"buffer-size", required_argument, 0, OPT_BUFFER_SIZE},
    {"insecure", no_argument, 0, 'k'},
    {"cacert", required_argument, 0, OPT_CACERT},
    {"stack-size", required_argument, 0, OPT_STACK_SIZE},
    {"loops", required_argument, 0, OPT_LOOPS},
    {"procs", required_argument, 0, OPT_PROCS},
    {"worker-timeout", required_argument, 0, OPT_WORKER_TIMEOUT},
    {"parse-threads", required_argument, 0, OPT_PARSE_THREADS},
    {"format", required_argument, 0, OPT_FORMAT},
    {"order", required_argument, 0, OPT_ORDER},
    {"output", required_argument, 0, 'o'},
    {"quiet", no_argument, 0, 'q'},
    {"progress", no_argument, 0, OPT_PROGRESS},
    {"no-progress", no_argument, 0, OPT_NO_PROGRESS},
    {"modes", required_argument, 0, OPT_MODES},
    {"repeat", required_argument, 0, OPT_REPEAT},
    {"deadline", required_argument, 0, OPT_DEADLINE},
    {"depth", required_argument, 0, OPT_DEPTH},
    {"max-pages", required_argument, 0, OPT_MAX_PAGES},
    {"max-queue", required_argument, 0, OPT_MAX_QUEUE},
    {"span-hosts", no_argument, 0, OPT_SPAN_HOSTS},
    {"include", required_argument, 0, OPT_INCLUDE},
    {"exclude", required_argument, 0, OPT_EXCLUDE},
    {"canonical", no_argument, 0, OPT_CANONICAL},
    {"strip-query", required_argument, 0, OPT_STRIP_QUERY},
    {"links-out", required_argument, 0, OPT_LINKS_OUT},
    {"follow", required_argument, 0, OPT_FOLLOW},
    {"extract", required_argument, 0, OPT_EXTRACT},
    {"sitemaps", no_argument, 0, OPT_SITEMAPS},
    {"no-robots", no_argument, 0, OPT_NO_ROBOTS},
    {"robots-agent", required_argument, 0, OPT_ROBOTS_AGENT},
    {"per-host", required_argument, 0, OPT_PER_HOST},
    {"delay", required_argument, 0, OPT_DELAY},
    {"ignore-crawl-delay", no_argument, 0, OPT_IGNORE_CRAWL_DELAY},
    {"auto-throttle", no_argument, 0, OPT_AUTO_THROTTLE},
    {"list-modes", optional_argument, 0, OPT_LIST_MODES},
    {"trace", required_argument, 0, OPT_TRACE},
    {"warc", required_argument, 0, OPT_WARC},
    {"warc-max-size", required_argument, 0, OPT_WARC_MAX_SIZE},
    {"cdx", required_argument, 0, OPT_CDX},
    {"warc-dedupe-cdx", required_argument, 0, OPT_WARC_DEDUPE_CDX},
    {"dedupe", no_argument, 0, OPT_DEDUPE},
    {"save", required_argument, 0, OPT_SAVE},
    {"state", required_argument, 0, OPT_STATE},
    {"frontier", required_argument, 0, OPT_FRONTIER},
    {"lease", required_argument, 0, OPT_LEASE},
    {"frontier-retry", required_argument, 0, OPT_FRONTIER_RETRY},
    {"status", no_argument, 0, OPT_STATUS},
    {"recrawl", no_argument, 0, OPT_RECRAWL},
    {"recrawl-older", required_argument, 0, OPT_RECRAWL_OLDER},
    {"validators", required_argument, 0, OPT_VALIDATORS},
    {"if-modified-since", required_argument, 0, OPT_IF_MODIFIED_SINCE},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {0, 0, 0, 0},
};


/* Compiles pattern for flag into *re, or exits 2 naming the flag. */
/* Writes s as roff text: a backslash doubled, a hyphen escaped (options
 * read as typed), a sentence that would start a line with a dot kept text. */
static void roff_text(const char *s)
{
    for (; *s; s++) {
        if (*s == '-')
            fputs("\\-", stdout);
        else if (*s == '\\')
            fputs("\\e", stdout);
        else
            putchar(*s);
        if (*s == '.' && s[1] == ' ') {
            putchar('\n');     /* one sentence a line, as roff likes */
            s++;
        }
    }
    putchar('\n');
}

/* --list-modes[=names|limits|man]: the registry, one model a line, and
 * exits 0 (2 for another WHAT). */
static void list_modes(const char *what)
{
    for (int i = 0; crawl_backends[i]; i++) {
        const struct crawl_backend *b = crawl_backends[i];
        if (!what || strcmp(what, "names") == 0) {
            printf("%s\n", b->name);
        } else if (strcmp(what, "limits") == 0) {
            printf("%s %d\n", b->name, b->max_concurrency);
        } else if (strcmp(what, "man") == 0) {
            printf(".TP\n.B %s\n", b->name);
            if (b == crawl_backend_default())
                printf("The default.\n");
            roff_text(b->manual ? b->manual : b->summary);
        } else {
            die_usage("--list-modes: expected names, limits or man, got '%s'", what);
        }
    }
    exit(0);
}

static void compile_regex(const char *flag, const char *pattern, regex_t *re)
{
    /* --strip-query's must say where a match ends (url_canonical). */
    int nosub = strcmp(flag, "--strip-query") != 0 ? REG_NOSUB : 0;
    int rc = regcomp(re, pattern, REG_EXTENDED | nosub);
    if (rc != 0) {
        char msg[256];
        regerror(rc, re, msg, sizeof msg);
        die_usage("%s: bad regular expression '%s': %s", flag, pattern, msg);
    }
}

/* Is s (n bytes) an address libcurl connects to: IPv4, or IPv6 in
 * brackets? */
static int resolve_address(const char *s, size_t n)
{
    char buf[64];
    unsigned char bin[16];
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        if (n - 2 >= sizeof buf)
            return 0;
        snprintf(buf, sizeof buf, "%.*s", (int)(n - 2), s + 1);
        return inet_pton(AF_INET6, buf, bin) == 1;
    }
    if (n >= sizeof buf)
        return 0;
    snprintf(buf, sizeof buf, "%.*s", (int)n, s);
    return inet_pton(AF_INET, buf, bin) == 1;
}

/* Is e a --resolve entry, HOST:PORT:ADDR[,ADDR...]? */
static int resolve_entry(const char *e)
{
    const char *c1 = strchr(e, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || c1 == e || !c2 || c2 == c1 + 1 || !c2[1])
        return 0;
    char *end;
    long port = strtol(c1 + 1, &end, 10);
    if (end != c2 || port < 1 || port > 65535)
        return 0;
    for (const char *a = c2 + 1;;) {
        const char *comma = strchr(a, ',');
        size_t n = comma ? (size_t)(comma - a) : strlen(a);
        if (!resolve_address(a, n))
            return 0;
        if (!comma)
            return 1;
        a = comma + 1;
    }
}

static void resolve_add(struct crawl_opts *o, const char *e)
{
    struct curl_slist *l = curl_slist_append(o->resolve, e);
    if (!l)
        die_usage("--resolve: out of memory");
    o->resolve = l;
}

/* --resolve HOST:PORT:ADDR, or @FILE of them, one a line (blank lines and
 * lines starting with # skipped). Exits 2 on one that is not. */
static void opt_resolve(struct crawl_opts *o, const char *arg)
{
    if (arg[0] != '@') {
        if (!resolve_entry(arg))
            die_usage("--resolve: expected HOST:PORT:ADDRESS, got '%s'", arg);
        resolve_add(o, arg);
        return;
    }
    FILE *f = fopen(arg + 1, "re");
    if (!f)
        die_usage("--resolve: cannot read '%s': %s", arg + 1, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long no = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                           line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = '\0';
        char *e = line + strspn(line, " \t");
        if (!*e || *e == '#')
            continue;
        if (!resolve_entry(e))
            die_usage("--resolve: %s:%ld: expected HOST:PORT:ADDRESS, got '%s'", arg + 1, no, e);
        resolve_add(o, e);
    }
    int err = ferror(f) ? errno : 0;
    free(line);
    fclose(f);
    if (err)
        die_usage("--resolve: cannot read '%s': %s", arg + 1, strerror(err));
}

/* Exits 2 unless the cookie jar can be read (when it exists) and written,
 * which for a directory it never can (access(2) allows root it all): the
 * run would fetch everything to lose the cookies at the end. */
static void check_jar(const char *path)
{
    char dir[PATH_MAX];
    struct stat st;
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        die_usage("--cookie-jar: '%s' is a directory, not a cookie file", path);
    if (access(path, F_OK) == 0 ? access(path, R_OK | W_OK) != 0 : access(dir, W_OK) != 0)
        die_usage("--cookie-jar: cannot read and write '%s': %s", path, strerror(errno));
}

/* Options of the model and the run. Returns 1 when ch was one of them. */
static int opt_model(struct cli *cli, int ch)
{
    struct crawl_opts *o = &cli->opts;
    char names[256];
    switch (ch) {
    case OPT_MODE:
        if (strcmp(optarg, "all") != 0 && !crawl_backend_find(optarg))
            die_usage("--mode: unknown mode '%s' (%s or all)", optarg,
                      crawl_backend_names(names, sizeof names, ", "));
        cli->mode = optarg;
        return 1;
    case 'c':
        o->concurrency = (int)parse_long("--concurrency", optarg, 1, 1000000);
        return 1;
    case OPT_STACK_SIZE:
        o->stack_size = (size_t)parse_size("--stack-size", optarg, 16 * 1024);
        cli->given |= GIVEN_STACK;
        return 1;
    case OPT_LOOPS:
        o->loops = (int)parse_long("--loops", optarg, 1, 256);
        cli->given |= GIVEN_LOOPS;
        return 1;
    case OPT_PROCS:
        o->procs = (int)parse_long("--procs", optarg, 1, 256);
        cli->given |= GIVEN_PROCS;
        return 1;
    case OPT_WORKER_TIMEOUT:
        o->worker_timeout = parse_seconds("--worker-timeout", optarg);
        cli->given |= GIVEN_WTIMEOUT;
        return 1;
    case OPT_PARSE_THREADS:
        o->parse_threads = (int)parse_long("--parse-threads", optarg, 0, 256);
        cli->given |= GIVEN_PARSE;
        return 1;
    case OPT_DEADLINE:
        o->deadline = parse_seconds("--deadline", optarg);
        return 1;
    }
    return 0;
}

/* Options of each request. Returns 1 when ch was one of them. */
static int opt_request(struct cli *cli, int ch)
{
    struct crawl_opts *o = &cli->opts;
    switch (ch) {
    case OPT_TIMEOUT:
        o->timeout = parse_seconds("--timeout", optarg);
        return 1;
    case OPT_CONNECT_TIMEOUT:
        o->connect_timeout = parse_seconds("--connect-timeout", optarg);
        return 1;
    case OPT_MAX_REDIRS:
        o->max_redirs = parse_long("--max-redirs", optarg, 0, 1000);
        return 1;
    case OPT_RETRY:
        o->retry = (int)parse_long("--retry", optarg, 0, 100);
        return 1;
    case OPT_RETRY_DELAY:
        o->retry_delay = parse_seconds("--retry-delay", optarg);
        return 1;
    case OPT_RETRY_MAX_DELAY:
        o->retry_max_delay = parse_seconds("--retry-max-delay", optarg);
        return 1;
    case OPT_NO_REUSE:
        o->reuse = CRAWL_REUSE_OFF;
        return 1;
    case OPT_REUSE:
        o->reuse = CRAWL_REUSE_ON;
        return 1;
    case 'A':
        o->user_agent = optarg;
        return 1;
    case 'H': {
        if (!strchr(optarg, ':') && !strchr(optarg, ';'))
            die_usage("--header: expected 'Name: value', got '%s'", optarg);
        struct curl_slist *l = curl_slist_append(o->headers, optarg);
        if (!l)
            die_usage("--header: out of memory");
        o->headers = l;
        return 1;
    }
    case OPT_COOKIE:
        if (!strchr(optarg, '='))
            die_usage("--cookie: expected 'NAME=VALUE; ...', got '%s'", optarg);
        o->cookie = optarg;
        return 1;
    case OPT_COOKIE_JAR:
        check_jar(optarg);
        o->cookie_jar = optarg;
        return 1;
    case 'x':
        o->proxy = optarg;
        return 1;
    case OPT_NOPROXY:
        o->noproxy = optarg;
        return 1;
    case OPT_RESOLVE:
        opt_resolve(o, optarg);
        return 1;
    case OPT_FAIL:
        o->fail_http = 1;
        return 1;
    case OPT_MAX_SIZE:
        o->max_size = parse_size("--max-size", optarg, 0);
        return 1;
    case OPT_BUFFER_SIZE:
        o->buffer_size = (long)parse_size("--buffer-size", optarg, 1024);
        if (o->buffer_size > 512 * 1024)
            die_usage("--buffer-size: at most 512K, got '%s'", optarg);
        return 1;
    case 'k':
        o->insecure = 1;
        return 1;
    case OPT_CACERT: {
        FILE *f = fopen(optarg, "r");
        if (!f)
            die_usage("--cacert: cannot read '%s': %s", optarg, strerror(errno));
        fclose(f);
        o->cacert = optarg;
        return 1;
    }
    }
    return 0;
}

static void check_writable(const char *flag, const char *path);

/* Options of the output and of --mode=all. Returns 1 when ch was one of them. */
static int opt_output(struct cli *cli, int ch)
{
    switch (ch) {
    case OPT_FORMAT:
        if (strcmp(optarg, "table") == 0) cli->format = CRAWL_FMT_TABLE;
        else if (strcmp(optarg, "jsonl") == 0) cli->format = CRAWL_FMT_JSONL;
        else if (strcmp(optarg, "csv") == 0) cli->format = CRAWL_FMT_CSV;
        else die_usage("--format: expected table, jsonl or csv, got '%s'", optarg);
        return 1;
    case OPT_ORDER:
        if (strcmp(optarg, "input") == 0) cli->order = CRAWL_ORDER_INPUT;
        else if (strcmp(optarg, "completion") == 0) cli->order = CRAWL_ORDER_COMPLETION;
        else die_usage("--order: expected input or completion, got '%s'", optarg);
        cli->given |= GIVEN_ORDER;
        return 1;
    case 'o':
        cli->output = optarg;
        return 1;
    case 'q':
        cli->quiet = 1;
        return 1;
    case OPT_TRACE:
        cli->trace = optarg;
        return 1;
    case OPT_LINKS_OUT:
        check_writable("--links-out", optarg);
        cli->links_out = cli->opts.links_out = optarg;
        return 1;
    case OPT_STATE:
        cli->state_file = optarg;
        return 1;
    case OPT_FRONTIER:
        if (strncasecmp(optarg, "redis://", 8) != 0)
            die_usage("--frontier: expected redis://HOST[:PORT]/NAME, got '%s'", optarg);
        cli->frontier = optarg;
        return 1;
    case OPT_LEASE:
        cli->lease = parse_seconds("--lease", optarg);
        return 1;
    case OPT_FRONTIER_RETRY:
        cli->frontier_retry = parse_seconds("--frontier-retry", optarg);
        return 1;
    case OPT_STATUS:
        cli->status = 1;
        return 1;
    case OPT_PROGRESS:
        cli->progress = 1;
        return 1;
    case OPT_NO_PROGRESS:
        cli->progress = 0;
        return 1;
    case OPT_MODES:
        cli->modes = optarg;
        cli->given |= GIVEN_MODES;
        return 1;
    case OPT_REPEAT:
        cli->repeat = (int)parse_long("--repeat", optarg, 1, 100);
        cli->given |= GIVEN_REPEAT;
        return 1;
    case OPT_LIST_MODES:
        list_modes(optarg);
    }
    return 0;
}

/* Exits 2 unless a file can be made at path: its directory is writable
 * and path is not a directory. */
static void check_writable(const char *flag, const char *path)
{
    char dir[PATH_MAX];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        die_usage("%s: cannot write '%s': Is a directory", flag, path);
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    if (access(dir, W_OK | X_OK) != 0)
        die_usage("%s: cannot write '%s': %s", flag, path, strerror(errno));
}

/* Options of conditional requests: a recrawl of a store, the validators of
 * a list. Returns 1 when ch was one of them. */
static int opt_recrawl(struct cli *cli, int ch)
{
    time_t t;
    switch (ch) {
    case OPT_RECRAWL:
        cli->recrawl = 1;
        return 1;
    case OPT_RECRAWL_OLDER:
        cli->recrawl_older = parse_seconds("--recrawl-older", optarg);
        return 1;
    case OPT_VALIDATORS:
        check_writable("--validators", optarg);
        cli->validators = optarg;
        return 1;
    case OPT_IF_MODIFIED_SINCE:
        if (validators_parse_date(optarg, &t) != 0)
            die_usage("--if-modified-since: expected an HTTP date (Sun, 06 Nov 1994 08:49:37 "
                      "GMT) or an ISO 8601 date (1994-11-06, 1994-11-06T08:49:37Z), got '%s'",
                      optarg);
        validators_format_date(t, cli->if_modified_since);
        return 1;
    }
    return 0;
}

/* Options that keep what is fetched. Returns 1 when ch was one of them. */
static int opt_keeping(struct cli *cli, int ch)
{
    struct crawl_opts *o = &cli->opts;
    size_t n;
    switch (ch) {
    case OPT_WARC:
        n = strlen(optarg);
        if (n <= 8 || strcmp(optarg + n - 8, ".warc.gz") != 0)
            die_usage("--warc: expected a file name ending in .warc.gz, got '%s'", optarg);
        check_writable("--warc", optarg);
        o->warc = optarg;
        return 1;
    case OPT_WARC_MAX_SIZE:
        o->warc_max_size = parse_size("--warc-max-size", optarg, 1);
        return 1;
    case OPT_CDX:
        check_writable("--cdx", optarg);
        o->cdx = optarg;
        return 1;
    case OPT_WARC_DEDUPE_CDX: {
        struct stat st;
        FILE *f = fopen(optarg, "re");
        if (!f)
            die_usage("--warc-dedupe-cdx: cannot read '%s': %s", optarg, strerror(errno));
        int dir = fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode);
        fclose(f);
        if (dir)
            die_usage("--warc-dedupe-cdx: cannot read '%s': Is a directory", optarg);
        o->warc_dedupe_cdx = optarg;
        return 1;
    }
    case OPT_DEDUPE:
        o->dedupe = 1;
        return 1;
    case OPT_SAVE: {
        struct stat st;
        if (mkdir(optarg, 0777) != 0 && errno != EEXIST)
            die_usage("--save: cannot make directory '%s': %s", optarg, strerror(errno));
        if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode) || access(optarg, W_OK | X_OK) != 0)
            die_usage("--save: '%s' is not a directory crawl can write in", optarg);
        o->save_dir = optarg;
        return 1;
    }
    }
    return 0;
}

/* The command line as one line, for the warcinfo record. */
static const char *command_line(int argc, char **argv)
{
    static char line[4096];
    size_t o = 0;
    for (int i = 0; i < argc && o + 1 < sizeof line; i++)
        o += (size_t)snprintf(line + o, sizeof line - o, "%s%s", i ? " " : "", argv[i]);
    for (char *p = line; *p; p++)
        if (*p == '\r' || *p == '\n')
            *p = ' ';
    return line;
}

/* Options of link following. Returns 1 when ch was one of them. */
static int opt_following(struct cli *cli, int ch)
{
    struct crawl_opts *o = &cli->opts;
    switch (ch) {
    case OPT_DEPTH:
        o->depth = (int)parse_long("--depth", optarg, 0, 1000);
        return 1;
    case OPT_MAX_PAGES:
        o->max_pages = parse_long("--max-pages", optarg, 1, 1000000000);
        return 1;
    case OPT_MAX_QUEUE:
        o->max_queue = (size_t)parse_long("--max-queue", optarg, 0, 1000000000000L);
        cli->given |= GIVEN_MAX_QUEUE;
        return 1;
    case OPT_SPAN_HOSTS:
        o->span_hosts = 1;
        return 1;
    case OPT_INCLUDE:
        if (o->ninclude == sizeof cli->include / sizeof cli->include[0])
            die_usage("--include: at most 32 patterns");
        cli->include_src[o->ninclude] = optarg;
        compile_regex("--include", optarg, &cli->include[o->ninclude++]);
        o->include = cli->include;
        cli->given |= GIVEN_INCLUDE;
        return 1;
    case OPT_EXCLUDE:
        if (o->nexclude == sizeof cli->exclude / sizeof cli->exclude[0])
            die_usage("--exclude: at most 32 patterns");
        cli->exclude_src[o->nexclude] = optarg;
        compile_regex("--exclude", optarg, &cli->exclude[o->nexclude++]);
        o->exclude = cli->exclude;
        cli->given |= GIVEN_EXCLUDE;
        return 1;
    case OPT_CANONICAL:
        o->canonical = 1;
        cli->given |= GIVEN_CANONICAL;
        return 1;
    case OPT_STRIP_QUERY:
        if (o->nstrip_query == sizeof cli->strip / sizeof cli->strip[0])
            die_usage("--strip-query: at most 32 patterns");
        cli->strip_src[o->nstrip_query] = optarg;
        compile_regex("--strip-query", optarg, &cli->strip[o->nstrip_query++]);
        o->strip_query = cli->strip;
        cli->given |= GIVEN_STRIP;
        return 1;
    case OPT_FOLLOW:
        cli->follow = optarg;
        return 1;
    case OPT_EXTRACT:
        if (cli->nextract == (int)(sizeof cli->extract / sizeof cli->extract[0]))
            die_usage("--extract: at most 64 rules");
        cli->extract[cli->nextract++] = optarg;
        return 1;
    case OPT_SITEMAPS:
        o->sitemaps = 1;
        return 1;
    case OPT_NO_ROBOTS:
        o->robots = 0;
        return 1;
    case OPT_ROBOTS_AGENT:
        if (!robots_agent_valid(optarg))
            die_usage("--robots-agent: expected a product token (letters, '-' and '_'), got '%s'",
                      optarg);
        o->robots_agent = optarg;
        return 1;
    case OPT_PER_HOST:
        o->per_host = (int)parse_long("--per-host", optarg, 1, 1000000);
        return 1;
    case OPT_DELAY:
        o->delay = (double)parse_long("--delay", optarg, 0, 3600000) / 1000.0;
        return 1;
    case OPT_IGNORE_CRAWL_DELAY:
        o->ignore_crawl_delay = 1;
        cli->given |= GIVEN_IGNORE_CD;
        return 1;
    case OPT_AUTO_THROTTLE:
        o->auto_throttle = 1;
        return 1;
    }
    return 0;
}

/* Compiles the --follow and --extract rules into cli->rules, or exits 2
 * naming the flag that is wrong. */
static void compile_rules(struct cli *cli)
{
    char err[512];
    /* The follow XPath alone first, so that a message names the right flag. */
    int rc = html_rules_new(cli->follow, NULL, 0, &cli->rules, err, sizeof err);
    if (rc == 0) {
        html_rules_free(cli->rules);
        cli->rules = NULL;
        rc = html_rules_new(cli->follow, cli->extract, cli->nextract, &cli->rules,
                            err, sizeof err);
        if (rc != 0 && rc != CRAWL_ENOMEM)
            die_usage("--extract: %s", err);
    } else if (rc != CRAWL_ENOMEM) {
        die_usage("--follow: %s", err);
    }
    if (rc == CRAWL_ENOMEM)
        die_usage("out of memory");
    cli->opts.rules = cli->rules;
}

/* Whether model m is in the comma-separated list. */
static int model_listed(const char *list, const char *m)
{
    size_t n = strlen(m);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, m, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Whether a model that reads opt (CRAWL_MODEL_*) runs: the one --mode
 * names, or, with --mode=all, one of those compared. */
static int option_runs(const struct cli *cli, int all, unsigned opt)
{
    for (int i = 0; crawl_backends[i]; i++) {
        const struct crawl_backend *b = crawl_backends[i];
        if ((b->options & opt) && (strcmp(cli->mode, b->name) == 0 ||
                                   (all && model_listed(cli->modes, b->name))))
            return 1;
    }
    return 0;
}

/* Names the models of the registry that read opt, as a sentence does:
 * "--mode=coro" when one does, "coro and procs", "a, b and c". Returns
 * buf (size n). */
static const char *option_models(unsigned opt, char *buf, size_t n)
{
    const struct crawl_backend *v[64];
    int k = 0;
    for (int i = 0; crawl_backends[i] && k < 64; i++)
        if (crawl_backends[i]->options & opt)
            v[k++] = crawl_backends[i];
    size_t o = 0;
    buf[0] = '\0';
    if (k == 1)
        snprintf(buf, n, "--mode=%s", v[0]->name);
    for (int i = 0; k > 1 && i < k && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s",
                              i == 0 ? "" : i == k - 1 ? " and " : ", ", v[i]->name);
    return buf;
}

/* Says once for each flag given that this run will not use. -c is a
 * bound that seq, one URL at a time, always keeps: not ignored, and
 * common in loops over every model, so nothing is said of it. A flag
 * only some models read (opt) is used when one of them runs; its reason
 * ends with their names, from the registry. */
static void warn_ignored(const struct cli *cli)
{
    int all = strcmp(cli->mode, "all") == 0;
    static const struct {
        unsigned flag;
        const char *name, *why;
        unsigned opt;               /* CRAWL_MODEL_*, or 0 */
        const char *after;          /* the reason's end, after the models */
    } notes[] = {
        { GIVEN_MODES, "--modes", "it picks the models of --mode=all", 0, "" },
        { GIVEN_REPEAT, "--repeat", "it repeats the runs of --mode=all", 0, "" },
        { GIVEN_LOOPS, "--loops", "it sets the event loops of ", CRAWL_MODEL_LOOPS, "" },
        { GIVEN_PROCS, "--procs", "it sets the worker processes of ", CRAWL_MODEL_PROCS, "" },
        { GIVEN_WTIMEOUT, "--worker-timeout", "it bounds the worker processes of ",
          CRAWL_MODEL_PROCS, "" },
        { GIVEN_STACK, "--stack-size", "it sizes the coroutines of ", CRAWL_MODEL_STACK, "" },
        { GIVEN_PARSE, "--parse-threads", "it sets the parse threads of ",
          CRAWL_MODEL_PARSE_THREADS, ", which parse pages only with --depth or --extract" },
        { GIVEN_INCLUDE, "--include", "links are followed only with --depth or --sitemaps", 0, "" },
        { GIVEN_EXCLUDE, "--exclude", "links are followed only with --depth or --sitemaps", 0, "" },
        { GIVEN_CANONICAL, "--canonical", "the set of URLs seen is kept only with --depth or "
          "--sitemaps", 0, "" },
        { GIVEN_STRIP, "--strip-query", "the set of URLs seen is kept only with --depth or "
          "--sitemaps", 0, "" },
        { GIVEN_MAX_QUEUE, "--max-queue", "it bounds the queue of links found, which only "
          "--depth or --sitemaps fill, and which --state or --frontier keep in their store",
          0, "" },
        { GIVEN_IGNORE_CD, "--ignore-crawl-delay",
          "robots.txt is obeyed only with --depth or --sitemaps, and not with --no-robots", 0, "" },
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++) {
        unsigned f = notes[i].flag;
        if (!(cli->given & f))
            continue;
        int used = f == GIVEN_MODES || f == GIVEN_REPEAT ? all
                 : f == GIVEN_PARSE ? option_runs(cli, all, notes[i].opt) &&
                                      (cli->opts.depth > 0 || cli->nextract > 0)
                 : notes[i].opt ? option_runs(cli, all, notes[i].opt)
                 : f == GIVEN_IGNORE_CD ? (cli->opts.depth > 0 || cli->opts.sitemaps) &&
                                          cli->opts.robots
                 : f == GIVEN_MAX_QUEUE ? (cli->opts.depth > 0 || cli->opts.sitemaps) &&
                                          !cli->state
                 : cli->opts.depth > 0 || cli->opts.sitemaps;
        char models[256] = "";
        if (!used && !cli->child)
            fprintf(stderr, "crawl: warning: %s is ignored here: %s%s%s\n", notes[i].name,
                    notes[i].why, notes[i].opt ? option_models(notes[i].opt, models,
                                                               sizeof models) : "",
                    notes[i].after);
    }
}

/* Exits 2 for conditional requests the run cannot make: a recrawl needs a
 * store, which keeps each page's validators and links; the validators of
 * a list are for a list (a 304 gives no links to follow) and one model. */
static void check_conditional(const struct cli *cli)
{
    const char *list = cli->validators ? "--validators"
                       : cli->if_modified_since[0] ? "--if-modified-since" : NULL;
    if (cli->recrawl_older && !cli->recrawl)
        die_usage("--recrawl-older: needs --recrawl, whose pass it limits");
    if (cli->recrawl && !cli->state)
        die_usage("--recrawl: needs --state FILE or --frontier URL, whose store keeps each "
                  "page's validators and links");
    if (list && cli->state)
        die_usage("%s: not with %s, whose store keeps each page's validators (--recrawl)", list,
                  cli->frontier ? "--frontier" : "--state");
    if (list && (cli->opts.depth > 0 || cli->opts.sitemaps))
        die_usage("%s: for a list, not with %s (a page that answers 304 gives no links to "
                  "follow; --state and --recrawl keep them)", list,
                  cli->opts.depth > 0 ? "--depth" : "--sitemaps");
    if (cli->validators && strcmp(cli->mode, "all") == 0)
        die_usage("--validators: one model at a time (with --mode=all each model would find "
                  "the validators the one before it wrote)");
}

/* Exits 2 for what a --state or --frontier crawl cannot do; its rows are
 * then written in completion order. */
static void check_store(struct cli *cli)
{
    if (!cli->state)
        return;
    const char *name = cli->frontier ? "--frontier" : "--state";
    if (strcmp(cli->mode, "all") == 0)
        die_usage("%s: one model at a time, not --mode=all", name);
    if (cli->format == CRAWL_FMT_TABLE)
        die_usage("%s: needs --format=jsonl or --format=csv (rows written as pages finish)", name);
    if (!cli->output)
        die_usage("%s: needs -o FILE, which the next run continues", name);
    if (cli->quiet)
        die_usage("%s: the rows are the crawl's record; -q would drop them", name);
    if ((cli->given & GIVEN_ORDER) && cli->order == CRAWL_ORDER_INPUT)
        die_usage("%s: rows are written in completion order, not --order=input", name);
    if (cli->opts.sitemaps)
        die_usage("%s: --sitemaps is not kept in the store (a resumed run would read "
                  "the sitemaps again)", name);
    if (cli->opts.warc)
        die_usage("%s: --warc is not continued by a resumed run (it would start the "
                  "archive again)", name);
    if (cli->opts.dedupe)
        die_usage("%s: --dedupe's digests are one run's, not kept in the store (a "
                  "resumed run would not know the pages before it)", name);
    cli->order = CRAWL_ORDER_COMPLETION;
}

void cli_parse(struct cli *cli, int argc, char **argv)
{
    static char all_modes[256];
    char version[256];
    int ch;

    crawl_opts_init(&cli->opts);
    cli->mode = crawl_backend_default()->name;
    cli->modes = crawl_backend_names(all_modes, sizeof all_modes, ",");
    cli->repeat = 1;
    cli->progress = -1;
    cli->argc = argc;
    cli->argv = argv;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":c:A:H:o:x:qkhV", long_opts, NULL)) != -1) {
        if (opt_model(cli, ch) || opt_request(cli, ch) || opt_output(cli, ch) ||
            opt_following(cli, ch) || opt_keeping(cli, ch) || opt_recrawl(cli, ch))
            continue;
        switch (ch) {
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            puts(crawl_version_line(version, sizeof version));
            exit(0);
        case ':':
            if (optopt > 0 && optopt < 256)
                die_usage("-%c: needs a value", optopt);
            die_usage("%s: needs a value", argv[optind - 1]);
        default:
            if (optopt > 0 && optopt < 256)
                die_usage("-%c: unknown option", optopt);
            die_usage("%s: unknown option", argv[optind - 1]);
        }
    }
    cli->inputs = argv + optind;
    cli->ninputs = argc - optind;
    if (cli->status) {
        if (!cli->frontier)
            die_usage("--status: needs --frontier URL, the crawl to report on");
        if (cli->ninputs)
            die_usage("--status: takes no URL or list (the crawl's lists are in the server)");
        return;
    }
    if ((cli->lease || cli->frontier_retry) && !cli->frontier)
        die_usage("%s: needs --frontier", cli->lease ? "--lease" : "--frontier-retry");
    if (cli->state_file && cli->frontier)
        die_usage("--state and --frontier: one store or the other");
    cli->state = cli->frontier ? cli->frontier : cli->state_file;
    if (cli->ninputs == 0)
        die_usage("no URL, URL-list file or - given");
    if (cli->follow || cli->nextract || cli->opts.depth > 0 || cli->links_out)
        compile_rules(cli);
    warn_ignored(cli);
    if ((cli->opts.cdx || cli->opts.warc_max_size || cli->opts.warc_dedupe_cdx) && !cli->opts.warc)
        die_usage("%s: needs --warc", cli->opts.cdx ? "--cdx" : cli->opts.warc_max_size
                  ? "--warc-max-size" : "--warc-dedupe-cdx");
    if (cli->opts.warc && strcmp(cli->mode, "all") == 0)
        die_usage("--warc: one model at a time (--mode=all would write each model's "
                  "fetches over the last)");
    if (cli->links_out && strcmp(cli->mode, "all") == 0)
        die_usage("--links-out: one model at a time (--mode=all would write each model's "
                  "links over the last)");
    cli->opts.warc_options = command_line(argc, argv);
    check_store(cli);
    check_conditional(cli);
    /* The table and -q show no digest column: no body's SHA-1 is taken
     * for them (--dedupe still takes it). */
    cli->opts.digests = !cli->quiet && cli->format != CRAWL_FMT_TABLE;
    /* robots.txt is read for a product token: the user agent must start
     * with one, or --robots-agent give it. */
    const struct crawl_opts *o = &cli->opts;
    if ((o->depth > 0 || o->sitemaps) && o->robots && !o->robots_agent &&
        robots_token_len(o->user_agent) == 0)
        die_usage("--user-agent: '%s' does not start with a product token (letters, '-' and '_') "
                  "to read robots.txt for; give one with --robots-agent", o->user_agent);
}

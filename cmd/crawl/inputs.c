/* inputs.c: the crawl command's inputs: the URLs and the lists its
 * command line names, each list opened (a file, standard input for "-")
 * and checked (a name that is no file but reads like a host, a
 * directory, standard input twice), copied first when --mode=all's models
 * must each read one that cannot be read twice, and handed to the core as
 * one struct urllist, whose lines the core reads as it needs them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "urllist.h"

/* Whether s reads like a URL without its scheme: a host name with a dot
 * (or localhost), then an optional port and path. curl and wget2 would
 * guess http; crawl, whose arguments are also files, says so instead. */
static int looks_like_host(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
    if (n == 0 || (s[n] != '\0' && s[n] != ':' && s[n] != '/'))
        return 0;
    if (s[n] == ':' && !(s[n + 1] >= '0' && s[n + 1] <= '9'))
        return 0;
    if (n == 9 && strncasecmp(s, "localhost", 9) == 0)
        return 1;
    const char *dot = memrchr(s, '.', n);
    if (!dot || s[0] == '.' || dot == s + n - 1)
        return 0;
    /* list.txt is a list that is not there, not a host. */
    static const char *const lists[] = { "txt", "csv", "tsv", "lst", "list", "urls", "json",
                                         "jsonl", "log", "gz" };
    size_t ext = (size_t)(s + n - dot - 1);
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (strlen(lists[i]) == ext && strncasecmp(dot + 1, lists[i], ext) == 0)
            return 0;
    return 1;
}

/* A copy of list f in memory (a memfd, kept open for --mode=all's
 * children, which read it from the start); returns its descriptor, or -1. */
static int copy_list(FILE *f)
{
    int fd = memfd_create("crawl-list", 0);
    char buf[65536];
    size_t n;
    if (fd < 0)
        return -1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (write(fd, buf, n) != (ssize_t)n) {
            close(fd);
            return -1;
        }
    if (ferror(f) || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The copy of input i a --mode=all parent handed down, or -1. */
static int inherited_list(int i)
{
    const char *env = getenv(CLI_INPUTS_ENV);
    int idx, fd, used;
    while (env && sscanf(env, "%d:%d%n", &idx, &fd, &used) == 2) {
        if (idx == i)
            return fd;
        env += used;
    }
    return -1;
}

/* Opens list arg (input i) as a stream the crawl reads; "-" is standard
 * input. Lists that cannot be read twice are copied first for --mode=all. */
static FILE *open_list(struct cli *cli, const char *arg, int i)
{
    int fd = cli->child ? inherited_list(i) : -1;
    if (fd >= 0) {
        FILE *f = fdopen(dup(fd), "r");
        if (!f || fseek(f, 0, SEEK_SET) != 0)
            die_usage("%s: cannot read the list again: %s", arg, strerror(errno));
        return f;
    }
    FILE *f = strcmp(arg, "-") == 0 ? stdin : fopen(arg, "r");
    struct stat st;
    if (!f && errno == ENOENT && looks_like_host(arg)) {
        fprintf(stderr, "crawl: %s: no such file, and not a URL (did you mean "
                "http://%s?)\n", arg, arg);
        exit(EXIT_USAGE);
    }
    if (!f) {
        fprintf(stderr, "crawl: %s: %s\n", arg, strerror(errno));
        exit(EXIT_USAGE);
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "crawl: %s: is a directory\n", arg);
        exit(EXIT_USAGE);
    }
    if (strcmp(cli->mode, "all") == 0 && (f == stdin || !S_ISREG(st.st_mode))) {
        fd = copy_list(f);
        if (fd < 0)
            die_usage("%s: cannot keep a copy of the list: %s", arg, strerror(errno));
        if (f != stdin)
            fclose(f);
        cli->input_fd[i] = fd;
        f = fdopen(dup(fd), "r");
        if (!f)
            die_usage("out of memory");
    }
    return f;
}

struct urllist *cli_open_inputs(struct cli *cli, struct crawl *c)
{
    int stdin_used = 0, rc = 0;
    /* A child of --mode=all reads the lists its parent has checked, and
     * reported on, already. */
    FILE *err = cli->child ? fopen("/dev/null", "w") : stderr;
    struct urllist *l = cli->list = urllist_new(err ? err : stderr);
    cli->input_fd = malloc(sizeof *cli->input_fd * (size_t)(cli->ninputs + 1));
    if (!l || !cli->input_fd)
        die_usage("out of memory");
    for (int i = 0; i < cli->ninputs && rc == 0; i++) {
        const char *arg = cli->inputs[i];
        cli->input_fd[i] = -1;
        if (strncasecmp(arg, "http://", 7) == 0 || strncasecmp(arg, "https://", 8) == 0) {
            rc = urllist_add_url(l, arg, i + 1);
        } else {
            if (strcmp(arg, "-") == 0 && stdin_used++)
                die_usage("-: standard input given twice");
            FILE *f = open_list(cli, arg, i);
            rc = urllist_add_file(l, f, strcmp(arg, "-") == 0 ? "-" : arg, f != stdin);
        }
    }
    if (rc != 0)
        die_usage("out of memory");
    crawl_set_lists(c, l);
    return l;
}

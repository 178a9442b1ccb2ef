/* robots.c: a small robots.txt parser and matcher after RFC 9309: the
 * user-agent, allow and disallow lines, and two lines RFC 9309 leaves to
 * other conventions (its section 2.2.4): Crawl-delay, which belongs to its
 * group as the rules do, and Sitemap (sitemaps.org), which belongs to none.
 * Everything else (comments, garbage) is skipped. Google's parser, the reference
 * implementation, adds rules of its own that crawl does not follow, since
 * RFC 9309 does not have them: a line without its colon is garbage here
 * (Google reads "disallow /" as "disallow: /"), a rule ending in
 * "/index.html" matches that file only (Google also matches its directory),
 * and lines are read whole (Google cuts them at 16,664 bytes). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ascii.h"
#include "robots.h"
#include "url.h"
#include "vec.h"

struct rule {
    char *pattern;
    size_t len;
    int allow;
};

struct robots {
    struct rule *rules;
    size_t n, cap;
    double crawl_delay;         /* seconds; -1: none */
    char **sitemaps;            /* the Sitemap lines' URLs, in order */
    size_t nsitemaps, sitemaps_cap;
};

/* Sitemap lines kept at most: the sitemaps.org protocol lets an index list
 * 50,000 sitemaps, and a robots.txt that lists more than this is not
 * asking to be read whole. */
#define ROBOTS_SITEMAPS_MAX 1000

static struct robots *robots_new(void)
{
    struct robots *r = calloc(1, sizeof *r);
    if (r)
        r->crawl_delay = -1;
    return r;
}

struct robots *robots_all(int allow)
{
    struct robots *r = robots_new();
    if (!r || allow)
        return r;
    r->rules = malloc(sizeof *r->rules);
    if (!r->rules || !(r->rules[0].pattern = strdup("/"))) {
        free(r->rules);
        free(r);
        return NULL;
    }
    r->rules[0].len = 1;
    r->rules[0].allow = 0;
    r->n = r->cap = 1;
    return r;
}

void robots_free(struct robots *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->rules[i].pattern);
    free(r->rules);
    for (size_t i = 0; i < r->nsitemaps; i++)
        free(r->sitemaps[i]);
    free(r->sitemaps);
    free(r);
}

double robots_crawl_delay(const struct robots *r)
{
    return r ? r->crawl_delay : -1;
}

size_t robots_sitemaps(const struct robots *r, char *const **urls)
{
    *urls = r ? r->sitemaps : NULL;
    return r ? r->nsitemaps : 0;
}

/* Keeps a Sitemap line's URL v[0..len). Returns 0 or -1. */
static int add_sitemap(struct robots *r, const char *v, size_t len)
{
    if (len == 0 || r->nsitemaps == ROBOTS_SITEMAPS_MAX)
        return 0;
    if (vec_reserve(&r->sitemaps, &r->sitemaps_cap, r->nsitemaps + 1, sizeof *r->sitemaps, 4) != 0 ||
        !(r->sitemaps[r->nsitemaps] = strndup(v, len)))
        return -1;
    r->nsitemaps++;
    return 0;
}

/* Reads a Crawl-delay value v[0..len): seconds, a decimal fraction
 * allowed ("0.5"), as Bing and Yandex read it. Returns them, or -1 when v
 * is not such a number. */
static double crawl_delay_value(const char *v, size_t len)
{
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf || !isdigit((unsigned char)v[0]))
        return -1;
    memcpy(buf, v, len);
    buf[len] = '\0';
    double d = strtod(buf, &end);
    return *end || !isfinite(d) ? -1 : d;
}

/* Adds the rule p[0..len), its escapes in the form paths have (RFC 9309,
 * 2.2.2: "/á" matches /%C3%A1, "%aa" matches %AA). Returns 0 or -1. */
static int add_rule(struct robots *r, const char *p, size_t len, int allow)
{
    char *s;

    if (vec_reserve(&r->rules, &r->cap, r->n + 1, sizeof *r->rules, 8) != 0 ||
        url_norm_escapes(p, len, &s) != 0)
        return -1;
    r->rules[r->n++] = (struct rule){ s, strlen(s), allow };
    return 0;
}

/* Trims white space at both ends of [*s, *s + *len). */
static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

/* Returns the end of the line that starts at p: the first CR or LF before
 * end, or end. RFC 9309, 2.2 allows CR, LF and CRLF as line ends, and some
 * servers still send old Mac files with CR alone. */
static const char *line_end(const char *p, const char *end)
{
    while (p < end && *p != '\n' && *p != '\r')
        p++;
    return p;
}

size_t robots_token_len(const char *s)
{
    size_t n = 0;

    while (ascii_alpha((unsigned char)s[n]) || s[n] == '-' || s[n] == '_')
        n++;
    return n;
}

int robots_agent_valid(const char *agent)
{
    size_t n = robots_token_len(agent);
    return n > 0 && agent[n] == '\0';
}

/* A user-agent line names us when the product token its value starts
 * with is ours, in any case (RFC 9309, 2.2.1: "User-agent: crawl/1.0" and
 * "User-agent: CRAWL bot" are lines for crawl). "*" counts only when no
 * group names us. */
static int names(const char *v, size_t len, const char *agent)
{
    size_t n = strlen(agent), k = 0;

    while (k < len && (ascii_alpha((unsigned char)v[k]) || v[k] == '-' || v[k] == '_'))
        k++;
    return n > 0 && k == n && strncasecmp(v, agent, n) == 0;
}

/* What robots_parse knows as it goes: one set of rules for the groups
 * naming us, one for "*" (the first is used when any group named us), and
 * the Sitemap lines, whoever they are for. A group is a run of user-agent
 * lines, then rules; which of the two sets its rules go to depends on the
 * agents it names. */
struct parsing {
    struct robots *mine, *star, *maps;
    const char *agent;
    int named;                  /* a group named us */
    int in_agents;              /* the last line was a user-agent line */
    int to_mine, to_star;       /* the current group's rules go there */
};

/* One "key: value" line, both trimmed. Returns 0 or -1 (out of memory). */
static int parse_line(struct parsing *ps, const char *key, size_t klen, const char *val,
                      size_t vlen)
{
    if (klen == 10 && strncasecmp(key, "user-agent", 10) == 0) {
        if (!ps->in_agents) {
            ps->to_mine = ps->to_star = 0;
            ps->in_agents = 1;
        }
        if (names(val, vlen, ps->agent)) {
            ps->to_mine = 1;
            ps->named = 1;
        } else if (vlen >= 1 && *val == '*' && (vlen == 1 || isspace((unsigned char)val[1]))) {
            ps->to_star = 1;
        }
        return 0;
    }
    if (klen == 7 && strncasecmp(key, "sitemap", 7) == 0)
        return add_sitemap(ps->maps, val, vlen);
    if (klen == 11 && strncasecmp(key, "crawl-delay", 11) == 0) {
        /* Part of the group, as a rule is; the first one counts. */
        double d = crawl_delay_value(val, vlen);
        ps->in_agents = 0;
        if (d >= 0 && ps->to_mine && ps->mine->crawl_delay < 0)
            ps->mine->crawl_delay = d;
        if (d >= 0 && ps->to_star && ps->star->crawl_delay < 0)
            ps->star->crawl_delay = d;
        return 0;
    }
    int allow;
    if (klen == 5 && strncasecmp(key, "allow", 5) == 0)
        allow = 1;
    else if (klen == 8 && strncasecmp(key, "disallow", 8) == 0)
        allow = 0;
    else
        return 0;
    ps->in_agents = 0;
    if (vlen == 0)
        return 0;       /* "Disallow:" with no path allows everything */
    if (ps->to_mine && add_rule(ps->mine, val, vlen, allow) != 0)
        return -1;
    if (ps->to_star && add_rule(ps->star, val, vlen, allow) != 0)
        return -1;
    return 0;
}

struct robots *robots_parse(const char *body, size_t len, const char *agent)
{
    struct parsing ps = { robots_new(), robots_new(), robots_new(), agent, 0, 0, 0, 0 };
    if (!ps.mine || !ps.star || !ps.maps)
        goto err;
    const char *end = body + len;
    /* The file is UTF-8 (RFC 9309, 2.2), which some editors start with a
     * byte order mark: it is not part of the first line. As in Google's
     * parser, a mark cut short is skipped too. */
    static const unsigned char mark[] = { 0xEF, 0xBB, 0xBF };
    for (int i = 0; i < 3 && body < end && (unsigned char)*body == mark[i]; i++)
        body++;
    for (const char *line = body; line < end;) {
        const char *le = line_end(line, end);
        const char *hash = memchr(line, '#', (size_t)(le - line));
        const char *s = line;
        size_t n = (size_t)((hash ? hash : le) - line);
        line = le;
        if (line < end && *line++ == '\r' && line < end && *line == '\n')
            line++;     /* CRLF */
        trim(&s, &n);
        const char *colon = memchr(s, ':', n);
        if (!colon)
            continue;
        const char *key = s, *val = colon + 1;
        size_t klen = (size_t)(colon - s), vlen = n - klen - 1;
        trim(&key, &klen);
        trim(&val, &vlen);
        if (parse_line(&ps, key, klen, val, vlen) != 0)
            goto err;
    }
    struct robots *r = ps.named ? ps.mine : ps.star;
    robots_free(ps.named ? ps.star : ps.mine);
    r->sitemaps = ps.maps->sitemaps;
    r->nsitemaps = ps.maps->nsitemaps;
    r->sitemaps_cap = ps.maps->sitemaps_cap;
    free(ps.maps);
    return r;
err:
    robots_free(ps.mine);
    robots_free(ps.star);
    robots_free(ps.maps);
    return NULL;
}

/* Does pattern p (with '*' and a final '$') match s? Without '$' a pattern
 * matches any URL it is a prefix of. The classic greedy wildcard walk with
 * one backtracking point: linear in practice, and never exponential however
 * many '*' a hostile robots.txt puts in a rule. */
static int match(const char *p, const char *s)
{
    size_t plen = strlen(p);
    int anchored = plen > 0 && p[plen - 1] == '$';
    if (anchored)
        plen--;
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    size_t slen = strlen(s);
    while (si < slen) {
        if (pi == plen && !anchored)
            return 1;
        if (pi < plen && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (pi < plen && p[pi] == s[si]) {
            pi++;
            si++;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return 0;
        }
    }
    while (pi < plen && p[pi] == '*')
        pi++;
    return pi == plen;
}

int robots_allowed(const struct robots *r, const char *path)
{
    size_t best = 0;
    int verdict = 1, found = 0;
    if (!r)
        return 1;
    for (size_t i = 0; i < r->n; i++) {
        const struct rule *ru = &r->rules[i];
        if (!match(ru->pattern, path))
            continue;
        if (!found || ru->len > best || (ru->len == best && ru->allow)) {
            best = ru->len;
            verdict = ru->allow;
            found = 1;
        }
    }
    return verdict;
}

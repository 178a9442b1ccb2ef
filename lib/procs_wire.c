/* procs_wire.c: a result's wire form between a procs worker and its
 * coordinator, and the worker's options, each from one table. The worker
 * puts a result and the coordinator gets it by walking the same field
 * list, so the two sides cannot drift apart; a field added to struct
 * crawl_result or struct crawl_opts without a line in its table stops the
 * build (see the completeness checks below). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procs.h"
#include "wire.h"

/* Every field of struct crawl_result, in declaration order, with how it
 * goes over the wire:
 *   INT      an integer (any width, signed or not), as 64 bits
 *   F64      a double
 *   INSTANT  seconds from the crawl's start (0: none), sent as a monotonic
 *            instant, since each side's crawl started at another moment
 *   STR      a string or NULL
 *   ERROR    the error text, set with the failure class (job_error_set)
 *   EXTRACTS the --extract values, with nextracts (COUNT) their number
 *   COUNT    carried by the field before it
 *   LOCAL    not sent: the coordinator's own (it counts the attempts) */
#define RESULT_FIELDS(X) \
    X(final_url, STR) \
    X(status, INT) \
    X(length, INT) \
    X(wire_bytes, INT) \
    X(redirects, INT) \
    X(time_dns, F64) \
    X(time_connect, F64) \
    X(time_tls, F64) \
    X(time_ttfb, F64) \
    X(time_total, F64) \
    X(start, INSTANT) \
    X(end, INSTANT) \
    X(worker, INT) \
    X(queued, INSTANT) \
    X(flight_start, INT) \
    X(flight_end, INT) \
    X(conns_start, INT) \
    X(conns_end, INT) \
    X(fail, INT) \
    X(error, ERROR) \
    X(extracts, EXTRACTS) \
    X(nextracts, COUNT) \
    X(nlinks, INT) \
    X(attempts, LOCAL) \
    X(retry_after, F64) \
    X(etag, STR) \
    X(last_modified, STR) \
    X(not_modified, INT) \
    X(digest, STR) \
    X(duplicate_of, STR) \
    X(location, STR) \
    X(dns_lookups, INT)

#define FIELD_OF(T, f) (((T *)0)->f)
#define RESULT_DESC(f, kind) \
    { #f, offsetof(struct crawl_result, f), sizeof FIELD_OF(struct crawl_result, f), \
      _Alignof(__typeof__(FIELD_OF(struct crawl_result, f))), PROCS_WIRE_##kind },

const struct procs_field procs_result_fields[] = { RESULT_FIELDS(RESULT_DESC) };
const size_t procs_result_nfields = sizeof procs_result_fields / sizeof *procs_result_fields;

/* Every field of struct crawl_opts, in declaration order, with what a
 * worker does with it:
 *   KEEP  applied as given (the transfer's settings, what is kept;
 *         links_out: the worker sends every link of a page, those it sent
 *         before and those of a page at --depth too, for the coordinator's
 *         frontier to give each its verdict; the file is the coordinator's)
 *   OFF   the coordinator applies it, once for the crawl (its frontier; the
 *         digest set its workers share): off (zero) in a worker, or it
 *         would apply twice
 *   OWN   the worker sets its own value (procs_worker_opts) */
#define OPTS_FIELDS(X) \
    X(concurrency, OWN) \
    X(timeout, KEEP) \
    X(connect_timeout, KEEP) \
    X(max_redirs, KEEP) \
    X(reuse, OWN) \
    X(user_agent, KEEP) \
    X(headers, KEEP) \
    X(fail_http, KEEP) \
    X(max_size, KEEP) \
    X(buffer_size, KEEP) \
    X(insecure, KEEP) \
    X(cacert, KEEP) \
    X(cookie_jar, KEEP) \
    X(cookie, KEEP) \
    X(proxy, KEEP) \
    X(noproxy, KEEP) \
    X(resolve, KEEP) \
    X(stack_size, KEEP) \
    X(loops, OWN) \
    X(procs, KEEP) \
    X(worker_timeout, KEEP) \
    X(parse_threads, OWN) \
    X(deadline, OFF) \
    X(retry, KEEP) \
    X(retry_delay, KEEP) \
    X(retry_max_delay, KEEP) \
    X(depth, KEEP) \
    X(max_pages, OFF) \
    X(max_queue, OFF) \
    X(span_hosts, KEEP) \
    X(include, KEEP) \
    X(ninclude, KEEP) \
    X(exclude, KEEP) \
    X(nexclude, KEEP) \
    X(canonical, OFF) \
    X(strip_query, OFF) \
    X(nstrip_query, OFF) \
    X(links_out, KEEP) \
    X(rules, KEEP) \
    X(robots, OFF) \
    X(robots_agent, KEEP) \
    X(per_host, OFF) \
    X(delay, OFF) \
    X(ignore_crawl_delay, KEEP) \
    X(auto_throttle, OFF) \
    X(sitemaps, OFF) \
    X(warc, KEEP) \
    X(warc_max_size, KEEP) \
    X(cdx, KEEP) \
    X(warc_dedupe_cdx, OFF) \
    X(warc_options, KEEP) \
    X(warc_worker, OWN) \
    X(save_dir, KEEP) \
    X(dedupe, KEEP) \
    X(digests, KEEP) \
    X(stages, KEEP) \
    X(nstages, KEEP)

#define OPTS_DESC(f, cls) \
    { #f, offsetof(struct crawl_opts, f), sizeof FIELD_OF(struct crawl_opts, f), \
      _Alignof(__typeof__(FIELD_OF(struct crawl_opts, f))), PROCS_OPT_##cls },

const struct procs_field procs_opts_fields[] = { OPTS_FIELDS(OPTS_DESC) };
const size_t procs_opts_nfields = sizeof procs_opts_fields / sizeof *procs_opts_fields;

/* The completeness checks: one zero a field of the list initialises each
 * struct in order, so a field of the struct that the list lacks is a
 * missing initializer, an error here (a field the list names that the
 * struct lacks fails offsetof above). */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-field-initializers"
#define ZERO(f, kind) 0,
static const struct crawl_result every_result_field_listed __attribute__((unused)) = {
    RESULT_FIELDS(ZERO)
};
static const struct crawl_opts every_option_classified __attribute__((unused)) = {
    OPTS_FIELDS(ZERO)
};
#undef ZERO
#pragma GCC diagnostic pop

static int64_t get_int(const void *p, size_t size)
{
    if (size == 8) {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    int32_t v;                  /* int, enum: the 4-byte fields */
    memcpy(&v, p, 4);
    return v;
}

static void set_int(void *p, size_t size, int64_t v)
{
    if (size == 8) {
        memcpy(p, &v, 8);
    } else {
        int32_t w = (int32_t)v;
        memcpy(p, &w, 4);
    }
}

void procs_result_put(struct strbuf *b, const struct crawl_result *r, double t0)
{
    const char *base = (const char *)r;
    for (size_t i = 0; i < procs_result_nfields; i++) {
        const struct procs_field *f = &procs_result_fields[i];
        const void *p = base + f->offset;
        double d;
        const char *s;
        switch (f->kind) {
        case PROCS_WIRE_INT:
            wire_put_u64(b, (uint64_t)get_int(p, f->size));
            break;
        case PROCS_WIRE_F64:
            memcpy(&d, p, sizeof d);
            wire_put_f64(b, d);
            break;
        case PROCS_WIRE_INSTANT:
            memcpy(&d, p, sizeof d);
            wire_put_f64(b, d > 0 ? t0 + d : 0);
            break;
        case PROCS_WIRE_STR:
        case PROCS_WIRE_ERROR:
            memcpy(&s, p, sizeof s);
            wire_put_str(b, s);
            break;
        case PROCS_WIRE_EXTRACTS:
            wire_put_u32(b, (uint32_t)r->nextracts);
            for (size_t k = 0; k < r->nextracts; k++) {
                wire_put_str(b, r->extracts[k].name);
                wire_put_str(b, r->extracts[k].value);
            }
            break;
        default:                /* COUNT, LOCAL */
            break;
        }
    }
}

/* Reads the --extract values into r; a count past what the frame could
 * hold is a bad frame. */
static void get_extracts(struct wire_rd *rd, struct crawl_result *r)
{
    uint32_t nx = wire_get_u32(rd);
    if (rd->bad || nx == 0)
        return;
    if (nx > rd->n / 8 || !(r->extracts = calloc(nx, sizeof *r->extracts))) {
        rd->bad = 1;
        return;
    }
    for (uint32_t k = 0; k < nx && !rd->bad; k++, r->nextracts++) {
        r->extracts[k].name = wire_get_bytes(rd, NULL);
        r->extracts[k].value = wire_get_bytes(rd, NULL);
    }
}

void procs_result_get(struct wire_rd *rd, struct crawl_result *r, double t0)
{
    char *base = (char *)r;
    char *error = NULL;
    for (size_t i = 0; i < procs_result_nfields; i++) {
        const struct procs_field *f = &procs_result_fields[i];
        void *p = base + f->offset;
        double d;
        char *s;
        switch (f->kind) {
        case PROCS_WIRE_INT:
            set_int(p, f->size, (int64_t)wire_get_u64(rd));
            break;
        case PROCS_WIRE_F64:
            d = wire_get_f64(rd);
            memcpy(p, &d, sizeof d);
            break;
        case PROCS_WIRE_INSTANT:
            d = wire_get_f64(rd);
            d = d > 0 ? d - t0 : 0;
            memcpy(p, &d, sizeof d);
            break;
        case PROCS_WIRE_STR:
            memcpy(&s, p, sizeof s);
            free(s);
            s = wire_get_bytes(rd, NULL);
            memcpy(p, &s, sizeof s);
            break;
        case PROCS_WIRE_ERROR:
            free(error);
            error = wire_get_bytes(rd, NULL);
            break;
        case PROCS_WIRE_EXTRACTS:
            get_extracts(rd, r);
            break;
        default:
            break;
        }
    }
    /* The error text was read as it came: it is set with its class, as
     * every failure is (the fail field came in as a number). */
    enum crawl_fail fail = r->fail;
    if (fail != CRAWL_FAIL_NONE || error)
        job_error_set(r, fail, error ? error : job_fail_name(fail));
    free(error);
}

void procs_worker_opts(const struct crawl_opts *in, struct crawl_opts *out)
{
    *out = *in;
    for (size_t i = 0; i < procs_opts_nfields; i++)
        if (procs_opts_fields[i].kind == PROCS_OPT_OFF)
            memset((char *)out + procs_opts_fields[i].offset, 0, procs_opts_fields[i].size);
}

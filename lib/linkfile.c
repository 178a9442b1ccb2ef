/* linkfile.c: --links-out. Each page's links, as the frontier left them
 * with their verdicts in the job, become JSON lines as its row is
 * written, and go to a sink of their own: whole lines, the first write
 * error kept. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "hooks.h"
#include "json.h"
#include "linkfile.h"

struct linkfile {
    struct sink *sink;
    pthread_mutex_t lock;       /* guards err */
    int err;                    /* short of memory for a page's lines */
};

void linkfile_format(struct strbuf *b, const struct crawl_job *j)
{
    const char *from = j->res.final_url ? j->res.final_url : j->url;
    for (size_t i = 0; i < j->nverdicts; i++) {
        const struct job_link *l = &j->verdicts[i];
        sb_adds(b, "{\"from\":");
        json_string_sb(b, from);
        sb_adds(b, ",\"to\":");
        json_string_sb(b, l->url);
        sb_adds(b, l->verdict == JOB_LINK_ADMITTED ? ",\"admitted\":true,\"reason\":"
                                                    : ",\"admitted\":false,\"reason\":");
        json_string_sb(b, job_verdict_reason(l->verdict));
        sb_adds(b, "}\n");
    }
}

int linkfile_new(struct linkfile **out, int fd, int flush_ms, sink_error_fn on_error,
                 void *data)
{
    struct linkfile *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    if (pthread_mutex_init(&l->lock, NULL) != 0) {
        free(l);
        return -ENOMEM;
    }
    int rc = sink_new(&l->sink, fd, flush_ms, on_error, data);
    if (rc != 0) {
        pthread_mutex_destroy(&l->lock);
        free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* The links hook: a page's lines, as its row is final. */
static void links_row(void *data, struct crawl *c, struct crawl_job *j)
{
    struct linkfile *l = data;
    (void)c;
    if (!j->nverdicts)
        return;
    struct strbuf b = { 0 };
    linkfile_format(&b, j);
    if (b.nomem) {
        pthread_mutex_lock(&l->lock);
        if (!l->err)
            l->err = -ENOMEM;
        pthread_mutex_unlock(&l->lock);
    } else {
        sink_put(l->sink, b.data, b.len);   /* its error sticks in the sink */
    }
    sb_free(&b);
}

void linkfile_attach(struct linkfile *l, struct crawl *c)
{
    static const struct crawl_hook hook = { .row = links_row };
    static const struct crawl_hook none;
    crawl_hook(c, CRAWL_HOOK_LINKS, l ? &hook : &none, l);
}

int linkfile_free(struct linkfile *l)
{
    if (!l)
        return 0;
    int rc = sink_free(l->sink);
    if (!rc)
        rc = l->err;
    pthread_mutex_destroy(&l->lock);
    free(l);
    return rc;
}

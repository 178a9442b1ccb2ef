/* modes.c: the registry of models. A model is a file of its own
 * (mode_NAME.c, scheduling only) and one line here; the command line, its
 * help and the tests take the list from here. */
#include <stdio.h>
#include <string.h>

#include "crawl.h"

extern const struct crawl_backend crawl_backend_seq;
extern const struct crawl_backend crawl_backend_thread;
extern const struct crawl_backend crawl_backend_pool;
extern const struct crawl_backend crawl_backend_coro;
extern const struct crawl_backend crawl_backend_procs;
#ifdef CRAWL_EXTRA_MODEL
extern const struct crawl_backend CRAWL_EXTRA_MODEL;
#endif

const struct crawl_backend *const crawl_backends[] = {
    &crawl_backend_seq,
    &crawl_backend_thread,
    &crawl_backend_pool,
    &crawl_backend_coro,
    &crawl_backend_procs,
#ifdef CRAWL_EXTRA_MODEL
    &CRAWL_EXTRA_MODEL,     /* make EXTRA_MODEL=path/mode_NAME.c */
#endif
    NULL
};

/* The article's point: coroutines on an event loop. */
static const struct crawl_backend *const default_backend = &crawl_backend_coro;

const struct crawl_backend *crawl_backend_find(const char *name)
{
    for (int i = 0; crawl_backends[i]; i++)
        if (strcmp(crawl_backends[i]->name, name) == 0)
            return crawl_backends[i];
    return NULL;
}

const struct crawl_backend *crawl_backend_default(void)
{
    return default_backend;
}

char *crawl_backend_names(char *buf, size_t n, const char *sep)
{
    size_t o = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; crawl_backends[i] && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? sep : "", crawl_backends[i]->name);
    return buf;
}

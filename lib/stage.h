/* stage.h: the body stages crawl ships (fetch_stage.h), which the program
 * lists in the options. Each ties fetch to a writer that knows nothing of
 * fetch: the WARC writer (warc.h) for --warc, the mirror's files (mirror.h)
 * for --save. */
#ifndef CRAWL_STAGE_H
#define CRAWL_STAGE_H

struct fetch_stage;

/* --warc, a raw stage (stage_warc.c): each process that fetches writes a
 * file of its own. */
extern const struct fetch_stage stage_warc;

/* --save DIR, a decoded stage (stage_mirror.c): the bodies of 2xx
 * responses, each in its file once its transfer succeeded. */
extern const struct fetch_stage stage_mirror;

#endif

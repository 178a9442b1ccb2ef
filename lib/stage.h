/* stage.h: the body stages crawl ships (fetch_stage.h). The program lists
 * two in the options, each tying fetch to a writer that knows nothing of
 * fetch: the WARC writer (warc.h) for --warc, the mirror's files (mirror.h)
 * for --save. The core lists the other three as it builds the fetch
 * context: the decoder, the row's digest and the page parser. */
#ifndef CRAWL_STAGE_H
#define CRAWL_STAGE_H

struct fetch_stage;

/* --warc, a raw stage (stage_warc.c): each process that fetches writes a
 * file of its own. */
extern const struct fetch_stage stage_warc;

/* --save DIR, a decoded stage (stage_mirror.c): the bodies of 2xx
 * responses, each in its file once its transfer succeeded. */
extern const struct fetch_stage stage_mirror;

/* The decoder (stage_decode.c): what the core lists when a stage takes
 * bodies as sent (decode.c undoes the codings). */
extern const struct fetch_stage stage_decode;

/* The row's digest (stage_digest.c): what the core lists when a row shows
 * it or --dedupe needs it. */
extern const struct fetch_stage stage_digest;

/* The page parser (stage_parse.c), the last of the chain: what the core
 * lists when pages give links or extracted values (crawl_opts.rules). */
extern const struct fetch_stage stage_parse;

#endif

/* parse_stage.h: the page parser as a body stage (fetch_stage.h,
 * parse_stage.c), the last of the chain: what the core lists when pages
 * give links or extracted values (crawl_opts.rules). */
#ifndef CRAWL_PARSE_STAGE_H
#define CRAWL_PARSE_STAGE_H

struct fetch_stage;
extern const struct fetch_stage parse_stage;

#endif

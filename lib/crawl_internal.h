/* crawl_internal.h: what the core's own files (crawl.c, frontier.c) share
 * and nothing else includes. */
#ifndef CRAWL_INTERNAL_H
#define CRAWL_INTERNAL_H

#include "crawl.h"

/* Frees a job and everything its result owns. NULL is fine. */
void crawl__job_free(struct crawl_job *j);

/* Records in j a failure decided before any fetch, with reason why
 * (copied); the job keeps its place and gets its row in its turn. */
void crawl__fail_early(struct crawl_job *j, enum crawl_fail fail, const char *why);

#endif

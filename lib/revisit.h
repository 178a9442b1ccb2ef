/* revisit.h: the crawl's digest set as a feature of the run: --dedupe's
 * duplicate_of and --warc's revisit records claim each page's digest in
 * it (the digest stage, the WARC writer), and --warc-dedupe-cdx fills it
 * with an earlier crawl's captures first. */
#ifndef CRAWL_REVISIT_H
#define CRAWL_REVISIT_H

struct crawl;

/* Attaches the digest set to c (hooks.h, CRAWL_HOOK_DIGESTS) when its
 * options keep digests (--dedupe, --warc): made as c is prepared, before a
 * procs crawl forks its workers, which share it; freed with c. Returns 0,
 * or CRAWL_ENOMEM (no set: pages get no duplicate_of and WARC records are
 * written whole, as for a set that filled up). */
int revisit_attach(struct crawl *c);

/* What is said of a crawl that goes on without the set. */
#define REVISIT_NOMEM "no memory for the crawl's digest set: no duplicate_of, no revisit records"

#endif

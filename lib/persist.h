/* persist.h: --state and --frontier, the crawl's frontier kept in a store
 * (lib/state.h: an LMDB file, or a Redis server shared by many workers),
 * so that a run killed in any way is continued by the next one, and many
 * processes can share one crawl. A feature of the run: it attaches to the
 * core as a hook user (hooks.h, CRAWL_HOOK_STORE) and gives the frontier
 * its home; the core names none of it. Its calls take the crawl they were
 * opened on. */
#ifndef CRAWL_PERSIST_H
#define CRAWL_PERSIST_H

#include <stddef.h>
#include <stdint.h>

struct crawl;

/* Call persist_open after crawl_new and before reading the lists; then
 * persist_seed; then run with the output made by report_new_marked over a
 * file cut back to persist_offset, its commits going to persist_commit;
 * after the output is ended, persist_finish. */
enum persist_phase { PERSIST_NEW, PERSIST_RESUMED, PERSIST_FINISHED };

/* Opens the store at path (a file, or a --frontier redis:// URL, then with
 * conf) for a crawl with options opts ("name=value" lines that a store
 * made before must match). Returns what it found (enum
 * persist_phase), or with the reason in why (size n): CRAWL_ESTATE
 * (not this crawl's: other options, in use), CRAWL_EFRONTIER (the server
 * cannot be reached) or CRAWL_ESTORE (the store holds another's data, of
 * another format, or damaged; nothing was written to it). */
struct state_conf;
int persist_open(struct crawl *c, const char *path, const char *opts,
                 const struct state_conf *conf, char *why, size_t n);

/* The store's last error text. */
const char *persist_error(struct crawl *c);

/* Whether the output holds rows no commit will have, to be cut back to
 * *offset: 1 when the store refused the last commit as the rows' pages
 * were no longer this process's (a --frontier worker silent past its
 * lease, whose pages went to others; *offset is the output's bytes as
 * of its last commit the server applied, asked of it, or persist_offset
 * when it cannot be asked), 2
 * when the server went back to an older copy of the crawl (*offset: what
 * that copy holds committed); else 0. */
int persist_cut(struct crawl *c, uint64_t *offset);

/* Reads the lists into the store (a resumed run checks that they are the
 * ones it was started with). Returns 0, CRAWL_ESTATE with the reason in
 * why, or the lists' negative code. */
int persist_seed(struct crawl *c, char *why, size_t n);

/* Returns the bytes of the output that hold the rows of the pages done. */
uint64_t persist_offset(struct crawl *c);

/* sink_commit_fn for the output's sink (data: the crawl): the rows marked
 * are in the file, which holds offset bytes. Returns 0 or -EIO. */
int persist_commit(const uint64_t *marks, size_t n, uint64_t offset, void *data);

/* Returns the pages fetched and done in the store (every run's). */
long persist_fetched(struct crawl *c);

/* --recrawl: a finished crawl starts a new pass over its pages
 * (state_recrawl), each asked for with its validators; older > 0 leaves
 * out the pages fetched less than older seconds before the pass began
 * (their links are admitted all the same). Returns 1 with the pages
 * listed again in *n, 0 when the crawl was not finished (a shared one
 * whose new pass another worker began), or CRAWL_ESTATE with the reason in
 * why (size len). */
int persist_recrawl(struct crawl *c, double older, long *n, char *why, size_t len);

/* The store's pass: 1, then 2 and on for each recrawl. */
int64_t persist_pass(struct crawl *c);

/* Records that the crawl is finished when this run took every page the
 * store held. Returns 1 when so, 0 when not, CRAWL_ESTATE. */
int persist_finish(struct crawl *c);

#endif

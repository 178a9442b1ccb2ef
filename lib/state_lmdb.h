/* state_lmdb.h: the --state file as its check (state_lmdb_check.c) reads
 * it before the store (state_lmdb.c) trusts a byte: what LMDB's two meta
 * pages say of the file. Nothing but those two files and their unit tests
 * includes it. */
#ifndef CRAWL_STATE_LMDB_H
#define CRAWL_STATE_LMDB_H

#include <stddef.h>
#include <stdint.h>

/* What LMDB's meta pages say: the one LMDB will use (the later commit). */
struct state_lmdb_meta {
    uint32_t psize;             /* bytes a page */
    uint64_t last_pg;           /* the last page the commit uses */
    uint64_t txnid;             /* the commit's number */
    uint64_t mapsize;
    uint64_t size;              /* the file's bytes, as fstat said */
    int empty;                  /* no commit was ever made: holds nothing */
};

/* What the checks find. */
enum state_lmdb_verdict {
    STATE_LMDB_OK = 0,          /* whole, as far as the check sees */
    STATE_LMDB_FOREIGN,         /* not crawl's: not LMDB */
    STATE_LMDB_BROKEN           /* it cannot be trusted */
};

/* Reads the two meta pages of the LMDB file open at fd with pread(2), as
 * LMDB 0.9 lays them out (pages 0 and 1, each a page header then struct
 * MDB_meta: magic 0xBEEFC0DE, data version 1, ...), checks them and the
 * file's size against them, and fills *m. Nothing is mapped: a file
 * shorter than the pages its last commit uses would crash LMDB (SIGBUS)
 * the moment it read one. Returns a verdict (OK, FOREIGN: not an LMDB
 * file, BROKEN) with the reason in why (size n) when it is not OK. */
enum state_lmdb_verdict state_lmdb_read_meta(int fd, struct state_lmdb_meta *m, char *why,
                                             size_t n);

#endif

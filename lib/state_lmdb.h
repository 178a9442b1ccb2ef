/* state_lmdb.h: the --state file's format, as the store (state_lmdb.c)
 * writes it and its check (state_lmdb_check.c) reads it before the store
 * trusts a byte: crawl's marker, the CRC that ends every record, and what
 * LMDB's two meta pages say of the file. Nothing but those two files and
 * their unit tests includes it. */
#ifndef CRAWL_STATE_LMDB_H
#define CRAWL_STATE_LMDB_H

#include <stddef.h>
#include <stdint.h>

/* The format of the records crawl writes. 2: no marker and no CRCs (a
 * meta value "version" of "2"); 3: the marker, a CRC in every record; 4:
 * a page record holds its parent too; 5: a page record holds its URL's
 * hash, and the "valid" database what a recrawl needs of each page fetched
 * (its validators, its links). */
#define STATE_LMDB_FORMAT 5

/* The marker: the value of this key in the "meta" database, written when
 * crawl makes a store; a file without it is not crawl's. Its value is the
 * magic (STATE_LMDB_MAGIC_LEN bytes), the format (a uint32_t) and the CRC
 * that ends every record. The magic and the format stay where they are in
 * every format, so that any crawl can say which one a file has. */
#define STATE_LMDB_MARKER "crawl"
#define STATE_LMDB_MAGIC "crawl state\n"
#define STATE_LMDB_MAGIC_LEN 12
#define STATE_LMDB_MARKER_LEN (STATE_LMDB_MAGIC_LEN + 4 + STATE_LMDB_CRC)

/* The bytes of the CRC at the end of every value crawl writes. */
#define STATE_LMDB_CRC 4

/* The address space the file may grow into; only what is written takes
 * disk. */
#define STATE_LMDB_MAP_SIZE ((size_t)1 << 36)

/* The databases of a store, in the order the check walks them. */
#define STATE_LMDB_DBS 5

/* Page states, a page record's first byte. */
enum { STATE_LMDB_QUEUED = 0, STATE_LMDB_DONE = 1, STATE_LMDB_FETCHED = 2 };

/* The strings of a page record. */
#define STATE_LMDB_STRINGS 5

/* A page record: this header, then url, scope, source, why and parent,
 * each NUL-terminated (an absent one is empty, with its bit in has), then
 * the CRC. LMDB aligns values to 2 bytes only: read with memcpy. */
struct state_lmdb_rec {
    uint8_t state;
    uint8_t has;                /* 1 scope, 2 source, 4 why, 8 parent */
    uint8_t pad[2];             /* zero: every byte of a record is defined */
    int32_t depth;
    int64_t line;
    uint64_t hash;              /* its seen-set key (the "valid" key); 0: none */
};

/* A record of the "valid" database, under a URL's hash: what the store
 * keeps of a page fetched whole or answered 304, for the next pass. This
 * header, then the ETag and the Last-Modified, each NUL-terminated (empty
 * when absent), then its links, each NUL-terminated, then the CRC. */
struct state_lmdb_valid {
    int64_t fetched_at;         /* seconds since 1970 */
    uint8_t has;                /* 1 ETag, 2 Last-Modified, 4 links kept */
    uint8_t pad[7];
};

/* The CRC-32 (zlib's) of a record: its key, then its value's first vlen
 * bytes. The key is in it, so that a record moved under another key fails
 * as a damaged one does. */
uint32_t state_lmdb_crc(const void *key, size_t klen, const void *val, size_t vlen);

/* Writes the CRC of the value val (n bytes, the last STATE_LMDB_CRC of
 * them the CRC's room) under key into its last bytes. n must be at least
 * STATE_LMDB_CRC. */
void state_lmdb_seal(const void *key, size_t klen, void *val, size_t n);

/* 1 when the value val (n bytes) under key ends with its CRC, else 0
 * (shorter than a CRC included). */
int state_lmdb_sealed(const void *key, size_t klen, const void *val, size_t n);

/* 1 when val (n bytes, its CRC left out) holds a page record: the
 * header, a known state (into *state), STATE_LMDB_STRINGS NUL-terminated
 * strings that fill the rest; else 0. */
int state_lmdb_page_ok(const void *val, size_t n, uint8_t *state);

/* 1 when val (n bytes, its CRC left out) holds a "valid" record: the
 * header, known flags, two NUL-terminated strings, then NUL-terminated
 * links to the end; else 0. */
int state_lmdb_valid_ok(const void *val, size_t n);

/* What LMDB's meta pages say: the one LMDB will use (the later commit). */
struct state_lmdb_meta {
    uint32_t psize;             /* bytes a page */
    uint64_t last_pg;           /* the last page the commit uses */
    uint64_t txnid;             /* the commit's number */
    uint64_t mapsize;
    uint64_t size;              /* the file's bytes, as fstat said */
    int empty;                  /* no commit was ever made: holds nothing */
    struct {                    /* the free pages' tree [0], the main one's [1] */
        uint64_t root;          /* (uint64_t)-1: empty */
        uint64_t pages;         /* branch, leaf and overflow pages */
        unsigned depth;
    } tree[2];
};

/* What the checks find. */
enum state_lmdb_verdict {
    STATE_LMDB_OK = 0,          /* a store of crawl's format, whole */
    STATE_LMDB_FOREIGN,         /* not crawl's: not LMDB, or no marker */
    STATE_LMDB_VERSION,         /* crawl's, of another format */
    STATE_LMDB_BROKEN           /* crawl's or not, it cannot be trusted */
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

/* Walks the store at path (open at fd; its meta pages are m), opened
 * read-only, in a child process: the marker and its format; then every
 * page, read with pread(2), each in use by exactly one tree or free, as
 * LMDB keeps them; then, with LMDB's cursors, the CRC of every record, the
 * order and number of keys, the counts the store keeps. LMDB trusts its
 * own pages (a damaged one may crash it), so the walk is done where a
 * crash costs nothing: a child killed by a signal means a file that
 * cannot be trusted. Returns a verdict with the reason in why; *format is
 * the format of a STATE_LMDB_VERSION store. */
enum state_lmdb_verdict state_lmdb_walk(const char *path, int fd,
                                        const struct state_lmdb_meta *m, unsigned *format,
                                        char *why, size_t n);

#endif

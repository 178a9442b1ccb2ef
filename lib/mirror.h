/* mirror.h: --save DIR, every fetched body as a file under DIR laid out as
 * wget's mirror is: DIR/HOST[:PORT]/PATH. Whatever a URL says, the file
 * stays under DIR: each name is made from one decoded path segment with
 * the bytes a file name cannot hold (and "." and "..") percent-encoded,
 * and directories are walked without following symbolic links. */
#ifndef CRAWL_MIRROR_H
#define CRAWL_MIRROR_H

#include <stddef.h>

/* Writes the path of url's file relative to DIR into out (size n): the
 * host (":PORT" when not the scheme's), the path's segments ("index.html"
 * for one ending in "/"), the query after a "?" in the last name. A name
 * longer than MIRROR_NAME_MAX is cut and ends in a hash of the whole.
 * Returns 0, -EINVAL (not an http(s) URL), -ENAMETOOLONG or -ENOMEM. */
int mirror_path(const char *url, char *out, size_t n);

#define MIRROR_NAME_MAX 200

/* One file being written: a temporary name beside its final one. */
struct mirror_file {
    int    fd;                /* -1 until the first byte, and after */
    char  *rel;               /* its path relative to DIR */
    char   tmp[40];           /* the temporary name in the same directory */
};

/* Sets f up for url's file (nothing is created yet). Returns 0 or what
 * mirror_path returns. */
int mirror_begin(struct mirror_file *f, const char *url);

/* Writes n bytes, creating the directories and the temporary file with
 * the first; a file saved where a directory must go is moved aside to its
 * NAME.1 (see mirror_commit). Returns 0 or -errno (ENOSPC: the disk is
 * full; ENOTDIR: a symbolic link or another non-directory is in the way). */
int mirror_write(struct mirror_file *f, const char *dir, const void *p, size_t n);

/* Renames the temporary file to its final name (an empty file when
 * nothing was written), replacing a file of that name; where a directory
 * of that name is, the file is NAME.1 beside it, as wget2 names it (so a
 * page /c and a page /c/d are c.1 and c/d whichever came first). Returns 0
 * or -errno; the temporary file is gone either way (f->rel stays, for
 * messages, until mirror_end). */
int mirror_commit(struct mirror_file *f, const char *dir);

/* Removes the temporary file, if any. */
void mirror_abort(struct mirror_file *f, const char *dir);

/* Frees what f holds (after mirror_commit or mirror_abort). */
void mirror_end(struct mirror_file *f);

#endif

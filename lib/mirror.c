/* mirror.c: the files of --save. A URL becomes a path under DIR by
 * libcurl's parse of it, then name by name: each is percent-decoded and
 * encoded again so that it can hold no '/', no control byte and no NUL,
 * is never "." or "..", and is never longer than MIRROR_NAME_MAX; the
 * directories are opened one at a time with O_NOFOLLOW, so that a link
 * planted under DIR leads nowhere either. A body is written to a temporary
 * file in its directory and renamed when it is whole. A path that is both
 * a file and a directory (/c and /c/d) keeps both bodies as wget2 does,
 * whichever comes first: the directory is c, the file c.1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "mirror.h"
#include "strbuf.h"

/* The longest path under DIR: short of PATH_MAX with DIR in front. */
#define MIRROR_PATH_MAX 3000

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends the name made of n bytes at s: decoded, then encoded again. */
static void add_name(struct strbuf *b, const char *s, size_t n)
{
    size_t start = b->len;
    size_t dec = 0;
    int dots = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            ch = (unsigned char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        }
        dec++;
        if (ch != '.')
            dots = 0;
        if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '%' || ch == '?' || ch == '\\')
            sb_printf(b, "%%%02X", ch);
        else
            sb_addc(b, (char)ch);
    }
    if (dots && dec > 0 && dec <= 2) {
        b->len = start;
        for (size_t i = 0; i < dec; i++)
            sb_adds(b, "%2E");
    }
}

/* Cuts the name that starts at b->data + start when it is too long, and
 * ends it with 16 hex digits of the SHA-1 of the whole. */
static void cap_name(struct strbuf *b, size_t start)
{
    size_t n = b->len - start;
    if (n <= MIRROR_NAME_MAX || b->nomem)
        return;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    EVP_Digest(b->data + start, n, md, &mdlen, EVP_sha1(), NULL);
    size_t keep = MIRROR_NAME_MAX - 17;
    /* Not in the middle of a %XX. */
    for (size_t k = 1; k <= 2; k++)
        if (b->data[start + keep - k] == '%')
            keep -= k;
    b->len = start + keep;
    sb_addc(b, '~');
    for (int i = 0; i < 8; i++)
        sb_printf(b, "%02x", md[i]);
}

int mirror_path(const char *url, char *out, size_t n)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
    struct strbuf b = { 0 };
    int rc = -EINVAL;
    if (!u)
        return -ENOMEM;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
        goto out;
    (void)curl_url_get(u, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT);
    (void)curl_url_get(u, CURLUPART_QUERY, &query, 0);
    for (char *h = host; *h; h++)
        if (*h >= 'A' && *h <= 'Z')
            *h += 32;
    add_name(&b, host, strlen(host));
    if (port)
        sb_printf(&b, ":%s", port);
    cap_name(&b, 0);
    const char *p = path;
    for (;;) {
        while (*p == '/')
            p++;
        size_t seg = strcspn(p, "/");
        size_t start = b.len + 1;
        if (seg == 0 && *p == '\0') {
            sb_adds(&b, "/index.html");
        } else {
            sb_addc(&b, '/');
            add_name(&b, p, seg);
        }
        p += seg;
        if (*p == '\0') {
            if (query) {
                sb_addc(&b, '?');
                add_name(&b, query, strlen(query));
            }
            cap_name(&b, start);
            break;
        }
        cap_name(&b, start);
    }
    if (b.nomem)
        rc = -ENOMEM;
    else if (b.len >= n || b.len > MIRROR_PATH_MAX)
        rc = -ENAMETOOLONG;
    else {
        memcpy(out, b.data, b.len + 1);
        rc = 0;
    }
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    sb_free(&b);
    return rc;
}

int mirror_begin(struct mirror_file *f, const char *url)
{
    f->fd = -1;
    f->tmp[0] = '\0';
    if (!(f->rel = malloc(MIRROR_PATH_MAX + 1)))
        return -ENOMEM;
    int rc = mirror_path(url, f->rel, MIRROR_PATH_MAX + 1);
    if (rc) {
        free(f->rel);
        f->rel = NULL;
    }
    return rc;
}

/* The name, beside name, of the file at a path that is a directory too:
 * wget2's (src/wget.c, mkdir_path and _open_unique), NAME.1. */
static void aside_name(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s.1", name);
}

/* Opens directory name in dfd, making it when create is set. A regular
 * file in its place (a page /c saved before /c/d came) is moved aside to
 * its NAME.1 first, so that both bodies are kept. A symbolic link is never
 * followed nor moved: -ENOTDIR. Returns the descriptor or -errno. */
static int open_dir(int dfd, const char *name, int create)
{
    for (int moved = 0;; moved = 1) {
        if (create && mkdirat(dfd, name, 0777) != 0 && errno != EEXIST)
            return -errno;
        int nfd = openat(dfd, name, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
        if (nfd >= 0)
            return nfd;
        int e = errno;
        struct stat st;
        if (!create || moved || e != ENOTDIR || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            return e == ELOOP ? -ENOTDIR : -e;
        char aside[MIRROR_NAME_MAX + 40];
        aside_name(aside, sizeof aside, name);
        /* Another thread may have moved it, or made the directory, since. */
        if (renameat(dfd, name, dfd, aside) != 0 && errno != ENOENT)
            return -errno;
    }
}

/* Opens the directory that holds f's file, creating what is missing when
 * create is set, and sets *last to the file's name in it. Returns the
 * directory's descriptor or -errno. */
static int open_parent(const struct mirror_file *f, const char *dir, int create,
                       const char **last)
{
    int dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    char name[MIRROR_NAME_MAX + 32];
    const char *p = f->rel;
    const char *slash;
    while ((slash = strchr(p, '/'))) {
        snprintf(name, sizeof name, "%.*s", (int)(slash - p), p);
        int nfd = open_dir(dfd, name, create);
        close(dfd);
        if (nfd < 0)
            return nfd;
        dfd = nfd;
        p = slash + 1;
    }
    *last = p;
    return dfd;
}

/* Creates the temporary file in f's directory. */
static int open_tmp(struct mirror_file *f, const char *dir)
{
    const char *last;
    int dfd = open_parent(f, dir, 1, &last);
    if (dfd < 0)
        return dfd;
    for (int tries = 0; tries < 8; tries++) {
        unsigned char r[8];
        if (RAND_bytes(r, sizeof r) != 1)
            for (size_t i = 0; i < sizeof r; i++)
                r[i] = (unsigned char)random();
        snprintf(f->tmp, sizeof f->tmp, ".crawl-%02x%02x%02x%02x%02x%02x%02x%02x.tmp",
                 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
        f->fd = openat(dfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (f->fd >= 0 || errno != EEXIST)
            break;
    }
    int e = errno;
    close(dfd);
    if (f->fd < 0) {
        f->tmp[0] = '\0';
        return -e;
    }
    return 0;
}

int mirror_write(struct mirror_file *f, const char *dir, const void *p, size_t n)
{
    int rc;
    if (f->fd < 0 && (rc = open_tmp(f, dir)) != 0)
        return rc;
    const char *s = p;
    while (n) {
        ssize_t w = write(f->fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -ENOSPC;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static void end(struct mirror_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    f->tmp[0] = '\0';
}

void mirror_end(struct mirror_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    free(f->rel);
    f->rel = NULL;
}

int mirror_commit(struct mirror_file *f, const char *dir)
{
    int rc = 0;
    const char *last;
    if (f->fd < 0 && (rc = open_tmp(f, dir)) != 0)
        goto out;
    if (close(f->fd) != 0) {
        rc = -errno;
        f->fd = -1;
        mirror_abort(f, dir);
        return rc;
    }
    f->fd = -1;
    int dfd = open_parent(f, dir, 0, &last);
    if (dfd < 0) {
        rc = dfd;
        goto out;
    }
    if (renameat(dfd, f->tmp, dfd, last) != 0) {
        rc = -errno;
        struct stat st;
        if ((rc == -EISDIR || rc == -EEXIST || rc == -ENOTEMPTY) &&
            fstatat(dfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            /* /c/d came first: the page /c is c.1 beside the directory. */
            char aside[MIRROR_NAME_MAX + 40];
            aside_name(aside, sizeof aside, last);
            rc = renameat(dfd, f->tmp, dfd, aside) ? -errno : 0;
        }
    }
    if (rc)
        unlinkat(dfd, f->tmp, 0);
    close(dfd);
out:
    end(f);
    return rc;
}

void mirror_abort(struct mirror_file *f, const char *dir)
{
    const char *last;
    if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
        int dfd = open_parent(f, dir, 0, &last);
        if (dfd >= 0) {
            unlinkat(dfd, f->tmp, 0);
            close(dfd);
        }
    }
    end(f);
}

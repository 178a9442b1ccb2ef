/* io.c: see io.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

int io_write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            return -EIO;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int io_replace(const char *path, const void *p, size_t n)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return -EISDIR;
    size_t len = strlen(path) + 48;
    char *tmp = malloc(len);
    if (!tmp)
        return -ENOMEM;
    snprintf(tmp, len, "%s.crawl-%ld.tmp", path, (long)getpid());
    /* A file of that name is an earlier run's with this process id, left
     * by a kill: nobody else writes it. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return -e;
    }
    if (exists)
        (void)fchmod(fd, st.st_mode & 07777);
    int rc = io_write_all(fd, p, n);
    /* The rename must not publish a file whose blocks are not there yet. */
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

int io_wake_pipe(int fd[2])
{
    if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) == 0)
        return 0;
    int e = errno;
    fd[0] = fd[1] = -1;
    return -e;
}

void io_wake(const int fd[2])
{
    char b = 1;
    if (fd[1] >= 0 && write(fd[1], &b, 1) < 0) {
        /* Full: a wake-up is pending anyway. */
    }
}

void io_wake_drain(const int fd[2])
{
    char b[64];
    while (fd[0] >= 0 && read(fd[0], b, sizeof b) > 0) {
    }
}

int io_wait(int fd, const int wake[2], int timeout_ms)
{
    struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
                           { .fd = wake[0], .events = POLLIN } };
    int n = poll(p, wake[0] >= 0 ? 2 : 1, timeout_ms);
    if (n < 0)
        return -errno;
    if (n > 0 && wake[0] >= 0 && p[1].revents)
        io_wake_drain(wake);
    return n > 0 && p[0].revents ? 1 : 0;
}

void io_wake_close(int fd[2])
{
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0) {
            close(fd[i]);
            fd[i] = -1;
        }
}

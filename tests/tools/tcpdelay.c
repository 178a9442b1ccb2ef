/* tcpdelay: a TCP proxy on loopback for tests and benchmarks that holds
 * every chunk it reads for a fixed delay in each direction (a round trip
 * through it takes twice that), and that can be cut off and restored:
 *
 *   tcpdelay -t HOST:PORT [-d MS] [-p PORTFILE] [-l PORT] [-b]
 *
 * listens on 127.0.0.1:PORT (-l; default a free port, written to
 * PORTFILE once it listens) and forwards each connection to HOST:PORT.
 * SIGUSR1 cuts: every connection is reset, and new ones are refused (the
 * port closed) or, with -b, blackholed (accepted, read and never
 * answered, as a host behind a dropped route). SIGUSR2 restores: the port
 * listens again (the same one), blackholed connections are reset. SIGTERM
 * and SIGINT end it. Each change is said on stdout, a line each ("cut",
 * "restored", "held" for a connection blackholed), for a test to wait
 * on rather than sleep. One thread, one libev loop; the delay is kept per
 * chunk from the moment it was read, so that it does not add up over a
 * burst. Nothing here interprets what it forwards. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ev.h>

/* Bytes a direction holds before it stops reading: a slow reader slows
 * its writer, as TCP would. */
#define HOLD_MAX (4 << 20)
#define CHUNK 65536

/* A chunk read and not yet written; len 0 is the end of the stream. */
struct chunk {
    struct chunk *next;
    ev_tstamp due;              /* when it may be written */
    size_t len, off;
    char data[];
};

struct conn;

/* One direction of a connection: from src to dst. */
struct dir {
    struct conn *c;
    int src, dst;
    ev_io rd, wr;
    ev_timer tm;
    struct chunk *head, *tail;
    size_t held;
    int eof_read, eof_sent;
};

struct conn {
    struct conn *prev, *next;
    int fd[2];                  /* the client's, the target's */
    int connecting;             /* the target's connect is in progress */
    int hole;                   /* blackholed: read and dropped */
    struct dir d[2];            /* client to target, target to client */
};

static struct {
    struct ev_loop *loop;
    ev_tstamp delay;
    struct addrinfo *target;
    int port, blackhole, cut, lfd;
    ev_io accept_w;
    struct conn *conns;
    const char *portfile;
} P = { .lfd = -1 };

/* One line of what happened, on stdout at once. */
static void say(const char *what)
{
    printf("%s\n", what);
    fflush(stdout);
}

static void nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Closes fd with a reset rather than a FIN: the other end sees the
 * connection fail, as a cut cable followed by a timeout would show. */
static void reset_close(int fd)
{
    struct linger l = { 1, 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

static void conn_free(struct conn *c, int reset)
{
    for (int i = 0; i < 2; i++) {
        struct dir *d = &c->d[i];
        ev_io_stop(P.loop, &d->rd);
        ev_io_stop(P.loop, &d->wr);
        ev_timer_stop(P.loop, &d->tm);
        while (d->head) {
            struct chunk *n = d->head->next;
            free(d->head);
            d->head = n;
        }
    }
    for (int i = 0; i < 2; i++)
        if (c->fd[i] >= 0) {
            if (reset)
                reset_close(c->fd[i]);
            else
                close(c->fd[i]);
        }
    if (c->prev)
        c->prev->next = c->next;
    else
        P.conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c);
}

/* Reads from d's source while it holds less than HOLD_MAX. */
static void read_more(struct dir *d)
{
    if (d->eof_read || d->held >= HOLD_MAX)
        ev_io_stop(P.loop, &d->rd);
    else
        ev_io_start(P.loop, &d->rd);
}

/* Writes what is due of d, and sets its watchers for what is left.
 * Returns 0, or -1 when the connection is gone (freed). */
static int pump(struct dir *d)
{
    struct conn *c = d->c;
    ev_tstamp now = ev_time();
    ev_timer_stop(P.loop, &d->tm);
    if (c->connecting) {        /* its write watcher waits for the connect */
        read_more(d);
        return 0;
    }
    while (d->head && d->head->due <= now) {
        struct chunk *k = d->head;
        if (k->len == 0) {
            shutdown(d->dst, SHUT_WR);
            d->eof_sent = 1;
        } else {
            ssize_t w = send(d->dst, k->data + k->off, k->len - k->off, MSG_NOSIGNAL);
            if (w < 0 && (errno == EAGAIN || errno == EINTR))
                break;
            if (w < 0) {
                conn_free(c, 1);
                return -1;
            }
            k->off += (size_t)w;
            d->held -= (size_t)w;
            if (k->off < k->len)
                break;
        }
        d->head = k->next;
        if (!d->head)
            d->tail = NULL;
        free(k);
    }
    if (c->d[0].eof_sent && c->d[1].eof_sent) {
        conn_free(c, 0);
        return -1;
    }
    if (d->head && d->head->due > now) {
        ev_io_stop(P.loop, &d->wr);
        ev_timer_set(&d->tm, d->head->due - now, 0);
        ev_timer_start(P.loop, &d->tm);
    } else if (d->head) {
        ev_io_start(P.loop, &d->wr);
    } else {
        ev_io_stop(P.loop, &d->wr);
    }
    read_more(d);
    return 0;
}

static void on_read(struct ev_loop *loop, ev_io *w, int revents)
{
    struct dir *d = w->data;
    struct chunk *k = malloc(sizeof *k + CHUNK);
    if (!k) {
        conn_free(d->c, 1);
        return;
    }
    ssize_t n = recv(d->src, k->data, CHUNK, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        free(k);
        return;
    }
    if (n < 0 || d->c->hole) {
        free(k);
        if (n <= 0)
            conn_free(d->c, 1);
        return;
    }
    *k = (struct chunk){ .due = ev_time() + P.delay, .len = (size_t)n };
    if (n == 0)
        d->eof_read = 1;
    if (d->tail)
        d->tail->next = k;
    else
        d->head = k;
    d->tail = k;
    d->held += (size_t)n;
    pump(d);
}

static void on_write(struct ev_loop *loop, ev_io *w, int revents)
{
    struct dir *d = w->data;
    struct conn *c = d->c;
    if (c->connecting) {
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &el);
        if (e) {
            conn_free(c, 1);
            return;
        }
        c->connecting = 0;
        if (pump(&c->d[1]) != 0)
            return;
    }
    pump(d);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    pump(w->data);
}

static void dir_init(struct conn *c, int i)
{
    struct dir *d = &c->d[i];
    d->c = c;
    d->src = c->fd[i];
    d->dst = c->fd[1 - i];
    ev_io_init(&d->rd, on_read, d->src, EV_READ);
    ev_io_init(&d->wr, on_write, d->dst, EV_WRITE);
    ev_timer_init(&d->tm, on_timer, 0, 0);
    d->rd.data = d->wr.data = d->tm.data = d;
}

/* A new client: connected to the target, or held as a hole while cut. */
static void conn_open(int cfd)
{
    struct conn *c = calloc(1, sizeof *c);
    int one = 1;
    if (!c) {
        reset_close(cfd);
        return;
    }
    nonblock(cfd);
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd[0] = cfd;
    c->fd[1] = -1;
    c->next = P.conns;
    if (P.conns)
        P.conns->prev = c;
    P.conns = c;
    if (P.cut) {
        say("held");
        c->hole = 1;
        dir_init(c, 0);
        ev_io_start(P.loop, &c->d[0].rd);
        return;
    }
    int t = socket(P.target->ai_family, P.target->ai_socktype | SOCK_NONBLOCK, 0);
    if (t < 0) {
        conn_free(c, 1);
        return;
    }
    setsockopt(t, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd[1] = t;
    if (connect(t, P.target->ai_addr, P.target->ai_addrlen) != 0 && errno != EINPROGRESS) {
        conn_free(c, 1);
        return;
    }
    c->connecting = 1;
    dir_init(c, 0);
    dir_init(c, 1);
    ev_io_start(P.loop, &c->d[0].rd);
    ev_io_start(P.loop, &c->d[1].rd);
    ev_io_start(P.loop, &c->d[0].wr);     /* the connect's end */
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    int cfd = accept(P.lfd, NULL, NULL);
    if (cfd >= 0)
        conn_open(cfd);
}

/* Listens on P.port (0: a free one, then kept). Returns 0 or -1. */
static int listen_on(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)P.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    int one = 1;
    P.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (P.lfd < 0)
        return -1;
    setsockopt(P.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(P.lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(P.lfd, 128) != 0 ||
        getsockname(P.lfd, (struct sockaddr *)&a, &al) != 0) {
        close(P.lfd);
        P.lfd = -1;
        return -1;
    }
    P.port = ntohs(a.sin_port);
    ev_io_init(&P.accept_w, on_accept, P.lfd, EV_READ);
    ev_io_start(P.loop, &P.accept_w);
    return 0;
}

/* Resets every connection, or only the blackholed ones. */
static void drop_all(int holes_only)
{
    struct conn *c = P.conns, *n;
    for (; c; c = n) {
        n = c->next;
        if (!holes_only || c->hole)
            conn_free(c, 1);
    }
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    if (w->signum == SIGUSR1 && !P.cut) {
        P.cut = 1;
        drop_all(0);
        if (!P.blackhole) {
            ev_io_stop(loop, &P.accept_w);
            close(P.lfd);
            P.lfd = -1;
        }
        say("cut");
    } else if (w->signum == SIGUSR2 && P.cut) {
        P.cut = 0;
        drop_all(1);
        if (P.lfd < 0 && listen_on() != 0)
            fprintf(stderr, "tcpdelay: cannot listen on port %d again: %s\n", P.port,
                    strerror(errno));
        say("restored");
    } else if (w->signum == SIGTERM || w->signum == SIGINT) {
        ev_break(loop, EVBREAK_ALL);
    }
}

/* Writes the port to P.portfile through a rename, so that a reader never
 * sees it half written. */
static int write_port(void)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", P.portfile);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%d\n", P.port);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, P.portfile);
}

static int usage(void)
{
    fprintf(stderr, "usage: tcpdelay -t HOST:PORT [-d MS] [-p PORTFILE] [-l PORT] [-b]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *target = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "t:d:p:l:b")) != -1) {
        switch (opt) {
        case 't': target = optarg; break;
        case 'd': P.delay = atof(optarg) / 1000; break;
        case 'p': P.portfile = optarg; break;
        case 'l': P.port = atoi(optarg); break;
        case 'b': P.blackhole = 1; break;
        default: return usage();
        }
    }
    const char *colon = target ? strrchr(target, ':') : NULL;
    if (!colon || P.delay < 0)
        return usage();
    char host[256];
    snprintf(host, sizeof host, "%.*s", (int)(colon - target), target);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
    int g = getaddrinfo(host, colon + 1, &hints, &P.target);
    if (g != 0) {
        fprintf(stderr, "tcpdelay: %s: %s\n", target, gai_strerror(g));
        return 1;
    }
    P.loop = ev_default_loop(0);
    signal(SIGPIPE, SIG_IGN);
    if (listen_on() != 0) {
        fprintf(stderr, "tcpdelay: cannot listen on port %d: %s\n", P.port, strerror(errno));
        return 1;
    }
    /* The signals are watched before the port is told: whoever reads the
     * file may signal at once. */
    ev_signal sig[4];
    int signums[4] = { SIGUSR1, SIGUSR2, SIGTERM, SIGINT };
    for (int i = 0; i < 4; i++) {
        ev_signal_init(&sig[i], on_signal, signums[i]);
        ev_signal_start(P.loop, &sig[i]);
    }
    if (P.portfile && write_port() != 0) {
        fprintf(stderr, "tcpdelay: %s: %s\n", P.portfile, strerror(errno));
        return 1;
    }
    ev_run(P.loop, 0);
    drop_all(0);
    freeaddrinfo(P.target);
    return 0;
}

/* multi_ev.c: libcurl's multi-socket API on a libev loop (multi_ev.h).
 * Each callback is labelled with the option it serves. Lifetimes libcurl
 * asks for: a CURLMsg is read before its handle is removed (it is invalid
 * after), and curl_multi_socket_action is never called from inside the
 * timer callback, where a 0 ms timeout would re-enter libcurl. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "multi_ev.h"

struct multi_ev;

/* One multi handle with its timer. */
struct shard {
    struct multi_ev *m;
    CURLM *multi;
    ev_timer timer;             /* CURLMOPT_TIMERFUNCTION's one timer */
    int in_flight;
    int poked;                  /* a transfer was added since multi_ev_poke */
    struct shard *next;
};

/* Per-socket state, hung on the socket with curl_multi_assign. */
struct sock {
    ev_io io;
    struct shard *sh;
    struct sock *next_free;
    struct sock *next_fresh;    /* on the list of sockets to try at once */
    unsigned char fresh;        /* on that list */
    unsigned char removed;      /* libcurl is done with it while on that list */
};

struct multi_ev {
    struct ev_loop *ev;
    int shard_cap;
    long maxconnects;
    multi_ev_done_fn done;
    void (*drained)(void *data);
    void *data;
    struct shard *shards;
    struct shard *open;         /* where the next transfer goes, if not full */
    struct shard **home;        /* with a bound over shard_cap: the shards made
                                 * at the start, one of which is each host's */
    int nhome;
    struct sock *free_socks;
    struct sock *fresh;         /* new sockets that wait for connect(), oldest first */
    struct sock **fresh_tail;
};

static void on_io(struct ev_loop *ev, ev_io *w, int revents);

/* Takes a struct sock for socket s of shard sh, assigned to it. */
static struct sock *sock_new(struct shard *sh, curl_socket_t s, int kind, int what)
{
    struct multi_ev *m = sh->m;
    struct sock *sk = m->free_socks;
    if (sk)
        m->free_socks = sk->next_free;
    else if (!(sk = malloc(sizeof *sk)))
        return NULL;
    sk->sh = sh;
    sk->fresh = sk->removed = 0;
    ev_io_init(&sk->io, on_io, s, kind);
    curl_multi_assign(sh->multi, s, sk);
    if (what == CURL_POLL_OUT) {
        /* A connect in progress: tried at once after the action that
         * opened it (see act). */
        sk->fresh = 1;
        sk->next_fresh = NULL;
        *m->fresh_tail = sk;
        m->fresh_tail = &sk->next_fresh;
    }
    return sk;
}

/* CURLMOPT_SOCKETFUNCTION: start, change or stop the ev_io of a socket. */
static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
    struct shard *sh = userp;
    struct multi_ev *m = sh->m;
    struct sock *sk = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            ev_io_stop(m->ev, &sk->io);
            curl_multi_assign(sh->multi, s, NULL);
            if (sk->fresh) {
                sk->removed = 1;    /* act() frees it */
            } else {
                sk->next_free = m->free_socks;
                m->free_socks = sk;
            }
        }
        return 0;
    }
    int kind = ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    if (!sk) {
        if (!(sk = sock_new(sh, s, kind, what)))
            return -1;      /* libcurl fails the transfer */
    } else {
        /* libcurl may say again what it wants of a socket. Re-set with
         * ev_io_set, libev registers the descriptor with epoll anew (an
         * ADD the kernel refuses with EEXIST); the same mask needs nothing,
         * and a new mask on the same descriptor only the watcher's. */
        if (sk->io.fd == s && (sk->io.events & (EV_READ | EV_WRITE)) == kind &&
            ev_is_active(&sk->io))
            return 0;
        ev_io_stop(m->ev, &sk->io);
        if (sk->io.fd == s)
            ev_io_modify(&sk->io, kind);
        else
            ev_io_set(&sk->io, s, kind);
    }
    ev_io_start(m->ev, &sk->io);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: arm or stop the one timer. A 0 ms timeout arms
 * it to fire on the next loop iteration: calling curl_multi_socket_action
 * from in here would re-enter libcurl. */
static int on_timer_set(CURLM *multi, long timeout_ms, void *userp)
{
    struct shard *sh = userp;
    struct ev_loop *ev = sh->m->ev;
    ev_timer_stop(ev, &sh->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&sh->timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(ev, &sh->timer);
    }
    return 0;
}

/* Takes x out of its shard's multi handle. */
static void leave(struct fetch_xfer *x)
{
    struct shard *sh = x->multi;
    struct multi_ev *m = sh->m;
    curl_multi_remove_handle(sh->multi, x->easy);
    x->multi = NULL;
    sh->in_flight--;
    if (!m->open || m->open->in_flight >= m->shard_cap)
        m->open = sh;
}

/* One drain of curl_multi_info_read after each curl_multi_socket_action.
 * The CURLMsg is read before the handle is removed: it is invalid after. */
static void drain(struct shard *sh)
{
    struct multi_ev *m = sh->m;
    CURLMsg *msg;
    int left, finished = 0;
    while ((msg = curl_multi_info_read(sh->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURLcode rc = msg->data.result;
        struct fetch_xfer *x = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        leave(x);
        m->done(m->data, x, rc);
        finished++;
    }
    if (finished && m->drained)
        m->drained(m->data);
}

/* One curl_multi_socket_action and its drain; then the same, with
 * CURL_CSELECT_OUT, for every socket that libcurl opened meanwhile and
 * waits to see writable. libcurl checks the socket itself (a poll() with no
 * wait) before it believes the hint, so a connect still in progress only
 * costs that check; one that is done (on loopback, connect() completes
 * before it returns) sends its request now instead of one loop iteration
 * later, and its socket is added to epoll once, for reading. The server
 * then finds the request with the connection instead of being woken twice. */
static void act(struct shard *sh, curl_socket_t fd, int action)
{
    struct multi_ev *m = sh->m;
    int running;
    curl_multi_socket_action(sh->multi, fd, action, &running);
    drain(sh);
    while (m->fresh) {
        struct sock *sk = m->fresh;
        if (!(m->fresh = sk->next_fresh))
            m->fresh_tail = &m->fresh;
        sk->fresh = 0;
        if (sk->removed) {
            sk->next_free = m->free_socks;
            m->free_socks = sk;
            continue;
        }
        curl_multi_socket_action(sk->sh->multi, sk->io.fd, CURL_CSELECT_OUT, &running);
        drain(sk->sh);
    }
}

static void on_io(struct ev_loop *ev, ev_io *w, int revents)
{
    struct sock *sk = (struct sock *)w;
    int action = ((revents & EV_READ) ? CURL_CSELECT_IN : 0) |
                 ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    act(sk->sh, w->fd, action);
}

static void on_timer(struct ev_loop *ev, ev_timer *w, int revents)
{
    struct shard *sh = (struct shard *)((char *)w - offsetof(struct shard, timer));
    act(sh, CURL_SOCKET_TIMEOUT, 0);
}

static struct shard *shard_new(struct multi_ev *m)
{
    struct shard *sh = calloc(1, sizeof *sh);
    if (!sh)
        return NULL;
    sh->m = m;
    if (!(sh->multi = curl_multi_init())) {
        free(sh);
        return NULL;
    }
    curl_multi_setopt(sh->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(sh->multi, CURLMOPT_SOCKETDATA, sh);
    curl_multi_setopt(sh->multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
    curl_multi_setopt(sh->multi, CURLMOPT_TIMERDATA, sh);
    /* libcurl keeps 4 idle connections per transfer in the multi handle,
     * counted when one is returned: when the transfers in flight dip (a
     * relay's jobs come as the coordinator sends them), it closes the
     * connections the next ones will want. */
    if (m->maxconnects > 0)
        curl_multi_setopt(sh->multi, CURLMOPT_MAXCONNECTS, m->maxconnects);
    ev_timer_init(&sh->timer, on_timer, 0., 0.);
    sh->next = m->shards;
    m->shards = sh;
    return sh;
}

struct multi_ev *multi_ev_new(struct ev_loop *ev, int shard_cap, long in_flight_max,
                              multi_ev_done_fn done, void (*drained)(void *data),
                              void *data)
{
    struct multi_ev *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->ev = ev;
    m->shard_cap = shard_cap > 0 ? shard_cap : 1;
    m->maxconnects = in_flight_max;
    m->done = done;
    m->drained = drained;
    m->data = data;
    m->fresh_tail = &m->fresh;
    m->nhome = in_flight_max > m->shard_cap ? (int)((2 * in_flight_max + m->shard_cap - 1) / m->shard_cap) : 1;
    if (!(m->home = calloc((size_t)m->nhome, sizeof *m->home))) {
        free(m);
        return NULL;
    }
    for (int i = 0; i < m->nhome; i++)
        if (!(m->home[i] = shard_new(m))) {
            multi_ev_free(m);
            return NULL;
        }
    return m;
}

void multi_ev_free(struct multi_ev *m)
{
    if (!m)
        return;
    struct shard *sh;
    while ((sh = m->shards)) {
        m->shards = sh->next;
        ev_timer_stop(m->ev, &sh->timer);
        curl_multi_cleanup(sh->multi);
        free(sh);
    }
    struct sock *sk;
    while ((sk = m->fresh)) {       /* left only by an abandoned loop */
        m->fresh = sk->next_fresh;
        free(sk);
    }
    while ((sk = m->free_socks)) {
        m->free_socks = sk->next_free;
        free(sk);
    }
    free(m->home);
    free(m);
}

/* FNV-1a of url's scheme and authority (all of it when it has no path),
 * a scheme's default port left out: a host's robots.txt URL names its
 * port (http://h:80/robots.txt) where its pages need not, and both must
 * land on the one multi handle that keeps the host's connection. */
static unsigned origin_hash(const char *url)
{
    unsigned h = 2166136261u;
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *e = p + strcspn(p, "/?#");
    size_t slen = (size_t)(p - url);
    if (slen == 7 && strncasecmp(url, "http://", 7) == 0 && e - p > 3 && memcmp(e - 3, ":80", 3) == 0)
        e -= 3;
    else if (slen == 8 && strncasecmp(url, "https://", 8) == 0 && e - p > 4 &&
             memcmp(e - 4, ":443", 4) == 0)
        e -= 4;
    for (const char *q = url; q < e; q++)
        h = (h ^ (unsigned char)*q) * 16777619u;
    return h;
}

/* Returns a shard with room for x, made if need be: its host's home shard
 * when it has room, so that the host's next transfer finds the connection
 * its last one left (each multi handle keeps idle connections of its own). */
static struct shard *shard_pick(struct multi_ev *m, const struct fetch_xfer *x)
{
    if (m->nhome > 1 && x->job && x->job->url) {
        struct shard *sh = m->home[origin_hash(x->job->url) % (unsigned)m->nhome];
        if (sh->in_flight < m->shard_cap)
            return sh;
    }
    if (m->open && m->open->in_flight < m->shard_cap)
        return m->open;
    for (struct shard *sh = m->shards; sh; sh = sh->next)
        if (sh->in_flight < m->shard_cap)
            return m->open = sh;
    return m->open = shard_new(m);
}

int multi_ev_add(struct multi_ev *m, struct fetch_xfer *x)
{
    struct shard *sh = shard_pick(m, x);
    if (!sh || curl_multi_add_handle(sh->multi, x->easy) != CURLM_OK)
        return CRAWL_ENOMEM;
    x->multi = sh;
    sh->in_flight++;
    sh->poked = 1;
    return 0;
}

void multi_ev_remove(struct multi_ev *m, struct fetch_xfer *x)
{
    if (x->multi)
        leave(x);
}

void multi_ev_poke(struct multi_ev *m)
{
    for (struct shard *sh = m->shards; sh; sh = sh->next)
        if (sh->poked) {
            sh->poked = 0;
            act(sh, CURL_SOCKET_TIMEOUT, 0);
        }
}

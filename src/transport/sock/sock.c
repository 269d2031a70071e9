/* The sock transport: TCP between processes of different jobs (dynamic
 * processes: MPI_Comm_spawn, accept/connect), which the start-up
 * transports cannot reach: their peer tables are fixed at MPI_Init. TCP
 * streams, opened only when a process first takes part in a dynamic
 * connection (reach TERN_TL_REACH_BY_ADDRESS, transport.h); a process is
 * known by its listening address ("tcp:<ipv4>:<port>"), which the core
 * passes in port names and connection handshakes.
 *
 * Each ordered pair uses the connection its sender opened (one per
 * direction), so messages stay in order per pair. The first frame on a
 * connection is the sender's address; the receiver asks the core for the
 * peer index of that address (params->peer_for_addr), so a process can
 * receive from one it has not heard of yet (an accepting root). Frames are a
 * 4-byte length and the message. No get/put: rendezvous streams through
 * active messages. */
#include "base/log.h"
#include "transport/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    SOCK_AM_MAX = 64 * 1024,
    /* Bytes queued for one peer before am_send says TERN_ERR_AGAIN. */
    SOCK_QUEUE_MAX = 16 * 1024 * 1024,
    /* How long finalize waits for queued bytes to leave. */
    SOCK_DRAIN_MS = 5000,
};

typedef struct {
    char *buf;
    size_t len, off, cap;
} sock_buf_t;

typedef struct {
    char addr[TERN_TL_ADDR_MAX]; /* "" until known */
    int out_fd;                    /* connection we send on; -1: none yet */
    sock_buf_t out;
    int failed;
} sock_peer_t;

/* An incoming connection: the peer it comes from once its first frame
 * (the address) is read. */
typedef struct {
    int fd;
    int peer;
    sock_buf_t in;
} sock_conn_t;

struct tern_tl {
    tern_tl_params_t p;
    int listen_fd;
    char addr[TERN_TL_ADDR_MAX];
    sock_peer_t *peers;
    int n_peers;
    sock_conn_t *conns;
    int n_conns;
    struct pollfd *pfd;
    int pfd_cap;
};

static int buf_reserve(sock_buf_t *b, size_t more)
{
    if (b->off > 0 && b->off == b->len)
        b->off = b->len = 0;
    if (b->len + more <= b->cap)
        return 0;
    if (b->off > 0) {
        memmove(b->buf, b->buf + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->len + more <= b->cap)
            return 0;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (!nb)
        return -1;
    b->buf = nb;
    b->cap = cap;
    return 0;
}

static void buf_free(sock_buf_t *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}

/* The address others reach us at: the host name's first IPv4 address that
 * is not loopback; else (a name that does not resolve, or resolves to
 * loopback only, as on many clusters' /etc/hosts) the first non-loopback
 * IPv4 address of an interface that is up; else loopback (then only this
 * host's jobs reach us). */
static void own_ip(char *ip, size_t cap)
{
    snprintf(ip, cap, "127.0.0.1");
    char host[256];
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    if (gethostname(host, sizeof host - 1) == 0) {
        host[sizeof host - 1] = '\0';
        if (getaddrinfo(host, NULL, &hints, &res) == 0) {
            for (struct addrinfo *a = res; a; a = a->ai_next) {
                struct in_addr in = ((struct sockaddr_in *)a->ai_addr)->sin_addr;
                if ((ntohl(in.s_addr) >> 24) == 127)
                    continue;
                inet_ntop(AF_INET, &in, ip, (socklen_t)cap);
                freeaddrinfo(res);
                return;
            }
            freeaddrinfo(res);
        }
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, (socklen_t)cap);
        break;
    }
    freeifaddrs(ifs);
}

static tern_status_t sock_init(const tern_tl_params_t *p, tern_tl_t **tl_p)
{
    if (!p->peer_for_addr)
        return tern_status_detail(TERN_ERR_ARG, "the sock transport needs params.peer_for_addr");
    tern_tl_t *tl = calloc(1, sizeof *tl);
    if (!tl)
        return TERN_ERR_NOMEM;
    tl->p = *p;
    tl->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof sa;
    if (tl->listen_fd < 0 || bind(tl->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(tl->listen_fd, 128) != 0 ||
        getsockname(tl->listen_fd, (struct sockaddr *)&sa, &len) != 0) {
        tern_status_t st = tern_status_detail(TERN_ERR_IO, "cannot listen on TCP for dynamic "
                                              "processes: %s", strerror(errno));
        if (tl->listen_fd >= 0)
            close(tl->listen_fd);
        free(tl);
        return st;
    }
    char ip[INET_ADDRSTRLEN];
    own_ip(ip, sizeof ip);
    snprintf(tl->addr, sizeof tl->addr, "tcp:%s:%d", ip, ntohs(sa.sin_port));
    tern_debug("dynamic-process transport listens at %s", tl->addr);
    *tl_p = tl;
    return TERN_OK;
}

static const char *sock_address(tern_tl_t *tl) { return tl->addr; }

static sock_peer_t *peer_slot(tern_tl_t *tl, int peer)
{
    if (peer >= tl->n_peers) {
        int n = tl->n_peers ? tl->n_peers : 16;
        while (n <= peer)
            n *= 2;
        sock_peer_t *np = realloc(tl->peers, (size_t)n * sizeof *np);
        if (!np)
            return NULL;
        for (int i = tl->n_peers; i < n; i++) {
            memset(&np[i], 0, sizeof np[i]);
            np[i].out_fd = -1;
        }
        tl->peers = np;
        tl->n_peers = n;
    }
    return &tl->peers[peer];
}

static tern_status_t sock_add_peer(tern_tl_t *tl, int peer, const char *addr)
{
    sock_peer_t *p = peer_slot(tl, peer);
    if (!p)
        return TERN_ERR_NOMEM;
    snprintf(p->addr, sizeof p->addr, "%s", addr);
    return TERN_OK;
}

static int sock_reachable(tern_tl_t *tl, int peer)
{
    return peer < tl->n_peers && tl->peers[peer].addr[0];
}

static void peer_fail(tern_tl_t *tl, int peer, const char *why)
{
    sock_peer_t *p = &tl->peers[peer];
    if (p->failed)
        return;
    p->failed = 1;
    if (tl->p.peer_failed)
        tl->p.peer_failed(peer, TERN_ERR_PEER, why);
}

/* Writes what the socket takes now; -1 when the connection broke. */
static int flush_peer(tern_tl_t *tl, int peer)
{
    sock_peer_t *p = &tl->peers[peer];
    while (p->out_fd >= 0 && p->out.off < p->out.len) {
        ssize_t n = send(p->out_fd, p->out.buf + p->out.off, p->out.len - p->out.off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p->out.off += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        char why[128];
        snprintf(why, sizeof why, "connection to %s lost: %s", p->addr, strerror(errno));
        peer_fail(tl, peer, why);
        return -1;
    }
    return 0;
}

/* A frame: an 8-byte header (the length, then 4 zero bytes), the message
 * and zeros to a multiple of 8, so that every message starts 8-aligned in
 * the receiver's buffer (the protocols read their headers in place). */
#define FRAME_HDR 8
static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static int frame_append(sock_buf_t *b, const void *a, size_t alen, const void *c, size_t clen)
{
    uint32_t hdr[2] = {(uint32_t)(alen + clen), 0};
    size_t total = FRAME_HDR + pad8(alen + clen);
    if (buf_reserve(b, total) != 0)
        return -1;
    char *at = b->buf + b->len;
    memcpy(at, hdr, FRAME_HDR);
    if (alen)
        memcpy(at + FRAME_HDR, a, alen);
    if (clen)
        memcpy(at + FRAME_HDR + alen, c, clen);
    memset(at + FRAME_HDR + alen + clen, 0, total - FRAME_HDR - alen - clen);
    b->len += total;
    return 0;
}

static tern_status_t sock_connect(tern_tl_t *tl, int peer)
{
    if (peer >= tl->n_peers || !tl->peers[peer].addr[0])
        return tern_status_detail(TERN_ERR_ARG, "no address for dynamic peer %d", peer);
    sock_peer_t *p = &tl->peers[peer];
    if (p->out_fd >= 0)
        return TERN_OK;
    char ip[INET_ADDRSTRLEN + 1];
    int port;
    if (sscanf(p->addr, "tcp:%16[0-9.]:%d", ip, &port) != 2)
        return tern_status_detail(TERN_ERR_ARG, "bad process address '%s'", p->addr);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
        return tern_status_detail(TERN_ERR_ARG, "bad process address '%s'", p->addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return tern_status_detail(TERN_ERR_IO, "socket: %s", strerror(errno));
    int r;
    do {
        r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
        tern_status_t st = tern_status_detail(TERN_ERR_PEER, "cannot connect to %s: %s",
                                              p->addr, strerror(errno));
        close(fd);
        return st;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    /* Our address goes first, ahead of anything already queued. */
    sock_buf_t hello = {0};
    if (frame_append(&hello, tl->addr, strlen(tl->addr) + 1, NULL, 0) != 0 ||
        buf_reserve(&hello, p->out.len - p->out.off) != 0) {
        buf_free(&hello);
        close(fd);
        return TERN_ERR_NOMEM;
    }
    if (p->out.len > p->out.off) /* nothing queued: no buffer yet */
        memcpy(hello.buf + hello.len, p->out.buf + p->out.off, p->out.len - p->out.off);
    hello.len += p->out.len - p->out.off;
    buf_free(&p->out);
    p->out = hello;
    p->out_fd = fd;
    return flush_peer(tl, peer) == 0 ? TERN_OK : TERN_ERR_PEER;
}

static void sock_disconnect(tern_tl_t *tl, int peer)
{
    if (peer >= tl->n_peers)
        return;
    sock_peer_t *p = &tl->peers[peer];
    if (p->out_fd >= 0)
        close(p->out_fd);
    p->out_fd = -1;
    buf_free(&p->out);
    p->failed = 1;
}

static tern_status_t sock_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len,
                                  const void *payload, size_t payload_len)
{
    if (peer >= tl->n_peers || tl->peers[peer].failed)
        return TERN_ERR_PEER;
    sock_peer_t *p = &tl->peers[peer];
    if (p->out.len - p->out.off > SOCK_QUEUE_MAX)
        return TERN_ERR_AGAIN;
    if (p->out_fd < 0) {
        tern_status_t st = sock_connect(tl, peer);
        if (st != TERN_OK)
            return st;
    }
    if (frame_append(&p->out, hdr, hdr_len, payload, payload_len) != 0)
        return TERN_ERR_NOMEM;
    return flush_peer(tl, peer) == 0 ? TERN_OK : TERN_ERR_PEER;
}

static void conn_close(tern_tl_t *tl, int i)
{
    close(tl->conns[i].fd);
    buf_free(&tl->conns[i].in);
    tl->conns[i] = tl->conns[--tl->n_conns];
}

static void accept_new(tern_tl_t *tl)
{
    for (;;) {
        int fd = accept4(tl->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        sock_conn_t *nc = realloc(tl->conns, (size_t)(tl->n_conns + 1) * sizeof *nc);
        if (!nc) {
            close(fd);
            return;
        }
        tl->conns = nc;
        tl->conns[tl->n_conns++] = (sock_conn_t){.fd = fd, .peer = -1};
    }
}

/* Reads what connection i has and delivers whole frames; 0 when it closed
 * (then it is gone from the list). */
static int conn_read(tern_tl_t *tl, int i, int *events)
{
    sock_conn_t *c = &tl->conns[i];
    if (buf_reserve(&c->in, 65536) != 0)
        return 1;
    ssize_t n = recv(c->fd, c->in.buf + c->in.len, c->in.cap - c->in.len, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        /* The sender finished (or died, which its own job reports). */
        conn_close(tl, i);
        return 0;
    }
    if (n < 0)
        return 1;
    c->in.len += (size_t)n;
    for (;;) {
        c = &tl->conns[i];
        uint32_t len;
        if (c->in.len - c->in.off < FRAME_HDR)
            break;
        memcpy(&len, c->in.buf + c->in.off, sizeof len);
        if (len > SOCK_AM_MAX + 4096) {
            tern_warn("dropping a dynamic-process connection that sent a %u-byte frame", len);
            conn_close(tl, i);
            return 0;
        }
        size_t whole = FRAME_HDR + pad8(len);
        if (c->in.len - c->in.off < whole) {
            if (buf_reserve(&c->in, whole) != 0)
                return 1;
            break;
        }
        const char *msg = c->in.buf + c->in.off + FRAME_HDR;
        c->in.off += whole;
        if (c->peer < 0) {
            char addr[TERN_TL_ADDR_MAX];
            snprintf(addr, sizeof addr, "%.*s", (int)(len ? len - 1 : 0), msg);
            c->peer = tl->p.peer_for_addr(addr);
            if (c->peer < 0) {
                conn_close(tl, i);
                return 0;
            }
            continue;
        }
        (*events)++;
        /* The handler may send (append to out buffers), never read. */
        tl->p.am_handler(tl->p.am_ctx, c->peer, msg, len);
    }
    return 1;
}

static int sock_progress(tern_tl_t *tl)
{
    int want = 1 + tl->n_conns + tl->n_peers;
    if (want > tl->pfd_cap) {
        struct pollfd *np = realloc(tl->pfd, (size_t)want * sizeof *np);
        if (!np)
            return 0;
        tl->pfd = np;
        tl->pfd_cap = want;
    }
    int n = 0;
    tl->pfd[n++] = (struct pollfd){.fd = tl->listen_fd, .events = POLLIN};
    for (int i = 0; i < tl->n_conns; i++)
        tl->pfd[n++] = (struct pollfd){.fd = tl->conns[i].fd, .events = POLLIN};
    int n_in = n;
    for (int i = 0; i < tl->n_peers; i++)
        if (tl->peers[i].out_fd >= 0 && tl->peers[i].out.off < tl->peers[i].out.len)
            tl->pfd[n++] = (struct pollfd){.fd = tl->peers[i].out_fd, .events = POLLOUT};
    int events = 0;
    if (poll(tl->pfd, (nfds_t)n, 0) <= 0)
        return 0;
    for (int j = n_in; j < n; j++)
        if (tl->pfd[j].revents) {
            int peer = 0;
            for (int i = 0; i < tl->n_peers; i++)
                if (tl->peers[i].out_fd == tl->pfd[j].fd)
                    peer = i;
            flush_peer(tl, peer);
        }
    /* Connections from the back, since a closed one is replaced by the last. */
    for (int j = n_in - 1; j >= 1; j--)
        if (tl->pfd[j].revents) {
            int i = j - 1;
            if (i < tl->n_conns && tl->conns[i].fd == tl->pfd[j].fd)
                conn_read(tl, i, &events);
        }
    if (tl->pfd[0].revents)
        accept_new(tl);
    return events;
}

static void sock_finalize(tern_tl_t *tl)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int left = 0;
        for (int i = 0; i < tl->n_peers; i++) {
            sock_peer_t *p = &tl->peers[i];
            if (p->out_fd >= 0 && !p->failed && flush_peer(tl, i) == 0 && p->out.off < p->out.len)
                left = 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (!left || ms > SOCK_DRAIN_MS)
            break;
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    for (int i = 0; i < tl->n_peers; i++) {
        if (tl->peers[i].out_fd >= 0)
            close(tl->peers[i].out_fd);
        buf_free(&tl->peers[i].out);
    }
    while (tl->n_conns > 0)
        conn_close(tl, tl->n_conns - 1);
    close(tl->listen_fd);
    free(tl->peers);
    free(tl->conns);
    free(tl->pfd);
    free(tl);
}

/* No get/put: rendezvous streams through active messages. */
static void sock_query(tern_tl_t *tl, int peer, tern_tl_attr_t *attr_p)
{
    (void)tl, (void)peer;
    *attr_p = (tern_tl_attr_t){.caps = 0, .am_max = SOCK_AM_MAX, .rma_min = SIZE_MAX};
}

static tern_status_t sock_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p)
{
    (void)tl, (void)buf, (void)len;
    memset(rkey_p, 0, sizeof *rkey_p);
    return TERN_ERR_NOT_SUPPORTED;
}

static void sock_mem_dereg(tern_tl_t *tl, void *buf, size_t len) { (void)tl, (void)buf, (void)len; }

static tern_status_t sock_rma(tern_tl_t *tl, int peer, void *local, size_t len,
                              uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)tl, (void)peer, (void)local, (void)len, (void)remote_addr, (void)rkey, (void)comp;
    return TERN_ERR_NOT_SUPPORTED;
}

static tern_status_t sock_put(tern_tl_t *tl, int peer, const void *local, size_t len,
                              uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    return sock_rma(tl, peer, (void *)local, len, remote_addr, rkey, comp);
}

const tern_tl_ops_t tern_tl_sock_ops = {
    .name = "sock",
    .reach = TERN_TL_REACH_BY_ADDRESS,
    .init = sock_init,
    .finalize = sock_finalize,
    .reachable = sock_reachable,
    .connect = sock_connect,
    .disconnect = sock_disconnect,
    .query = sock_query,
    .am_send = sock_am_send,
    .progress = sock_progress,
    .mem_reg = sock_mem_reg,
    .mem_dereg = sock_mem_dereg,
    .get = sock_rma,
    .put = sock_put,
    .address = sock_address,
    .add_peer = sock_add_peer,
};

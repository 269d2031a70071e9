/* Liveness of peers on other hosts, without the launcher and without the
 * peer's progress: each rank listens on a TCP port of the address its
 * first rail uses (the provider's, when it is an IP address) and publishes
 * it in its address blob, with its host name; it never accepts. A rank
 * that waits for a peer on another host (watch_peers: a request with it,
 * or every peer in fault-tolerant mode) connects to that port once, the
 * peer's kernel completing the connection in its accept queue, and from
 * then on polls the socket at each peer check:
 *  - the peer's process ends (killed, crashed): its kernel closes the
 *    listener and resets the queued connections, so the reset arrives
 *    within a network round trip of the death, whatever the process or
 *    its launcher were doing;
 *  - the peer's host dies or the link is cut: TCP keepalive probes (sent
 *    and answered by the kernels, so a peer busy computing outside MPI
 *    still answers) every TERN_PEER_HEARTBEAT_MS, rounded up to whole
 *    seconds, and three unanswered probes end the connection: seen within
 *    about four times that;
 *  - a connection refused (nothing listens there any more): the process
 *    is gone.
 * As for a local peer found gone (ofi.c), a peer is failed at the check
 * after the one that saw it gone, so that what it sent before it died is
 * read first. Costs: one socket per remote peer watched (every remote peer
 * in fault-tolerant mode) and one poll() per check over them; at most the
 * kernel's listen backlog (somaxconn) watchers per rank. */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { LIVE_NONE, LIVE_CONNECTING, LIVE_CONNECTED, LIVE_OFF };

/* Heartbeat periods before a silent host counts as dead: the idle period
 * and three probes; a connection gets as long, which also covers the
 * SYN retransmissions at 1 and 3 s. */
enum { LIVE_PERIODS = 4 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The heartbeat period in whole seconds (0: the watch is off). */
static int heartbeat_s(void)
{
    long ms = (long)tern_knob_count(TERN_KNOB_PEER_HEARTBEAT_MS);
    return ms <= 0 ? 0 : (int)((ms + 999) / 1000);
}

void tern_ofi_live_open(tern_tl_t *tl)
{
    tl->live_fd = -1;
    if (!heartbeat_s() || !tl->rails[0].info)
        return;
    uint32_t fmt = tl->rails[0].info->addr_format;
    if (fmt != FI_SOCKADDR_IN && fmt != FI_SOCKADDR_IN6 && fmt != FI_SOCKADDR)
        return;
    struct sockaddr_storage sa;
    size_t len = sizeof sa;
    memset(&sa, 0, sizeof sa);
    if (fi_getname(&tl->rails[0].ep->fid, &sa, &len) != 0)
        return;
    if (sa.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;
        if (in->sin_addr.s_addr == htonl(INADDR_ANY))
            return;
        in->sin_port = 0;
        memcpy(tl->live_addr, &in->sin_addr, 4);
        len = sizeof *in;
    } else if (sa.ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;
        if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
            return;
        in6->sin6_port = 0;
        memcpy(tl->live_addr, &in6->sin6_addr, 16);
        len = sizeof *in6;
    } else {
        return;
    }
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return;
    socklen_t sl = (socklen_t)len;
    if (bind(fd, (struct sockaddr *)&sa, sl) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        tern_debug("ofi: no liveness port (%s): peers on other hosts see this rank's death "
                   "only through the provider or the launcher", strerror(errno));
        close(fd);
        return;
    }
    tl->live_fd = fd;
    tl->live_family = sa.ss_family == AF_INET ? 4 : 6;
    tl->live_port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port
                                                  : ((struct sockaddr_in6 *)&sa)->sin6_port);
    if (gethostname(tl->host_name, sizeof tl->host_name - 1) != 0)
        tl->host_name[0] = 0;
    tl->host_name[sizeof tl->host_name - 1] = 0;
    tern_debug("ofi: liveness port %u for peers on other hosts", (unsigned)tl->live_port);
}

size_t tern_ofi_live_blob(const tern_tl_t *tl, unsigned char *out)
{
    if (tl->live_fd < 0) {
        out[0] = 0;
        return 1;
    }
    size_t n = 0, alen = tl->live_family == 4 ? 4 : 16, hlen = strlen(tl->host_name);
    out[n++] = (unsigned char)tl->live_family;
    out[n++] = (unsigned char)(tl->live_port >> 8);
    out[n++] = (unsigned char)(tl->live_port & 0xff);
    memcpy(out + n, tl->live_addr, alen);
    n += alen;
    out[n++] = (unsigned char)hlen;
    memcpy(out + n, tl->host_name, hlen);
    return n + hlen;
}

void tern_ofi_live_parse(tern_tl_t *tl, int peer, const unsigned char *in, size_t n)
{
    ofi_peer_t *p = &tl->peers[peer];
    p->live_known = 1;
    if (n < 1 || (in[0] != 4 && in[0] != 6))
        return;
    size_t alen = in[0] == 4 ? 4 : 16;
    if (n < 3 + alen + 1 || n < 3 + alen + 1 + in[3 + alen])
        return;
    p->live_family = in[0];
    p->live_port = (uint16_t)(in[1] << 8 | in[2]);
    memcpy(p->live_addr, in + 3, alen);
    size_t hlen = in[3 + alen];
    if (hlen >= sizeof p->host_name)
        hlen = sizeof p->host_name - 1;
    memcpy(p->host_name, in + 4 + alen, hlen);
    p->host_name[hlen] = 0;
}

/* "host NAME (ADDR)" of a peer, for messages. */
static void where(const ofi_peer_t *p, char *buf, size_t cap)
{
    char a[INET6_ADDRSTRLEN] = "?";
    inet_ntop(p->live_family == 4 ? AF_INET : AF_INET6, p->live_addr, a, sizeof a);
    snprintf(buf, cap, "host %s (%s)", p->host_name[0] ? p->host_name : "?", a);
}

static void gone(tern_tl_t *tl, int peer, const char *why);
static const char *reason(int err, int connecting);

static void set_int(int fd, int level, int opt, int v)
{
    (void)setsockopt(fd, level, opt, &v, sizeof v);
}

static void start(tern_tl_t *tl, int peer)
{
    ofi_peer_t *p = &tl->peers[peer];
    int hb = heartbeat_s();
    p->live_state = LIVE_OFF;
    if (!p->live_known && tern_ofi_fetch_live(tl, peer) != TERN_OK)
        return;
    if (!p->live_family || !hb)
        return;
    struct sockaddr_storage sa;
    socklen_t sl;
    memset(&sa, 0, sizeof sa);
    if (p->live_family == 4) {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;
        in->sin_family = AF_INET;
        in->sin_port = htons(p->live_port);
        memcpy(&in->sin_addr, p->live_addr, 4);
        sl = sizeof *in;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(p->live_port);
        memcpy(&in6->sin6_addr, p->live_addr, 16);
        sl = sizeof *in6;
    }
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return;
    /* Probes each hb seconds of silence; three unanswered in a row are
     * fatal. One was: a network stall of a second or two (a link flap, a
     * congested switch) then failed a healthy peer, and outside
     * fault-tolerant mode ended the job. */
    set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
    set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, hb);
    set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, hb);
    set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
    set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, LIVE_PERIODS * hb * 1000);
    if (connect(fd, (struct sockaddr *)&sa, sl) != 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        gone(tl, peer, reason(err, 1));
        return;
    }
    p->live_fd = fd;
    p->live_state = LIVE_CONNECTING;
    p->live_deadline = now_s() + LIVE_PERIODS * hb;
    tern_debug("ofi: watching rank %d through its liveness port %u", peer, (unsigned)p->live_port);
}

void tern_ofi_live_close(tern_tl_t *tl, int peer)
{
    ofi_peer_t *p = &tl->peers[peer];
    if (p->live_state == LIVE_CONNECTING || p->live_state == LIVE_CONNECTED)
        close(p->live_fd);
    p->live_state = LIVE_OFF;
}

void tern_ofi_live_close_all(tern_tl_t *tl)
{
    if (tl->peers)
        for (int r = 0; r < tl->size; r++)
            tern_ofi_live_close(tl, r);
    if (tl->live_fd >= 0)
        close(tl->live_fd);
    tl->live_fd = -1;
}

/* The peer is gone (why): failed at the next check (ofi.c's rule). */
static void gone(tern_tl_t *tl, int peer, const char *why)
{
    ofi_peer_t *p = &tl->peers[peer];
    if (p->live_gone) {
        char at[128];
        where(p, at, sizeof at);
        tern_ofi_peer_error(tl, peer, TERN_ERR_PEER, "ofi: rank %d on %s: %s", peer, at,
                            p->gone_why);
        return;
    }
    p->live_gone = 1;
    snprintf(p->gone_why, sizeof p->gone_why, "%s", why);
}

static const char *reason(int err, int connecting)
{
    switch (err) {
    case ECONNREFUSED: return "its host refused the connection to its port: its process is gone";
    case ECONNRESET:
    case EPIPE: return "its host reset the connection: its process is gone";
    case ETIMEDOUT:
        return "its host did not answer for the heartbeat time (TERN_PEER_HEARTBEAT_MS): the "
               "host is down or the network cut";
    case EHOSTUNREACH:
    case ENETUNREACH: return "its host cannot be reached: the host is down or the network cut";
    case 0: return connecting ? "no connection to its host within four heartbeat times "
                                "(TERN_PEER_HEARTBEAT_MS): the host is down or the network cut"
                              : "its host closed the connection: its process ended";
    default: return strerror(err);
    }
}

void tern_ofi_live_watch(tern_tl_t *tl, const int *peers, int n_peers)
{
    struct pollfd pfd[64];
    int who[64];
    double now = now_s();
    for (int i = 0; i < n_peers;) {
        int n = 0;
        for (; i < n_peers && n < 64; i++) {
            int peer = peers[i];
            ofi_peer_t *p = &tl->peers[peer];
            if (p->failed || !p->net || (tl->node_of_rank && tl->node_of_rank[peer] == tl->node))
                continue; /* not ours, or on this node (ofi.c watches its pid) */
            if (p->live_gone) {
                gone(tl, peer, NULL);
                continue;
            }
            if (p->live_state == LIVE_NONE)
                start(tl, peer);
            if (p->live_state != LIVE_CONNECTING && p->live_state != LIVE_CONNECTED)
                continue;
            pfd[n] = (struct pollfd){.fd = p->live_fd,
                                     .events = POLLRDHUP | POLLIN |
                                               (p->live_state == LIVE_CONNECTING ? POLLOUT : 0)};
            who[n++] = peer;
        }
        if (n == 0 || poll(pfd, (nfds_t)n, 0) < 0)
            continue;
        for (int k = 0; k < n; k++) {
            ofi_peer_t *p = &tl->peers[who[k]];
            int err = 0;
            socklen_t len = sizeof err;
            short ev = pfd[k].revents;
            int connecting = p->live_state == LIVE_CONNECTING;
            if (!ev) {
                if (connecting && now >= p->live_deadline)
                    gone(tl, who[k], reason(0, 1));
                continue;
            }
            getsockopt(p->live_fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (connecting && !err && (ev & ~POLLOUT) == 0) {
                p->live_state = LIVE_CONNECTED;
                continue;
            }
            gone(tl, who[k], reason(err, 0));
        }
    }
}

/* Where the root listens for its proxies. Not on every interface: by
 * default (TERN_MPIEXEC_LISTEN=auto) on loopback for hosts started here
 * directly, and for a remote host on the address this machine's routing
 * uses toward it (the source address of a datagram socket connected to
 * it), or, if its name does not resolve here (an ssh alias), the address
 * this machine's name resolves to. TERN_MPIEXEC_LISTEN=any listens on all
 * IPv4 interfaces (the old behaviour, for NAT and unusual routing); an
 * IPv4 address listens only there. Every connection still has to prove it
 * knows the job's secret (auth.c); this only narrows who can try. */
#include "mpiexec.h"
#include "base/config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The first IPv4 address `name` resolves to. */
static int resolve4(const char *name, struct in_addr *out)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
    if (getaddrinfo(name, NULL, &hints, &ai) != 0 || !ai)
        return -1;
    *out = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
    freeaddrinfo(ai);
    return 0;
}

/* This machine's address toward `to`, as its routing table picks it. */
static int source_toward(struct in_addr to, struct in_addr *out)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr = to};
    socklen_t len = sizeof sa;
    int ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
             getsockname(fd, (struct sockaddr *)&sa, &len) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok)
        return -1;
    *out = sa.sin_addr;
    return 0;
}

static int open_listener(mpiexec_listen_t *l, struct in_addr addr)
{
    for (int i = 0; i < l->n; i++)
        if (l->addr[i].s_addr == addr.s_addr)
            return i;
    if (l->n == MPIEXEC_LISTEN_MAX) {
        fprintf(stderr, "mpiexec: the hosts are reached through more than %d local addresses; "
                        "set TERN_MPIEXEC_LISTEN=any\n", MPIEXEC_LISTEN_MAX);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = addr};
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        char text[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &addr, text, sizeof text);
        fprintf(stderr, "mpiexec: cannot listen for host proxies on %s: %s\n", text,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    l->fd[l->n] = fd;
    l->addr[l->n] = addr;
    l->port[l->n] = ntohs(sa.sin_port);
    return l->n++;
}

int mpiexec_listen_for(mpiexec_listen_t *l, const char *host, int local, int ssh, char *out,
                       size_t cap)
{
    const char *mode = tern_knob_str(TERN_KNOB_MPIEXEC_LISTEN);
    struct in_addr addr = {.s_addr = htonl(INADDR_LOOPBACK)};
    int any = strcmp(mode, "any") == 0;
    if (any) {
        addr.s_addr = htonl(INADDR_ANY);
    } else if (strcmp(mode, "auto") != 0) {
        if (inet_pton(AF_INET, mode, &addr) != 1) {
            fprintf(stderr, "mpiexec: TERN_MPIEXEC_LISTEN='%s' is not auto, any or an IPv4 "
                            "address\n", mode);
            return -1;
        }
    } else if (!local) {
        char me[256] = "localhost";
        struct in_addr peer;
        gethostname(me, sizeof me - 1);
        if (!(resolve4(host, &peer) == 0 && source_toward(peer, &addr) == 0) &&
            resolve4(me, &addr) != 0) {
            fprintf(stderr, "mpiexec: cannot tell which address of this machine host %s "
                            "reaches; set TERN_MPIEXEC_LISTEN to it (or to any)\n", host);
            return -1;
        }
    }
    int i = open_listener(l, addr);
    if (i < 0)
        return -1;
    if (!any) {
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr, text, sizeof text);
        snprintf(out, cap, "%s:%d", text, l->port[i]);
    } else if (local) {
        snprintf(out, cap, "127.0.0.1:%d", l->port[i]);
    } else if (ssh) {
        snprintf(out, cap, "ssh:%d", l->port[i]); /* the proxy uses SSH_CONNECTION */
    } else {
        char me[256] = "localhost";
        gethostname(me, sizeof me - 1);
        snprintf(out, cap, "%s:%d", me, l->port[i]);
    }
    return 0;
}

void mpiexec_listen_close(mpiexec_listen_t *l)
{
    for (int i = 0; i < l->n; i++)
        close(l->fd[i]);
    l->n = 0;
}

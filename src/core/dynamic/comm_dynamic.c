/* Connecting two groups of processes that started apart (dynamic
 * processes): MPI_Comm_accept / MPI_Comm_connect, on which MPI_Comm_spawn
 * builds (comm_spawn.c).
 *
 * A port name is "tern-port:<tag>:<address>": the address of the
 * accepting root on the transport between jobs (runtime/dyn_peers.c) and
 * a tag unique to the port. The roots meet on a context reserved for it
 * (TERN_CTX_BRIDGE, never given to a communicator), matched by that tag:
 * the connecting root sends its group's addresses, the
 * accepting root answers with its own. Each root bcasts the other group's
 * addresses to its group and every member makes the remote processes
 * peers; then both groups agree on the context ids in rounds, the roots
 * swapping their groups' masks (tern_ctx_agree_ex: windows under
 * MPI_THREAD_MULTIPLE, so threads that spawn at once each find slots). */
#include "core/dynamic/comm_dynamic.h"
#include "core/comm/comm_create.h"
#include "core/comm/comm_exchange.h"
#include "core/comm/comm_p2p.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/send_cancel.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"
#include "base/clock.h"
#include "base/config.h"
#include "pmi/pmi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT_PREFIX "tern-port:"

typedef char addr_t[TERN_TL_ADDR_MAX];

/* What one root sends the other. */
typedef struct {
    int32_t size;
    int32_t root;  /* index of the sender among the addresses */
    int32_t status;
} bridge_hdr_t;

/* What a root bcasts to its group. */
typedef struct {
    int32_t status;
    int32_t remote_size;
} group_hdr_t;

static unsigned port_counter;

tern_status_t tern_port_open(char *port_name)
{
    const char *addr;
    tern_status_t st = tern_dyn_open(&addr);
    if (st != TERN_OK)
        return st;
    /* Unique among this process's ports, and unlikely to equal another
     * process's (the roots' first message matches on it). */
    int tag = (int)((((unsigned)getpid() & 0xffffu) << 12 | (++port_counter & 0xfffu)) &
                    0x3fffffffu);
    snprintf(port_name, MPI_MAX_PORT_NAME, PORT_PREFIX "%d:%s", tag, addr);
    return TERN_OK;
}

/* The tag and address of a port name; TERN_ERR_PORT if it is not one. */
static tern_status_t port_parse(const char *port, int *tag_p, const char **addr_p)
{
    char *end;
    if (!port)
        return tern_status_detail(TERN_ERR_ARG, "port_name is NULL at the root");
    if (strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX)) != 0)
        return tern_status_detail(TERN_ERR_PORT, "'%.64s' is not a port name (it must start "
                                  "with " PORT_PREFIX ")", port);
    long tag = strtol(port + strlen(PORT_PREFIX), &end, 10);
    if (end == port + strlen(PORT_PREFIX) || *end != ':' || tag < 0 || tag > 0x3fffffff ||
        strlen(end + 1) >= TERN_TL_ADDR_MAX)
        return tern_status_detail(TERN_ERR_PORT, "malformed port name '%.64s'", port);
    *tag_p = (int)tag;
    *addr_p = end + 1;
    return TERN_OK;
}

int tern_port_tag(const char *port)
{
    int tag = 0;
    const char *addr = NULL;
    return port_parse(port, &tag, &addr) == TERN_OK ? tag : 0;
}

tern_status_t tern_port_check(const char *port)
{
    int tag = 0;
    const char *addr = NULL;
    return port_parse(port, &tag, &addr);
}

static tern_status_t wait_release(tern_req_t *req, size_t *bytes_p)
{
    tern_progress_wait(&req->complete);
    tern_status_t st = req->error;
    if (bytes_p)
        *bytes_p = req->status_bytes;
    tern_req_release(req);
    return st;
}

/* The connecting root waits for the accepting root's answer (rreq) to its
 * request (sreq, kept until then). Past timeout_s (> 0) it withdraws the
 * request (a send cancel: the accepting process drops it unless an accept
 * matched it already) and fails with TERN_ERR_PORT; if an accept matched
 * it meanwhile, the answer is on its way and the wait goes on. */
static tern_status_t connect_wait(tern_req_t *sreq, tern_req_t *rreq, double timeout_s,
                                  const char *port, size_t *got_p)
{
    double deadline = timeout_s > 0 ? tern_clock_s() + timeout_s : 0;
    unsigned idle = 0;
    while (!rreq->complete) {
        if (tern_progress() == 0 && !rreq->complete)
            tern_progress_idle(&idle);
        if (deadline > 0 && !rreq->complete && tern_clock_s() > deadline) {
            deadline = 0;
            tern_send_cancel(sreq);
            tern_progress_wait(&sreq->complete);
            if (sreq->cancelled && tern_p2p_cancel_recv(rreq)) {
                tern_req_release(sreq);
                tern_req_release(rreq);
                return tern_status_detail(TERN_ERR_PORT,
                                          "no MPI_Comm_accept on port %s within %g s (the "
                                          "info key \"timeout\" or TERN_PORT_CONNECT_TIMEOUT)",
                                          port, timeout_s);
            }
        }
    }
    tern_progress_wait(&sreq->complete);
    tern_status_t st = sreq->error;
    tern_req_release(sreq);
    tern_status_t rst = wait_release(rreq, got_p);
    return st != TERN_OK ? st : rst;
}

/* The roots' exchange. The bridge is a two-process communicator that
 * exists only here: rank 0 the accepting root, rank 1 the connecting one. */
static tern_status_t bridge(int accept, const char *port, double timeout_s,
                            const bridge_hdr_t *mine, const addr_t *my_addrs,
                            bridge_hdr_t *theirs, addr_t **their_addrs, int *other_p)
{
    int tag = 0;
    const char *addr = NULL;
    tern_status_t st = port_parse(port, &tag, &addr);
    if (st != TERN_OK)
        return st;
    int peer = -1;
    if (!accept && (st = tern_dyn_peer(addr, &peer)) != TERN_OK)
        return st;
    int wr[2] = {accept ? tern_rt.rank : peer, accept ? -1 : tern_rt.rank};
    tern_comm_t b = {.handle = MPI_COMM_NULL, .rank = accept ? 0 : 1, .size = 2, .world_ranks = wr};
    size_t max = sizeof(bridge_hdr_t) + TERN_DYN_PEERS_MAX * sizeof(addr_t);
    size_t out_len = sizeof *mine + (size_t)mine->size * sizeof(addr_t);
    char *in = malloc(max), *out = malloc(out_len);
    if (!in || !out) {
        free(in);
        free(out);
        return TERN_ERR_NOMEM;
    }
    memcpy(out, mine, sizeof *mine);
    memcpy(out + sizeof *mine, my_addrs, (size_t)mine->size * sizeof(addr_t));
    tern_req_t *rreq, *sreq;
    size_t got = 0;
    st = tern_comm_irecv(&b, TERN_CTX_BRIDGE, in, max, accept ? MPI_ANY_SOURCE : 0, tag, &rreq);
    if (st == TERN_OK && !accept) {
        if ((st = tern_comm_isend(&b, TERN_CTX_BRIDGE, out, out_len, 0, tag, TERN_SEND_STANDARD,
                                  &sreq)) == TERN_OK)
            st = connect_wait(sreq, rreq, timeout_s, port, &got);
        else if (tern_p2p_cancel_recv(rreq)) /* no request went out: no answer comes */
            tern_req_release(rreq);
    } else if (st == TERN_OK)
        st = wait_release(rreq, &got);
    if (st == TERN_OK) {
        memcpy(theirs, in, sizeof *theirs);
        if (got < sizeof *theirs || theirs->size <= 0 || theirs->size > TERN_DYN_PEERS_MAX ||
            got != sizeof *theirs + (size_t)theirs->size * sizeof(addr_t) || theirs->root < 0 ||
            theirs->root >= theirs->size)
            st = tern_status_detail(TERN_ERR_INTERNAL, "malformed connection message on port %s",
                                    port);
    }
    if (st == TERN_OK && !(*their_addrs = malloc((size_t)theirs->size * sizeof(addr_t))))
        st = TERN_ERR_NOMEM;
    if (st == TERN_OK) {
        memcpy(*their_addrs, in + sizeof *theirs, (size_t)theirs->size * sizeof(addr_t));
        for (int i = 0; i < theirs->size; i++)
            (*their_addrs)[i][TERN_TL_ADDR_MAX - 1] = '\0';
    }
    if (st == TERN_OK && accept) {
        /* Answer the connector that came. */
        st = tern_dyn_peer((*their_addrs)[theirs->root], &wr[1]);
        if (st == TERN_OK &&
            (st = tern_comm_isend(&b, TERN_CTX_BRIDGE, out, out_len, 1, tag, TERN_SEND_STANDARD,
                                  &sreq)) == TERN_OK)
            st = wait_release(sreq, NULL);
    }
    free(in);
    free(out);
    *other_p = accept ? wr[1] : wr[0];
    return st;
}

/* The roots' swap of their groups' context masks in each round of the
 * agreement (tern_ctx_agree_ex), on the bridge's context with a negative
 * tag of the port's (port tags are >= 0; -1 is MPI_ANY_TAG). */
typedef struct {
    int accept;
    int other; /* the other root's world rank (a peer index) */
    int tag;
} swap_arg_t;

static tern_status_t swap_masks(void *arg, tern_ctx_mask_t *m)
{
    const swap_arg_t *s = arg;
    int wr[2] = {s->accept ? tern_rt.rank : s->other, s->accept ? s->other : tern_rt.rank};
    tern_comm_t b = {.handle = MPI_COMM_NULL, .rank = s->accept ? 0 : 1, .size = 2,
                     .world_ranks = wr};
    tern_ctx_mask_t theirs;
    tern_req_t *rreq, *sreq;
    size_t got = 0;
    int tag = -2 - s->tag;
    tern_status_t st = tern_comm_irecv(&b, TERN_CTX_BRIDGE, &theirs, sizeof theirs,
                                       1 - b.rank, tag, &rreq);
    if (st != TERN_OK)
        return st;
    st = tern_comm_isend(&b, TERN_CTX_BRIDGE, m, sizeof *m, 1 - b.rank, tag, TERN_SEND_STANDARD,
                         &sreq);
    if (st == TERN_OK)
        st = wait_release(sreq, NULL);
    tern_status_t rst = wait_release(rreq, &got);
    if (st == TERN_OK)
        st = rst;
    if (st == TERN_OK && got != sizeof theirs)
        st = tern_status_detail(TERN_ERR_INTERNAL, "malformed context mask from the other root");
    if (st == TERN_OK)
        tern_ctx_mask_combine(m, &theirs, sizeof *m);
    return st;
}

tern_status_t tern_comm_dyn_join(tern_comm_t *comm, int root, int accept, const char *port,
                                 int port_tag, double timeout_s, tern_comm_t **new_p)
{
    *new_p = NULL;
    const char *my_addr;
    tern_status_t st = tern_dyn_open(&my_addr);
    if (st != TERN_OK)
        return st;
    /* First the call's identity, the port's tag (0 for a malformed port:
     * the bridge then fails at the root and says why): every later
     * message of the call travels on tags of its own, so calls that
     * threads make at once on one communicator keep apart. */
    tern_xchg_t x = tern_xchg_over(comm, TERN_XTAG_DYN);
    if (port_tag < 0) {
        int32_t t = comm->rank == root ? tern_port_tag(port) : 0;
        if ((st = tern_xchg_bcast(&x, root, &t, sizeof t)) != TERN_OK)
            return st;
        port_tag = t;
    }
    int base = TERN_XTAG_DYN_CALL(port_tag);
    addr_t *addrs = calloc((size_t)comm->size, sizeof *addrs), *raddrs = NULL;
    addr_t me;
    memset(me, 0, sizeof me);
    snprintf(me, sizeof me, "%s", my_addr);
    if (!addrs)
        return TERN_ERR_NOMEM;
    x.tag = base;
    st = tern_xchg_allgather(&x, me, addrs, sizeof me);
    if (st != TERN_OK) {
        free(addrs);
        return st;
    }
    /* The roots meet (the accepting one waits here for the other side,
     * children that are still starting); no context slot is held
     * meanwhile, so other agreements of this process go on. */
    group_hdr_t g = {.status = TERN_OK};
    swap_arg_t sw = {.accept = accept, .other = -1, .tag = port_tag};
    if (comm->rank == root) {
        bridge_hdr_t mine = {.size = comm->size, .root = root, .status = TERN_OK};
        bridge_hdr_t theirs = {0};
        tern_status_t bst =
            bridge(accept, port, timeout_s, &mine, addrs, &theirs, &raddrs, &sw.other);
        if (bst == TERN_OK)
            g.remote_size = theirs.size;
        else
            g.status = (int32_t)bst;
    }
    x.tag = base - 1;
    st = tern_xchg_bcast(&x, root, &g, sizeof g);
    if (st == TERN_OK && g.status != TERN_OK)
        st = comm->rank == root ? (tern_status_t)g.status
                                : tern_status_detail((tern_status_t)g.status,
                                                     "the root (rank %d) could not %s", root,
                                                     accept ? "accept" : "connect");
    if (st == TERN_OK && !raddrs && !(raddrs = malloc((size_t)g.remote_size * sizeof *raddrs)))
        st = TERN_ERR_NOMEM;
    x.tag = base - 2;
    if (st == TERN_OK)
        st = tern_xchg_bcast(&x, root, raddrs, (size_t)g.remote_size * sizeof *raddrs);
    int *rranks = NULL;
    if (st == TERN_OK && !(rranks = malloc((size_t)g.remote_size * sizeof *rranks)))
        st = TERN_ERR_NOMEM;
    for (int i = 0; st == TERN_OK && i < g.remote_size; i++)
        st = tern_dyn_peer(raddrs[i], &rranks[i]);
    /* Then the context ids, over both groups: each group reduces to its
     * root, the roots swap, each bcasts; in windows and rounds as other
     * agreements under MULTIPLE (context_id.c), the window the same on
     * both sides (the port's tag), so concurrent joins of a process do
     * not take every free slot from each other. */
    uint32_t ids[2];
    x.tag = base - 3;
    if (st == TERN_OK)
        st = tern_ctx_agree_ex(&x, root, 2, ids, TERN_CTX_BRIDGE, port_tag, swap_masks, &sw);
    if (st == TERN_OK) {
        int *lranks = malloc((size_t)comm->size * sizeof *lranks);
        if (!lranks)
            st = TERN_ERR_NOMEM;
        for (int i = 0; st == TERN_OK && i < comm->size; i++)
            lranks[i] = tern_comm_local_world_rank(comm, i);
        if (st == TERN_OK)
            st = tern_comm_new_inter(comm, ids[0], ids[1], comm->rank, comm->size, lranks, g.remote_size,
                                     rranks, new_p);
        if (st == TERN_OK)
            (*new_p)->inter_first = accept ? 1 : -1;
        else {
            tern_ctx_release(ids[0]);
            tern_ctx_release(ids[1]);
        }
        free(lranks);
    }
    free(rranks);
    free(raddrs);
    free(addrs);
    return st;
}

/* Every process checks comm and root (the same everywhere); what only the
 * root reads travels in the roots' outcome, so a bad port name at the root
 * fails the call on every process, without a hang. */
tern_status_t tern_comm_check_root(const tern_comm_t *comm, int root)
{
    if (comm->is_inter)
        return tern_status_detail(TERN_ERR_COMM, "comm must be an intracommunicator");
    if (root < 0 || root >= comm->size)
        return tern_status_detail(TERN_ERR_RANK, "root=%d is not a rank of comm (size %d)",
                                  root, comm->size);
    return TERN_OK;
}

/* The connect timeout of one call: the info key "timeout" (seconds, as
 * MPICH reads it) when it is a number, else TERN_PORT_CONNECT_TIMEOUT. */
static double connect_timeout(const tern_info_t *info)
{
    const char *v = info ? tern_info_get(info, "timeout") : NULL;
    if (v) {
        char *end;
        errno = 0;
        double t = strtod(v, &end);
        if (end != v && *end == '\0' && errno == 0 && t >= 0)
            return t;
    }
    return (double)tern_knob_count(TERN_KNOB_PORT_CONNECT_TIMEOUT);
}

tern_status_t tern_comm_dyn_join_checked(tern_comm_t *comm, int root, int accept,
                                         const char *port, const tern_info_t *info,
                                         MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    tern_comm_t *nc;
    tern_status_t st = tern_comm_check_root(comm, root);
    int at_root = st == TERN_OK && comm->rank == root;
    double timeout_s = at_root && !accept ? connect_timeout(info) : 0;
    if (st == TERN_OK)
        st = tern_comm_dyn_join(comm, root, accept, at_root ? port : NULL, -1, timeout_s, &nc);
    if (st == TERN_OK)
        *newcomm = nc->handle;
    return st;
}

/* MPI_Publish_name & co. go to the process manager's name service. A name
 * is one the manager keeps as it is: no spaces, '=' or backslashes. */
static tern_status_t check_service(const char *service)
{
    if (!service[0] || strpbrk(service, " =\\\t\n") || strlen(service) >= 256)
        return tern_status_detail(TERN_ERR_ARG, "service_name '%.64s' must be 1-255 characters "
                                  "without spaces, '=' or backslashes", service);
    return TERN_OK;
}

tern_status_t tern_name_publish(const char *service, const char *port)
{
    /* Any string may be published (MPICH's namepub publishes
     * "otherhost:122"); it only has to fit a port name. */
    tern_status_t st = check_service(service);
    if (st == TERN_OK && (!port[0] || strnlen(port, MPI_MAX_PORT_NAME) >= MPI_MAX_PORT_NAME))
        st = tern_status_detail(TERN_ERR_ARG, "port_name must be 1 to %d characters",
                                MPI_MAX_PORT_NAME - 1);
    return st != TERN_OK ? st : tern_pmi_publish(service, port);
}

tern_status_t tern_name_unpublish(const char *service, const char *port)
{
    (void)port; /* the name service keeps one port per name */
    tern_status_t st = check_service(service);
    return st != TERN_OK ? st : tern_pmi_unpublish(service);
}

tern_status_t tern_name_lookup(const char *service, char *port)
{
    tern_status_t st = check_service(service);
    return st != TERN_OK ? st : tern_pmi_lookup(service, port, MPI_MAX_PORT_NAME);
}

/* All of len bytes over a blocking socket; TERN_ERR_ARG naming the
 * failure (a closed or bad fd). */
static tern_status_t fd_io(int fd, void *buf, size_t len, int out)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = out ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tern_status_detail(TERN_ERR_ARG, "fd %d: %s", fd,
                                      n == 0 ? "closed by the other process"
                                             : strerror(errno));
        p += n;
        len -= (size_t)n;
    }
    return TERN_OK;
}

/* MPI_Comm_join: the two processes swap their addresses over the socket;
 * the lower address opens a port and accepts, the other connects to the
 * port it reads from the socket, each over MPI_COMM_SELF. */
tern_status_t tern_comm_join(int fd, MPI_Comm *intercomm)
{
    *intercomm = MPI_COMM_NULL;
    const char *mine;
    tern_status_t st = tern_dyn_open(&mine);
    addr_t me, them;
    char port[MPI_MAX_PORT_NAME];
    memset(me, 0, sizeof me);
    memset(port, 0, sizeof port);
    snprintf(me, sizeof me, "%s", st == TERN_OK ? mine : "");
    if (st == TERN_OK)
        st = fd_io(fd, me, sizeof me, 1);
    if (st == TERN_OK)
        st = fd_io(fd, them, sizeof them, 0);
    if (st != TERN_OK)
        return st;
    them[sizeof them - 1] = '\0';
    int accept = strcmp(me, them) < 0;
    if (accept) {
        st = tern_port_open(port);
        if (st != TERN_OK)
            memset(port, 0, sizeof port); /* the other side then fails too */
        tern_status_t wst = fd_io(fd, port, sizeof port, 1);
        if (st == TERN_OK)
            st = wst;
    } else {
        st = fd_io(fd, port, sizeof port, 0);
        port[sizeof port - 1] = '\0';
        if (st == TERN_OK && !port[0])
            st = tern_status_detail(TERN_ERR_INTERNAL, "the other process could not open a port");
    }
    tern_comm_t *ic;
    if (st == TERN_OK)
        st = tern_comm_dyn_join(tern_comm_lookup(MPI_COMM_SELF), 0, accept, port, -1, 0, &ic);
    if (st == TERN_OK)
        *intercomm = ic->handle;
    return st;
}

/* Peers of other jobs (dynamic processes): indices after the world ranks
 * in tern_rt.peers, served by the registry's first transport that reaches
 * processes by address (TERN_TL_REACH_BY_ADDRESS: sock), which is started
 * the first time this process takes part in a spawn or accept/connect.
 * Each such peer counts as a node of its own (it shares no segment with
 * us). */
#include "core/runtime/runtime.h"
#include "base/config.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tern_am_handler_fn handler;
static tern_peer_failed_fn failed;
/* Address of each peer after the world ranks; TERN_DYN_PEERS_MAX entries. */
static char (*addrs)[TERN_TL_ADDR_MAX];
/* The transport to them, once started (tern_rt.dyn_tl is its instance). */
static const tern_tl_ops_t *dyn_ops;
static int first_node; /* node id of peer index size: past the world's nodes */

void tern_dyn_set_handlers(tern_am_handler_fn am_handler, tern_peer_failed_fn peer_failed)
{
    handler = am_handler;
    failed = peer_failed;
}

static int find(const char *addr)
{
    for (int p = tern_rt.size; p < tern_rt.n_peers; p++)
        if (strcmp(addrs[p - tern_rt.size], addr) == 0)
            return p;
    return -1;
}

tern_status_t tern_dyn_peer(const char *addr, int *peer_p)
{
    const char *mine;
    tern_status_t st = tern_dyn_open(&mine);
    if (st != TERN_OK)
        return st;
    int p = find(addr);
    if (p >= 0) {
        *peer_p = p;
        return TERN_OK;
    }
    if (tern_rt.n_peers >= tern_rt.peer_cap)
        return tern_status_detail(TERN_ERR_LIMIT, "more than %d processes of other jobs",
                                  TERN_DYN_PEERS_MAX);
    p = tern_rt.n_peers;
    st = dyn_ops->add_peer(tern_rt.dyn_tl, p, addr);
    if (st != TERN_OK)
        return st;
    snprintf(addrs[p - tern_rt.size], TERN_TL_ADDR_MAX, "%s", addr);
    tern_peer_t *peer = &tern_rt.peers[p];
    memset(peer, 0, sizeof *peer);
    peer->ops = dyn_ops;
    peer->tl = tern_rt.dyn_tl;
    tern_peer_set_attr(peer, p, tern_knob_size_or(TERN_KNOB_P2P_EAGER_MAX, SIZE_MAX));
    tern_rt.node_of_rank[p] = first_node + (p - tern_rt.size);
    tern_rt.n_peers++;
    *peer_p = p;
    return TERN_OK;
}

/* The transport's callback for a connection from an address: a new peer
 * when unknown (an accepting root hears from its connector first). */
static int peer_for_addr(const char *addr)
{
    int p;
    return tern_dyn_peer(addr, &p) == TERN_OK ? p : -1;
}

/* The registry's first transport that reaches processes by address. */
static const tern_tl_ops_t *by_address_ops(void)
{
    for (int i = 0; tern_tl_all[i]; i++)
        if (tern_tl_all[i]->reach == TERN_TL_REACH_BY_ADDRESS)
            return tern_tl_all[i];
    return NULL;
}

tern_status_t tern_dyn_open(const char **addr_p)
{
    if (!tern_rt.dyn_tl) {
        const tern_tl_ops_t *ops = by_address_ops();
        if (!ops)
            return tern_status_detail(TERN_ERR_NOT_SUPPORTED,
                                      "no transport reaches processes of other jobs");
        if (tern_rt.n_poll >= (int)(sizeof tern_rt.poll / sizeof tern_rt.poll[0]))
            return tern_status_detail(TERN_ERR_INTERNAL, "no room to poll another transport");
        addrs = calloc(TERN_DYN_PEERS_MAX, sizeof *addrs);
        if (!addrs)
            return TERN_ERR_NOMEM;
        tern_tl_params_t params = {.rank = tern_rt.rank,
                                   .size = tern_rt.size,
                                   .node_of_rank = tern_rt.node_of_rank,
                                   .node = tern_rt.node,
                                   .local_rank = tern_rt.local_rank,
                                   .local_size = tern_rt.local_size,
                                   .local_ranks = tern_rt.local_ranks,
                                   .job_id = tern_rt.job_id,
                                   .am_handler = handler,
                                   .am_ctx = NULL,
                                   .peer_failed = failed,
                                   .peer_for_addr = peer_for_addr};
        tern_status_t st = ops->init(&params, &tern_rt.dyn_tl);
        if (st != TERN_OK) {
            free(addrs);
            addrs = NULL;
            return st;
        }
        first_node = 0;
        for (int r = 0; r < tern_rt.size; r++)
            if (tern_rt.node_of_rank[r] >= first_node)
                first_node = tern_rt.node_of_rank[r] + 1;
        dyn_ops = ops;
        tern_rt.poll[tern_rt.n_poll].ops = ops;
        tern_rt.poll[tern_rt.n_poll].tl = tern_rt.dyn_tl;
        tern_tl_attr_t a;
        ops->query(tern_rt.dyn_tl, TERN_TL_ANY_PEER, &a);
        tern_rt.poll[tern_rt.n_poll].hint = a.work_hint;
        tern_rt.n_poll++;
    }
    *addr_p = dyn_ops->address(tern_rt.dyn_tl);
    return TERN_OK;
}

void tern_dyn_close(void)
{
    if (!tern_rt.dyn_tl)
        return;
    for (int i = 0; i < tern_rt.n_poll; i++)
        if (tern_rt.poll[i].tl == tern_rt.dyn_tl) {
            tern_rt.poll[i] = tern_rt.poll[--tern_rt.n_poll];
            break;
        }
    dyn_ops->finalize(tern_rt.dyn_tl);
    tern_rt.dyn_tl = NULL;
    dyn_ops = NULL;
    free(addrs);
    addrs = NULL;
}

#include "core/runtime/runtime.h"
#include "base/config.h"
#include "base/copy_vec.h"
#include "base/log.h"
#include "pmi/pmi.h"
#include "pmi/pmi_profile.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tern_runtime_t tern_rt;

static void report_knob(const char *line)
{
    tern_error("%s", line);
}

/* Every rank reads the same environment, so every rank finds the same bad
 * knobs: rank 0 reports them, once, and ends the job. The others wait in a
 * fence that rank 0 never enters, until the launcher ends them, so that no
 * early exit of theirs cuts rank 0's message short (and none of them goes on
 * to fail later with a misleading error). One still here after the fence
 * read an environment that rank 0 did not: it reports for itself. */
static void end_job_on_bad_knobs(int rank)
{
    if (tern_knobs_invalid(NULL) == 0)
        return;
    if (rank != 0)
        (void)tern_pmi_fence();
    tern_knobs_invalid(report_knob);
    tern_pmi_abort(1, "MPI_Init: invalid TERN_* knob value");
}

/* Ranks on the same host form a node. Each rank publishes its host name;
 * node indices follow the order in which hosts first appear by rank. */
static tern_status_t discover_nodes(void)
{
    char key[64], host[256];
    int size = tern_rt.size;
    tern_rt.node_of_rank = calloc((size_t)size + TERN_DYN_PEERS_MAX, sizeof(int));
    tern_rt.local_ranks = calloc((size_t)size, sizeof(int));
    if (!tern_rt.node_of_rank || !tern_rt.local_ranks)
        return TERN_ERR_NOMEM;
    if (size == 1) {
        tern_rt.node = 0;
        tern_rt.local_rank = 0;
        tern_rt.local_size = 1;
        tern_rt.local_ranks[0] = 0;
        return TERN_OK;
    }
    /* The launcher's map, when it offers one, saves an exchange. */
    tern_status_t st = tern_pmi_node_map(tern_rt.node_of_rank);
    if (st == TERN_OK) {
        tern_debug("nodes from the launcher's map");
        goto local;
    }
    if (st != TERN_ERR_NOT_SUPPORTED)
        return st;
    snprintf(key, sizeof key, "tern-host-%d", tern_rt.rank);
    st = tern_pmi_put(key, tern_rt.processor_name);
    if (st == TERN_OK)
        st = tern_pmi_fence();
    if (st != TERN_OK)
        return st;
    char(*hosts)[256] = malloc((size_t)size * sizeof *hosts);
    if (!hosts)
        return TERN_ERR_NOMEM;
    int n_nodes = 0;
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "tern-host-%d", r);
        if (r == tern_rt.rank) {
            snprintf(host, sizeof host, "%s", tern_rt.processor_name);
        } else if ((st = tern_pmi_get(key, host, sizeof host)) != TERN_OK) {
            tern_error("cannot read the host name of rank %d from the process manager", r);
            free(hosts);
            return st;
        }
        int node = -1;
        for (int q = 0; q < r; q++)
            if (strcmp(hosts[q], host) == 0) {
                node = tern_rt.node_of_rank[q];
                break;
            }
        if (node < 0)
            node = n_nodes++;
        tern_rt.node_of_rank[r] = node;
        memcpy(hosts[r], host, sizeof host);
    }
    free(hosts);
local:
    tern_rt.node = tern_rt.node_of_rank[tern_rt.rank];
    tern_rt.local_size = 0;
    for (int r = 0; r < size; r++) {
        if (tern_rt.node_of_rank[r] != tern_rt.node)
            continue;
        if (r == tern_rt.rank)
            tern_rt.local_rank = tern_rt.local_size;
        tern_rt.local_ranks[tern_rt.local_size++] = r;
    }
    return TERN_OK;
}

/* CPUs the node's ranks share. A rank bound to one core (mpiexec
 * --bind-to core) sees a mask of one, which says nothing about its
 * neighbours: then count the node's online CPUs. */
static int cpus_available(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1)
        return CPU_COUNT(&set);
    return online > 0 ? (int)online : 1;
}

/* Empty polls before a waiting rank yields (TERN_PROGRESS_SPIN=auto).
 * 4096 shm polls are a few microseconds; a network transport's poll is a
 * system call (epoll_wait, 0.5-1 us, more under load), so 4096 of them kept
 * a rank off the CPU its peer needed for 2-4 ms: both ranks of the netns
 * hosts sat on one core, 1-2 ms per message at 1-64 B. 64 network polls
 * are ~50 us, and a yield with nothing else runnable returns at once. */
static long auto_spin_limit(void)
{
    if (tern_rt.local_size > cpus_available())
        return 0;
    for (int i = 0; i < tern_rt.n_poll; i++)
        if (!tern_rt.poll[i].ops->polls_memory)
            return 64;
    return 4096;
}

/* The parts' eager header (48 bytes, pkt_eager_aligned_t) in front of the
 * data; never above an explicit TERN_P2P_EAGER_MAX, so that a limit set to
 * force rendezvous holds for every size. */
static size_t eager_big_limit(const tern_peer_t *peer, size_t eager_knob)
{
    size_t max = peer->am_big_max > 48 ? peer->am_big_max - 48 : 0;
    size_t knob = tern_knob_size(TERN_KNOB_P2P_EAGER_BIG_MAX);
    if (knob < max)
        max = knob;
    if (eager_knob < max)
        max = eager_knob;
    return max > peer->eager_max ? max : 0;
}

void tern_peers_eager_reset(void)
{
    size_t knob = tern_knob_size_or(TERN_KNOB_P2P_EAGER_MAX, SIZE_MAX);
    for (int p = 0; tern_rt.peers && p < tern_rt.n_peers; p++) {
        tern_peer_t *peer = &tern_rt.peers[p];
        if (!peer->ops || peer->failed != TERN_OK)
            continue; /* not connected, or failed (its limit stays 0) */
        size_t max = peer->am_max > 64 ? peer->am_max - 64 : 0;
        peer->eager_max = knob < max ? knob : max;
        peer->eager_big_max = eager_big_limit(peer, knob);
    }
}

/* Whether a transport started so far reaches the other ranks of this node
 * (shm decides for the whole node, so its ranks agree). */
static int node_served(void)
{
    if (tern_rt.local_size < 2)
        return 1;
    int other = tern_rt.local_ranks[tern_rt.local_rank == 0 ? 1 : 0];
    for (int i = 0; i < tern_rt.n_tls; i++)
        if (tern_rt.tls[i].ops->reachable(tern_rt.tls[i].tl, other))
            return 1;
    return 0;
}

void tern_peer_set_attr(tern_peer_t *peer, int p, size_t eager_knob)
{
    tern_tl_attr_t a;
    peer->ops->query(peer->tl, p, &a);
    peer->am_max = a.am_max;
    /* Eager payload must leave room for the largest match header (64 B). */
    peer->eager_max = a.am_max > 64 ? a.am_max - 64 : 0;
    if (eager_knob < peer->eager_max)
        peer->eager_max = eager_knob;
    peer->caps = a.caps;
    peer->rma_min = a.rma_min;
    peer->bulk_max = a.bulk_max;
    peer->am_big_max = peer->ops->am_big_reserve ? a.am_big_max : 0;
    peer->bulk_nt_min = a.bulk_nt_min ? a.bulk_nt_min : SIZE_MAX;
    peer->bulk_nt_fixed = (uint8_t)a.bulk_nt_fixed;
    peer->coop_split = (uint8_t)(a.coop_split < 100 ? a.coop_split : 0);
    size_t wkb = (a.write_min + 1023) >> 10;
    peer->write_min_kb = (uint16_t)(wkb < UINT16_MAX ? wkb : UINT16_MAX);
    peer->eager_big_max = eager_big_limit(peer, eager_knob);
    peer->get_min = a.get_min < a.rma_min ? a.get_min : 0;
    peer->credits = tern_rt.credit_max;
}

/* A transport this job starts in MPI_Init: allowed by TERN_TRANSPORTS
 * (self always); transports to other jobs start at the first dynamic
 * connection (dyn_peers.c). */
static int job_transport(const tern_tl_ops_t *ops)
{
    return ops->reach == TERN_TL_REACH_JOB &&
           (strcmp(ops->name, "self") == 0 || tern_knob_lists(TERN_KNOB_TRANSPORTS, ops->name));
}

/* Every rank initialises the same transports in the same order (their
 * init may use collective PMI fences): allowance is a job-wide knob. */
static tern_status_t start_job_transports(tern_tl_params_t *params)
{
    for (int i = 0; tern_tl_all[i]; i++) {
        const tern_tl_ops_t *ops = tern_tl_all[i];
        if (!job_transport(ops))
            continue;
        tern_tl_t *tl;
        params->node_served = node_served();
        tern_status_t st = ops->init(params, &tl);
        char step[24];
        snprintf(step, sizeof step, "transport %s", ops->name);
        tern_init_profile_mark(step);
        if (st != TERN_OK) {
            const char *detail = tern_status_take_detail(st);
            tern_error("transport %s failed to start: %s", ops->name, detail ? detail : tern_status_string(st));
            return st;
        }
        tern_rt.tls[tern_rt.n_tls].ops = ops;
        tern_rt.tls[tern_rt.n_tls].tl = tl;
        tern_rt.n_tls++;
    }
    return TERN_OK;
}

static tern_status_t init_transports(tern_pmi_info_t *pmi, tern_am_handler_fn am_handler,
                                     tern_peer_failed_fn peer_failed)
{
    tern_tl_params_t params = {
        .rank = tern_rt.rank,
        .size = tern_rt.size,
        .node_of_rank = tern_rt.node_of_rank,
        .node = tern_rt.node,
        .local_rank = tern_rt.local_rank,
        .local_size = tern_rt.local_size,
        .local_ranks = tern_rt.local_ranks,
        .job_id = pmi->kvsname,
        .oversubscribed = tern_rt.local_size > cpus_available(),
        .am_handler = am_handler,
        .am_ctx = NULL,
        .peer_failed = peer_failed,
    };
    /* Work a transport can start early (ofi: loading libfabric) overlaps
     * the start of those before it; whatever the start's outcome, that
     * work has ended when it returns. */
    for (int i = 0; tern_tl_all[i]; i++)
        if (job_transport(tern_tl_all[i]) && tern_tl_all[i]->prepare)
            tern_tl_all[i]->prepare(&params);
    tern_status_t st = start_job_transports(&params);
    for (int i = 0; tern_tl_all[i]; i++)
        if (job_transport(tern_tl_all[i]) && tern_tl_all[i]->prepare_wait)
            tern_tl_all[i]->prepare_wait();
    if (st != TERN_OK)
        return st;

    /* auto: no cap below what the transport carries. */
    size_t eager_knob = tern_knob_size_or(TERN_KNOB_P2P_EAGER_MAX, SIZE_MAX);
    for (int p = 0; p < tern_rt.size; p++) {
        tern_peer_t *peer = &tern_rt.peers[p];
        for (int i = 0; i < tern_rt.n_tls && !peer->ops; i++) {
            const tern_tl_ops_t *ops = tern_rt.tls[i].ops;
            tern_tl_t *tl = tern_rt.tls[i].tl;
            if (!ops->reachable(tl, p))
                continue;
            peer->ops = ops;
            peer->tl = tl;
        }
        if (!peer->ops) {
            tern_error("no transport reaches rank %d (TERN_TRANSPORTS=%s)", p,
                       tern_knob_str(TERN_KNOB_TRANSPORTS));
            return TERN_ERR_NOT_SUPPORTED;
        }
        tern_peer_set_attr(peer, p, eager_knob);
    }
    tern_init_profile_mark("peer table");
    /* Poll only transports that serve someone: on one node the network
     * transport costs a call per poll for nothing. */
    tern_rt.n_poll = 0;
    for (int i = 0; i < tern_rt.n_tls; i++) {
        int used = 0;
        for (int p = 0; p < tern_rt.size && !used; p++)
            used = tern_rt.peers[p].tl == tern_rt.tls[i].tl;
        if (!used)
            continue;
        tern_tl_attr_t a;
        tern_rt.tls[i].ops->query(tern_rt.tls[i].tl, TERN_TL_ANY_PEER, &a);
        tern_rt.poll[tern_rt.n_poll].ops = tern_rt.tls[i].ops;
        tern_rt.poll[tern_rt.n_poll].tl = tern_rt.tls[i].tl;
        tern_rt.poll[tern_rt.n_poll].hint = a.work_hint;
        tern_rt.n_poll++;
    }
    return TERN_OK;
}

tern_status_t tern_runtime_start(tern_am_handler_fn am_handler, tern_peer_failed_fn peer_failed)
{
    tern_dyn_set_handlers(am_handler, peer_failed);
    tern_pmi_info_t pmi;
    tern_init_profile_start();
    tern_status_t st = tern_pmi_init(&pmi);
    tern_init_profile_mark("pmi init");
    if (st != TERN_OK) {
        tern_error("cannot start: no connection to the process manager (%s)",
                   tern_status_string(st));
        return st;
    }
    tern_rt.rank = pmi.rank;
    tern_rt.size = pmi.size;
    tern_rt.appnum = pmi.appnum;
    tern_rt.universe_size = pmi.universe_size > 0 ? pmi.universe_size : pmi.size;
    tern_log_set_rank(pmi.rank);
    end_job_on_bad_knobs(pmi.rank);
    tern_init_profile_mark("knob check");
    snprintf(tern_rt.job_id, sizeof tern_rt.job_id, "%s", pmi.kvsname);
    if (gethostname(tern_rt.processor_name, sizeof tern_rt.processor_name - 1) != 0)
        strcpy(tern_rt.processor_name, "localhost");

    st = discover_nodes();
    if (st != TERN_OK)
        return st;
    tern_init_profile_mark("node map");

    tern_rt.credit_max = (long)tern_knob_size(TERN_KNOB_P2P_UNEXPECTED_MAX);
    tern_rt.eager_align_min = tern_knob_size(TERN_KNOB_P2P_EAGER_ALIGN_MIN);
    if (tern_rt.eager_align_min == 0)
        tern_rt.eager_align_min = SIZE_MAX;
    tern_rt.eager_movsb_max = tern_knob_size(TERN_KNOB_P2P_EAGER_MOVSB_MAX);
    size_t vec_min = tern_knob_size(TERN_KNOB_P2P_EAGER_VEC_MIN),
           vec_max = tern_knob_size(TERN_KNOB_P2P_EAGER_VEC_MAX);
    int vec_on = vec_max != 0 && vec_max >= vec_min && tern_copy_vec_supported();
    tern_rt.eager_vec_min = vec_on ? vec_min : SIZE_MAX; /* SIZE_MAX: never */
    tern_rt.eager_vec_span = vec_on ? vec_max - vec_min : 0;
    tern_rt.rma_movsb_min = tern_knob_size(TERN_KNOB_RMA_MOVSB_MIN);
    tern_rt.rma_nt_min =
        tern_knob_is(TERN_KNOB_RMA_NT, "off") ? SIZE_MAX : tern_knob_size(TERN_KNOB_RMA_NT_MIN);
    tern_rt.rma_nt_always = tern_knob_is(TERN_KNOB_RMA_NT, "on");
    tern_rt.eager_big_part = tern_knob_size(TERN_KNOB_P2P_EAGER_BIG_PART);
    tern_rt.node_oversubscribed = tern_rt.local_size > sysconf(_SC_NPROCESSORS_ONLN);
    tern_rt.spin_limit =
        tern_knob_count_or(TERN_KNOB_PROGRESS_SPIN, tern_rt.local_size > cpus_available() ? 0 : 4096);
    tern_rt.lone_yields =
        tern_knob_count_or(TERN_KNOB_PROGRESS_LONE_YIELDS, tern_rt.local_size > cpus_available() ? 64 : 0);

    tern_rt.n_peers = tern_rt.size;
    tern_rt.peer_cap = tern_rt.size + TERN_DYN_PEERS_MAX;
    tern_rt.peers = calloc((size_t)tern_rt.peer_cap, sizeof *tern_rt.peers);
    tern_rt.pending_peers = calloc((size_t)tern_rt.peer_cap, sizeof(int));
    if (!tern_rt.peers || !tern_rt.pending_peers)
        return TERN_ERR_NOMEM;

    st = init_transports(&pmi, am_handler, peer_failed);
    if (st == TERN_OK) /* now that the polled transports are known */
        tern_rt.spin_limit = tern_knob_count_or(TERN_KNOB_PROGRESS_SPIN, auto_spin_limit());
    return st;
}

void tern_runtime_close_transports(void)
{
    tern_dyn_close();
    for (int i = tern_rt.n_tls - 1; i >= 0; i--)
        tern_rt.tls[i].ops->finalize(tern_rt.tls[i].tl);
    tern_rt.n_tls = 0;
    tern_rt.n_poll = 0;
}

void tern_runtime_free(void)
{
    for (int p = 0; tern_rt.peers && p < tern_rt.peer_cap; p++) {
        free(tern_rt.peers[p].rndv_path);
        free(tern_rt.peers[p].failure);
    }
    free(tern_rt.peers);
    free(tern_rt.pending_peers);
    free(tern_rt.node_of_rank);
    free(tern_rt.local_ranks);
    tern_rt.peers = NULL;
    tern_rt.pending_peers = NULL;
    tern_rt.node_of_rank = NULL;
    tern_rt.local_ranks = NULL;
    tern_rt.n_pending_peers = 0;
    tern_rt.n_failed_peers = 0;
    tern_rt.last_failed_peer = 0;
    tern_rt.n_peers = tern_rt.peer_cap = 0;
    tern_rt.dyn_tl = NULL;
}

#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/match.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/p2p_queue.h"
#include "core/pt2pt/send_cancel.h"
#include "core/runtime/runtime.h"
#include "base/clock.h"
#include "base/failed_map.h"
#include "base/config.h"
#include "base/log.h"
#include "base/pvars.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The world rank of a posted receive's source, from the communicator
 * layer above (tern_peer_failure_set_source_map); -1 for MPI_ANY_SOURCE. */
static int (*source_map)(const tern_req_t *req);

void tern_peer_failure_set_source_map(int (*world_of)(const tern_req_t *req))
{
    source_map = world_of;
}

static void (*ulfm_on_failure)(int peer_world);
static void (*ulfm_packet)(int src_world, const void *pkt, size_t len);
int tern_peer_watch_all;

void tern_peer_failure_set_ulfm(void (*on_failure)(int peer_world),
                                void (*packet)(int src_world, const void *pkt, size_t len))
{
    ulfm_on_failure = on_failure;
    ulfm_packet = packet;
}

void tern_peer_failure_packet(int src_world, const void *pkt, size_t len)
{
    if (ulfm_packet)
        ulfm_packet(src_world, pkt, len);
}

static int source_world(const tern_req_t *req)
{
    int w = req->peer >= 0 && source_map ? source_map(req) : -1;
    return w >= 0 && w < tern_rt.n_peers ? w : -1;
}

/* 1 if a posted receive names a source that has failed (MPI_ANY_SOURCE
 * receives stay posted: another peer may still match them). */
static int source_failed(const tern_req_t *req)
{
    int w = source_world(req);
    return w >= 0 && tern_rt.peers[w].failed != TERN_OK;
}

static void fail_posted_receives(void)
{
    tern_req_t *req;
    while ((req = tern_match_take_posted_if(source_failed)) != NULL) {
        int w = source_world(req);
        req->error = tern_rt.peers[w].failed;
        req->peer_world = w;
        req->status_source = req->peer;
        req->status_tag = req->tag;
        req->status_bytes = 0;
        tern_req_complete(req);
    }
}

void tern_peer_failed(int peer_world, tern_status_t st, const char *why)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    if (peer->failed == TERN_OK) {
        peer->failed = st == TERN_OK || st == TERN_ERR_AGAIN ? TERN_ERR_PEER : st;
        peer->failure = strdup(why ? why : tern_status_string(peer->failed));
        tern_rt.n_failed_peers++;
        tern_rt.last_failed_peer = peer_world;
        tern_pvar_add(TERN_PVAR_PEERS_FAILED, 1);
        tern_event4(TERN_EVENT_PEER_FAILED, peer_world, 0, 0, 0);
        tern_warn("rank %d failed: %s (%s); operations with it complete with this error",
                  peer_world, why ? why : "", tern_status_string(peer->failed));
        if (peer_world < tern_rt.size)
            for (int i = 0; i < tern_rt.n_tls; i++)
                tern_rt.tls[i].ops->disconnect(tern_rt.tls[i].tl, peer_world);
        else /* a process of another job: only its own transport knows it */
            peer->ops->disconnect(peer->tl, peer_world);
    }
    tern_p2p_fail_peer_requests(peer_world);
    fail_posted_receives();
    if (ulfm_on_failure)
        ulfm_on_failure(peer_world);
}

const char *tern_peer_failure(int peer_world)
{
    if (peer_world < 0 || peer_world >= tern_rt.n_peers || tern_rt.peers[peer_world].failed == TERN_OK)
        return NULL;
    return tern_rt.peers[peer_world].failure ? tern_rt.peers[peer_world].failure
                                             : tern_status_string(tern_rt.peers[peer_world].failed);
}

static double now_ms(void)
{
    return tern_clock_s() * 1e3;
}

/* The peers this rank waits for: a request in flight with them, packets
 * queued for them, a one-sided transfer to them, or a posted receive
 * naming them. */
typedef struct {
    unsigned char *marked; /* by world rank */
    int *list;
    int n;
} waited_t;

static void mark_waited(waited_t *w, int peer_world)
{
    if (peer_world < 0 || w->marked[peer_world] || tern_rt.peers[peer_world].failed != TERN_OK)
        return;
    w->marked[peer_world] = 1;
    w->list[w->n++] = peer_world;
}

static void mark_posted_source(const tern_req_t *req, void *arg)
{
    mark_waited(arg, source_world(req));
}

static void watch_waited_peers(void)
{
    static waited_t w;
    if (!w.marked) {
        w.marked = calloc((size_t)tern_rt.peer_cap, 1);
        w.list = malloc((size_t)tern_rt.peer_cap * sizeof *w.list);
        if (!w.marked || !w.list) { /* no watch: failures are still reported by errors */
            free(w.marked);
            free(w.list);
            w.marked = NULL;
            w.list = NULL;
            return;
        }
    }
    w.n = 0;
    if (tern_peer_watch_all)
        for (int p = 0; p < tern_rt.size; p++)
            if (p != tern_rt.rank)
                mark_waited(&w, p);
    for (int p = 0; p < tern_rt.n_peers; p++) {
        const tern_peer_t *peer = &tern_rt.peers[p];
        if (peer->inflight_head || peer->pending_head || peer->stream_head || peer->rma_inflight)
            mark_waited(&w, p);
    }
    tern_match_each_posted(mark_posted_source, &w);
    /* Grouped by transport; a transport's list stays in w.list past n. */
    for (int i = 0; i < tern_rt.n_poll && w.n; i++) {
        if (!tern_rt.poll[i].ops->watch_peers)
            continue;
        int n = 0;
        for (int k = 0; k < w.n; k++)
            if (tern_rt.peers[w.list[k]].tl == tern_rt.poll[i].tl) {
                int t = w.list[n];
                w.list[n++] = w.list[k];
                w.list[k] = t;
            }
        if (n)
            tern_rt.poll[i].ops->watch_peers(tern_rt.poll[i].tl, w.list, n);
    }
    for (int k = 0; k < w.n; k++)
        w.marked[w.list[k]] = 0;
}

/* Deaths the launcher reports (base/failed_map.h: a multi-host mpiexec
 * --ft's proxies), for peers on other hosts that no local check can see.
 * Opened at the first watch of a fault-tolerant rank; absent elsewhere. */
static void read_failed_map(void)
{
    static const tern_failed_map_t *map;
    static int tried;
    static uint64_t seen;
    if (!tried) {
        tried = 1;
        char path[320];
        struct stat sb;
        size_t bytes = tern_failed_map_bytes(tern_rt.size);
        if (!tern_rt.job_id[0] || tern_failed_map_path(path, sizeof path, tern_rt.job_id) != 0)
            return;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return;
        if (fstat(fd, &sb) == 0 && (size_t)sb.st_size >= bytes) {
            void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED)
                map = p;
        }
        close(fd);
        if (map && (__atomic_load_n(&map->magic, __ATOMIC_ACQUIRE) != TERN_FAILED_MAP_MAGIC ||
                    map->size != (uint32_t)tern_rt.size)) {
            munmap((void *)map, bytes);
            map = NULL;
        }
        if (map)
            tern_debug("watching the launcher's failed-rank map %s", path);
    }
    if (!map)
        return;
    uint64_t gen = __atomic_load_n(&map->gen, __ATOMIC_ACQUIRE);
    if (gen == seen)
        return;
    seen = gen;
    for (int p = 0; p < tern_rt.size; p++)
        if (map->dead[p] && p != tern_rt.rank && tern_rt.peers[p].failed == TERN_OK)
            tern_peer_failed(p, TERN_ERR_PEER, "its launcher reports it dead (its process "
                                               "ended or its host was lost)");
}

void tern_peer_watch(void)
{
    static long interval_ms = -1;
    static double next_check_ms;
    if (tern_rt.n_failed_peers)
        fail_posted_receives();
    if (interval_ms < 0) {
        interval_ms = (long)tern_knob_count(TERN_KNOB_PEER_CHECK_MS);
    }
    if (interval_ms == 0)
        return;
    double now = now_ms();
    if (now < next_check_ms)
        return;
    next_check_ms = now + (double)interval_ms;
    if (tern_peer_watch_all)
        read_failed_map();
    watch_waited_peers();
}

/* ------------------------------------------------------------------------ */
/* What point-to-point does with a failed peer (cold paths only; p2p.h). */

void tern_p2p_peer_broken(int peer_world, tern_status_t st, const char *fmt, ...)
{
    char why[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tern_peer_failed(peer_world, st, why);
}

void tern_p2p_fail_peer_requests(int peer_world)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    tern_status_t st = peer->failed;
    /* No eager room and no credit: the fast paths (send_eager_now, the
     * eager branch of start_send) fall through to the rendezvous branch,
     * which fails the send at once; no new check on the fast path. */
    peer->eager_max = peer->eager_big_max = 0;
    peer->credits = LONG_MIN / 2;
    /* No reads from it: a rendezvous with it takes the CTS path, whose
     * packet is refused (tern_p2p_send_packet) and fails the receive. */
    peer->caps = 0;
    tern_p2p_drop_queued(peer_world, st);
    /* A rendezvous send's registration is not released: the transport
     * drops what it holds for the peer at disconnect, and finalize closes
     * the rest. */
    while (peer->inflight_head) {
        tern_req_t *req = peer->inflight_head;
        tern_p2p_inflight_remove(peer, req);
        req->error = st;
        if (req->kind == TERN_REQ_SEND)
            tern_p2p_send_complete(req);
        else
            tern_req_complete(req);
    }
    tern_send_cancel_fail_peer(peer_world, st);
}

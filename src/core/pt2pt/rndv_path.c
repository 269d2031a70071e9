/* The receiver's measured choice between get and stream (rndv_path.h). */
#include "core/pt2pt/rndv_path.h"
#include "core/pt2pt/p2p_queue.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/copy_rate.h"
#include "base/log.h"

#include <stdlib.h>

/* Size classes: [32 KB << c, 64 KB << c); messages from 32 KB on (the
 * smallest get_min) and up to 64 MB, larger ones share the last class. */
#define CLASS_SHIFT 15
#define N_CLASSES 12
#define SAMPLES 3          /* clean runs of each path before choosing */
#define EXPLORE_MAX 24     /* runs of a round before choosing anyway */
/* Messages counted in one run: a window of 64 gives four runs, so both
 * paths are timed within two windows. Later messages matched while the
 * run lands take its path uncounted. */
#define RUN_MAX 16
/* A path this many times slower per byte than the other's best clean run
 * loses at once: its open run ends at the landing that shows it, and the
 * class is chosen without waiting for SAMPLES runs of each. Where the get
 * is the slow path (the 2-core EPYC VM: 24 us a 256 KB read against 10 by
 * the stream), 16-message runs of it while a round
 * of timing lasted made a 2-rank scatter of 256 KB take 21 us a call over
 * tern-bench's 110 calls against the stream's 10 (docs/performance.md row
 * `rndvcut`). */
#define CLEAR_X 2.0
/* A message matched this soon after the run's last landing continues it
 * (receives posted back to back; the get, complete at its match, never
 * overlaps the next), or within a quarter of the run's mean message time,
 * whichever is longer (a ping-pong's reply takes a whole message time);
 * at most this much of such a gap counts as the run's time. */
#define RUN_GAP_S 1e-6
/* TERN_SHM_EXCHANGE_PATH=get: a message matched this soon after
 * a rendezvous send of ours to the peer started is the exchange's too: its
 * tail (the peer took our sends by get and they completed first), or the
 * next window's receives, matched as they are posted, before its sends. */
#define EXCHANGE_TAIL_S 1e-3
/* TERN_SHM_EXCHANGE_PATH=auto: while exchanges go by get, neither rank
 * streams to the other, so the rates they go by (tern_p2p_bulk_gbs) stand
 * still: every PROBE_S each rank streams its next PROBE_MSGS exchange
 * receives, so that the peer's sender times its copies again (16 chunks
 * of 64 KB at 256 KB: its smoothed rate, a quarter per chunk, follows
 * within a probe). Few and rare, as a probe's stream stalls while the
 * peer reads by get (every 50 ms 16 messages cost bibw 512 KB half). */
#define PROBE_S 0.5
#define PROBE_MSGS 4

enum { STREAM = 0, GET = 1 };

/* A round of timing ends with a choice within EXPLORE_MAX runs, so the
 * counts stay small. */
typedef struct {
    double chosen_s;      /* when the choice was made */
    /* The open run (run_msgs > 0): its path, its clock, what landed. Its
     * time is its busy time (some counted message matched and not landed)
     * plus each idle gap it continued across, at most RUN_GAP_S: a
     * ping-pong's reply is not copy time, a window's turnaround is. */
    double run_busy_s;    /* busy time up to the last landing with none open */
    double run_mark_s;    /* when the current busy stretch began */
    double run_last_s;    /* its last landing */
    size_t run_bytes;     /* bytes of its counted messages landed */
    uint64_t run_sent;    /* the peer's match_sent when the busy stretch began */
    uint16_t run_msgs;    /* messages counted */
    uint16_t run_open;    /* counted messages not landed yet */
    uint8_t run_path;
    uint8_t run_clean;    /* no other receive from the peer at its start */
    uint8_t round;        /* numbers the rounds: a late landing is ignored */
    int8_t choice;        /* -1: timing; else STREAM or GET */
    uint8_t runs;         /* runs started this round */
    uint8_t samples[2];
    uint8_t tries[2];     /* runs each way this round */
    uint16_t best_msgs[2]; /* messages in the run that gave best */
    double best[2];       /* seconds per byte, the least of the clean runs */
} path_class_t;

struct tern_rndv_path {
    /* The transport's (transport.h): below measure_min the path mid_get
     * says, untimed; a choice holds measure_s. */
    size_t measure_min;
    double measure_s;
    int mid_get;
    int exchange;      /* the transport's get_exchange (0, 1, 2: auto) */
    double auto_s;     /* auto: when the choice changed or a probe began */
    int auto_get;      /* auto: the choice (0 stream, 1 get) */
    int probe_left;    /* auto: exchange receives the probe still streams */
    path_class_t cls[N_CLASSES];
    double exchange_s; /* our last rendezvous send to the peer started */
};

static int size_class(size_t n)
{
    int c = 0;
    for (size_t v = n >> CLASS_SHIFT; v > 1 && c < N_CLASSES - 1; v >>= 1)
        c++;
    return c;
}

static void start_round(path_class_t *k)
{
    uint8_t round = k->round;
    *k = (path_class_t){.choice = -1, .round = (uint8_t)(round + 1)};
}

/* Whether a rendezvous of the given kind with the peer is under way: a
 * receive whose copy would share the time of a new one, or a send of ours
 * to it. */
static int under_way(const tern_peer_t *peer, int kind)
{
    for (const tern_req_t *r = peer->inflight_head; r; r = r->next)
        if (r->kind == kind)
            return 1;
    return 0;
}

static void choose(path_class_t *k, int src, int c, double t, const char *how)
{
    k->choice = k->samples[STREAM] && k->samples[GET] && k->best[GET] < k->best[STREAM] ? GET
                                                                                     : STREAM;
    k->chosen_s = t;
    k->run_msgs = 0;
    tern_debug("rendezvous from rank %d, %zu-%zu bytes: %s (%.3f ns/byte by get in %u-message "
               "runs, %.3f by stream in %u-message runs%s)",
               src, (size_t)1 << (CLASS_SHIFT + c), ((size_t)2 << (CLASS_SHIFT + c)) - 1,
               k->choice == GET ? "get" : "stream", 1e9 * k->best[GET],
               (unsigned)k->best_msgs[GET], 1e9 * k->best[STREAM], (unsigned)k->best_msgs[STREAM],
               how);
}

/* Whether one path's best is CLEAR_X times the other's: no more timing. */
static int clear_winner(const path_class_t *k)
{
    return k->samples[STREAM] && k->samples[GET] &&
           (k->best[GET] > CLEAR_X * k->best[STREAM] || k->best[STREAM] > CLEAR_X * k->best[GET]);
}

/* Whether the open run is its path's first this round: it only warms the
 * path and gives no sample. */
static int run_warming(const path_class_t *k)
{
    return k->tries[k->run_path] <= 1;
}

/* Whether the open run's time so far is a sample: past the warming run,
 * clean, and some of its bytes landed. */
static int run_sampled(const path_class_t *k)
{
    return k->run_clean && !run_warming(k) && k->run_bytes;
}

/* The open run is over: its sample, if it is one, and the choice once
 * both paths have theirs, or one is clearly the faster. */
static void close_run(path_class_t *k, int src, int c)
{
    int p = k->run_path;
    if (run_sampled(k)) {
        double per_byte = k->run_busy_s / (double)k->run_bytes;
        if (k->samples[p]++ == 0 || per_byte < k->best[p]) {
            k->best[p] = per_byte;
            k->best_msgs[p] = k->run_msgs;
        }
    }
    k->run_msgs = 0;
    if (k->samples[STREAM] >= SAMPLES && k->samples[GET] >= SAMPLES)
        choose(k, src, c, k->run_last_s, "");
    else if (clear_winner(k))
        choose(k, src, c, k->run_last_s, ", one path clearly slower");
}

/* The messages the open run counts: one for a warming run, else RUN_MAX. */
static unsigned run_cap(const path_class_t *k)
{
    return run_warming(k) ? 1 : RUN_MAX;
}

/* The open run, all its counted messages landed, is a clean sample that
 * is CLEAR_X times slower per byte than the other path's best already:
 * it ends now (and the class is chosen). */
static int run_lost(const path_class_t *k)
{
    int p = k->run_path;
    return run_sampled(k) && k->samples[!p] &&
           k->run_busy_s / (double)k->run_bytes > CLEAR_X * k->best[!p];
}

/* Whether a message matched at t continues the open run. */
static int run_continues(const path_class_t *k, double t)
{
    if (k->run_open)
        return 1;
    double gap = 0.25 * k->run_busy_s / k->run_msgs;
    return t - k->run_last_s <= (gap > RUN_GAP_S ? gap : RUN_GAP_S);
}

/* The peer's measurements, with its transport's settings; 0 when there is
 * no memory for them (the static choice, the stream, from then on). */
static int start_measuring(tern_peer_t *peer, int p)
{
    struct tern_rndv_path *m = malloc(sizeof *m);
    if (!m) {
        peer->get_min = 0;
        return 0;
    }
    tern_tl_attr_t a;
    peer->ops->query(peer->tl, p, &a);
    m->measure_min = a.get_measure_min;
    m->measure_s = 1e-3 * (double)a.get_measure_ms;
    m->mid_get = a.get_mid != 0;
    m->exchange = a.get_exchange;
    m->auto_s = 0;
    m->auto_get = 0;
    m->probe_left = 0;
    for (int c = 0; c < N_CLASSES; c++)
        start_round(&m->cls[c]);
    m->exchange_s = -1.0;
    peer->rndv_path = m;
    return 1;
}

/* TERN_SHM_EXCHANGE_PATH=auto, an exchange's receive: the get while one
 * CMA read pays against the stream, by this rank's own copy rate into the
 * bulk channel to the peer (its stream's sender side, timed per chunk;
 * tern_single_copy_pays). Each rank reads its own incoming data, so the
 * two decide apart; neither times the two paths against each other (a
 * stream stalls while the other rank reads by get: row bibw6 in
 * docs/performance.md). */
static int exchange_auto(struct tern_rndv_path *m, int src, double t)
{
    if (m->probe_left) {
        m->probe_left--;
        return 0;
    }
    /* The stream's cost per byte is about its timed copy in alone: the
     * copy out reads lines the peer just wrote, at ~2x (stream bibw 13-15
     * GB/s a direction against copies in at 14-30, row pays), so the read
     * must beat one copy at gbs, two at twice it. */
    double gbs = tern_p2p_bulk_gbs(src);
    int get = tern_single_copy_pays(2 * gbs), tick = t - m->auto_s > PROBE_S;
    if (get != m->auto_get || tick) {
        tern_debug("exchange with rank %d: %s (own stream copies at %.2f GB/s, CMA read %.2f)",
                   src, get ? "get" : "stream", gbs, tern_cma_rate_gbs());
        m->auto_s = t;
        if (get && m->auto_get) { /* a probe */
            m->probe_left = PROBE_MSGS - 1;
            return 0;
        }
        m->auto_get = get;
    }
    return get;
}

int tern_rndv_path_by_get(tern_peer_t *peer, tern_req_t *req, size_t n)
{
    if (!peer->get_min || n < peer->get_min)
        return 0;
    if (!peer->rndv_path && !start_measuring(peer, req->peer_world))
        return 0;
    /* Below the transport's get_measure_min (shm: TERN_SHM_MEASURE_MIN)
     * nothing is timed: there the stream's samples (run on purpose to time
     * it, again every round) cost more than the choice wins (2-rank bcast,
     * gather and reduce at 32-64 KB 1.5-2.7x slower with them). get_mid
     * (TERN_SHM_MID_PATH) takes the path: the stream by default, as the
     * get's page pinning makes a 32-64 KB read 3.4-5.8 us on the 2-core
     * EPYC VM, 1.25-2.9x the stream's time there (docs/performance.md). */
    if (n < peer->rndv_path->measure_min)
        return peer->rndv_path->mid_get;
    /* An exchange: with a rendezvous of ours to the peer under way, the
     * stream, untimed. Each core copies twice (into the ring for its send,
     * out of it for its receive) against once by get, yet since the
     * sender's copy picks its stores by timing (TERN_SHM_BULK_NT) the
     * stream wins: bibw, 2 bound ranks, 128 KB-4 MB, 26-34 GB/s against
     * 21-29 when the VM's cores are far, 39-66 against 21-30 when near,
     * with a cold buffer per message 11-25 against 7-17
     * (docs/performance.md); timing runs there would only add gets. An
     * open run of the class that the exchange overlaps is no sample
     * (tern_rndv_path_record). TERN_SHM_EXCHANGE_PATH=get reads it
     * instead: on the loaded VM's slow mode 2-2.5x the stream's bibw (row
     * bibw6 there), the fast mode not measured; =auto by the rank's own
     * stream copy rate (exchange_auto). */
    int c = size_class(n);
    struct tern_rndv_path *m = peer->rndv_path;
    double t = tern_clock_s();
    int x = m->exchange == 2 ? m->auto_get : m->exchange;
    if (under_way(peer, TERN_REQ_SEND) || (x && t - m->exchange_s < EXCHANGE_TAIL_S)) {
        m->cls[c].run_clean = 0;
        return m->exchange == 2 ? exchange_auto(m, req->peer_world, t) : m->exchange;
    }
    path_class_t *k = &m->cls[c];
    if (k->choice >= 0) {
        if (t - k->chosen_s < peer->rndv_path->measure_s)
            return k->choice;
        start_round(k);
    }
    if (k->run_msgs) {
        if (run_continues(k, t)) {
            if (k->run_msgs >= run_cap(k))
                return k->run_path; /* uncounted while the run lands */
            if (!k->run_open++) { /* across an idle gap: a new busy stretch */
                double idle = t - k->run_last_s;
                k->run_busy_s += idle < RUN_GAP_S ? idle : RUN_GAP_S;
                k->run_mark_s = t;
                k->run_sent = peer->match_sent;
            }
            k->run_msgs++;
            req->rndv_sample = (uint8_t)(1 + c);
            req->rndv_round = k->round;
            return k->run_path;
        }
        close_run(k, req->peer_world, c);
        if (k->choice >= 0)
            return k->choice;
    }
    /* A new run. Alternate, the stream first (the static default); a path
     * that has its samples gives its turns to the other. */
    int by_get = (int)(k->runs++ & 1u);
    if (k->samples[by_get] >= SAMPLES && k->samples[!by_get] < SAMPLES)
        by_get = !by_get;
    if (k->runs > EXPLORE_MAX) {
        /* Too few clean runs (always other transfers under way): choose on
         * what there is, the stream without both. */
        choose(k, req->peer_world, c, t, ", too few clean runs");
        return k->choice;
    }
    /* The first run of each way warms it (the chunks of the bulk ring,
     * the pages of the buffers): not a sample. */
    k->tries[by_get]++;
    k->run_path = (uint8_t)by_get;
    k->run_clean = !under_way(peer, TERN_REQ_RECV);
    k->run_busy_s = 0;
    k->run_mark_s = k->run_last_s = t;
    k->run_bytes = 0;
    k->run_sent = peer->match_sent;
    k->run_msgs = 1;
    k->run_open = 1;
    req->rndv_sample = (uint8_t)(1 + c);
    req->rndv_round = k->round;
    return by_get;
}

void tern_rndv_path_record(tern_peer_t *peer, tern_req_t *req)
{
    int c = req->rndv_sample - 1;
    req->rndv_sample = 0;
    if (!peer->rndv_path || c < 0 || c >= N_CLASSES)
        return;
    path_class_t *k = &peer->rndv_path->cls[c];
    /* A late landing of a round already decided, or of an earlier one. */
    if (k->choice >= 0 || req->rndv_round != k->round || !k->run_open)
        return;
    /* A send to the peer while this run's messages landed (an exchange:
     * bibw's window posts its sends after its receives matched): the
     * stream's time there holds the other direction's copies too, each
     * core's second, and a get's does not, so such samples chose the get
     * for bibw classes at random, 23-37 GB/s against 55-64 by the stream
     * (docs/performance.md). A ping-pong's reply goes between its runs'
     * busy stretches, not inside one. */
    if (peer->match_sent != k->run_sent || under_way(peer, TERN_REQ_SEND))
        k->run_clean = 0;
    k->run_bytes += req->transfer_bytes;
    k->run_last_s = tern_clock_s();
    if (--k->run_open)
        return;
    k->run_busy_s += k->run_last_s - k->run_mark_s;
    if (k->run_msgs >= run_cap(k) || run_lost(k))
        close_run(k, req->peer_world, c);
}

void tern_rndv_path_sent(tern_peer_t *peer)
{
    if (peer->rndv_path->exchange)
        peer->rndv_path->exchange_s = tern_clock_s();
}

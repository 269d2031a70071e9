/* The receiver's measured choice between get and stream (rndv_path.h). */
#include "core/pt2pt/rndv_path.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"

#include <stdlib.h>

/* Size classes: [32 KB << c, 64 KB << c); messages from 32 KB on (the
 * smallest get_min) and up to 64 MB, larger ones share the last class. */
#define CLASS_SHIFT 15
#define N_CLASSES 12
#define SAMPLES 3          /* clean samples of each path before choosing */
#define EXPLORE_MAX 24     /* messages of a round before choosing anyway */

enum { STREAM = 0, GET = 1 };

/* A round of timing ends with a choice within EXPLORE_MAX messages, so
 * the counts stay small. */
typedef struct {
    double chosen_s;      /* when the choice was made */
    uint32_t seen;        /* messages of the class in this round */
    int8_t choice;        /* -1: timing; else STREAM or GET */
    uint8_t samples[2];
    uint8_t tries[2];     /* messages sent each way this round */
    double best[2];       /* seconds per byte, the least of the clean samples */
} path_class_t;

struct tern_rndv_path {
    path_class_t cls[N_CLASSES];
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
    *k = (path_class_t){.choice = -1};
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

int tern_rndv_path_by_get(tern_peer_t *peer, tern_req_t *req, size_t n)
{
    if (!peer->get_min || n < peer->get_min)
        return 0;
    if (!peer->rndv_path) {
        peer->rndv_path = malloc(sizeof *peer->rndv_path);
        if (!peer->rndv_path) {
            peer->get_min = 0; /* no memory to measure: the static choice */
            return 0;
        }
        for (int c = 0; c < N_CLASSES; c++)
            start_round(&peer->rndv_path->cls[c]);
    }
    /* An exchange: with a rendezvous of ours to the peer under way both
     * cores copy anyway, and the stream would have each copy twice (into
     * the ring for its send, out of it for its receive), the get once.
     * bibw, 2 bound ranks, 64 KB-4 MB: 9-15 GB/s by stream, 23-35 by get;
     * with a cold buffer per message 7.2-8.3 against 8.5-10 (the
     * timing rounds got no clean sample there and kept the stream). */
    if (under_way(peer, TERN_REQ_SEND))
        return 1;
    int c = size_class(n);
    path_class_t *k = &peer->rndv_path->cls[c];
    double t = tern_clock_s();
    if (k->choice >= 0) {
        if (t - k->chosen_s < 1e-3 * (double)tern_knob_count(TERN_KNOB_SHM_MEASURE_MS))
            return k->choice;
        start_round(k);
    }
    /* Alternate, the stream first (the static default); a path that has
     * its samples gives its turns to the other. */
    int by_get = (int)(k->seen++ & 1u);
    if (k->samples[by_get] >= SAMPLES && k->samples[!by_get] < SAMPLES)
        by_get = !by_get;
    /* The first of each way warms it (the chunks of the bulk ring, the
     * pages of the buffers): not a sample. */
    if (++k->tries[by_get] > 1 && !under_way(peer, TERN_REQ_RECV)) {
        req->rndv_sample = (uint8_t)(1 + c);
        req->rndv_by_get = (uint8_t)by_get;
        req->rndv_t0_s = t;
    }
    if (k->seen >= EXPLORE_MAX) {
        /* Too few clean samples (always other transfers under way):
         * choose on what there is, the stream without both. */
        k->choice = k->samples[STREAM] && k->samples[GET] && k->best[GET] < k->best[STREAM]
                        ? GET
                        : STREAM;
        k->chosen_s = t;
    }
    return by_get;
}

void tern_rndv_path_record(tern_peer_t *peer, tern_req_t *req)
{
    int c = req->rndv_sample - 1, p = req->rndv_by_get ? GET : STREAM;
    req->rndv_sample = 0;
    if (!peer->rndv_path || c < 0 || c >= N_CLASSES || !req->transfer_bytes)
        return;
    path_class_t *k = &peer->rndv_path->cls[c];
    if (k->choice >= 0)
        return; /* a late sample of a round already decided */
    double t = tern_clock_s();
    double per_byte = (t - req->rndv_t0_s) / (double)req->transfer_bytes;
    if (k->samples[p]++ == 0 || per_byte < k->best[p])
        k->best[p] = per_byte;
    if (k->samples[STREAM] >= SAMPLES && k->samples[GET] >= SAMPLES) {
        k->choice = k->best[GET] < k->best[STREAM] ? GET : STREAM;
        k->chosen_s = t;
        tern_debug("rendezvous from rank %d, %zu-%zu bytes: %s (%.3f ns/byte by get, %.3f by "
                   "stream)",
                   req->peer_world, (size_t)1 << (CLASS_SHIFT + c),
                   ((size_t)2 << (CLASS_SHIFT + c)) - 1, k->choice == GET ? "get" : "stream",
                   1e9 * k->best[GET], 1e9 * k->best[STREAM]);
    }
}

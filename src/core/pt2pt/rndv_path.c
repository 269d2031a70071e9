/* The receiver's measured choice between get and stream (rndv_path.h). */
#include "core/pt2pt/rndv_path.h"
#include "base/config.h"
#include "base/log.h"

#include <stdlib.h>
#include <time.h>

/* Size classes: [32 KB << c, 64 KB << c); messages from 32 KB on (the
 * smallest get_min) and up to 64 MB, larger ones share the last class. */
#define CLASS_SHIFT 15
#define N_CLASSES 12
#define SAMPLES 3          /* clean samples of each path before choosing */
#define EXPLORE_MAX 24     /* messages of a round before choosing anyway */

enum { STREAM = 0, GET = 1 };

typedef struct {
    uint64_t round_ns;    /* when this round of timing began */
    uint32_t seen;        /* messages of the class in this round */
    int8_t choice;        /* -1: timing; else STREAM or GET */
    uint8_t samples[2];
    uint8_t tries[2];     /* messages sent each way this round */
    double best[2];       /* ns per byte, the least of the clean samples */
} path_class_t;

struct tern_rndv_path {
    path_class_t cls[N_CLASSES];
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int size_class(size_t n)
{
    int c = 0;
    for (size_t v = n >> CLASS_SHIFT; v > 1 && c < N_CLASSES - 1; v >>= 1)
        c++;
    return c;
}

static void start_round(path_class_t *k, uint64_t t)
{
    k->round_ns = t;
    k->seen = 0;
    k->choice = -1;
    k->samples[STREAM] = k->samples[GET] = 0;
    k->tries[STREAM] = k->tries[GET] = 0;
    k->best[STREAM] = k->best[GET] = 0;
}

int tern_rndv_path_by_get(tern_peer_t *peer, tern_req_t *req, size_t n, int clean)
{
    req->rndv_sample = 0;
    if (!peer->rndv_path) {
        peer->rndv_path = calloc(1, sizeof *peer->rndv_path);
        if (!peer->rndv_path) {
            peer->get_min = 0; /* no memory to measure: the static choice */
            return 0;
        }
        for (int c = 0; c < N_CLASSES; c++)
            peer->rndv_path->cls[c].choice = -1;
    }
    int c = size_class(n);
    path_class_t *k = &peer->rndv_path->cls[c];
    uint64_t t = now_ns();
    if (k->choice >= 0) {
        if (t - k->round_ns < (uint64_t)tern_knob_count(TERN_KNOB_SHM_MEASURE_MS) * 1000000ull)
            return k->choice;
        start_round(k, t);
    }
    if (k->seen == 0)
        k->round_ns = t;
    /* Alternate, the stream first (the static default); a path that has
     * its samples gives its turns to the other. */
    int by_get = (int)(k->seen++ & 1u);
    if (k->samples[by_get] >= SAMPLES && k->samples[!by_get] < SAMPLES)
        by_get = !by_get;
    if (k->tries[by_get] < 255)
        k->tries[by_get]++;
    /* The first of each way warms it (the chunks of the bulk ring, the
     * pages of the buffers): not a sample. */
    if (clean && k->tries[by_get] > 1) {
        req->rndv_sample = (uint8_t)(1 + c);
        req->rndv_by_get = (uint8_t)by_get;
        req->rndv_t0_ns = t;
    }
    if (k->seen >= EXPLORE_MAX && k->choice < 0) {
        /* Too few clean samples (always other transfers under way):
         * choose on what there is, the stream without both. */
        k->choice = k->samples[STREAM] && k->samples[GET] && k->best[GET] < k->best[STREAM]
                        ? GET
                        : STREAM;
        k->round_ns = t;
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
    uint64_t t = now_ns();
    double per_byte = (double)(t - req->rndv_t0_ns) / (double)req->transfer_bytes;
    if (k->samples[p] == 0 || per_byte < k->best[p])
        k->best[p] = per_byte;
    if (k->samples[p] < 255)
        k->samples[p]++;
    if (k->samples[STREAM] >= SAMPLES && k->samples[GET] >= SAMPLES) {
        k->choice = k->best[GET] < k->best[STREAM] ? GET : STREAM;
        k->round_ns = t;
        tern_debug("rendezvous from rank %d, %zu-%zu bytes: %s (%.3f ns/byte by get, %.3f by "
                   "stream)",
                   req->peer_world, (size_t)1 << (CLASS_SHIFT + c),
                   ((size_t)2 << (CLASS_SHIFT + c)) - 1, k->choice == GET ? "get" : "stream",
                   k->best[GET], k->best[STREAM]);
    }
}

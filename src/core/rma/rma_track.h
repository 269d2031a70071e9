/* Operations the transport carries in pieces (rma_track.c): RDMA writes
 * and reads (rma_rdma.c) and remote atomics (rma_atomic.c) share this one
 * in-flight tracker.
 *
 * An operation is taken from a pool (no allocation per operation), given
 * one completion per piece (inline up to TERN_RMA_TRACK_PIECES, else an
 * array of its own), counted in the window's pending counts like an
 * answered active message (flush, unlock, fence and complete wait for it
 * unchanged) and ends when its last piece is back: the fetched bytes are
 * unpacked into the origin's result, its buffers freed, its user request
 * completed (tern_win_op_ended). A failed peer's pieces end with no
 * callback (transport.h): a progress hook ends such operations with the
 * peer's error and leaves their buffers to the transport (never freed,
 * still reachable), since the provider may yet touch them.
 *
 * Every origin path, active messages included, waits for room under the
 * same caps before it issues (tern_rma_room): TERN_RMA_MAX_INFLIGHT
 * operations and TERN_RMA_MAX_INFLIGHT_BYTES of their buffers per window,
 * read at window creation. */
#ifndef TERN_CORE_RMA_TRACK_H
#define TERN_CORE_RMA_TRACK_H

#include "core/rma/window.h"
#include "transport/transport.h"

/* Completions inline in an operation (RDMA takes at most this many target
 * pieces; remote atomics of more chunks allocate theirs). */
#define TERN_RMA_TRACK_PIECES 16

typedef struct tern_rma_track tern_rma_track_t;

typedef struct {
    tern_tl_comp_t comp;        /* first: the callback gets this */
    tern_rma_track_t *op;
} tern_rma_piece_t;

struct tern_rma_track {
    tern_rma_track_t *next, *prev; /* in flight; the pool */
    tern_win_t *win;
    int target;
    int left;                   /* pieces not yet back, + 1 while issuing */
    int issuing;
    tern_status_t st;
    const char *what;           /* "RDMA write", ...: for the error's words */
    uint64_t lo, hi;            /* target bytes an ordered accumulate touches */
    size_t footprint;           /* bytes it holds (w->inflight_bytes) */
    char *fetched;              /* packed fetched bytes to unpack into result */
    size_t fetched_bytes;
    void *result;               /* NULL: nothing to unpack (read in place) */
    MPI_Count rcount;
    MPI_Datatype rtype;
    tern_req_t *user_req;
    void *owned[2];             /* buffers freed when it ends */
    tern_rma_piece_t *pieces;
    size_t n_pieces;
    tern_rma_piece_t inline_pieces[TERN_RMA_TRACK_PIECES];
};

/* Whether w may issue one more operation holding bytes now. */
static inline int tern_rma_room(const tern_win_t *w, size_t bytes)
{
    return w->n_pending < w->max_inflight &&
           (w->inflight_bytes + bytes <= w->max_inflight_bytes || w->n_pending == 0);
}

/* Progress until w has room for bytes and, when ordered, no tracked
 * operation to target overlaps [lo, hi) (accumulates of one origin to one
 * location apply in program order; the provider need not keep it). */
tern_status_t tern_rma_track_wait(tern_win_t *w, int target, uint64_t lo, uint64_t hi,
                                  size_t bytes, int ordered);
/* A new operation with n_pieces completions (zeroed, from the pool);
 * req_p non-NULL: the user's request is made and returned there. NULL
 * when out of memory. */
tern_rma_track_t *tern_rma_track_new(tern_win_t *w, int target, size_t n_pieces,
                                     const char *what, tern_req_t **req_p);
/* Gives back an operation never started (an error before its issue). */
void tern_rma_track_discard(tern_rma_track_t *op);
/* Counts it in flight (before its first piece is issued: a piece may
 * complete inside the call); op->footprint and the result fields are set. */
void tern_rma_track_start(tern_rma_track_t *op);
/* Piece i's completion, to hand to the transport. */
static inline tern_tl_comp_t *tern_rma_track_piece(tern_rma_track_t *op, size_t i)
{
    return &op->pieces[i].comp;
}
/* A piece is over (status: its issue or its completion). */
void tern_rma_track_drop(tern_rma_track_t *op, tern_status_t status);
/* Every piece is issued: drops the issuing's own count. */
void tern_rma_track_issued(tern_rma_track_t *op);

#endif

/* The in-flight tracker of RDMA and remote-atomic operations (rma_track.h). */
#include "core/rma/rma_track.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

static tern_rma_track_t *in_flight;
/* Operations whose peer failed with pieces still with the transport:
 * kept (never freed, still reachable) since the provider may yet touch
 * their buffers. */
static tern_rma_track_t *abandoned;
/* Ended operations, for the next ones (no allocation per operation). */
static tern_rma_track_t *pool;
static int hook_registered;

static void op_free(tern_rma_track_t *op)
{
    free(op->owned[0]);
    free(op->owned[1]);
    if (op->pieces != op->inline_pieces)
        free(op->pieces);
    op->next = pool;
    pool = op;
}

/* abandoned_op: its peer failed with pieces still with the transport,
 * which may yet read or write its buffers: they are left to it. */
static void op_done(tern_rma_track_t *op, int abandoned_op)
{
    tern_win_t *w = op->win;
    tern_rt.peers[tern_win_world(w, op->target)].rma_inflight--;
    if (op->prev)
        op->prev->next = op->next;
    else
        in_flight = op->next;
    if (op->next)
        op->next->prev = op->prev;
    tern_win_op_ended(w, op->target, op->footprint, op->st, op->fetched, op->fetched_bytes,
                      op->result, op->rcount, op->rtype, op->user_req);
    if (abandoned_op) {
        op->next = abandoned;
        abandoned = op;
        return;
    }
    op_free(op);
}

void tern_rma_track_drop(tern_rma_track_t *op, tern_status_t status)
{
    if (status != TERN_OK && op->st == TERN_OK)
        op->st = tern_status_detail(status, "an %s to target rank %d failed", op->what,
                                    op->target);
    if (--op->left == 0)
        op_done(op, 0);
}

static void piece_done(tern_tl_comp_t *comp, tern_status_t status)
{
    tern_rma_track_drop(((tern_rma_piece_t *)comp)->op, status);
}

/* A failed peer's pieces end with no callback (transport.h): their
 * operations end here with the peer's error, so no wait hangs on them. */
static int fail_hook(void)
{
    if (!tern_rt.n_failed_peers)
        return 0;
    int n = 0;
    for (tern_rma_track_t *op = in_flight, *next; op; op = next) {
        next = op->next;
        int world = tern_win_world(op->win, op->target);
        tern_status_t f = tern_rt.peers[world].failed;
        if (f == TERN_OK || op->issuing)
            continue;
        if (op->st == TERN_OK)
            op->st = tern_status_detail(f, "target rank %d of the window (world rank %d) "
                                        "failed before its %s completed: %s", op->target,
                                        world, op->what, tern_peer_failure(world));
        op_done(op, 1);
        n++;
    }
    return n;
}

tern_status_t tern_rma_track_wait(tern_win_t *w, int target, uint64_t lo, uint64_t hi,
                                  size_t bytes, int ordered)
{
    if (!hook_registered) {
        tern_status_t st = tern_progress_register(fail_hook);
        if (st != TERN_OK)
            return st;
        hook_registered = 1;
    }
    unsigned idle = 0;
    for (;;) {
        int busy = !tern_rma_room(w, bytes);
        for (tern_rma_track_t *op = in_flight; op && !busy && ordered; op = op->next)
            busy = op->win == w && op->target == target && op->lo < hi && lo < op->hi;
        if (!busy)
            return TERN_OK;
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
}

tern_rma_track_t *tern_rma_track_new(tern_win_t *w, int target, size_t n_pieces,
                                     const char *what, tern_req_t **req_p)
{
    tern_rma_track_t *op = pool;
    if (op)
        pool = op->next;
    else if (!(op = malloc(sizeof *op)))
        return NULL;
    memset(op, 0, offsetof(tern_rma_track_t, inline_pieces));
    op->pieces = op->inline_pieces;
    if (n_pieces > TERN_RMA_TRACK_PIECES &&
        !(op->pieces = malloc(n_pieces * sizeof *op->pieces))) {
        op->pieces = op->inline_pieces;
        op_free(op);
        return NULL;
    }
    for (size_t i = 0; i < n_pieces; i++) {
        op->pieces[i].comp.cb = piece_done;
        op->pieces[i].op = op;
    }
    op->n_pieces = n_pieces;
    op->win = w;
    op->target = target;
    op->what = what;
    if (req_p) {
        if (!(op->user_req = tern_req_alloc(TERN_REQ_GENERIC))) {
            op_free(op);
            return NULL;
        }
        op->user_req->comm = w->comm->handle;
        *req_p = op->user_req;
    }
    return op;
}

void tern_rma_track_discard(tern_rma_track_t *op)
{
    if (op->user_req)
        tern_req_release(op->user_req);
    op_free(op);
}

void tern_rma_track_start(tern_rma_track_t *op)
{
    tern_win_t *w = op->win;
    if (op->result)
        tern_datatype_retain(op->rtype);
    w->pending[op->target]++;
    w->n_pending++;
    w->inflight_bytes += op->footprint;
    tern_rt.peers[tern_win_world(w, op->target)].rma_inflight++;
    op->prev = NULL;
    if ((op->next = in_flight))
        in_flight->prev = op;
    in_flight = op;
    op->left = (int)op->n_pieces + 1;
    op->issuing = 1;
}

void tern_rma_track_issued(tern_rma_track_t *op)
{
    op->issuing = 0;
    tern_rma_track_drop(op, TERN_OK);
}

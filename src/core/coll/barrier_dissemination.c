/* Barrier by dissemination (Hensgen, Finkel, Manber 1988).
 * In round k (k = 1, 2, 4, ...) rank r signals r + k and waits for r - k
 * (mod p). After ceil(lg p) rounds every rank has heard, directly or not,
 * from every other. Cost: ceil(lg p) * alpha, zero-byte messages; works for
 * any p, no power-of-two fix-up. Runs on the communicator's collective
 * context so it never matches user messages. */
#include "core/coll.h"
#include "core/p2p.h"
#include "core/progress.h"

tern_status_t tern_coll_barrier(tern_comm_t *comm)
{
    int p = comm->size, r = comm->rank;
    uint32_t ctx = comm->context_id + 1;
    int round = 0;
    for (int k = 1; k < p; k <<= 1, round++) {
        tern_req_t *sreq, *rreq;
        tern_status_t st = tern_p2p_irecv(comm, ctx, NULL, 0, (r - k + p) % p, round, &rreq);
        if (st != TERN_OK)
            return st;
        st = tern_p2p_isend(comm, ctx, NULL, 0, (r + k) % p, round, TERN_SEND_STANDARD, &sreq);
        if (st != TERN_OK)
            return st;
        tern_progress_wait(&rreq->complete);
        tern_progress_wait(&sreq->complete);
        tern_req_release(rreq);
        tern_req_release(sreq);
    }
    return TERN_OK;
}

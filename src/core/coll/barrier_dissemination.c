/* Barrier by dissemination (Hensgen, Finkel, Manber 1988).
 * In round k (k = 1, 2, 4, ...) rank r signals r + k and waits for r - k
 * (mod p). After ceil(lg p) rounds every rank has heard, directly or not,
 * from every other. Cost: ceil(lg p) * alpha, zero-byte messages; works for
 * any p, no power-of-two fix-up. Messages carry the schedule's collective
 * tag, so they never match another collective's. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_barrier_dissemination(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    for (int k = 1; k < p; k <<= 1) {
        tern_sched_recv(s, NULL, 0, coll_mod(r - k, p));
        tern_sched_send(s, NULL, 0, (r + k) % p);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}

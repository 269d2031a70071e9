/* Broadcast, linear: the root sends the message to every other rank, in
 * rank order after itself; the others receive once from the root. Cost:
 * (p - 1) * (alpha + n * beta) at the root, one step for the others; no
 * rank forwards, so none waits for a descheduled parent: with more ranks
 * than cores the root's eager sends run ahead and each rank takes its copy
 * when it runs (Open MPI's eager fan-out). For small messages. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_bcast_linear(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    if (r != a->root) {
        tern_sched_recv(s, a->rbuf, a->bytes, a->root);
        return tern_sched_error(s);
    }
    for (int i = 1; i < p; i++)
        tern_sched_send(s, a->rbuf, a->bytes, (r + i) % p);
    return tern_sched_error(s);
}

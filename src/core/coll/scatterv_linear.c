/* Scatterv, linear: the root posts one send per rank from its
 * displacement. Cost: (p - 1) * alpha + sum(n_i) * beta at the root. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_scatterv_linear(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    if (r != a->root) {
        tern_sched_recv(s, a->rbuf, a->bytes, a->root);
        return tern_sched_error(s);
    }
    for (int i = 0; i < p; i++)
        if (i != r)
            tern_sched_send(s, coll_at(a->sbuf, a->sdispls[i]), a->scounts[i], i);
    tern_sched_copy(s, coll_at(a->sbuf, a->sdispls[r]), a->rbuf, a->scounts[r]);
    return tern_sched_error(s);
}

/* Gather, linear: the root posts one receive per rank, straight into its
 * place in the receive buffer. Cost: (p - 1) * (alpha + n * beta) at the
 * root, one step; no intermediate copies. Good for small communicators and
 * for large blocks. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_gather_linear(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    if (r != a->root) {
        tern_sched_send(s, a->sbuf, a->bytes, a->root);
        return tern_sched_error(s);
    }
    for (int i = 0; i < p; i++)
        if (i != r)
            tern_sched_recv(s, coll_at(a->rbuf, (size_t)i * a->bytes), a->bytes, i);
    tern_sched_copy(s, a->sbuf, coll_at(a->rbuf, (size_t)r * a->bytes), a->bytes);
    return tern_sched_error(s);
}

/* Neighbourhood collectives as schedules (neighbor.h). */
#include "core/coll/neighbor.h"
#include "core/coll/coll.h"
#include "core/topo/topo.h"
#include "core/datatype/datatype.h"

#include <stdint.h>

/* Block i of one side: count elements of *dt at *at. */
static void block(const tern_nbr_blocks_t *b, const void *buf, int i, size_t *count,
                  MPI_Datatype *dt, char **at)
{
    MPI_Aint off = 0;
    switch (b->shape) {
    case TERN_NBR_SAME:
        *count = (size_t)b->count;
        *dt = b->type;
        break;
    case TERN_NBR_EACH:
        *count = (size_t)b->count;
        *dt = b->type;
        off = (MPI_Aint)i * (MPI_Aint)b->count * (MPI_Aint)tern_datatype_extent(b->type);
        break;
    case TERN_NBR_V:
        *count = (size_t)tern_nums_at(b->counts, i);
        *dt = b->type;
        off = (MPI_Aint)tern_nums_at(b->displs, i) * (MPI_Aint)tern_datatype_extent(b->type);
        break;
    default:
        *count = (size_t)tern_nums_at(b->counts, i);
        *dt = b->types[i];
        off = (MPI_Aint)tern_nums_at(b->displs, i);
        break;
    }
    *at = (char *)(uintptr_t)buf + off;
}

/* The contiguous bytes of a block to send: the user's memory, or a packed
 * copy (a local step, so added before any transfer). */
static const void *send_view(tern_sched_t *s, const char *at, size_t count, MPI_Datatype dt)
{
    if (count == 0 || tern_datatype_is_contig(dt))
        return at + tern_datatype_true_lb(dt);
    void *t = tern_sched_tmp(s, tern_datatype_packed_size(dt, count));
    if (t)
        tern_sched_pack(s, at, count, dt, t);
    return t;
}

tern_status_t tern_coll_neighbor(tern_comm_t *c, const void *sbuf, tern_nbr_blocks_t sb,
                                 void *rbuf, tern_nbr_blocks_t rb, tern_req_t **req_p,
                                 int persistent)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = tern_topo_neighbors(c, &t);
    if (st != TERN_OK)
        return st;
    tern_sched_t *s = tern_sched_create(c, !req_p);
    if (!s)
        return TERN_ERR_NOMEM;
    int cart = t->kind == MPI_CART;
    /* Send views first: packing is a local step, which would wait for the
     * transfers posted before it. Allgather sends one block to all. */
    const void **sviews = tern_sched_tmp(s, (size_t)(t->outdegree + 1) * sizeof *sviews);
    size_t *sbytes = tern_sched_tmp(s, (size_t)(t->outdegree + 1) * sizeof *sbytes);
    for (int i = 0; sviews && sbytes && i < t->outdegree; i++) {
        size_t count;
        MPI_Datatype dt;
        char *at;
        if (t->destinations[i] == MPI_PROC_NULL)
            continue;
        block(&sb, sbuf, sb.shape == TERN_NBR_SAME ? 0 : i, &count, &dt, &at);
        sbytes[i] = tern_datatype_packed_size(dt, count);
        if (sb.shape == TERN_NBR_SAME && i > 0 && sviews[0] && t->destinations[0] != MPI_PROC_NULL)
            sviews[i] = sviews[0];
        else
            sviews[i] = send_view(s, at, count, dt);
    }
    /* Receives, in an order that pairs twice-met Cartesian neighbours
     * right (neighbor.h): per dimension the +1 slot first. */
    int n_unpack = 0;
    struct unpack {
        const void *tmp;
        char *at;
        size_t count;
        MPI_Datatype dt;
    } *unpacks = tern_sched_tmp(s, (size_t)(t->indegree + 1) * sizeof *unpacks);
    for (int j = 0; unpacks && j < t->indegree; j++) {
        int i = cart ? (j ^ 1) : j;
        int src = t->sources[i];
        if (src == MPI_PROC_NULL)
            continue;
        size_t count;
        MPI_Datatype dt;
        char *at;
        block(&rb, rbuf, i, &count, &dt, &at);
        size_t bytes = tern_datatype_packed_size(dt, count);
        void *view = at + (count ? tern_datatype_true_lb(dt) : 0);
        if (count && !tern_datatype_is_contig(dt)) {
            view = tern_sched_tmp(s, bytes);
            if (!view)
                break;
            unpacks[n_unpack++] = (struct unpack){view, at, count, dt};
        }
        tern_sched_recv(s, view, bytes, src);
    }
    for (int i = 0; sviews && sbytes && i < t->outdegree; i++)
        if (t->destinations[i] != MPI_PROC_NULL)
            tern_sched_send(s, sviews[i], sbytes[i], t->destinations[i]);
    for (int k = 0; k < n_unpack; k++)
        tern_sched_unpack(s, unpacks[k].tmp, unpacks[k].at, unpacks[k].count, unpacks[k].dt);
    if (!sviews || !sbytes || !unpacks)
        st = TERN_ERR_NOMEM;
    if (st == TERN_OK)
        st = tern_sched_error(s);
    if (st != TERN_OK) {
        tern_sched_free(s);
        return st;
    }
    return tern_coll_launch(s, req_p, persistent);
}

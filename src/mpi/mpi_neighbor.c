/* Argument checks of the neighbourhood collectives (mpi_neighbor.h). */
#include "mpi/mpi_neighbor.h"
#include "core/topo/topo.h"

/* One side: degree blocks as sb describes them; *any: some block carries
 * data. */
static int check_side(const char *func, MPI_Comm comm, const char *side, const void *buf,
                      const tern_nbr_blocks_t *b, int degree, int *any)
{
    size_t size = 0;
    int err;
    *any = 0;
    if (buf == MPI_IN_PLACE)
        return tern_mpi_error(comm, MPI_ERR_BUFFER, func,
                              "MPI_IN_PLACE is not allowed in neighbourhood collectives (%sbuf)",
                              side);
    if (b->shape == TERN_NBR_SAME || b->shape == TERN_NBR_EACH) {
        if (b->count < 0)
            return tern_mpi_error(comm, MPI_ERR_COUNT, func, "%scount=%lld is negative", side,
                                  (long long)b->count);
        if ((err = tern_check_datatype(func, comm, b->type, &size)))
            return err;
        *any = b->count > 0 && size > 0 && degree > 0;
        return tern_check_buffer(func, comm, buf, *any, size);
    }
    if (degree > 0 && (!b->counts.p || !b->displs.p))
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "the %s %s array is NULL", side,
                              !b->counts.p ? "counts" : "displacements");
    if (b->shape == TERN_NBR_V && (err = tern_check_datatype(func, comm, b->type, &size)))
        return err;
    if (b->shape == TERN_NBR_W && degree > 0 && !b->types)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "the %s datatypes array is NULL", side);
    for (int i = 0; i < degree; i++) {
        MPI_Count n = tern_nums_at(b->counts, i);
        if (n < 0)
            return tern_mpi_error(comm, MPI_ERR_COUNT, func, "%scounts[%d]=%lld is negative",
                                  side, i, (long long)n);
        if (b->shape == TERN_NBR_W && (err = tern_check_datatype(func, comm, b->types[i], &size)))
            return err;
        if (n > 0 && size > 0)
            *any = 1;
    }
    /* Byte displacements may be absolute addresses from MPI_BOTTOM (NULL
     * here), as in MPI_Alltoallw (mpi4py's testNeighborAlltoallwBottom). */
    if (b->shape == TERN_NBR_W)
        return MPI_SUCCESS;
    return tern_check_buffer(func, comm, buf, *any, 1);
}

int tern_check_neighbor(const char *func, tern_comm_t *c, const void *sbuf, tern_nbr_blocks_t sb,
                        const void *rbuf, tern_nbr_blocks_t rb)
{
    MPI_Comm comm = c->handle;
    const tern_topo_t *t = c->is_inter ? NULL : c->topo;
    if (!t)
        return tern_mpi_error(comm, MPI_ERR_TOPOLOGY, func,
                              "communicator 0x%x has no topology (a neighbourhood collective "
                              "needs a Cartesian, graph or distributed graph one)",
                              (unsigned)comm);
    int err, sany, rany;
    if ((err = check_side(func, comm, "send", sbuf, &sb, t->outdegree, &sany)) ||
        (err = check_side(func, comm, "recv", rbuf, &rb, t->indegree, &rany)))
        return err;
    if (sany && rany && sbuf == rbuf && sbuf != MPI_BOTTOM)
        return tern_mpi_error(comm, MPI_ERR_BUFFER, func,
                              "sendbuf and recvbuf are the same buffer %p", sbuf);
    return MPI_SUCCESS;
}

/* Neighbourhood collectives (MPI-4.1 8.6): MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w), all forms (blocking, nonblocking, persistent,
 * large-count), as one schedule over the neighbours of the communicator's
 * topology (topo/topo.h): each outgoing block sent to its destination and
 * each incoming block received from its source, all in flight at once.
 * Blocks of MPI_PROC_NULL neighbours keep their slot and move no data.
 *
 * Cartesian neighbours may be one process twice (a periodic dimension of
 * size 1 or 2): per dimension the block for the -1 neighbour is sent
 * before the one for the +1 neighbour, and the block from the +1
 * neighbour is received before the one from the -1 neighbour, so what a
 * process sends towards -1 lands in its neighbour's "from +1" slot, as in
 * a halo exchange written with MPI_Cart_shift and MPI_Sendrecv (MPI-4.1's
 * rule). */
#ifndef TERN_CORE_COLL_NEIGHBOR_H
#define TERN_CORE_COLL_NEIGHBOR_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/datatype/dtype_nums.h"
#include "core/pt2pt/request.h"

/* Where the blocks of one side lie, one block per neighbour. */
typedef enum {
    TERN_NBR_SAME, /* every neighbour: count x type at buf (allgather's send) */
    TERN_NBR_EACH, /* block i: count x type at buf + i * count * extent */
    TERN_NBR_V,    /* block i: counts[i] x type at buf + displs[i] * extent */
    TERN_NBR_W     /* block i: counts[i] x types[i] at buf + displs[i] bytes */
} tern_nbr_shape_t;

typedef struct {
    tern_nbr_shape_t shape;
    MPI_Count count;
    tern_nums_t counts, displs;
    MPI_Datatype type;
    const MPI_Datatype *types;
} tern_nbr_blocks_t;

#define TERN_NBR_SAME_BLOCK(count, type) \
    ((tern_nbr_blocks_t){TERN_NBR_SAME, (count), {0}, {0}, (type), NULL})
#define TERN_NBR_EACH_BLOCK(count, type) \
    ((tern_nbr_blocks_t){TERN_NBR_EACH, (count), {0}, {0}, (type), NULL})
#define TERN_NBR_V_BLOCKS(counts, displs, type) \
    ((tern_nbr_blocks_t){TERN_NBR_V, 0, TERN_NUMS(counts), TERN_NUMS(displs), (type), NULL})
#define TERN_NBR_W_BLOCKS(counts, displs, types) \
    ((tern_nbr_blocks_t){TERN_NBR_W, 0, TERN_NUMS(counts), TERN_NUMS(displs), \
                         MPI_DATATYPE_NULL, (types)})

/* Arguments are checked by the MPI layer (mpi/mpi_neighbor.c); c has a
 * topology. req_p NULL: blocking; else a nonblocking (persistent = 0) or
 * persistent request. */
tern_status_t tern_coll_neighbor(tern_comm_t *c, const void *sbuf, tern_nbr_blocks_t sb,
                                 void *rbuf, tern_nbr_blocks_t rb, tern_req_t **req_p,
                                 int persistent);

#endif

/* Communicators. A communicator maps its ranks to world ranks and owns two
 * context ids: one for point-to-point, one (+1) for collectives, so internal
 * collective traffic never matches user receives. */
#ifndef TERN_CORE_COMM_H
#define TERN_CORE_COMM_H

#include <mpi.h>
#include <stdint.h>

typedef struct tern_comm {
    MPI_Comm handle;
    uint32_t context_id;   /* point-to-point; collectives use context_id + 1 */
    int rank;
    int size;
    int *world_ranks;      /* comm rank -> world rank; NULL means identity */
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    unsigned coll_seq;     /* collective sequence number, for tags */
} tern_comm_t;

/* Handle to object; NULL if the handle is not a live communicator. */
tern_comm_t *tern_comm_lookup(MPI_Comm comm);
void tern_comm_init_predefined(int world_rank, int world_size);
void tern_comm_finalize(void);

static inline int tern_comm_world_rank(const tern_comm_t *c, int rank)
{
    return c->world_ranks ? c->world_ranks[rank] : rank;
}

#endif

#include "core/comm.h"
#include "core/handle.h"

#include <stdlib.h>
#include <string.h>

static tern_comm_t comm_world, comm_self;
static int self_world_rank;

tern_comm_t *tern_comm_lookup(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return comm_world.handle == MPI_COMM_WORLD ? &comm_world : NULL;
    if (comm == MPI_COMM_SELF)
        return comm_self.handle == MPI_COMM_SELF ? &comm_self : NULL;
    return NULL;
}

void tern_comm_init_predefined(int world_rank, int world_size)
{
    comm_world = (tern_comm_t){.handle = MPI_COMM_WORLD, .context_id = 0, .rank = world_rank,
                               .size = world_size, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(comm_world.name, "MPI_COMM_WORLD");
    self_world_rank = world_rank;
    comm_self = (tern_comm_t){.handle = MPI_COMM_SELF, .context_id = 2, .rank = 0, .size = 1,
                              .world_ranks = &self_world_rank,
                              .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(comm_self.name, "MPI_COMM_SELF");
}

void tern_comm_finalize(void)
{
    comm_world.handle = MPI_COMM_NULL;
    comm_self.handle = MPI_COMM_NULL;
}

/* Process sets (MPI-4.0 11.3.2), the names sessions hand out: mpi://WORLD
 * (every process of the job), mpi://SELF (this process) and tern://node
 * (the processes on this process's node, as the launcher's node map says).
 * Names compare without regard to case (MPICH's tests write mpi://self). */
#ifndef TERN_CORE_PSET_H
#define TERN_CORE_PSET_H

#include "base/status.h"

#define TERN_PSET_COUNT 3

/* The name of process set n (0 <= n < TERN_PSET_COUNT). */
const char *tern_pset_name(int n);
/* The world ranks of the set called name, ascending, in a new array
 * (*ranks_p to free); TERN_ERR_ARG (with a detail) if no set has that name. */
tern_status_t tern_pset_members(const char *name, int **ranks_p, int *n_p);

#endif

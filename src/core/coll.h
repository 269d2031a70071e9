/* Collectives available to the MPI layer. (Tuned algorithms and selection
 * arrive with the collectives milestone; see docs/design.md.) */
#ifndef TERN_CORE_COLL_H
#define TERN_CORE_COLL_H

#include "base/status.h"
#include "core/comm.h"

tern_status_t tern_coll_barrier(tern_comm_t *comm);

#endif

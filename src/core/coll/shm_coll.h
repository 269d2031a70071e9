/* Running a shm collective (<collective>_shm.c) as one resumable schedule
 * step over the communicator's region (shm_region.h). */
#ifndef TERN_CORE_COLL_SHM_COLL_H
#define TERN_CORE_COLL_SHM_COLL_H

#include "core/coll/coll.h"

/* From this many bytes in a chunk, the ranks fold slices in parallel
 * instead of one rank (or every rank) folding it all; not yet measured. */
#define TERN_SHM_PARALLEL_MIN 4096

/* Adds the collective (BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER,
 * ALLGATHER, ALLTOALL, REDUCE_SCATTER or REDUCE_SCATTER_BLOCK) on a's views
 * to s as one poll step. *served 0 (and nothing added): the communicator
 * has no region (or alltoall: more ranks than bytes in a slot;
 * reduce_scatter of a vector larger than a slot: more ranks than elements
 * in a slot), the caller builds a point-to-point algorithm instead. */
tern_status_t tern_shm_coll_build(tern_sched_t *s, const tern_coll_args_t *a,
                                  tern_coll_kind_t kind, int *served);
/* A blocking barrier run straight from the call, the same run (ticket,
 * flags) with no schedule around its one step: about a third of a 2-rank
 * barrier's instructions were the schedule's (made, pushed, reaped,
 * freed). *served 0: the communicator has no region, nothing ran. */
tern_status_t tern_shm_barrier_now(const tern_coll_args_t *a, int *served);

#endif

/* The reductions of the shm collectives (reduce_shm.c, allreduce_shm.c). */
#ifndef TERN_CORE_COLL_SHM_REDUCE_H
#define TERN_CORE_COLL_SHM_REDUCE_H

#include "core/coll/shm_region.h"

/* From this many bytes in a chunk, the ranks fold slices in parallel
 * instead of one rank (or every rank) folding it all; not yet measured. */
#define TERN_SHM_PARALLEL_MIN 4096

/* Reduces a->count elements of a->sbuf over the communicator of reg into
 * a->rbuf of root, or of every rank when root < 0, in slot-sized chunks. */
tern_status_t tern_shm_reduce_chunks(tern_shm_region_t *reg, const tern_coll_args_t *a, int root);

#endif

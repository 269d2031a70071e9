/* Scatter, shared memory: the root copies block q into rank q's slot, for
 * every q, and stores its enter flag; each rank waits for it and copies its
 * own slot out. Blocks larger than a slot go in slot-sized chunks.
 * Node-local communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_scatter_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_SCATTER, &served);
    return st != TERN_OK || served ? st : tern_coll_scatter_binomial(s, a);
}

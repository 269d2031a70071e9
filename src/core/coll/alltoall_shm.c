/* Alltoall, shared memory: every rank copies its p - 1 blocks for the
 * others into its slot (a piece of at most slot / (p - 1) bytes each),
 * stores its enter flag, copies its own block straight to its receive
 * buffer, waits for everyone's flag and copies its piece out of every
 * other slot. Larger blocks go in chunks of slot / (p - 1) bytes, one step
 * each; with more ranks than CPUs, a blocking call's blocks up to 64 KB
 * go in one step through the region's alltoall area (shm_region.h).
 * Node-local communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_alltoall_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_ALLTOALL, &served);
    return st != TERN_OK || served ? st : tern_coll_alltoall_pairwise(s, a);
}

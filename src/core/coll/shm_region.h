/* The node-level shared-memory region of a communicator whose ranks all
 * share one node (the shm collectives: barrier_shm.c, bcast_shm.c,
 * reduce_shm.c, allreduce_shm.c).
 *
 * Created by the first collective that selects a shm algorithm on the
 * communicator (collective over it, through point-to-point), freed with
 * the communicator. Layout, every part on its own cache lines:
 *   per rank: three flag lines (enter, reduced, leave), each written by that
 *   rank only, plus its pid;
 *   per rank: two data slots of TERN_COLL_SHM_SLOT bytes;
 *   two result slots (the slices of a parallel reduction).
 *
 * Synchronisation is by sequence numbers, never reset: every rank counts
 * the steps it runs on the region (one per collective, or one per
 * slot-sized chunk of a larger message) the same way, and step n uses slot
 * n % 2. A rank stores enter = n once its data of step n is in its slot,
 * reduced = n once its slice of the result is written, leave = n once it
 * read everything it needs of step n. Before writing into slot n % 2 a rank
 * waits until every rank left step n - 2, the last step that used that
 * slot; so two consecutive steps (the next collective, the next chunk)
 * overlap and nothing ever waits for a reset. */
#ifndef TERN_CORE_COLL_SHM_REGION_H
#define TERN_CORE_COLL_SHM_REGION_H

#include "base/status.h"
#include "core/coll/coll.h"
#include <stddef.h>
#include <stdint.h>

typedef struct tern_shm_region tern_shm_region_t;

enum { TERN_SHM_ENTER, TERN_SHM_REDUCED, TERN_SHM_LEAVE, TERN_SHM_N_FLAGS };

/* Whether a shm algorithm can serve the call: a blocking call on an
 * intracommunicator of 2 or more ranks that share one node and reach each
 * other through the shm transport (never across nodes, never when
 * TERN_TRANSPORTS leaves shm out), whose region has not failed to be
 * created, and (reductions) whose elements fit a slot. The same answer on
 * every rank of the communicator. */
int tern_shm_coll_usable(const tern_coll_args_t *a);

/* The communicator's region, created now if it does not exist (collective:
 * every rank of comm calls it at the same point). On failure every rank
 * gets the error and the communicator never selects shm again. */
tern_status_t tern_shm_region_get(tern_comm_t *comm, tern_shm_region_t **reg_p);

/* Step bookkeeping: the number of this rank's next step. */
uint64_t tern_shm_next_step(tern_shm_region_t *reg);
size_t tern_shm_slot_bytes(const tern_shm_region_t *reg);
/* Rank q's data slot for step n, and the result slot of step n. */
char *tern_shm_slot(tern_shm_region_t *reg, int q, uint64_t n);
char *tern_shm_result(tern_shm_region_t *reg, uint64_t n);

/* Stores this rank's flag (release: what it wrote before is visible to
 * whoever sees the value). */
void tern_shm_set(tern_shm_region_t *reg, int flag, uint64_t n);
/* Waits (progressing, yielding when oversubscribed) until rank q's flag
 * reaches n; q < 0: every rank's. TERN_ERR_PEER, naming the rank, if one
 * it waits for has died. */
tern_status_t tern_shm_wait(tern_shm_region_t *reg, int flag, int q, uint64_t n);
/* Before writing into a slot of step n: every rank left step n - 2. */
tern_status_t tern_shm_wait_slot_free(tern_shm_region_t *reg, uint64_t n);

#endif

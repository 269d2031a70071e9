/* A 2-rank blocking allgather or alltoall of large blocks by one copy:
 * each rank publishes its send buffer's address in its exchange line of
 * the communicator's shm region (pair_line.h's lines and sequence), reads
 * the other's block with one process_vm_readv (base/cma.h) straight into
 * its receive buffer, then stores "done" in its line and waits for the
 * other's, so neither send buffer is released while the other reads it.
 * The slots' path copies every byte twice (into a slot, out of it); the
 * read copies once but pins pages (several us), so it pays where copies
 * are slow and the read is not (the VM's memory-bound state,
 * docs/performance.md row cma2), and loses where the read is slow too.
 *
 * Both ranks take it for the same calls: the decision is the block's byte
 * count, TERN_COLL_PAIR_GET and TERN_<COLL>_ALGORITHM (none forced; both
 * the same on every rank) and what the two agreed through the line: at
 * the first such call whether each may read the other (CMA permitted),
 * and under auto, every 64 such calls, whether the read pays for both
 * against two memcpys (tern_single_copy_pays, base/copy_rate.h). coll.c
 * calls it with the views (a rank with a non-contiguous type packs and
 * unpacks around it), coll_pair.c with the user's contiguous buffers;
 * both after the call's collective tag, so the region's creation takes
 * the same tags on both. */
#ifndef TERN_CORE_COLL_PAIR_GET_H
#define TERN_CORE_COLL_PAIR_GET_H

#include "core/coll/coll.h"

/* The least TERN_COLL_PAIR_GET_MIN: callers ask only from here. */
#define TERN_PAIR_GET_LEAST ((size_t)4096)

/* The allgather or alltoall (kind) on a's views (a->bytes per block;
 * alltoall's sbuf not the rbuf) by one CMA read when the pair takes it;
 * else *served 0 and nothing ran. A blocking call of a 2-rank
 * intracommunicator. */
tern_status_t tern_pair_get(const tern_coll_args_t *a, tern_coll_kind_t kind, int *served);

#endif

/* Two ranks, blocking, small contiguous data: the rooted collectives,
 * allreduce, allgather, alltoall and reduce_scatter run as the one or two
 * messages that the table's algorithm for that case sends (bcast, reduce,
 * gather and scatter binomial; allreduce and allgather recursive doubling;
 * alltoall pairwise; reduce_scatter direct), posted straight to
 * point-to-point with no schedule: no schedule object, step,
 * in-flight list or scratch arena, no pooled request for a receive that is
 * not here yet (one on the stack).
 * The messages, their tags (the communicator's next blocking collective
 * tag) and the order of the op's operands are the algorithm's own, so a
 * rank that takes the scheduled path (a derived type, a larger vector)
 * meets one that takes this one, and the bits are the same.
 *
 * coll.c calls these after selection chose that algorithm, on an
 * intracommunicator of two ranks that is neither revoked nor has a member
 * known failed; a has its views set as the scheduled path sets them
 * (contiguous types: the user's buffers at their true lower bound). */
#ifndef TERN_CORE_COLL_PAIR_H
#define TERN_CORE_COLL_PAIR_H

#include "core/coll/coll.h"

/* The largest vector of the reductions that need a scratch copy (allreduce;
 * reduce in place; a reduce_scatter segment): it lives on the stack. */
#define TERN_COLL_PAIR_TMP 1024

tern_status_t tern_coll_pair_bcast(const tern_coll_args_t *a);
tern_status_t tern_coll_pair_reduce(const tern_coll_args_t *a);
tern_status_t tern_coll_pair_allreduce(const tern_coll_args_t *a);
tern_status_t tern_coll_pair_gather(const tern_coll_args_t *a);
tern_status_t tern_coll_pair_scatter(const tern_coll_args_t *a);
/* a->bytes is one rank's block; alltoall's sbuf == rbuf in place. */
tern_status_t tern_coll_pair_allgather(const tern_coll_args_t *a);
tern_status_t tern_coll_pair_alltoall(const tern_coll_args_t *a);
/* The allreduce, allgather, alltoall or reduce_scatter(_block) (kind,
 * a->rcounts set for the last) through the exchange line
 * (pair_line.h) for the scheduled path's packed views, whose schedule took
 * the call's tag already: *served 0 when the line does not serve it (the
 * schedule's messages then, the pair function's). */
tern_status_t tern_coll_pair_line(const tern_coll_args_t *a, tern_coll_kind_t kind, int *served);
/* a->rcounts holds the two segments' element counts. */
tern_status_t tern_coll_pair_reduce_scatter(const tern_coll_args_t *a);

#endif

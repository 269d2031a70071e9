/* Three or more ranks, blocking, contiguous data: binomial bcast and reduce,
 * linear scatter and gather, direct and recursive-halving reduce_scatter (the
 * algorithms the table picks for small messages with more ranks than cores;
 * bcast and reduce above 16 ranks too) posted straight to point-to-point with
 * no schedule, as coll_pair.h does for two ranks: no schedule object, step
 * list, fence or scratch arena, no pooled request for a receive that is not
 * here yet. The messages, their tags and the order of the folds are those of
 * bcast_binomial.c, reduce_binomial.c, scatter_linear.c, gather_linear.c,
 * reduce_scatter_direct.c and reduce_scatter_recursive_halving.c, so a rank
 * on this path meets one on the schedule (a derived type, a larger vector)
 * and the bits are the same.
 *
 * coll.c calls these after selection chose that algorithm, on an
 * intracommunicator of three or more ranks that is neither revoked nor has a
 * member known failed; a has its views set as for coll_pair.h. */
#ifndef TERN_CORE_COLL_TREE_H
#define TERN_CORE_COLL_TREE_H

#include "core/coll/coll.h"

/* The largest vector the reduce (the reduce_scatter: the whole vector)
 * folds on this path: its two scratch vectors live on the stack. */
#define TERN_COLL_TREE_TMP 1024

/* The most ranks the reduce_scatter serves (its counts on the stack). */
#define TERN_COLL_TREE_MAX_RANKS 64

tern_status_t tern_coll_tree_bcast(const tern_coll_args_t *a);
tern_status_t tern_coll_tree_reduce(const tern_coll_args_t *a);
tern_status_t tern_coll_tree_scatter(const tern_coll_args_t *a);
tern_status_t tern_coll_tree_gather(const tern_coll_args_t *a);
/* a->rcounts holds every rank's segment in elements of a->dt. */
tern_status_t tern_coll_tree_reduce_scatter(const tern_coll_args_t *a);
/* Recursive halving (commutative ops), as direct messages. */
tern_status_t tern_coll_tree_reduce_scatter_halving(const tern_coll_args_t *a);

#endif

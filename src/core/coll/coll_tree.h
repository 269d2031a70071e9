/* Three or more ranks, blocking, contiguous data: binomial bcast and
 * reduce (the algorithms the table picks for small messages with more
 * ranks than cores, and above 16 ranks) posted straight to point-to-point
 * with no schedule, as coll_pair.h does for two ranks: no schedule object,
 * step list, fence or scratch arena, no pooled request for a receive that
 * is not here yet. The messages, their tags and the order of the folds
 * are those of bcast_binomial.c and reduce_binomial.c, so a rank on this
 * path meets one on the schedule (a derived type, a larger vector) and the
 * bits are the same.
 *
 * coll.c calls these after selection chose binomial, on an
 * intracommunicator of three or more ranks that is neither revoked nor
 * has a member known failed; a has its views set as for coll_pair.h. */
#ifndef TERN_CORE_COLL_TREE_H
#define TERN_CORE_COLL_TREE_H

#include "core/coll/coll.h"

/* The largest vector the reduce folds on this path: its two scratch
 * vectors live on the stack. */
#define TERN_COLL_TREE_TMP 1024

tern_status_t tern_coll_tree_bcast(const tern_coll_args_t *a);
tern_status_t tern_coll_tree_reduce(const tern_coll_args_t *a);

#endif

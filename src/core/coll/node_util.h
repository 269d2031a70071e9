/* Node-aware collectives: who shares my node, who leads each node, and
 * tree/dissemination building blocks over an arbitrary list of ranks. */
#ifndef TERN_CORE_COLL_NODE_UTIL_H
#define TERN_CORE_COLL_NODE_UTIL_H

#include "core/coll/coll.h"

typedef struct {
    int *local;      /* comm ranks on my node, ascending */
    int n_local, my_local;
    int *leaders;    /* lowest comm rank of each node, by first appearance */
    int n_leaders, my_leader; /* my index in leaders, -1 if not a leader */
    int *node_index; /* comm rank -> index of its node in leaders */
} coll_nodes_t;

/* Fills nd for comm (memory from the schedule); the node of a rank is
 * tern_rt.node_of_rank, or world_rank / TERN_COLL_RANKS_PER_NODE when set. */
tern_status_t coll_nodes(tern_sched_t *s, tern_comm_t *comm, coll_nodes_t *nd);

/* Over list[0..n) (comm ranks), me = my index. */
void coll_list_barrier(tern_sched_t *s, const int *list, int n, int me);
void coll_list_bcast(tern_sched_t *s, const int *list, int n, int me, int root, void *buf,
                     size_t bytes);
/* Commutative ops: the result lands in *result_p at the root (a schedule
 * buffer, or sbuf itself when n == 1). */
tern_status_t coll_list_reduce(tern_sched_t *s, const int *list, int n, int me, int root,
                               const void *sbuf, const tern_coll_args_t *a,
                               const void **result_p);

#endif

/* The rank mapping of the topology constructors' reorder (MPI_Cart_create,
 * MPI_Graph_create) and of MPI_Cart_map/MPI_Graph_map: the graph's
 * vertices are placed on the nodes of the communicator's first n ranks,
 * as many on each node as it has of those ranks, so that few edges cross
 * nodes. */
#ifndef TERN_CORE_TOPO_MAP_H
#define TERN_CORE_TOPO_MAP_H

#include "core/comm/comm.h"

/* The graph of n vertices as adjacency lists: vertex v's neighbours are
 * adj[idx[v]..idx[v+1]) (idx has n + 1 entries; directions, repeats and
 * self-loops allowed). */
typedef struct {
    int n;
    const int *idx;
    const int *adj;
} tern_topo_graph_t;

/* *newrank: the vertex c's rank takes (MPI_UNDEFINED for ranks >= n). The
 * same answer on every rank (from the node map alone). Identity when the n
 * ranks share one node, the graph is larger than TOPO_MAP_MAX vertices, or
 * a greedy partition by graph growing (each node's share grown from its
 * lowest free vertex, adding the free vertex with the most edges into the
 * share less those out of it) does not cut fewer edges between nodes than
 * the ranks' own order. */
tern_status_t tern_topo_map(const tern_comm_t *c, const tern_topo_graph_t *g, int *newrank);

/* Edges of g (each direction counted once) whose ends are on different
 * nodes when vertex v runs on c's rank rank_of[v] (NULL: rank v). For
 * tests and the mapping's own comparison. */
long tern_topo_map_cut(const tern_comm_t *c, const tern_topo_graph_t *g, const int *rank_of);

/* The Cartesian grid's graph (its 2 * ndims neighbours per vertex, none
 * beyond a non-periodic edge); *idx_p and *adj_p are malloc'd. */
tern_status_t tern_topo_cart_graph(int ndims, const int *dims, const int *periods, int n,
                                   int **idx_p, int **adj_p);

/* tern_topo_map of MPI_Graph_create's graph (index, edges as MPI has
 * them) and of a Cartesian grid of n vertices. */
tern_status_t tern_topo_graph_map(const tern_comm_t *c, int nnodes, const int *index,
                                  const int *edges, int *newrank);
tern_status_t tern_topo_cart_map(const tern_comm_t *c, int ndims, const int *dims,
                                 const int *periods, int n, int *newrank);

#endif

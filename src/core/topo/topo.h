/* Process topologies (MPI-4.1 chapter 8): the virtual topology a
 * communicator carries (Cartesian, graph or distributed graph), stored with
 * it (comm->topo), copied by MPI_Comm_dup and freed with it. topo.c holds
 * the storage and the queries, topo_create.c the constructors (new
 * communicators), dims_create.c MPI_Dims_create. Arguments not checked by
 * the MPI layer are checked here; errors name the argument. */
#ifndef TERN_CORE_TOPO_TOPO_H
#define TERN_CORE_TOPO_TOPO_H

#include "base/status.h"
#include "core/comm/comm.h"

typedef struct tern_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* Cartesian: dims, periods (0/1), this rank's coords, ndims each. */
    int ndims;
    int *dims, *periods, *coords;
    /* Graph: index[nnodes] and edges[index[nnodes - 1]], as given. */
    int nnodes;
    int *index, *edges;
    /* Neighbours in the order of the neighbourhood collectives: for a
     * Cartesian topology 2 * ndims each (per dimension the -1 then the +1
     * neighbour, MPI_PROC_NULL off a non-periodic edge); a graph's
     * neighbours of this rank both ways; a distributed graph's sources and
     * destinations with their weights (weighted 0: MPI_UNWEIGHTED). */
    int indegree, outdegree;
    int *sources, *destinations;
    int *sourceweights, *destweights;
    int weighted;
} tern_topo_t;

void tern_topo_free(tern_topo_t *t);
/* A deep copy for MPI_Comm_dup (NULL for NULL). */
tern_status_t tern_topo_copy(const tern_topo_t *t, tern_topo_t **copy_p);
/* Gives communicator c the topology t, owned from now on (with the copy
 * and free above as its topo_ops), in place of one a duplicate copied. */
void tern_topo_attach(tern_comm_t *c, tern_topo_t *t);

/* TERN_ERR_DIMS unless ndims >= 0 and dims[0..ndims) are positive;
 * TERN_ERR_ARG when their product exceeds limit (the communicator's size:
 * MPI_Cart_create and MPI_Cart_map); else the product in *n. */
tern_status_t tern_topo_grid_size(int ndims, const int *dims, int limit, long long *n);
/* Row-major coordinates of rank r in a Cartesian topology t. */
void tern_topo_cart_coords(const tern_topo_t *t, int r, int *coords);

/* MPI_Topo_test: MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or MPI_UNDEFINED. */
tern_status_t tern_topo_test(const tern_comm_t *c, int *status);

/* MPI_Dims_create (dims_create.c). */
tern_status_t tern_dims_create(int nnodes, int ndims, int *dims);

/* Cartesian queries; TERN_ERR_TOPOLOGY unless c has a Cartesian topology. */
tern_status_t tern_cartdim_get(const tern_comm_t *c, int *ndims);
tern_status_t tern_cart_get(const tern_comm_t *c, int maxdims, int *dims, int *periods,
                            int *coords);
tern_status_t tern_cart_rank(const tern_comm_t *c, const int *coords, int *rank);
tern_status_t tern_cart_coords(const tern_comm_t *c, int rank, int maxdims, int *coords);
tern_status_t tern_cart_shift(const tern_comm_t *c, int direction, int disp, int *source,
                              int *dest);
/* MPI_Cart_map and MPI_Graph_map: the rank the constructor with reorder
 * gives (topo_map.h). */
tern_status_t tern_cart_map(const tern_comm_t *c, int ndims, const int *dims, const int *periods,
                            int *newrank);
tern_status_t tern_graph_map(const tern_comm_t *c, int nnodes, const int *index, const int *edges,
                             int *newrank);

/* Graph queries; TERN_ERR_TOPOLOGY unless c has a graph topology. */
tern_status_t tern_graphdims_get(const tern_comm_t *c, int *nnodes, int *nedges);
tern_status_t tern_graph_get(const tern_comm_t *c, int maxindex, int maxedges, int *index,
                             int *edges);
tern_status_t tern_graph_neighbors_count(const tern_comm_t *c, int rank, int *n);
tern_status_t tern_graph_neighbors(const tern_comm_t *c, int rank, int maxneighbors,
                                   int *neighbors);

/* Distributed graph queries; TERN_ERR_TOPOLOGY unless c has a distributed
 * graph topology. */
tern_status_t tern_dist_graph_neighbors_count(const tern_comm_t *c, int *indegree,
                                              int *outdegree, int *weighted);
tern_status_t tern_dist_graph_neighbors(const tern_comm_t *c, int maxindegree, int *sources,
                                        int *sourceweights, int maxoutdegree, int *destinations,
                                        int *destweights);

/* Constructors (topo_create.c): collective over c; *newcomm is
 * MPI_COMM_NULL on ranks left out. reorder: Cartesian and graph
 * topologies place their vertices by topo_map.h; distributed graphs keep
 * the ranks' order. */
tern_status_t tern_cart_create(tern_comm_t *c, int ndims, const int *dims, const int *periods,
                               int reorder, MPI_Comm *newcomm);
tern_status_t tern_cart_sub(tern_comm_t *c, const int *remain_dims, MPI_Comm *newcomm);
tern_status_t tern_graph_create(tern_comm_t *c, int nnodes, const int *index, const int *edges,
                                int reorder, MPI_Comm *newcomm);
tern_status_t tern_dist_graph_create_adjacent(tern_comm_t *c, int indegree, const int *sources,
                                              const int *sourceweights, int outdegree,
                                              const int *destinations, const int *destweights,
                                              int reorder, MPI_Comm *newcomm);
tern_status_t tern_dist_graph_create(tern_comm_t *c, int n, const int *sources,
                                     const int *degrees, const int *destinations,
                                     const int *weights, int reorder, MPI_Comm *newcomm);

/* The neighbours of the neighbourhood collectives; TERN_ERR_TOPOLOGY (with
 * a detail) when c has no topology. */
tern_status_t tern_topo_neighbors(const tern_comm_t *c, const tern_topo_t **t_p);

#endif

/* Topology storage and queries (topo.h). */
#include "core/topo/topo.h"
#include "core/topo/topo_map.h"

#include <stdlib.h>
#include <string.h>

void tern_topo_free(tern_topo_t *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->destinations);
    free(t->sourceweights);
    free(t->destweights);
    free(t);
}

static int dup_ints(int **dst, const int *src, int n)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!*dst)
        return -1;
    if (n > 0)
        memcpy(*dst, src, (size_t)n * sizeof(int));
    return 0;
}

tern_status_t tern_topo_copy(const tern_topo_t *t, tern_topo_t **copy_p)
{
    *copy_p = NULL;
    if (!t)
        return TERN_OK;
    tern_topo_t *c = malloc(sizeof *c);
    if (!c)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the topology");
    *c = *t;
    int nedges = t->index && t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    int bad = dup_ints(&c->dims, t->dims, t->ndims) | dup_ints(&c->periods, t->periods, t->ndims) |
              dup_ints(&c->coords, t->coords, t->ndims) |
              dup_ints(&c->index, t->index, t->nnodes) | dup_ints(&c->edges, t->edges, nedges) |
              dup_ints(&c->sources, t->sources, t->indegree) |
              dup_ints(&c->destinations, t->destinations, t->outdegree) |
              dup_ints(&c->sourceweights, t->sourceweights, t->indegree) |
              dup_ints(&c->destweights, t->destweights, t->outdegree);
    if (bad) {
        tern_topo_free(c);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the topology");
    }
    *copy_p = c;
    return TERN_OK;
}

static const tern_comm_topo_ops_t topo_ops = {.copy = tern_topo_copy, .free = tern_topo_free};

void tern_topo_attach(tern_comm_t *c, tern_topo_t *t)
{
    tern_comm_set_topo(c, t, &topo_ops);
}

tern_status_t tern_topo_test(const tern_comm_t *c, int *status)
{
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return TERN_OK;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case MPI_CART: return "a Cartesian";
    case MPI_GRAPH: return "a graph";
    case MPI_DIST_GRAPH: return "a distributed graph";
    default: return "no";
    }
}

/* c's topology if it is of this kind; else TERN_ERR_TOPOLOGY. */
static tern_status_t need(const tern_comm_t *c, int kind, const tern_topo_t **t_p)
{
    const tern_topo_t *t = c->is_inter ? NULL : c->topo;
    if (!t || t->kind != kind)
        return tern_status_detail(TERN_ERR_TOPOLOGY,
                                  "communicator 0x%x has %s topology, not %s one",
                                  (unsigned)c->handle, kind_name(t ? t->kind : 0),
                                  kind_name(kind));
    *t_p = t;
    return TERN_OK;
}

tern_status_t tern_topo_neighbors(const tern_comm_t *c, const tern_topo_t **t_p)
{
    const tern_topo_t *t = c->is_inter ? NULL : c->topo;
    if (!t)
        return tern_status_detail(TERN_ERR_TOPOLOGY,
                                  "communicator 0x%x has no topology (neighbourhood collectives "
                                  "need a Cartesian, graph or distributed graph one)",
                                  (unsigned)c->handle);
    *t_p = t;
    return TERN_OK;
}

/* ---- Cartesian ----------------------------------------------------------- */

tern_status_t tern_cartdim_get(const tern_comm_t *c, int *ndims)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_CART, &t);
    if (st == TERN_OK)
        *ndims = t->ndims;
    return st;
}

static tern_status_t need_maxdims(const tern_topo_t *t, int maxdims)
{
    if (maxdims < t->ndims)
        return tern_status_detail(TERN_ERR_ARG,
                                  "maxdims=%d is less than the topology's %d dimensions", maxdims,
                                  t->ndims);
    return TERN_OK;
}

tern_status_t tern_cart_get(const tern_comm_t *c, int maxdims, int *dims, int *periods,
                            int *coords)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_CART, &t);
    if (st == TERN_OK)
        st = need_maxdims(t, maxdims);
    if (st != TERN_OK)
        return st;
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return TERN_OK;
}

/* Row-major rank of coords (already in range). */
static int rank_of(const tern_topo_t *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++)
        r = r * t->dims[i] + coords[i];
    return r;
}

tern_status_t tern_cart_rank(const tern_comm_t *c, const int *coords, int *rank)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_CART, &t);
    if (st != TERN_OK)
        return st;
    if (t->ndims > 0 && !coords)
        return tern_status_detail(TERN_ERR_ARG, "coords is NULL");
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return tern_status_detail(TERN_ERR_ARG,
                                          "coords[%d]=%d is out of range (dimension %d has "
                                          "size %d and is not periodic)",
                                          i, x, i, d);
            x = ((x % d) + d) % d;
        }
        r = r * d + x;
    }
    *rank = r;
    return TERN_OK;
}

/* Coordinates of rank r (row-major) into out. */
void tern_topo_cart_coords(const tern_topo_t *t, int r, int *out)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        out[i] = r % t->dims[i];
        r /= t->dims[i];
    }
}

tern_status_t tern_cart_coords(const tern_comm_t *c, int rank, int maxdims, int *coords)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_CART, &t);
    if (st == TERN_OK)
        st = need_maxdims(t, maxdims);
    if (st != TERN_OK)
        return st;
    if (rank < 0 || rank >= c->size)
        return tern_status_detail(TERN_ERR_RANK,
                                  "rank=%d is out of range (the communicator has %d ranks)", rank,
                                  c->size);
    tern_topo_cart_coords(t, rank, coords);
    return TERN_OK;
}

tern_status_t tern_cart_shift(const tern_comm_t *c, int direction, int disp, int *source,
                              int *dest)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_CART, &t);
    if (st != TERN_OK)
        return st;
    if (direction < 0 || direction >= t->ndims)
        return tern_status_detail(TERN_ERR_ARG,
                                  "direction=%d is out of range (the topology has %d dimensions)",
                                  direction, t->ndims);
    int d = t->dims[direction], me = t->coords[direction];
    int *co = malloc((size_t)t->ndims * sizeof *co);
    if (!co)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for coordinates");
    int ends[2] = {me - disp, me + disp}, out[2];
    for (int k = 0; k < 2; k++) {
        long long x = ends[k];
        if (t->periods[direction])
            x = ((x % d) + d) % d;
        if (x < 0 || x >= d) {
            out[k] = MPI_PROC_NULL;
            continue;
        }
        memcpy(co, t->coords, (size_t)t->ndims * sizeof *co);
        co[direction] = (int)x;
        out[k] = rank_of(t, co);
    }
    free(co);
    *source = out[0];
    *dest = out[1];
    return TERN_OK;
}

tern_status_t tern_topo_grid_size(int ndims, const int *dims, int limit, long long *n)
{
    if (ndims < 0)
        return tern_status_detail(TERN_ERR_DIMS, "ndims=%d is negative", ndims);
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return tern_status_detail(TERN_ERR_DIMS, "dims[%d]=%d is not positive", i, dims[i]);
        if (p <= limit)
            p *= dims[i];
    }
    if (p > limit)
        return tern_status_detail(TERN_ERR_ARG,
                                  "the grid has more points than the communicator's %d ranks",
                                  limit);
    *n = p;
    return TERN_OK;
}

tern_status_t tern_cart_map(const tern_comm_t *c, int ndims, const int *dims, const int *periods,
                            int *newrank)
{
    long long n;
    tern_status_t st = tern_topo_grid_size(ndims, dims, c->size, &n);
    if (st != TERN_OK)
        return st;
    /* The rank MPI_Cart_create with reorder gives. */
    return tern_topo_cart_map(c, ndims, dims, periods, (int)n, newrank);
}

/* ---- Graph --------------------------------------------------------------- */

tern_status_t tern_graph_map(const tern_comm_t *c, int nnodes, const int *index, const int *edges,
                             int *newrank)
{
    if (nnodes <= 0 || nnodes > c->size)
        return tern_status_detail(TERN_ERR_ARG, "nnodes=%d is not in 1..%d (the communicator's size)", nnodes,
                                  c->size);
    /* The rank MPI_Graph_create with reorder gives. */
    return tern_topo_graph_map(c, nnodes, index, edges, newrank);
}

tern_status_t tern_graphdims_get(const tern_comm_t *c, int *nnodes, int *nedges)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_GRAPH, &t);
    if (st == TERN_OK) {
        *nnodes = t->nnodes;
        *nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    }
    return st;
}

tern_status_t tern_graph_get(const tern_comm_t *c, int maxindex, int maxedges, int *index,
                             int *edges)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_GRAPH, &t);
    if (st != TERN_OK)
        return st;
    int nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    if (maxindex < t->nnodes || maxedges < nedges)
        return tern_status_detail(TERN_ERR_ARG,
                                  "maxindex=%d, maxedges=%d are less than the graph's %d nodes "
                                  "and %d edges",
                                  maxindex, maxedges, t->nnodes, nedges);
    if (t->nnodes)
        memcpy(index, t->index, (size_t)t->nnodes * sizeof *index);
    if (nedges)
        memcpy(edges, t->edges, (size_t)nedges * sizeof *edges);
    return TERN_OK;
}

static tern_status_t graph_node(const tern_comm_t *c, int rank, const tern_topo_t **t_p, int *lo,
                                int *hi)
{
    tern_status_t st = need(c, MPI_GRAPH, t_p);
    if (st != TERN_OK)
        return st;
    if (rank < 0 || rank >= (*t_p)->nnodes)
        return tern_status_detail(TERN_ERR_RANK,
                                  "rank=%d is out of range (the graph has %d nodes)", rank,
                                  (*t_p)->nnodes);
    *lo = rank ? (*t_p)->index[rank - 1] : 0;
    *hi = (*t_p)->index[rank];
    return TERN_OK;
}

tern_status_t tern_graph_neighbors_count(const tern_comm_t *c, int rank, int *n)
{
    const tern_topo_t *t = NULL;
    int lo = 0, hi = 0;
    tern_status_t st = graph_node(c, rank, &t, &lo, &hi);
    if (st == TERN_OK)
        *n = hi - lo;
    return st;
}

tern_status_t tern_graph_neighbors(const tern_comm_t *c, int rank, int maxneighbors,
                                   int *neighbors)
{
    const tern_topo_t *t = NULL;
    int lo = 0, hi = 0;
    tern_status_t st = graph_node(c, rank, &t, &lo, &hi);
    if (st != TERN_OK)
        return st;
    if (maxneighbors < hi - lo)
        return tern_status_detail(TERN_ERR_ARG, "maxneighbors=%d is less than the %d neighbours",
                                  maxneighbors, hi - lo);
    if (hi > lo)
        memcpy(neighbors, t->edges + lo, (size_t)(hi - lo) * sizeof *neighbors);
    return TERN_OK;
}

/* ---- Distributed graph --------------------------------------------------- */

tern_status_t tern_dist_graph_neighbors_count(const tern_comm_t *c, int *indegree,
                                              int *outdegree, int *weighted)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_DIST_GRAPH, &t);
    if (st == TERN_OK) {
        *indegree = t->indegree;
        *outdegree = t->outdegree;
        *weighted = t->weighted;
    }
    return st;
}

static int is_weight_array(const int *w)
{
    return w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
}

tern_status_t tern_dist_graph_neighbors(const tern_comm_t *c, int maxindegree, int *sources,
                                        int *sourceweights, int maxoutdegree, int *destinations,
                                        int *destweights)
{
    const tern_topo_t *t = NULL;
    tern_status_t st = need(c, MPI_DIST_GRAPH, &t);
    if (st != TERN_OK)
        return st;
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree)
        return tern_status_detail(TERN_ERR_ARG,
                                  "maxindegree=%d, maxoutdegree=%d are less than the %d sources "
                                  "and %d destinations",
                                  maxindegree, maxoutdegree, t->indegree, t->outdegree);
    for (int i = 0; i < t->indegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && is_weight_array(sourceweights))
            sourceweights[i] = t->sourceweights[i];
    }
    for (int i = 0; i < t->outdegree; i++) {
        destinations[i] = t->destinations[i];
        if (t->weighted && is_weight_array(destweights))
            destweights[i] = t->destweights[i];
    }
    return TERN_OK;
}

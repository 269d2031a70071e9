/* The topology constructors (topo.h): a new communicator (split off or
 * duplicated from the old one, so it has its own context) carrying the
 * topology. With reorder, Cartesian and graph topologies place their
 * vertices on the nodes so that few edges cross them (topo_map.h);
 * distributed graphs keep the ranks' order. */
#include "core/comm/comm_create.h"
#include "core/comm/comm_exchange.h"
#include "core/topo/topo.h"
#include "core/topo/topo_map.h"

#include <stdlib.h>
#include <string.h>

static tern_status_t need_intra(const tern_comm_t *c)
{
    if (c->is_inter)
        return tern_status_detail(TERN_ERR_COMM,
                                  "communicator 0x%x is an intercommunicator (topologies need an "
                                  "intracommunicator)",
                                  (unsigned)c->handle);
    return TERN_OK;
}

static tern_status_t no_memory(tern_topo_t *t)
{
    tern_topo_free(t);
    return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the topology");
}

static int *ints(int n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(int)); }

/* The communicator of the first n ranks of c (NULL on the others), this
 * rank at rank key in it, with topology t attached (t is consumed).
 * local: this rank's failure while building t; it still takes part in the
 * creation (the others wait for it), then frees the result and returns
 * local. */
static tern_status_t attach(tern_comm_t *c, int n, int dup, tern_topo_t *t, tern_status_t local,
                            int key, MPI_Comm *newcomm)
{
    tern_comm_t *nc = NULL;
    tern_status_t st = dup ? tern_comm_dup(c, &nc)
                           : tern_comm_split(c, c->rank < n ? 0 : MPI_UNDEFINED, key, &nc);
    if (st == TERN_OK && local != TERN_OK) {
        if (nc)
            tern_comm_destroy(nc);
        st = local;
    }
    if (st != TERN_OK || !nc) {
        tern_topo_free(t);
        *newcomm = MPI_COMM_NULL;
        return st;
    }
    tern_topo_attach(nc, t);
    *newcomm = nc->handle;
    return TERN_OK;
}

/* ---- Cartesian ----------------------------------------------------------- */

/* A Cartesian topology for rank r of the grid, its neighbours included. */
static tern_status_t cart_topo(int ndims, const int *dims, const int *periods, int r,
                               tern_topo_t **t_p)
{
    tern_topo_t *t = calloc(1, sizeof *t);
    if (!t)
        return no_memory(NULL);
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = ints(ndims);
    t->periods = ints(ndims);
    t->coords = ints(ndims);
    t->sources = ints(2 * ndims);
    t->destinations = ints(2 * ndims);
    int *co = ints(ndims);
    if (!t->dims || !t->periods || !t->coords || !t->sources || !t->destinations || !co) {
        free(co);
        return no_memory(t);
    }
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods && periods[i] ? 1 : 0;
    }
    tern_topo_cart_coords(t, r, t->coords);
    t->indegree = t->outdegree = 2 * ndims;
    for (int d = 0; d < ndims; d++)
        for (int k = 0; k < 2; k++) {
            memcpy(co, t->coords, (size_t)ndims * sizeof *co);
            int x = co[d] + (k ? 1 : -1);
            if (t->periods[d])
                x = (x + dims[d]) % dims[d];
            int nb = MPI_PROC_NULL;
            if (x >= 0 && x < dims[d]) {
                co[d] = x;
                nb = 0;
                for (int i = 0; i < ndims; i++)
                    nb = nb * dims[i] + co[i];
            }
            t->sources[2 * d + k] = t->destinations[2 * d + k] = nb;
        }
    free(co);
    *t_p = t;
    return TERN_OK;
}

tern_status_t tern_cart_create(tern_comm_t *c, int ndims, const int *dims, const int *periods,
                               int reorder, MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    long long n;
    tern_status_t st = need_intra(c);
    if (st == TERN_OK)
        st = tern_topo_grid_size(ndims, dims, c->size, &n);
    if (st != TERN_OK)
        return st;
    int me = c->rank; /* the grid vertex this rank takes */
    if (reorder && c->rank < n)
        st = tern_topo_cart_map(c, ndims, dims, periods, (int)n, &me);
    tern_topo_t *t = NULL;
    if (st == TERN_OK && c->rank < n)
        st = cart_topo(ndims, dims, periods, me, &t);
    return attach(c, (int)n, 0, t, st, me, newcomm);
}

tern_status_t tern_cart_sub(tern_comm_t *c, const int *remain_dims, MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    const tern_topo_t *t = c->is_inter ? NULL : c->topo;
    if (!t || t->kind != MPI_CART)
        return tern_status_detail(TERN_ERR_TOPOLOGY,
                                  "communicator 0x%x has no Cartesian topology",
                                  (unsigned)c->handle);
    if (t->ndims > 0 && !remain_dims)
        return tern_status_detail(TERN_ERR_ARG, "remain_dims is NULL");
    int kept = 0;
    int *dims = ints(t->ndims), *periods = ints(t->ndims);
    if (!dims || !periods) {
        free(dims);
        free(periods);
        return no_memory(NULL);
    }
    /* The ranks that share the dropped coordinates form one communicator;
     * row-major order over the kept ones is their order in c. */
    long long color = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            dims[kept] = t->dims[i];
            periods[kept++] = t->periods[i];
        } else {
            color = color * t->dims[i] + t->coords[i];
        }
    }
    tern_status_t st = TERN_OK;
    tern_comm_t *nc = NULL;
    tern_topo_t *nt = NULL;
    if (kept == 0) {
        /* Zero dimensions: one process, as MPI_Cart_create with ndims 0
         * (MPICH does the same). */
        color = c->rank == 0 ? 0 : MPI_UNDEFINED;
    }
    st = tern_comm_split(c, (int)color, c->rank, &nc);
    if (st == TERN_OK && nc) {
        st = cart_topo(kept, dims, periods, nc->rank, &nt);
        if (st == TERN_OK)
            tern_topo_attach(nc, nt);
        else
            tern_comm_destroy(nc);
    }
    free(dims);
    free(periods);
    if (st == TERN_OK && nc)
        *newcomm = nc->handle;
    return st;
}

/* ---- Graph --------------------------------------------------------------- */

tern_status_t tern_graph_create(tern_comm_t *c, int nnodes, const int *index, const int *edges,
                                int reorder, MPI_Comm *newcomm)
{
    *newcomm = MPI_COMM_NULL;
    tern_status_t st = need_intra(c);
    if (st != TERN_OK)
        return st;
    if (nnodes < 0 || nnodes > c->size)
        return tern_status_detail(TERN_ERR_ARG, "nnodes=%d is not in 0..%d (the communicator's "
                                  "size)", nnodes, c->size);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return tern_status_detail(TERN_ERR_ARG,
                                      "index[%d]=%d is less than the index before it (%d)", i,
                                      index[i], i ? index[i - 1] : 0);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return tern_status_detail(TERN_ERR_ARG, "edges is NULL");
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return tern_status_detail(TERN_ERR_ARG,
                                      "edges[%d]=%d is not a node of the graph (0..%d)", i,
                                      edges[i], nnodes - 1);
    int me = c->rank; /* the graph vertex this rank takes */
    if (reorder && c->rank < nnodes)
        st = tern_topo_graph_map(c, nnodes, index, edges, &me);
    tern_topo_t *t = NULL;
    if (st == TERN_OK && c->rank < nnodes && !(t = calloc(1, sizeof *t)))
        st = no_memory(NULL);
    if (t) {
        t->kind = MPI_GRAPH;
        t->nnodes = nnodes;
        int lo = me ? index[me - 1] : 0, deg = index[me] - lo;
        t->index = ints(nnodes);
        t->edges = ints(nedges);
        t->sources = ints(deg);
        t->destinations = ints(deg);
        if (!t->index || !t->edges || !t->sources || !t->destinations) {
            st = no_memory(t);
            t = NULL;
        }
    }
    if (t) {
        int lo = me ? index[me - 1] : 0, deg = index[me] - lo;
        memcpy(t->index, index, (size_t)nnodes * sizeof(int));
        if (nedges)
            memcpy(t->edges, edges, (size_t)nedges * sizeof(int));
        t->indegree = t->outdegree = deg;
        if (deg) {
            memcpy(t->sources, edges + lo, (size_t)deg * sizeof(int));
            memcpy(t->destinations, edges + lo, (size_t)deg * sizeof(int));
        }
    }
    return attach(c, nnodes, 0, t, st, me, newcomm);
}

/* ---- Distributed graph --------------------------------------------------- */

static tern_status_t check_ranks(const tern_comm_t *c, const char *name, const int *r, int n)
{
    if (n > 0 && !r)
        return tern_status_detail(TERN_ERR_ARG, "%s is NULL", name);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= c->size)
            return tern_status_detail(TERN_ERR_RANK,
                                      "%s[%d]=%d is out of range (the communicator has %d ranks)",
                                      name, i, r[i], c->size);
    return TERN_OK;
}

/* MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY (n == 0 only) or n weights >= 0. */
static tern_status_t check_weights(const char *name, const int *w, int n)
{
    if (w == MPI_UNWEIGHTED)
        return TERN_OK;
    if (w == MPI_WEIGHTS_EMPTY) {
        if (n > 0)
            return tern_status_detail(TERN_ERR_ARG,
                                      "%s is MPI_WEIGHTS_EMPTY but there are %d edges", name, n);
        return TERN_OK;
    }
    if (n > 0 && !w)
        return tern_status_detail(TERN_ERR_ARG, "%s is NULL", name);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return tern_status_detail(TERN_ERR_ARG, "%s[%d]=%d is negative", name, i, w[i]);
    return TERN_OK;
}

static tern_status_t need_degree(const char *name, int n)
{
    if (n < 0)
        return tern_status_detail(TERN_ERR_ARG, "%s=%d is negative", name, n);
    return TERN_OK;
}

static tern_topo_t *dist_topo(int indegree, int outdegree, int weighted)
{
    tern_topo_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_DIST_GRAPH;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = ints(indegree);
    t->destinations = ints(outdegree);
    t->sourceweights = ints(indegree);
    t->destweights = ints(outdegree);
    if (!t->sources || !t->destinations || !t->sourceweights || !t->destweights) {
        tern_topo_free(t);
        return NULL;
    }
    return t;
}

tern_status_t tern_dist_graph_create_adjacent(tern_comm_t *c, int indegree, const int *sources,
                                              const int *sourceweights, int outdegree,
                                              const int *destinations, const int *destweights,
                                              int reorder, MPI_Comm *newcomm)
{
    (void)reorder;
    *newcomm = MPI_COMM_NULL;
    tern_status_t st;
    if ((st = need_intra(c)) || (st = need_degree("indegree", indegree)) ||
        (st = need_degree("outdegree", outdegree)) ||
        (st = check_ranks(c, "sources", sources, indegree)) ||
        (st = check_ranks(c, "destinations", destinations, outdegree)) ||
        (st = check_weights("sourceweights", sourceweights, indegree)) ||
        (st = check_weights("destweights", destweights, outdegree)))
        return st;
    if ((sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
        return tern_status_detail(TERN_ERR_ARG,
                                  "sourceweights and destweights must both be MPI_UNWEIGHTED or "
                                  "neither");
    int weighted = sourceweights != MPI_UNWEIGHTED;
    tern_topo_t *t = dist_topo(indegree, outdegree, weighted);
    for (int i = 0; t && i < indegree; i++) {
        t->sources[i] = sources[i];
        t->sourceweights[i] = weighted ? sourceweights[i] : 1;
    }
    for (int i = 0; t && i < outdegree; i++) {
        t->destinations[i] = destinations[i];
        t->destweights[i] = weighted ? destweights[i] : 1;
    }
    return attach(c, c->size, 1, t, t ? TERN_OK : no_memory(NULL), c->rank, newcomm);
}

/* One edge as exchanged by MPI_Dist_graph_create. */
typedef struct {
    int src, dst, weight;
} edge_t;

tern_status_t tern_dist_graph_create(tern_comm_t *c, int n, const int *sources,
                                     const int *degrees, const int *destinations,
                                     const int *weights, int reorder, MPI_Comm *newcomm)
{
    (void)reorder;
    *newcomm = MPI_COMM_NULL;
    tern_status_t st;
    if ((st = need_intra(c)) || (st = need_degree("n", n)) ||
        (st = check_ranks(c, "sources", sources, n)))
        return st;
    if (n > 0 && !degrees)
        return tern_status_detail(TERN_ERR_ARG, "degrees is NULL");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return tern_status_detail(TERN_ERR_ARG, "degrees[%d]=%d is negative", i, degrees[i]);
        total += degrees[i];
    }
    if (total > (1 << 24))
        return tern_status_detail(TERN_ERR_ARG, "%lld edges on one process is more than %d",
                                  total, 1 << 24);
    if ((st = check_ranks(c, "destinations", destinations, (int)total)) ||
        (st = check_weights("weights", weights, (int)total)))
        return st;
    /* Everyone learns every edge (sizes first, then the edges padded to
     * the largest count): enough for the graphs of stencils and tests. */
    int mine[2] = {(int)total, weights != MPI_UNWEIGHTED};
    int *sizes = malloc(2 * (size_t)c->size * sizeof *sizes);
    if (!sizes)
        return no_memory(NULL);
    tern_xchg_t x = tern_xchg_over(c, TERN_XTAG_DIST_GRAPH);
    st = tern_xchg_allgather(&x, mine, sizes, sizeof mine);
    int most = 0, weighted = 0;
    for (int i = 0; st == TERN_OK && i < c->size; i++) {
        most = sizes[2 * i] > most ? sizes[2 * i] : most;
        weighted |= sizes[2 * i + 1];
    }
    edge_t *my_edges = calloc((size_t)(most ? most : 1), sizeof *my_edges);
    edge_t *all = calloc((size_t)(most ? most : 1) * (size_t)c->size, sizeof *all);
    if (st == TERN_OK && (!my_edges || !all))
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for the edge lists");
    for (int i = 0, k = 0; st == TERN_OK && i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++)
            my_edges[k] = (edge_t){sources[i], destinations[k],
                                   weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY
                                       ? 1
                                       : weights[k]};
    /* A failure above is local: the others still exchange with us. */
    if (most > 0) {
        tern_status_t xs = tern_xchg_allgather(&x, my_edges, all, (size_t)most * sizeof *all);
        st = st == TERN_OK ? xs : st;
    }
    int indegree = 0, outdegree = 0;
    for (int p = 0; st == TERN_OK && p < c->size; p++)
        for (int k = 0; k < sizes[2 * p]; k++) {
            const edge_t *e = &all[(size_t)p * (size_t)most + (size_t)k];
            indegree += e->dst == c->rank;
            outdegree += e->src == c->rank;
        }
    tern_topo_t *t = st == TERN_OK ? dist_topo(indegree, outdegree, weighted) : NULL;
    if (st == TERN_OK && !t)
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for the topology");
    /* Neighbours in the order of (contributing rank, its edge order), the
     * same order on both ends of every edge. */
    int in = 0, out = 0;
    for (int p = 0; st == TERN_OK && p < c->size; p++)
        for (int k = 0; k < sizes[2 * p]; k++) {
            const edge_t *e = &all[(size_t)p * (size_t)most + (size_t)k];
            if (e->dst == c->rank) {
                t->sources[in] = e->src;
                t->sourceweights[in++] = e->weight;
            }
            if (e->src == c->rank) {
                t->destinations[out] = e->dst;
                t->destweights[out++] = e->weight;
            }
        }
    free(sizes);
    free(my_edges);
    free(all);
    return attach(c, c->size, 1, t, st, c->rank, newcomm);
}

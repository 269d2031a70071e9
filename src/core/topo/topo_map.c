/* The rank mapping of reorder=true (topo_map.h). */
#include "core/topo/topo_map.h"
#include "core/runtime/runtime.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Larger graphs keep the ranks' order: the greedy pass is O(n^2). */
#define TOPO_MAP_MAX 4096

static int node_of(const tern_comm_t *c, int r)
{
    return tern_rt.node_of_rank[c->world_ranks ? c->world_ranks[r] : r];
}

long tern_topo_map_cut(const tern_comm_t *c, const tern_topo_graph_t *g, const int *rank_of)
{
    long cut = 0;
    for (int v = 0; v < g->n; v++)
        for (int k = g->idx[v]; k < g->idx[v + 1]; k++) {
            int u = g->adj[k];
            if (u < 0 || u >= g->n || u == v)
                continue;
            cut += node_of(c, rank_of ? rank_of[v] : v) != node_of(c, rank_of ? rank_of[u] : u);
        }
    return cut;
}

/* Symmetric adjacency (an edge either way links both ends), no
 * self-loops, as lists in *idx_p and *adj_p. */
static int symmetric(const tern_topo_graph_t *g, int **idx_p, int **adj_p)
{
    int n = g->n;
    int *deg = calloc((size_t)n + 1, sizeof *deg);
    if (!deg)
        return -1;
    for (int v = 0; v < n; v++)
        for (int k = g->idx[v]; k < g->idx[v + 1]; k++) {
            int u = g->adj[k];
            if (u >= 0 && u < n && u != v) {
                deg[v]++;
                deg[u]++;
            }
        }
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    int *adj = malloc(((size_t)(g->idx[n] > 0 ? g->idx[n] : 1)) * 2 * sizeof *adj);
    if (!idx || !adj) {
        free(deg);
        free(idx);
        free(adj);
        return -1;
    }
    idx[0] = 0;
    for (int v = 0; v < n; v++)
        idx[v + 1] = idx[v] + deg[v];
    memset(deg, 0, (size_t)n * sizeof *deg);
    for (int v = 0; v < n; v++)
        for (int k = g->idx[v]; k < g->idx[v + 1]; k++) {
            int u = g->adj[k];
            if (u >= 0 && u < n && u != v) {
                adj[idx[v] + deg[v]++] = u;
                adj[idx[u] + deg[u]++] = v;
            }
        }
    free(deg);
    *idx_p = idx;
    *adj_p = adj;
    return 0;
}

/* part[v]: the share (0..nparts-1) of vertex v, grown share by share. */
static void grow(int n, const int *idx, const int *adj, const int *cap, int nparts, int *part)
{
    for (int v = 0; v < n; v++)
        part[v] = -1;
    for (int p = 0; p < nparts; p++) {
        for (int filled = 0; filled < cap[p]; filled++) {
            int best = -1, best_gain = INT_MIN, best_in = 0;
            for (int v = 0; v < n; v++) {
                if (part[v] >= 0)
                    continue;
                int in = 0, deg = idx[v + 1] - idx[v];
                for (int k = idx[v]; k < idx[v + 1]; k++)
                    in += part[adj[k]] == p;
                /* Touching the share first; then in - out, lowest vertex on ties. */
                int gain = 2 * in - deg;
                if (best < 0 || (in > 0) > (best_in > 0) ||
                    ((in > 0) == (best_in > 0) && gain > best_gain)) {
                    best = v;
                    best_gain = gain;
                    best_in = in;
                }
            }
            part[best] = p;
        }
    }
}

tern_status_t tern_topo_map(const tern_comm_t *c, const tern_topo_graph_t *g, int *newrank)
{
    int n = g->n;
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    if (n <= 1 || n > TOPO_MAP_MAX || c->rank >= n)
        return TERN_OK;
    /* The nodes of ranks 0..n-1, in order of first appearance, and how
     * many of those ranks each has. */
    int *node_idx = malloc((size_t)n * sizeof *node_idx), *cap = calloc((size_t)n, sizeof *cap);
    int *nodes = malloc((size_t)n * sizeof *nodes), *part = malloc((size_t)n * sizeof *part);
    int *rank_of = malloc((size_t)n * sizeof *rank_of), *idx = NULL, *adj = NULL;
    if (!node_idx || !cap || !nodes || !part || !rank_of || symmetric(g, &idx, &adj) != 0) {
        free(node_idx), free(cap), free(nodes), free(part), free(rank_of);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the rank mapping");
    }
    int nparts = 0;
    for (int r = 0; r < n; r++) {
        int nd = node_of(c, r), p = 0;
        while (p < nparts && nodes[p] != nd)
            p++;
        if (p == nparts)
            nodes[nparts++] = nd;
        node_idx[r] = p;
        cap[p]++;
    }
    if (nparts > 1) {
        grow(n, idx, adj, cap, nparts, part);
        /* Each node's vertices, in order, go to its ranks, in order. */
        int *next = calloc((size_t)nparts, sizeof *next);
        if (next) {
            for (int v = 0; v < n; v++) {
                int p = part[v], r = next[p];
                while (node_idx[r] != p)
                    r++;
                rank_of[v] = r;
                next[p] = r + 1;
            }
            tern_topo_graph_t sg = {n, idx, adj};
            if (tern_topo_map_cut(c, &sg, rank_of) < tern_topo_map_cut(c, &sg, NULL))
                for (int v = 0; v < n; v++)
                    if (rank_of[v] == c->rank)
                        *newrank = v;
            free(next);
        }
    }
    free(node_idx), free(cap), free(nodes), free(part), free(rank_of), free(idx), free(adj);
    return TERN_OK;
}

tern_status_t tern_topo_cart_graph(int ndims, const int *dims, const int *periods, int n,
                                   int **idx_p, int **adj_p)
{
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    int *adj = malloc(((size_t)n * 2 * (size_t)(ndims ? ndims : 1)) * sizeof *adj);
    int *co = malloc((size_t)(ndims ? ndims : 1) * sizeof *co);
    if (!idx || !adj || !co) {
        free(idx), free(adj), free(co);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the grid's graph");
    }
    int k = 0;
    for (int v = 0; v < n; v++) {
        idx[v] = k;
        for (int i = ndims - 1, rest = v; i >= 0; i--) {
            co[i] = rest % dims[i];
            rest /= dims[i];
        }
        for (int d = 0; d < ndims; d++)
            for (int s = -1; s <= 1; s += 2) {
                int x = co[d] + s;
                if (periods && periods[d])
                    x = (x + dims[d]) % dims[d];
                if (x < 0 || x >= dims[d])
                    continue;
                int nb = 0;
                for (int i = 0; i < ndims; i++)
                    nb = nb * dims[i] + (i == d ? x : co[i]);
                adj[k++] = nb;
            }
    }
    idx[n] = k;
    free(co);
    *idx_p = idx;
    *adj_p = adj;
    return TERN_OK;
}

tern_status_t tern_topo_graph_map(const tern_comm_t *c, int nnodes, const int *index,
                                  const int *edges, int *newrank)
{
    int *idx = malloc(((size_t)nnodes + 1) * sizeof *idx);
    if (!idx)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the graph");
    idx[0] = 0;
    for (int v = 0; v < nnodes; v++)
        idx[v + 1] = index[v];
    tern_topo_graph_t g = {nnodes, idx, edges};
    tern_status_t st = tern_topo_map(c, &g, newrank);
    free(idx);
    return st;
}

tern_status_t tern_topo_cart_map(const tern_comm_t *c, int ndims, const int *dims,
                                 const int *periods, int n, int *newrank)
{
    int *idx, *adj;
    tern_status_t st = tern_topo_cart_graph(ndims, dims, periods, n, &idx, &adj);
    if (st != TERN_OK)
        return st;
    tern_topo_graph_t g = {n, idx, adj};
    st = tern_topo_map(c, &g, newrank);
    free(idx);
    free(adj);
    return st;
}

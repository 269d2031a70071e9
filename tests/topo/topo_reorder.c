/* reorder=true for Cartesian and graph topologies: on one node the ranks
 * keep their order; across nodes (tests/topo/reorder_multihost.sh runs 8
 * ranks on two stand-in hosts, 4 each) fewer neighbour pairs cross nodes
 * than in the ranks' own order, MPI_Cart_map/MPI_Graph_map answer the
 * ranks the constructors gave, and messages over the reordered
 * communicators reach the right neighbours. */
#include "../mpi/mtest.h"

static int *node_of; /* world rank -> the lowest world rank on its node */
static int n_nodes;

static void learn_nodes(void)
{
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int leader = mtest_rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared);
    MPI_Comm_free(&shared);
    node_of = malloc((size_t)mtest_size * sizeof *node_of);
    MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    n_nodes = 0;
    for (int r = 0; r < mtest_size; r++)
        n_nodes += node_of[r] == r;
}

/* world[v]: the world rank holding vertex (new rank) v of c. */
static int *world_of_vertices(MPI_Comm c, int n)
{
    int *world = malloc((size_t)n * sizeof *world);
    MPI_Allgather(&mtest_rank, 1, MPI_INT, world, 1, MPI_INT, c);
    return world;
}

/* Directed neighbour pairs of the 2-D grid (dims[0] x dims[1], not
 * periodic) whose ranks sit on different nodes. */
static int grid_cut(const int *world, const int *dims)
{
    int cut = 0;
    for (int i = 0; i < dims[0]; i++)
        for (int j = 0; j < dims[1]; j++) {
            int v = i * dims[1] + j;
            int nb[4] = {i > 0 ? v - dims[1] : -1, i + 1 < dims[0] ? v + dims[1] : -1,
                         j > 0 ? v - 1 : -1, j + 1 < dims[1] ? v + 1 : -1};
            for (int k = 0; k < 4; k++)
                cut += nb[k] >= 0 && node_of[world[v]] != node_of[world[nb[k]]];
        }
    return cut;
}

static MPI_Comm cart(int reorder, const int *dims)
{
    int periods[2] = {0, 0};
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &c));
    return c;
}

static void check_cart(void)
{
    int dims[2] = {0, 0};
    if (mtest_size == 8) { /* two rows of four: 2x2 blocks cut half as many pairs as rows */
        dims[0] = 2;
        dims[1] = 4;
    } else {
        MPI_Dims_create(mtest_size, 2, dims);
    }
    MPI_Comm plain = cart(0, dims), re = cart(1, dims);
    int n = dims[0] * dims[1];
    int *w0 = world_of_vertices(plain, n), *w1 = world_of_vertices(re, n);
    int cut0 = grid_cut(w0, dims), cut1 = grid_cut(w1, dims);
    CHECK(cut1 <= cut0, "reorder crosses nodes %d times, the ranks' order %d", cut1, cut0);
    if (n_nodes == 1)
        for (int v = 0; v < n; v++)
            CHECK_INT(w1[v], v, "one node: vertex keeps its rank");
    if (n_nodes == 2 && mtest_size == 8 && node_of[3] == 0 && node_of[4] == 4)
        CHECK(cut1 < cut0, "two hosts of 4: reorder cut %d, not below %d", cut1, cut0);
    int rank, mapped = -1;
    int periods[2] = {0, 0};
    MPI_Comm_rank(re, &rank);
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &mapped));
    CHECK_INT(mapped, rank, "MPI_Cart_map against MPI_Cart_create's rank");
    /* Halo values: each rank sends its grid coordinates to its four
     * neighbours (Cart_shift, Neighbor_alltoall) and checks what comes in. */
    int coords[2];
    MPI_Cart_coords(re, rank, 2, coords);
    int out[4][2], in[4][2];
    for (int k = 0; k < 4; k++) {
        out[k][0] = coords[0];
        out[k][1] = coords[1];
        in[k][0] = in[k][1] = -7;
    }
    CHECK_RC(MPI_Neighbor_alltoall(out, 2, MPI_INT, in, 2, MPI_INT, re));
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 2; s++) {
            int nc[2] = {coords[0], coords[1]};
            nc[d] += s ? 1 : -1;
            int *got = in[2 * d + s];
            if (nc[d] < 0 || nc[d] >= dims[d])
                CHECK(got[0] == -7, "no neighbour beyond the edge, got %d,%d", got[0], got[1]);
            else
                CHECK(got[0] == nc[0] && got[1] == nc[1], "dim %d side %d: got %d,%d, expected %d,%d",
                      d, s, got[0], got[1], nc[0], nc[1]);
            int src, dst, v = -1;
            MPI_Cart_shift(re, d, 1, &src, &dst);
            int peer = s ? dst : src, other = s ? src : dst;
            CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, other, d, &v, 1, MPI_INT, peer, d, re,
                                  MPI_STATUS_IGNORE));
            if (peer != MPI_PROC_NULL) {
                int want;
                MPI_Cart_rank(re, nc, &want);
                CHECK_INT(v, want, "Sendrecv along Cart_shift");
            }
        }
    free(w0);
    free(w1);
    MPI_Comm_free(&plain);
    MPI_Comm_free(&re);
}

/* A graph pairing vertex v with v + n/2: within a node for the reordered
 * communicator when each node holds one of each pair. */
static void check_graph(void)
{
    int n = mtest_size, half = n / 2;
    if (half == 0)
        return;
    int *index = malloc((size_t)n * sizeof *index), *edges = malloc((size_t)n * sizeof *edges);
    for (int v = 0; v < n; v++) {
        index[v] = v + 1;
        edges[v] = v < half ? v + half : (v - half < half ? v - half : v);
    }
    MPI_Comm plain, re;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &plain));
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &re));
    int *w0 = world_of_vertices(plain, n), *w1 = world_of_vertices(re, n);
    int cut0 = 0, cut1 = 0;
    for (int v = 0; v < n; v++) {
        cut0 += node_of[w0[v]] != node_of[w0[edges[v]]];
        cut1 += node_of[w1[v]] != node_of[w1[edges[v]]];
    }
    CHECK(cut1 <= cut0, "graph: reorder cut %d, the ranks' order %d", cut1, cut0);
    if (n_nodes == 1)
        for (int v = 0; v < n; v++)
            CHECK_INT(w1[v], v, "one node: graph vertex keeps its rank");
    if (n_nodes == 2 && mtest_size == 8 && node_of[3] == 0 && node_of[4] == 4)
        CHECK_INT(cut1, 0, "two hosts of 4: every pair within a node");
    int rank, mapped = -1;
    MPI_Comm_rank(re, &rank);
    CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &mapped));
    CHECK_INT(mapped, rank, "MPI_Graph_map against MPI_Graph_create's rank");
    /* The neighbour sends its vertex number. */
    int nb = -1, deg = 0;
    MPI_Graph_neighbors_count(re, rank, &deg);
    CHECK_INT(deg, 1, "one neighbour");
    MPI_Graph_neighbors(re, rank, 1, &nb);
    CHECK_INT(nb, edges[rank], "the neighbour is the graph's");
    int got = -1;
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, re));
    CHECK_INT(got, edges[rank], "Neighbor_allgather from the graph neighbour");
    free(w0);
    free(w1);
    free(index);
    free(edges);
    MPI_Comm_free(&plain);
    MPI_Comm_free(&re);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    learn_nodes();
    if (mtest_rank == 0 && getenv("TOPO_REORDER_NODES"))
        CHECK_INT(n_nodes, atoi(getenv("TOPO_REORDER_NODES")), "nodes in the job");
    mtest_begin("cart");
    check_cart();
    mtest_end();
    mtest_begin("graph");
    check_graph();
    mtest_end();
    free(node_of);
    return mtest_finalize();
}

/* Graph and distributed graph topologies: MPI_Graph_create (ranks left
 * out), MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors(_count),
 * MPI_Graph_map; MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create
 * with weights, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY, the neighbour lists
 * and weights MPI_Dist_graph_neighbors(_count) return, MPI_Topo_test,
 * MPI_Comm_dup; the error classes of bad arguments. */
#include "../mpi/mtest.h"

static void graph(void)
{
    int p = mtest_size, me = mtest_rank;
    mtest_begin("Graph_create and queries");
    /* A star over max(p - 1, 1) nodes: node 0 linked with every other. */
    int nn = p > 1 ? p - 1 : 1, index[64], edges[128], ne = 0;
    for (int i = 0; i < nn; i++) {
        if (i == 0)
            for (int j = 1; j < nn; j++)
                edges[ne++] = j;
        else
            edges[ne++] = 0;
        index[i] = ne;
    }
    MPI_Comm g;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &g));
    if (me >= nn) {
        CHECK(g == MPI_COMM_NULL, "rank outside the graph got a communicator");
    } else {
        int kind, a, b, gi[64], ge[128], nb[64];
        CHECK_RC(MPI_Topo_test(g, &kind));
        CHECK_INT(kind, MPI_GRAPH, "Topo_test");
        CHECK_RC(MPI_Graphdims_get(g, &a, &b));
        CHECK(a == nn && b == ne, "Graphdims_get %d %d", a, b);
        CHECK_RC(MPI_Graph_get(g, 64, 128, gi, ge));
        CHECK(!memcmp(gi, index, (size_t)nn * sizeof(int)) &&
                  !memcmp(ge, edges, (size_t)ne * sizeof(int)),
              "Graph_get");
        for (int r = 0; r < nn; r++) {
            CHECK_RC(MPI_Graph_neighbors_count(g, r, &a));
            CHECK_INT(a, r == 0 ? nn - 1 : 1, "Graph_neighbors_count");
            CHECK_RC(MPI_Graph_neighbors(g, r, 64, nb));
            for (int k = 0; k < a; k++)
                CHECK_INT(nb[k], r == 0 ? k + 1 : 0, "Graph_neighbors");
        }
        MPI_Comm dup;
        CHECK_RC(MPI_Comm_dup(g, &dup));
        CHECK_RC(MPI_Graphdims_get(dup, &a, &b));
        CHECK(a == nn && b == ne, "dup's Graphdims_get");
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        CHECK_CLASS(MPI_Graph_neighbors_count(g, nn, &a), MPI_ERR_RANK, "rank past the nodes");
        CHECK_CLASS(MPI_Graph_get(g, nn - 1, 128, gi, ge), MPI_ERR_ARG, "maxindex too small");
        if (nn > 1)
            CHECK_CLASS(MPI_Graph_neighbors(g, 0, 0, nb), MPI_ERR_ARG, "maxneighbors too small");
        CHECK_CLASS(MPI_Cartdim_get(g, &a), MPI_ERR_TOPOLOGY, "Cartdim_get on a graph");
        CHECK_CLASS(MPI_Dist_graph_neighbors_count(g, &a, &b, &kind), MPI_ERR_TOPOLOGY,
                    "Dist_graph_neighbors_count on a graph");
        MPI_Comm_free(&dup);
        MPI_Comm_free(&g);
    }
    int newrank;
    CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, nn, index, edges, &newrank));
    CHECK_INT(newrank, me < nn ? me : MPI_UNDEFINED, "Graph_map");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad_edges[1] = {nn}, one[1] = {1}, down[2] = {1, 0};
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 1, one, bad_edges, 0, &g), MPI_ERR_ARG,
                "edge to a node past the graph");
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, p + 1, index, edges, 0, &g), MPI_ERR_ARG,
                "more nodes than ranks");
    if (p >= 2)
        CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, down, edges, 0, &g), MPI_ERR_ARG,
                    "decreasing index");
    int a, b;
    CHECK_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &a, &b), MPI_ERR_TOPOLOGY,
                "Graphdims_get without a topology");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static void dist_graph(void)
{
    int p = mtest_size, me = mtest_rank;
    mtest_begin("Dist_graph_create(_adjacent) and queries");
    /* Adjacent, weighted: I send to me+1 (weight 10 + me), receive from
     * me-1 (weight 10 + me-1). */
    int src[1] = {(me + p - 1) % p}, sw[1] = {10 + src[0]};
    int dst[1] = {(me + 1) % p}, dw[1] = {10 + me};
    MPI_Comm g;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 1, dst, dw, MPI_INFO_NULL,
                                            0, &g));
    int kind, in, out, w, s[8], ws[8], d[8], wd[8];
    CHECK_RC(MPI_Topo_test(g, &kind));
    CHECK_INT(kind, MPI_DIST_GRAPH, "Topo_test");
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 1 && out == 1 && w == 1, "counts %d %d weighted %d", in, out, w);
    CHECK_RC(MPI_Dist_graph_neighbors(g, 8, s, ws, 8, d, wd));
    CHECK(s[0] == src[0] && ws[0] == sw[0] && d[0] == dst[0] && wd[0] == dw[0],
          "adjacent lists and weights");
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(g, &dup));
    CHECK_RC(MPI_Dist_graph_neighbors(dup, 8, s, ws, 8, d, wd));
    CHECK(s[0] == src[0] && wd[0] == dw[0], "dup's lists");
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Dist_graph_neighbors(g, 0, s, ws, 8, d, wd), MPI_ERR_ARG,
                "maxindegree too small");
    CHECK_CLASS(MPI_Graph_neighbors_count(g, 0, &in), MPI_ERR_TOPOLOGY,
                "Graph_neighbors_count on a dist graph");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&g);

    /* Dist_graph_create: rank 0 gives every edge r -> r+1 with weight r;
     * the others give none (MPI_WEIGHTS_EMPTY). */
    int n = me == 0 ? p : 0, srcs[64], degs[64], dsts[64], wts[64];
    for (int r = 0; r < n; r++) {
        srcs[r] = r;
        degs[r] = 1;
        dsts[r] = (r + 1) % p;
        wts[r] = r;
    }
    CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts,
                                   me == 0 ? wts : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1, &g));
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 1 && out == 1 && w, "create: counts %d %d weighted %d", in, out, w);
    CHECK_RC(MPI_Dist_graph_neighbors(g, 8, s, ws, 8, d, wd));
    CHECK(s[0] == (me + p - 1) % p && ws[0] == (me + p - 1) % p, "create: source %d weight %d",
          s[0], ws[0]);
    CHECK(d[0] == (me + 1) % p && wd[0] == me, "create: dest %d weight %d", d[0], wd[0]);
    MPI_Comm_free(&g);

    /* Unweighted, every rank giving its own two out-edges. */
    int mine[1] = {me}, deg2[1] = {2}, two[2] = {(me + 1) % p, (me + 2) % p};
    CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, mine, deg2, two, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g));
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 2 && out == 2 && w == 0, "unweighted: counts %d %d weighted %d", in, out, w);
    CHECK_RC(MPI_Dist_graph_neighbors(g, 8, s, MPI_UNWEIGHTED, 8, d, MPI_UNWEIGHTED));
    /* Sources in the order of the ranks that gave the edges. */
    int a = (me + p - 2) % p, b = (me + p - 1) % p;
    int lo = a < b ? a : b, hi = a < b ? b : a;
    CHECK(s[0] == lo && s[1] == hi, "unweighted sources %d %d", s[0], s[1]);
    CHECK(d[0] == two[0] && d[1] == two[1], "unweighted destinations");
    MPI_Comm_free(&g);

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int badr[1] = {p}, negw[1] = {-1}, negd[1] = {-1};
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, badr, MPI_UNWEIGHTED, 0, dst,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK, "source out of range");
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, negw, 1, dst, dw,
                                               MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "negative weight");
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_WEIGHTS_EMPTY, 1, dst,
                                               dw, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "MPI_WEIGHTS_EMPTY with edges");
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, src, MPI_UNWEIGHTED, 1, dst,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "negative indegree");
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, mine, negd, two, MPI_UNWEIGHTED,
                                      MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "negative degree");
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, mine, deg2, two, MPI_UNWEIGHTED,
                                      MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "negative n");
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &w), MPI_ERR_TOPOLOGY,
                "Dist_graph_neighbors_count without a topology");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    graph();
    dist_graph();
    return mtest_finalize();
}

/* Neighbourhood collectives: MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w) in every form (blocking, nonblocking,
 * persistent started twice, large-count) on Cartesian (periodic and not,
 * dimensions of size 1 and 2 where a neighbour appears twice), graph and
 * distributed graph communicators (self loops, repeated edges), checked
 * block by block against values computed from the neighbour lists; a
 * non-contiguous send type; a 2-D periodic halo exchange with
 * MPI_Neighbor_alltoallv against the same exchange with MPI_Sendrecv; and
 * the error classes (MPI_ERR_TOPOLOGY without a topology, MPI_ERR_COUNT,
 * MPI_ERR_BUFFER for MPI_IN_PLACE, MPI_ERR_ARG for NULL arrays). */
#include "../mpi/mtest.h"

#define MAXN 64   /* neighbours */
#define SLOT 4    /* ints per block slot in the v/w layouts (counts <= 3) */
#define SENT (-7) /* untouched receive memory */

typedef struct {
    MPI_Comm comm;
    int cart;
    int indeg, outdeg;
    int src[MAXN], dst[MAXN];
    /* all_dst[q * MAXN + j]: rank q's destination j (all_out[q] of them). */
    int *all_dst, *all_out;
    /* For my in-slot i: the block index of sources[i]'s send that lands
     * there, or -1 for MPI_PROC_NULL. */
    int peer_block[MAXN];
} nbrs_t;

static void nbrs_init(nbrs_t *n, MPI_Comm comm)
{
    int kind, me, p;
    memset(n, 0, sizeof *n);
    n->comm = comm;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    MPI_Topo_test(comm, &kind);
    if (kind == MPI_CART) {
        int nd;
        n->cart = 1;
        MPI_Cartdim_get(comm, &nd);
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(comm, d, 1, &n->src[2 * d], &n->src[2 * d + 1]);
            n->dst[2 * d] = n->src[2 * d];
            n->dst[2 * d + 1] = n->src[2 * d + 1];
        }
        n->indeg = n->outdeg = 2 * nd;
    } else if (kind == MPI_GRAPH) {
        MPI_Graph_neighbors_count(comm, me, &n->indeg);
        n->outdeg = n->indeg;
        MPI_Graph_neighbors(comm, me, MAXN, n->src);
        memcpy(n->dst, n->src, sizeof n->src);
    } else {
        int w;
        MPI_Dist_graph_neighbors_count(comm, &n->indeg, &n->outdeg, &w);
        MPI_Dist_graph_neighbors(comm, MAXN, n->src, MPI_UNWEIGHTED, MAXN, n->dst,
                                 MPI_UNWEIGHTED);
    }
    n->all_dst = malloc((size_t)p * MAXN * sizeof(int));
    n->all_out = malloc((size_t)p * sizeof(int));
    MPI_Allgather(n->dst, MAXN, MPI_INT, n->all_dst, MAXN, MPI_INT, comm);
    MPI_Allgather(&n->outdeg, 1, MPI_INT, n->all_out, 1, MPI_INT, comm);
    for (int i = 0; i < n->indeg; i++) {
        int s = n->src[i];
        n->peer_block[i] = -1;
        if (s == MPI_PROC_NULL)
            continue;
        if (n->cart) {
            /* What s sent towards +1 arrives in my -1 slot and back. */
            n->peer_block[i] = i ^ 1;
            continue;
        }
        /* The k-th edge from s in my list is the k-th edge to me in s's. */
        int k = 0;
        for (int j = 0; j < i; j++)
            k += n->src[j] == s;
        for (int j = 0; j < n->all_out[s]; j++)
            if (n->all_dst[s * MAXN + j] == me && k-- == 0) {
                n->peer_block[i] = j;
                break;
            }
    }
}

static void nbrs_free(nbrs_t *n)
{
    free(n->all_dst);
    free(n->all_out);
}

static int val(int rank, int block, int e) { return rank * 10000 + block * 100 + e; }
/* Counts of the v and w forms: block j of rank s. */
static int vcount(int s, int j) { return 1 + (s + j) % 3; }

enum { BLOCKING, NONBLOCKING, PERSISTENT, LARGE, LARGE_NONBLOCKING, LARGE_PERSISTENT, N_FORMS };
static const char *form_name[N_FORMS] = {"blocking", "nonblocking", "persistent", "_c",
                                         "_c nonblocking", "_c persistent"};

/* Waits for (and for persistent requests starts twice) a request. */
static void finish(int form, MPI_Request *req, void (*refill)(void *), void *arg)
{
    if (form == BLOCKING || form == LARGE)
        return;
    if (form == PERSISTENT || form == LARGE_PERSISTENT) {
        CHECK_RC(MPI_Start(req));
        CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
        refill(arg);
        CHECK_RC(MPI_Start(req));
        CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Request_free(req));
        return;
    }
    CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
}

typedef struct {
    int *rbuf;
    size_t n;
} refill_t;
static void clear_rbuf(void *arg)
{
    refill_t *r = arg;
    for (size_t i = 0; i < r->n; i++)
        r->rbuf[i] = SENT;
}

static void check_allgather(const nbrs_t *nb, int form)
{
    int me, sbuf[2], rbuf[2 * MAXN];
    MPI_Comm_rank(nb->comm, &me);
    for (int e = 0; e < 2; e++)
        sbuf[e] = val(me, 0, e);
    refill_t rf = {rbuf, 2 * MAXN};
    clear_rbuf(&rf);
    MPI_Request req;
    MPI_Count cc = 2;
    switch (form) {
    case BLOCKING: CHECK_RC(MPI_Neighbor_allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, nb->comm)); break;
    case NONBLOCKING: CHECK_RC(MPI_Ineighbor_allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, nb->comm, &req)); break;
    case PERSISTENT: CHECK_RC(MPI_Neighbor_allgather_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, nb->comm, MPI_INFO_NULL, &req)); break;
    case LARGE: CHECK_RC(MPI_Neighbor_allgather_c(sbuf, cc, MPI_INT, rbuf, cc, MPI_INT, nb->comm)); break;
    case LARGE_NONBLOCKING: CHECK_RC(MPI_Ineighbor_allgather_c(sbuf, cc, MPI_INT, rbuf, cc, MPI_INT, nb->comm, &req)); break;
    default: CHECK_RC(MPI_Neighbor_allgather_init_c(sbuf, cc, MPI_INT, rbuf, cc, MPI_INT, nb->comm, MPI_INFO_NULL, &req)); break;
    }
    finish(form, &req, clear_rbuf, &rf);
    for (int i = 0; i < nb->indeg; i++)
        for (int e = 0; e < 2; e++) {
            int s = nb->src[i];
            int want = s == MPI_PROC_NULL ? SENT : val(s, 0, e);
            CHECK(rbuf[2 * i + e] == want, "allgather %s slot %d elem %d: got %d want %d",
                  form_name[form], i, e, rbuf[2 * i + e], want);
        }
}

static void check_allgatherv(const nbrs_t *nb, int form)
{
    int me, sbuf[3], rbuf[SLOT * MAXN], rc[MAXN], rd[MAXN];
    MPI_Count rcc[MAXN];
    MPI_Aint rdc[MAXN];
    MPI_Comm_rank(nb->comm, &me);
    int scount = vcount(me, 0);
    for (int e = 0; e < 3; e++)
        sbuf[e] = val(me, 0, e);
    for (int i = 0; i < nb->indeg; i++) {
        int s = nb->src[i];
        rc[i] = s == MPI_PROC_NULL ? 0 : vcount(s, 0);
        rd[i] = SLOT * (nb->indeg - 1 - i); /* reversed layout */
        rcc[i] = rc[i];
        rdc[i] = rd[i];
    }
    refill_t rf = {rbuf, SLOT * MAXN};
    clear_rbuf(&rf);
    MPI_Request req;
    switch (form) {
    case BLOCKING: CHECK_RC(MPI_Neighbor_allgatherv(sbuf, scount, MPI_INT, rbuf, rc, rd, MPI_INT, nb->comm)); break;
    case NONBLOCKING: CHECK_RC(MPI_Ineighbor_allgatherv(sbuf, scount, MPI_INT, rbuf, rc, rd, MPI_INT, nb->comm, &req)); break;
    case PERSISTENT: CHECK_RC(MPI_Neighbor_allgatherv_init(sbuf, scount, MPI_INT, rbuf, rc, rd, MPI_INT, nb->comm, MPI_INFO_NULL, &req)); break;
    case LARGE: CHECK_RC(MPI_Neighbor_allgatherv_c(sbuf, scount, MPI_INT, rbuf, rcc, rdc, MPI_INT, nb->comm)); break;
    case LARGE_NONBLOCKING: CHECK_RC(MPI_Ineighbor_allgatherv_c(sbuf, scount, MPI_INT, rbuf, rcc, rdc, MPI_INT, nb->comm, &req)); break;
    default: CHECK_RC(MPI_Neighbor_allgatherv_init_c(sbuf, scount, MPI_INT, rbuf, rcc, rdc, MPI_INT, nb->comm, MPI_INFO_NULL, &req)); break;
    }
    finish(form, &req, clear_rbuf, &rf);
    for (int i = 0; i < nb->indeg; i++)
        for (int e = 0; e < SLOT; e++) {
            int s = nb->src[i];
            int want = s == MPI_PROC_NULL || e >= rc[i] ? SENT : val(s, 0, e);
            CHECK(rbuf[rd[i] + e] == want, "allgatherv %s slot %d elem %d: got %d want %d",
                  form_name[form], i, e, rbuf[rd[i] + e], want);
        }
}

static void check_alltoall(const nbrs_t *nb, int form)
{
    int me, sbuf[2 * MAXN], rbuf[2 * MAXN];
    MPI_Comm_rank(nb->comm, &me);
    for (int j = 0; j < nb->outdeg; j++)
        for (int e = 0; e < 2; e++)
            sbuf[2 * j + e] = val(me, j, e);
    refill_t rf = {rbuf, 2 * MAXN};
    clear_rbuf(&rf);
    MPI_Request req;
    MPI_Count cc = 2;
    switch (form) {
    case BLOCKING: CHECK_RC(MPI_Neighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, nb->comm)); break;
    case NONBLOCKING: CHECK_RC(MPI_Ineighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, nb->comm, &req)); break;
    case PERSISTENT: CHECK_RC(MPI_Neighbor_alltoall_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, nb->comm, MPI_INFO_NULL, &req)); break;
    case LARGE: CHECK_RC(MPI_Neighbor_alltoall_c(sbuf, cc, MPI_INT, rbuf, cc, MPI_INT, nb->comm)); break;
    case LARGE_NONBLOCKING: CHECK_RC(MPI_Ineighbor_alltoall_c(sbuf, cc, MPI_INT, rbuf, cc, MPI_INT, nb->comm, &req)); break;
    default: CHECK_RC(MPI_Neighbor_alltoall_init_c(sbuf, cc, MPI_INT, rbuf, cc, MPI_INT, nb->comm, MPI_INFO_NULL, &req)); break;
    }
    finish(form, &req, clear_rbuf, &rf);
    for (int i = 0; i < nb->indeg; i++)
        for (int e = 0; e < 2; e++) {
            int s = nb->src[i];
            int want = s == MPI_PROC_NULL ? SENT : val(s, nb->peer_block[i], e);
            CHECK(rbuf[2 * i + e] == want, "alltoall %s slot %d elem %d: got %d want %d",
                  form_name[form], i, e, rbuf[2 * i + e], want);
        }
}

/* alltoallv (w = 0) and alltoallw (w = 1: MPI_INT blocks at byte
 * displacements) share their layout. */
static void check_alltoallvw(const nbrs_t *nb, int form, int w)
{
    int me, sbuf[SLOT * MAXN], rbuf[SLOT * MAXN];
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
    MPI_Aint sdb[MAXN], rdb[MAXN];
    MPI_Count scc[MAXN], rcc[MAXN];
    MPI_Aint sdc[MAXN], rdc[MAXN];
    MPI_Datatype types[MAXN];
    MPI_Comm_rank(nb->comm, &me);
    for (int j = 0; j < MAXN; j++)
        types[j] = MPI_INT;
    for (int j = 0; j < nb->outdeg; j++) {
        sc[j] = vcount(me, j);
        sd[j] = SLOT * j;
        for (int e = 0; e < sc[j]; e++)
            sbuf[sd[j] + e] = val(me, j, e);
    }
    for (int i = 0; i < nb->indeg; i++) {
        int s = nb->src[i];
        rc[i] = s == MPI_PROC_NULL ? 0 : vcount(s, nb->peer_block[i]);
        rd[i] = SLOT * (nb->indeg - 1 - i);
    }
    for (int j = 0; j < MAXN; j++) {
        scc[j] = sc[j];
        rcc[j] = rc[j];
        sdc[j] = sd[j];
        rdc[j] = rd[j];
        sdb[j] = (MPI_Aint)sd[j] * (MPI_Aint)sizeof(int);
        rdb[j] = (MPI_Aint)rd[j] * (MPI_Aint)sizeof(int);
    }
    refill_t rf = {rbuf, SLOT * MAXN};
    clear_rbuf(&rf);
    MPI_Request req;
    MPI_Comm c = nb->comm;
    if (!w) {
        switch (form) {
        case BLOCKING: CHECK_RC(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c)); break;
        case NONBLOCKING: CHECK_RC(MPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c, &req)); break;
        case PERSISTENT: CHECK_RC(MPI_Neighbor_alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c, MPI_INFO_NULL, &req)); break;
        case LARGE: CHECK_RC(MPI_Neighbor_alltoallv_c(sbuf, scc, sdc, MPI_INT, rbuf, rcc, rdc, MPI_INT, c)); break;
        case LARGE_NONBLOCKING: CHECK_RC(MPI_Ineighbor_alltoallv_c(sbuf, scc, sdc, MPI_INT, rbuf, rcc, rdc, MPI_INT, c, &req)); break;
        default: CHECK_RC(MPI_Neighbor_alltoallv_init_c(sbuf, scc, sdc, MPI_INT, rbuf, rcc, rdc, MPI_INT, c, MPI_INFO_NULL, &req)); break;
        }
    } else {
        switch (form) {
        case BLOCKING: CHECK_RC(MPI_Neighbor_alltoallw(sbuf, sc, sdb, types, rbuf, rc, rdb, types, c)); break;
        case NONBLOCKING: CHECK_RC(MPI_Ineighbor_alltoallw(sbuf, sc, sdb, types, rbuf, rc, rdb, types, c, &req)); break;
        case PERSISTENT: CHECK_RC(MPI_Neighbor_alltoallw_init(sbuf, sc, sdb, types, rbuf, rc, rdb, types, c, MPI_INFO_NULL, &req)); break;
        case LARGE: CHECK_RC(MPI_Neighbor_alltoallw_c(sbuf, scc, sdb, types, rbuf, rcc, rdb, types, c)); break;
        case LARGE_NONBLOCKING: CHECK_RC(MPI_Ineighbor_alltoallw_c(sbuf, scc, sdb, types, rbuf, rcc, rdb, types, c, &req)); break;
        default: CHECK_RC(MPI_Neighbor_alltoallw_init_c(sbuf, scc, sdb, types, rbuf, rcc, rdb, types, c, MPI_INFO_NULL, &req)); break;
        }
    }
    finish(form, &req, clear_rbuf, &rf);
    for (int i = 0; i < nb->indeg; i++)
        for (int e = 0; e < SLOT; e++) {
            int s = nb->src[i];
            int want = s == MPI_PROC_NULL || e >= rc[i] ? SENT : val(s, nb->peer_block[i], e);
            CHECK(rbuf[rd[i] + e] == want, "alltoall%c %s slot %d elem %d: got %d want %d",
                  w ? 'w' : 'v', form_name[form], i, e, rbuf[rd[i] + e], want);
        }
}

/* A strided send type (elements 0 and 2 of each 4-int block) and a
 * strided receive type. */
static void check_noncontig(const nbrs_t *nb)
{
    int me, sbuf[4 * MAXN], rbuf[4 * MAXN];
    MPI_Datatype vec, rvec;
    MPI_Comm_rank(nb->comm, &me);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 4 * (MPI_Aint)sizeof(int), &rvec);
    MPI_Type_commit(&rvec);
    for (int j = 0; j < 4 * nb->outdeg; j++)
        sbuf[j] = val(me, j / 4, j % 4);
    for (int i = 0; i < 4 * MAXN; i++)
        rbuf[i] = SENT;
    CHECK_RC(MPI_Neighbor_alltoall(sbuf, 1, rvec, rbuf, 1, rvec, nb->comm));
    for (int i = 0; i < nb->indeg; i++)
        for (int e = 0; e < 4; e++) {
            int s = nb->src[i];
            int want = s == MPI_PROC_NULL || e % 2 ? SENT : val(s, nb->peer_block[i], e);
            CHECK(rbuf[4 * i + e] == want, "strided alltoall slot %d elem %d: got %d want %d", i,
                  e, rbuf[4 * i + e], want);
        }
    MPI_Type_free(&rvec);
    MPI_Type_free(&vec);
}

static void check_all(MPI_Comm comm, const char *name)
{
    nbrs_t nb;
    mtest_begin(name);
    nbrs_init(&nb, comm);
    for (int form = 0; form < N_FORMS; form++) {
        check_allgather(&nb, form);
        check_allgatherv(&nb, form);
        check_alltoall(&nb, form);
        check_alltoallvw(&nb, form, 0);
        check_alltoallvw(&nb, form, 1);
    }
    check_noncontig(&nb);
    nbrs_free(&nb);
    mtest_end();
}

static void cart_case(int ndims, const int *dims, const int *periods, const char *name)
{
    MPI_Comm cart;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart));
    if (cart != MPI_COMM_NULL) {
        check_all(cart, name);
        MPI_Comm_free(&cart);
    } else {
        /* Ranks outside the grid still meet in mtest_end's barrier. */
        mtest_begin(name);
        mtest_end();
    }
}

/* 2-D periodic halo exchange of a local nx x ny block with one ghost layer
 * in each direction: Neighbor_alltoallv over subarray-free counts (rows
 * and columns packed by hand) against MPI_Sendrecv with MPI_Cart_shift. */
static void halo_exchange(void)
{
    int p = mtest_size, dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Comm cart;
    enum { NX = 3, NY = 5 };
    mtest_begin("halo exchange, 2-D periodic, Neighbor_alltoallv vs Sendrecv");
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int me;
    MPI_Comm_rank(cart, &me);
    /* Edges: dimension 0 exchanges rows of NY, dimension 1 columns of NX.
     * Send block 2d goes to the -1 neighbour, 2d + 1 to the +1 one. */
    int sbuf[2 * NY + 2 * NX], rbuf[2 * NY + 2 * NX], ref[2 * NY + 2 * NX];
    int counts[4] = {NY, NY, NX, NX}, displs[4] = {0, NY, 2 * NY, 2 * NY + NX};
    for (int k = 0; k < 2 * NY + 2 * NX; k++) {
        sbuf[k] = me * 1000 + k;
        rbuf[k] = ref[k] = SENT;
    }
    CHECK_RC(MPI_Neighbor_alltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT,
                                    cart));
    for (int d = 0; d < 2; d++) {
        int lo, hi;
        MPI_Cart_shift(cart, d, 1, &lo, &hi);
        /* Towards -1: my block 2d lands in lo's "from +1" slot 2d + 1. */
        MPI_Sendrecv(sbuf + displs[2 * d], counts[2 * d], MPI_INT, lo, d,
                     ref + displs[2 * d + 1], counts[2 * d + 1], MPI_INT, hi, d, cart,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(sbuf + displs[2 * d + 1], counts[2 * d + 1], MPI_INT, hi, 10 + d,
                     ref + displs[2 * d], counts[2 * d], MPI_INT, lo, 10 + d, cart,
                     MPI_STATUS_IGNORE);
    }
    for (int k = 0; k < 2 * NY + 2 * NX; k++)
        CHECK(rbuf[k] == ref[k], "halo element %d: neighbour collective %d, Sendrecv %d", k,
              rbuf[k], ref[k]);
    MPI_Comm_free(&cart);
    mtest_end();
}

static void errors(void)
{
    int buf[4] = {0}, counts[1] = {1}, displs[1] = {0};
    MPI_Request req;
    mtest_begin("errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Neighbor_allgather(buf, 1, MPI_INT, buf + 1, 1, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_TOPOLOGY, "allgather without a topology");
    CHECK_CLASS(MPI_Ineighbor_alltoallv(buf, counts, displs, MPI_INT, buf + 1, counts, displs,
                                        MPI_INT, MPI_COMM_WORLD, &req),
                MPI_ERR_TOPOLOGY, "ialltoallv without a topology");
    int dims[1] = {mtest_size}, periods[1] = {1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Neighbor_alltoall(buf, -1, MPI_INT, buf + 2, 1, MPI_INT, cart), MPI_ERR_COUNT,
                "negative sendcount");
    CHECK_CLASS(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, cart),
                MPI_ERR_BUFFER, "MPI_IN_PLACE");
    CHECK_CLASS(MPI_Neighbor_alltoall(buf, 1, MPI_DATATYPE_NULL, buf + 2, 1, MPI_INT, cart),
                MPI_ERR_TYPE, "null datatype");
    CHECK_CLASS(MPI_Neighbor_alltoallv(buf, NULL, displs, MPI_INT, buf + 2, counts, displs,
                                       MPI_INT, cart),
                MPI_ERR_ARG, "NULL sendcounts");
    CHECK_CLASS(MPI_Neighbor_allgather(buf, 1, MPI_INT, buf, 1, MPI_INT, cart), MPI_ERR_BUFFER,
                "aliased buffers");
    MPI_Comm_free(&cart);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

/* MPI_Neighbor_alltoallw(_c) from MPI_BOTTOM with absolute byte
 * displacements, as MPI_Alltoallw allows (was refused: "buffer is NULL";
 * mpi4py's testNeighborAlltoallwBottom). A 1-D ring: both neighbours. */
static void check_alltoallw_bottom(void)
{
    int p = mtest_size, me, dims[1] = {p}, periods[1] = {1};
    MPI_Comm ring;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MPI_Comm_rank(ring, &me);
    int out[2] = {100 + me, 200 + me}, in[2] = {-1, -1}, counts[2] = {1, 1};
    MPI_Aint sd[2], rd[2];
    MPI_Count cc[2] = {1, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    for (int i = 0; i < 2; i++) {
        MPI_Get_address(&out[i], &sd[i]);
        MPI_Get_address(&in[i], &rd[i]);
    }
    int left = (me + p - 1) % p, right = (me + 1) % p;
    for (int large = 0; large < 2; large++) {
        in[0] = in[1] = -1;
        if (large)
            CHECK_RC(MPI_Neighbor_alltoallw_c(MPI_BOTTOM, cc, sd, types, MPI_BOTTOM, cc, rd, types,
                                              ring));
        else
            CHECK_RC(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, sd, types, MPI_BOTTOM, counts, rd,
                                            types, ring));
        /* Block 0 comes from the left neighbour's block 1 (sent right). */
        CHECK_INT(in[0], 200 + left, "alltoallw from MPI_BOTTOM: from the left");
        CHECK_INT(in[1], 100 + right, "alltoallw from MPI_BOTTOM: from the right");
    }
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size;
    /* 1-D rings: size 1 and 2 meet a neighbour twice. */
    int d1[1] = {p}, per1[1] = {1}, nper1[1] = {0};
    cart_case(1, d1, per1, "cart 1-D periodic");
    cart_case(1, d1, nper1, "cart 1-D open (MPI_PROC_NULL ends)");
    mtest_begin("neighbor_alltoallw_bottom");
    check_alltoallw_bottom();
    mtest_end();
    /* 2-D: (p/2 or 1) x 2 periodic, and a 1 x p grid with a periodic
     * dimension of size 1 (the process is its own neighbour twice). */
    int d2[2] = {p >= 2 ? p / 2 : 1, p >= 2 ? 2 : 1}, per2[2] = {1, 1}, mix[2] = {0, 1};
    cart_case(2, d2, per2, "cart 2-D periodic");
    cart_case(2, d2, mix, "cart 2-D open x periodic");
    int d3[3] = {1, p, 1}, per3[3] = {1, 0, 1};
    cart_case(3, d3, per3, "cart 3-D with periodic size-1 dimensions");
    /* Graph: a ring with a self loop and a repeated edge to the next rank
     * (index/edges for every node). */
    {
        int index[64], edges[256], ne = 0;
        for (int r = 0; r < p; r++) {
            int nx = (r + 1) % p, pv = (r + p - 1) % p;
            edges[ne++] = nx;
            edges[ne++] = pv;
            edges[ne++] = r;
            index[r] = ne;
        }
        MPI_Comm g;
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &g));
        check_all(g, "graph ring with self loops");
        MPI_Comm_free(&g);
    }
    /* Distributed graph, adjacent: destinations r+1, r+1 (twice), r+2 and
     * r itself; sources in rank order of the ones that name me. */
    {
        int dst[4], src[16], ns = 0, me = mtest_rank;
        dst[0] = (me + 1) % p;
        dst[1] = (me + 1) % p;
        dst[2] = (me + 2) % p;
        dst[3] = me;
        for (int q = 0; q < p; q++) {
            int qd[4] = {(q + 1) % p, (q + 1) % p, (q + 2) % p, q};
            for (int j = 0; j < 4; j++)
                if (qd[j] == me)
                    src[ns++] = q;
        }
        MPI_Comm g;
        CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ns, src, MPI_UNWEIGHTED, 4, dst,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
        check_all(g, "dist graph adjacent, repeated edges");
        MPI_Comm_free(&g);
        /* The same edges through MPI_Dist_graph_create, each rank giving
         * the edges of rank (me + 1) % p. */
        int o = (me + 1) % p, od[4] = {(o + 1) % p, (o + 1) % p, (o + 2) % p, o}, deg = 4;
        CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &o, &deg, od, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g));
        check_all(g, "dist graph create, repeated edges");
        MPI_Comm_free(&g);
    }
    halo_exchange();
    errors();
    return mtest_finalize();
}

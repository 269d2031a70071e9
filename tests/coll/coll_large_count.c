/* The large-count (_c) forms of the collectives: each collective in its
 * blocking, nonblocking and persistent _c form, with MPI_Count counts and
 * MPI_Aint displacements (the vector forms get a different count per rank
 * and displacements that leave gaps), against results computed here; then
 * MPI_Reduce_local_c, MPI_Op_create_c (its user function sees MPI_Count
 * lengths) and the errors of negative counts. */
#include "../mpi/mtest.h"

static int me, np;
static MPI_Request req;

enum { BLOCKING, NONBLOCKING, PERSISTENT, N_FORMS };
static const char *const form_name[] = {"blocking", "nonblocking", "persistent"};

/* Runs one form: B is the blocking call, I and P set req. */
#define RUN(form, B, I, P)                                                                         \
    do {                                                                                           \
        if ((form) == BLOCKING) {                                                                  \
            CHECK_RC(B);                                                                           \
        } else {                                                                                   \
            if ((form) == NONBLOCKING)                                                             \
                CHECK_RC(I);                                                                       \
            else {                                                                                 \
                CHECK_RC(P);                                                                       \
                CHECK_RC(MPI_Start(&req));                                                         \
            }                                                                                      \
            CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));                                           \
            if ((form) == PERSISTENT)                                                              \
                CHECK_RC(MPI_Request_free(&req));                                                  \
        }                                                                                          \
    } while (0)

static int val(int rank, MPI_Count i) { return rank * 1000 + (int)i; }
/* Rank r's block in the vector forms: r + 2 elements at (r + 2)^2 - 4 + r,
 * so blocks do not touch. */
static MPI_Count vcount(int r) { return r + 2; }
static MPI_Aint vdispl(int r) { return (MPI_Aint)(r + 2) * (r + 2) - 4 + r; }
static MPI_Count vtotal(void) { return (MPI_Count)vdispl(np) + 2; }

static void expect(const int *buf, MPI_Count n, int (*want)(MPI_Count), const char *what,
                   int form)
{
    for (MPI_Count i = 0; i < n; i++)
        if (buf[i] != want(i)) {
            CHECK(0, "%s (%s): element %lld is %d, expected %d", what, form_name[form],
                  (long long)i, buf[i], want(i));
            return;
        }
}

static int root_of(int form) { return form % np; }

static int cur_rank; /* the rank a want() function is about */
static int want_rank_val(MPI_Count i) { return val(cur_rank, i); }

static void bcast(int form)
{
    int root = root_of(form), buf[10];
    for (int i = 0; i < 10; i++)
        buf[i] = me == root ? val(root, i) : -1;
    RUN(form, MPI_Bcast_c(buf, 10, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Ibcast_c(buf, 10, MPI_INT, root, MPI_COMM_WORLD, &req),
        MPI_Bcast_init_c(buf, 10, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    cur_rank = root;
    expect(buf, 10, want_rank_val, "MPI_Bcast_c", form);
}

/* Gather, allgather (vector or not): rank r contributes val(r, 0..k-1). */
static int *gathered_ok(const int *rbuf, int vector)
{
    for (int r = 0; r < np; r++) {
        MPI_Count k = vector ? vcount(r) : 3;
        const int *blk = rbuf + (vector ? vdispl(r) : 3 * r);
        for (MPI_Count i = 0; i < k; i++)
            if (blk[i] != val(r, i))
                return (int *)&blk[i];
    }
    return NULL;
}

static void gathers(int form)
{
    int root = root_of(form), sbuf[16], *rbuf = malloc((size_t)vtotal() * 4 + 64 * np);
    MPI_Count *counts = malloc(np * sizeof *counts);
    MPI_Aint *displs = malloc(np * sizeof *displs);
    for (int r = 0; r < np; r++) {
        counts[r] = vcount(r);
        displs[r] = vdispl(r);
    }
    for (int i = 0; i < 16; i++)
        sbuf[i] = val(me, i);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;

    RUN(form, MPI_Gather_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, w),
        MPI_Igather_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, w, &req),
        MPI_Gather_init_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, w, ni, &req));
    if (me == root)
        CHECK(!gathered_ok(rbuf, 0), "MPI_Gather_c (%s)", form_name[form]);

    MPI_Count mine = vcount(me);
    RUN(form, MPI_Gatherv_c(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, root, w),
        MPI_Igatherv_c(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, root, w, &req),
        MPI_Gatherv_init_c(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, root, w, ni, &req));
    if (me == root)
        CHECK(!gathered_ok(rbuf, 1), "MPI_Gatherv_c (%s)", form_name[form]);

    RUN(form, MPI_Allgather_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, w),
        MPI_Iallgather_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, w, &req),
        MPI_Allgather_init_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, w, ni, &req));
    CHECK(!gathered_ok(rbuf, 0), "MPI_Allgather_c (%s)", form_name[form]);

    RUN(form, MPI_Allgatherv_c(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, w),
        MPI_Iallgatherv_c(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, w, &req),
        MPI_Allgatherv_init_c(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, w, ni, &req));
    CHECK(!gathered_ok(rbuf, 1), "MPI_Allgatherv_c (%s)", form_name[form]);
    free(rbuf);
    free(counts);
    free(displs);
}

/* Scatter: the root's block r is val(r, 0..k-1), as if each rank had it. */
static void scatters(int form)
{
    int root = root_of(form), *sbuf = malloc((size_t)vtotal() * 4 + 64 * np), rbuf[16];
    MPI_Count *counts = malloc(np * sizeof *counts);
    MPI_Aint *displs = malloc(np * sizeof *displs);
    for (int r = 0; r < np; r++) {
        counts[r] = vcount(r);
        displs[r] = vdispl(r);
        for (int i = 0; i < 3; i++)
            sbuf[3 * r + i] = val(r, i);
    }
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    cur_rank = me;
    RUN(form, MPI_Scatter_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, w),
        MPI_Iscatter_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, w, &req),
        MPI_Scatter_init_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, w, ni, &req));
    expect(rbuf, 3, want_rank_val, "MPI_Scatter_c", form);

    for (int r = 0; r < np; r++)
        for (MPI_Count i = 0; i < vcount(r); i++)
            sbuf[vdispl(r) + i] = val(r, i);
    MPI_Count mine = vcount(me);
    RUN(form, MPI_Scatterv_c(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT, root, w),
        MPI_Iscatterv_c(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT, root, w, &req),
        MPI_Scatterv_init_c(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT, root, w, ni,
                            &req));
    expect(rbuf, mine, want_rank_val, "MPI_Scatterv_c", form);
    free(sbuf);
    free(counts);
    free(displs);
}

/* Alltoall: rank s sends rank d the block val(s * 64 + d, 0..k-1). */
static void alltoalls(int form)
{
    size_t room = (size_t)vtotal() + 16;
    int *sbuf = malloc(room * sizeof(int)), *rbuf = malloc(room * sizeof(int));
    MPI_Count *counts = malloc(np * sizeof *counts), *rcounts = malloc(np * sizeof *rcounts);
    MPI_Aint *displs = malloc(np * sizeof *displs), *bdispls = malloc(np * sizeof *bdispls);
    MPI_Aint *rdispls = malloc(np * sizeof *rdispls), *rbdispls = malloc(np * sizeof *rbdispls);
    MPI_Datatype *types = malloc(np * sizeof *types);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    for (int d = 0; d < np; d++)
        for (int i = 0; i < 2; i++)
            sbuf[2 * d + i] = val(me * 64 + d, i);
    RUN(form, MPI_Alltoall_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w),
        MPI_Ialltoall_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w, &req),
        MPI_Alltoall_init_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w, ni, &req));
    for (int s = 0; s < np; s++)
        for (int i = 0; i < 2; i++)
            CHECK(rbuf[2 * s + i] == val(s * 64 + me, i), "MPI_Alltoall_c (%s) from %d",
                  form_name[form], s);

    /* v and w: I send rank d vcount(d) elements (at vdispl(d)); I receive
     * vcount(me) from each, at s * (np + 2). */
    for (int d = 0; d < np; d++) {
        counts[d] = vcount(d);
        displs[d] = vdispl(d);
        rcounts[d] = vcount(me);
        bdispls[d] = vdispl(d) * (MPI_Aint)sizeof(int);
        rdispls[d] = (MPI_Aint)d * (np + 2);
        rbdispls[d] = rdispls[d] * (MPI_Aint)sizeof(int);
        types[d] = MPI_INT;
        for (MPI_Count i = 0; i < vcount(d); i++)
            sbuf[vdispl(d) + i] = val(me * 64 + d, i);
    }
    for (int is_w = 0; is_w < 2; is_w++) {
        memset(rbuf, 0xff, room * sizeof(int));
        if (!is_w)
            RUN(form,
                MPI_Alltoallv_c(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, w),
                MPI_Ialltoallv_c(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, w,
                                 &req),
                MPI_Alltoallv_init_c(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls,
                                     MPI_INT, w, ni, &req));
        else
            RUN(form,
                MPI_Alltoallw_c(sbuf, counts, bdispls, types, rbuf, rcounts, rbdispls, types, w),
                MPI_Ialltoallw_c(sbuf, counts, bdispls, types, rbuf, rcounts, rbdispls, types, w,
                                 &req),
                MPI_Alltoallw_init_c(sbuf, counts, bdispls, types, rbuf, rcounts, rbdispls, types,
                                     w, ni, &req));
        for (int s = 0; s < np; s++)
            for (MPI_Count i = 0; i < vcount(me); i++)
                CHECK(rbuf[rdispls[s] + i] == val(s * 64 + me, i), "%s (%s) from %d element %lld",
                      is_w ? "MPI_Alltoallw_c" : "MPI_Alltoallv_c", form_name[form], s,
                      (long long)i);
    }
    free(sbuf);
    free(rbuf);
    free(counts);
    free(rcounts);
    free(displs);
    free(bdispls);
    free(rdispls);
    free(rbdispls);
    free(types);
}

/* Reductions with MPI_SUM over val(rank, i): sums of ranks lo..hi. */
static int sum_ranks(int lo, int hi, MPI_Count i)
{
    int s = 0;
    for (int r = lo; r <= hi; r++)
        s += val(r, i);
    return s;
}

static void reductions(int form)
{
    enum { N = 12 };
    int root = root_of(form), sbuf[N * 8], rbuf[N * 8];
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    for (int i = 0; i < N * 8; i++)
        sbuf[i] = val(me, i);
    RUN(form, MPI_Reduce_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, w),
        MPI_Ireduce_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, w, &req),
        MPI_Reduce_init_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, w, ni, &req));
    for (int i = 0; me == root && i < N; i++)
        CHECK(rbuf[i] == sum_ranks(0, np - 1, i), "MPI_Reduce_c (%s) [%d]", form_name[form], i);

    RUN(form, MPI_Allreduce_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w),
        MPI_Iallreduce_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w, &req),
        MPI_Allreduce_init_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w, ni, &req));
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == sum_ranks(0, np - 1, i), "MPI_Allreduce_c (%s) [%d]", form_name[form], i);

    RUN(form, MPI_Scan_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w),
        MPI_Iscan_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w, &req),
        MPI_Scan_init_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w, ni, &req));
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == sum_ranks(0, me, i), "MPI_Scan_c (%s) [%d]", form_name[form], i);

    RUN(form, MPI_Exscan_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w),
        MPI_Iexscan_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w, &req),
        MPI_Exscan_init_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, w, ni, &req));
    for (int i = 0; me > 0 && i < N; i++)
        CHECK(rbuf[i] == sum_ranks(0, me - 1, i), "MPI_Exscan_c (%s) [%d]", form_name[form], i);

    /* Reduce_scatter_block: 3 each; reduce_scatter: r + 1 to rank r. */
    RUN(form, MPI_Reduce_scatter_block_c(sbuf, rbuf, 3, MPI_INT, MPI_SUM, w),
        MPI_Ireduce_scatter_block_c(sbuf, rbuf, 3, MPI_INT, MPI_SUM, w, &req),
        MPI_Reduce_scatter_block_init_c(sbuf, rbuf, 3, MPI_INT, MPI_SUM, w, ni, &req));
    for (int i = 0; i < 3; i++)
        CHECK(rbuf[i] == sum_ranks(0, np - 1, 3 * me + i), "MPI_Reduce_scatter_block_c (%s)",
              form_name[form]);
    MPI_Count counts[8];
    MPI_Count off = 0;
    for (int r = 0; r < np; r++) {
        counts[r] = r + 1;
        if (r < me)
            off += counts[r];
    }
    RUN(form, MPI_Reduce_scatter_c(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w),
        MPI_Ireduce_scatter_c(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w, &req),
        MPI_Reduce_scatter_init_c(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w, ni, &req));
    for (int i = 0; i < me + 1; i++)
        CHECK(rbuf[i] == sum_ranks(0, np - 1, off + i), "MPI_Reduce_scatter_c (%s) [%d]",
              form_name[form], i);
}

/* A user op of MPI_Op_create_c: a sum that records the lengths it saw. */
static MPI_Count seen_len;
static void sum_fn(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    CHECK(*dt == MPI_INT, "user function got another datatype");
    seen_len += *len;
    for (MPI_Count i = 0; i < *len; i++)
        b[i] = a[i] + b[i];
}

static void user_ops(void)
{
    MPI_Op op;
    int in[5], inout[5];
    CHECK_RC(MPI_Op_create_c(sum_fn, 1, &op));
    for (int i = 0; i < 5; i++) {
        in[i] = i;
        inout[i] = 10 * i;
    }
    seen_len = 0;
    CHECK_RC(MPI_Reduce_local_c(in, inout, 5, MPI_INT, op));
    for (int i = 0; i < 5; i++)
        CHECK_INT(inout[i], 11 * i, "MPI_Reduce_local_c with an MPI_Op_create_c op");
    CHECK_INT(seen_len, 5, "lengths the user function saw");

    CHECK_RC(MPI_Reduce_local_c(in, inout, 5, MPI_INT, MPI_SUM));
    for (int i = 0; i < 5; i++)
        CHECK_INT(inout[i], 12 * i, "MPI_Reduce_local_c with MPI_SUM");

    int s = me + 1, r = 0;
    CHECK_RC(MPI_Allreduce_c(&s, &r, 1, MPI_INT, op, MPI_COMM_WORLD));
    int want = np * (np + 1) / 2;
    CHECK_INT(r, want, "MPI_Allreduce_c with an MPI_Op_create_c op");
    CHECK_RC(MPI_Op_free(&op));
}

static void errors(void)
{
    int x = 0;
    MPI_Count counts[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Aint displs[8] = {0};
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Bcast_c(&x, -1, MPI_INT, 0, w), MPI_ERR_COUNT, "Bcast_c -1");
    CHECK_CLASS(MPI_Allreduce_c(&x, &counts[0], -((MPI_Count)1 << 33), MPI_INT, MPI_SUM, w),
                MPI_ERR_COUNT, "Allreduce_c -2^33");
    CHECK_CLASS(MPI_Reduce_local_c(&x, &counts[0], -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT,
                "Reduce_local_c -1");
    counts[np - 1] = -((MPI_Count)1 << 40);
    CHECK_CLASS(MPI_Allgatherv_c(&x, 1, MPI_INT, displs, counts, displs, MPI_INT, w),
                MPI_ERR_COUNT, "Allgatherv_c recvcounts[last] -2^40");
    CHECK_CLASS(MPI_Op_create_c(NULL, 1, &(MPI_Op){0}), MPI_ERR_ARG, "Op_create_c NULL");
    MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    if (np > 8)
        FATAL("at most 8 ranks");
    for (int form = 0; form < N_FORMS; form++) {
        char name[64];
        snprintf(name, sizeof name, "coll_c_%s", form_name[form]);
        mtest_begin(name);
        bcast(form);
        gathers(form);
        scatters(form);
        alltoalls(form);
        reductions(form);
        mtest_end();
    }
    mtest_begin("coll_c_user_ops");
    user_ops();
    mtest_end();
    mtest_begin("coll_c_errors");
    errors();
    mtest_end();
    return mtest_finalize();
}

/* Collectives on an intercommunicator (even world ranks form group 0, odd
 * ones group 1; with an odd number of ranks the groups differ in size):
 * barrier, bcast, gather(v), scatter(v), allgather(v), alltoall(v/w),
 * reduce, allreduce (also nonblocking) and reduce_scatter(_block), every
 * root of each group, checked against values computed locally. Standard
 * MPI only (passes under MPICH too). */
#include "../mpi/mtest.h"

static MPI_Comm inter;
static int color, lrank, lsize, rsize;

static int v(int grp, int r, int i) { return grp * 1000 + r * 10 + i; }

/* Non-commutative and associative: composition of affine maps
 * x -> m x + c ("in, then inout"), on MPI_2INT pairs (m, c), mod 2^32. */
static void compose(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    int(*a)[2] = in_, (*b)[2] = inout_;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        unsigned m = (unsigned)a[i][0] * (unsigned)b[i][0];
        unsigned c = (unsigned)b[i][0] * (unsigned)a[i][1] + (unsigned)b[i][1];
        b[i][0] = (int)m;
        b[i][1] = (int)c;
    }
}

static void run(void)
{
    enum { N = 5 };
    int buf[N], all[64 * N], out[64 * N];
    CHECK_RC(MPI_Barrier(inter));
    /* Bcast / gather / scatter / reduce with every root of each group. */
    for (int rg = 0; rg < 2; rg++) {
        int nroots = rg == color ? lsize : rsize;
        for (int root = 0; root < nroots; root++) {
            int myroot = rg == color ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
            for (int i = 0; i < N; i++)
                buf[i] = myroot == MPI_ROOT ? v(rg, root, i) : -1;
            CHECK_RC(MPI_Bcast(buf, N, MPI_INT, myroot, inter));
            if (rg != color)
                for (int i = 0; i < N; i++)
                    CHECK_INT(buf[i], v(rg, root, i), "inter bcast");
            /* Gather: the other group sends, the root receives rsize blocks. */
            for (int i = 0; i < N; i++)
                buf[i] = v(color, lrank, i);
            for (int i = 0; i < 64 * N; i++)
                all[i] = -1;
            CHECK_RC(MPI_Gather(buf, N, MPI_INT, all, N, MPI_INT, myroot, inter));
            if (myroot == MPI_ROOT)
                for (int q = 0; q < rsize; q++)
                    for (int i = 0; i < N; i++)
                        CHECK_INT(all[q * N + i], v(1 - color, q, i), "inter gather");
            /* Scatter back, plus 1. */
            if (myroot == MPI_ROOT)
                for (int q = 0; q < rsize; q++)
                    for (int i = 0; i < N; i++)
                        all[q * N + i] = v(1 - color, q, i) + 1;
            for (int i = 0; i < N; i++)
                buf[i] = -1;
            CHECK_RC(MPI_Scatter(all, N, MPI_INT, buf, N, MPI_INT, myroot, inter));
            if (rg != color)
                for (int i = 0; i < N; i++)
                    CHECK_INT(buf[i], v(color, lrank, i) + 1, "inter scatter");
            /* Reduce with SUM and with a non-commutative op. */
            for (int i = 0; i < N; i++)
                buf[i] = v(color, lrank, i);
            CHECK_RC(MPI_Reduce(buf, out, N, MPI_INT, MPI_SUM, myroot, inter));
            if (myroot == MPI_ROOT)
                for (int i = 0; i < N; i++) {
                    int e = 0;
                    for (int q = 0; q < rsize; q++)
                        e += v(1 - color, q, i);
                    CHECK_INT(out[i], e, "inter reduce sum");
                }
            MPI_Op ops[2] = {MPI_SUM, MPI_OP_NULL};
            MPI_Op_create(compose, 0, &ops[1]);
            int pr[N][2], po[N][2];
            for (int i = 0; i < N; i++) {
                pr[i][0] = 2 * (lrank + i) + 1;
                pr[i][1] = v(color, lrank, i);
            }
            CHECK_RC(MPI_Reduce(pr, po, N, MPI_2INT, ops[1], myroot, inter));
            if (myroot == MPI_ROOT)
                for (int i = 0; i < N; i++) {
                    unsigned m = 1, c = 0; /* identity, then ranks in order */
                    for (int q = 0; q < rsize; q++) {
                        unsigned qm = (unsigned)(2 * (q + i) + 1), qc = (unsigned)v(1 - color, q, i);
                        c = qm * c + qc;
                        m = m * qm;
                    }
                    CHECK(po[i][0] == (int)m && po[i][1] == (int)c, "inter reduce user op %d", i);
                }
            MPI_Op_free(&ops[1]);
        }
    }
    /* Allgather: group g sends g + 1 ints per rank. */
    int sc = color + 1, rc = 2 - color;
    for (int i = 0; i < sc; i++)
        buf[i] = v(color, lrank, i);
    CHECK_RC(MPI_Allgather(buf, sc, MPI_INT, all, rc, MPI_INT, inter));
    for (int q = 0; q < rsize; q++)
        for (int i = 0; i < rc; i++)
            CHECK_INT(all[q * rc + i], v(1 - color, q, i), "inter allgather");
    /* Alltoall: block for remote q is (me, q). */
    for (int q = 0; q < rsize; q++)
        for (int i = 0; i < 2; i++)
            all[q * 2 + i] = v(color, lrank, q * 2 + i);
    CHECK_RC(MPI_Alltoall(all, 2, MPI_INT, out, 2, MPI_INT, inter));
    for (int q = 0; q < rsize; q++)
        for (int i = 0; i < 2; i++)
            CHECK_INT(out[q * 2 + i], v(1 - color, q, lrank * 2 + i), "inter alltoall");
    /* Allreduce, blocking and not: each group gets the other's sum. */
    for (int i = 0; i < N; i++)
        buf[i] = v(color, lrank, i);
    MPI_Request req;
    CHECK_RC(MPI_Iallreduce(buf, out, N, MPI_INT, MPI_SUM, inter, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) {
        int e = 0;
        for (int q = 0; q < rsize; q++)
            e += v(1 - color, q, i);
        CHECK_INT(out[i], e, "inter iallreduce");
    }
    CHECK_RC(MPI_Allreduce(buf, out, N, MPI_INT, MPI_MAX, inter));
    for (int i = 0; i < N; i++)
        CHECK_INT(out[i], v(1 - color, rsize - 1, i), "inter allreduce max");
    /* v variants: remote rank q contributes q % 3 + 1 ints, placed with a
     * gap of one. */
    int cnt[64], dsp[64], tot = 0;
    for (int q = 0; q < rsize; q++) {
        cnt[q] = q % 3 + 1;
        dsp[q] = tot + 1;
        tot += cnt[q] + 1;
    }
    int mine = lrank % 3 + 1;
    for (int rg = 0; rg < 2; rg++) {
        int nroots = rg == color ? lsize : rsize;
        for (int root = 0; root < nroots; root++) {
            int myroot = rg == color ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
            for (int i = 0; i < mine; i++)
                buf[i] = v(color, lrank, i);
            for (int i = 0; i < tot; i++)
                all[i] = -1;
            CHECK_RC(MPI_Gatherv(buf, mine, MPI_INT, all, cnt, dsp, MPI_INT, myroot, inter));
            if (myroot == MPI_ROOT)
                for (int q = 0; q < rsize; q++)
                    for (int i = 0; i < cnt[q]; i++)
                        CHECK_INT(all[dsp[q] + i], v(1 - color, q, i), "inter gatherv");
            if (myroot == MPI_ROOT)
                for (int q = 0; q < rsize; q++)
                    for (int i = 0; i < cnt[q]; i++)
                        all[dsp[q] + i] = v(1 - color, q, i) * 2;
            for (int i = 0; i < N; i++)
                buf[i] = -1;
            CHECK_RC(MPI_Scatterv(all, cnt, dsp, MPI_INT, buf, mine, MPI_INT, myroot, inter));
            if (rg != color)
                for (int i = 0; i < mine; i++)
                    CHECK_INT(buf[i], v(color, lrank, i) * 2, "inter scatterv");
        }
    }
    for (int i = 0; i < mine; i++)
        buf[i] = v(color, lrank, i);
    for (int i = 0; i < tot; i++)
        all[i] = -1;
    CHECK_RC(MPI_Allgatherv(buf, mine, MPI_INT, all, cnt, dsp, MPI_INT, inter));
    for (int q = 0; q < rsize; q++)
        for (int i = 0; i < cnt[q]; i++)
            CHECK_INT(all[dsp[q] + i], v(1 - color, q, i), "inter allgatherv");
    /* Alltoallv: to remote q send (lrank + q) % 2 + 1 ints. */
    int sc2[64], sd2[64], rc2[64], rd2[64], so = 0, ro = 0;
    for (int q = 0; q < rsize; q++) {
        sc2[q] = (lrank + q) % 2 + 1;
        sd2[q] = so;
        so += sc2[q];
        rc2[q] = (q + lrank) % 2 + 1;
        rd2[q] = ro;
        ro += rc2[q];
        for (int i = 0; i < sc2[q]; i++)
            all[sd2[q] + i] = v(color, lrank, q * 4 + i);
    }
    CHECK_RC(MPI_Alltoallv(all, sc2, sd2, MPI_INT, out, rc2, rd2, MPI_INT, inter));
    for (int q = 0; q < rsize; q++)
        for (int i = 0; i < rc2[q]; i++)
            CHECK_INT(out[rd2[q] + i], v(1 - color, q, lrank * 4 + i), "inter alltoallv");
    MPI_Datatype ty[64];
    int bd[64];
    for (int q = 0; q < rsize; q++) {
        ty[q] = MPI_INT;
        bd[q] = sd2[q] * (int)sizeof(int);
        rd2[q] *= (int)sizeof(int);
    }
    for (int i = 0; i < ro; i++)
        out[i] = -1;
    CHECK_RC(MPI_Alltoallw(all, sc2, bd, ty, out, rc2, rd2, ty, inter));
    for (int q = 0; q < rsize; q++)
        for (int i = 0; i < rc2[q]; i++)
            CHECK_INT(out[rd2[q] / (int)sizeof(int) + i], v(1 - color, q, lrank * 4 + i),
                      "inter alltoallw");
    /* Reduce_scatter: the other group's sum of a vector of lsize * 2 ints
     * (both groups' totals must agree: use 2 per rank of the larger group). */
    int big = lsize > rsize ? lsize : rsize, per[64];
    for (int q = 0; q < lsize; q++)
        per[q] = 0;
    for (int k = 0; k < 2 * big; k++)
        per[k % lsize]++;
    int start = 0;
    for (int q = 0; q < lrank; q++)
        start += per[q];
    for (int i = 0; i < 2 * big; i++)
        all[i] = v(color, lrank, i);
    CHECK_RC(MPI_Reduce_scatter(all, out, per, MPI_INT, MPI_SUM, inter));
    for (int i = 0; i < per[lrank]; i++) {
        int e = 0;
        for (int q = 0; q < rsize; q++)
            e += v(1 - color, q, start + i);
        CHECK_INT(out[i], e, "inter reduce_scatter");
    }
    if (lsize == rsize) {
        CHECK_RC(MPI_Reduce_scatter_block(all, out, 2, MPI_INT, MPI_MAX, inter));
        for (int i = 0; i < 2; i++)
            CHECK_INT(out[i], v(1 - color, rsize - 1, lrank * 2 + i), "inter reduce_scatter_block");
    }
    CHECK_RC(MPI_Ibarrier(inter, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_size < 2 || mtest_size > 64)
        FATAL("needs 2..64 ranks");
    MPI_Comm local;
    color = mtest_rank % 2;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, mtest_rank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 77, &inter));
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    mtest_begin("intercomm collectives");
    run();
    mtest_end();
    CHECK_RC(MPI_Comm_free(&inter));
    CHECK_RC(MPI_Comm_free(&local));
    return mtest_finalize();
}

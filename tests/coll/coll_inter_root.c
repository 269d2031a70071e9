/* Rooted collectives on an intercommunicator with the arguments MPI-4.1
 * 6.2.2 says are not significant set to nonsense: MPI_PROC_NULL ranks pass
 * only root and comm meaningfully (count -1, MPI_DATATYPE_NULL,
 * MPI_OP_NULL, NULL buffers and arrays, MPI_BYTE with MPI_SUM as mpi4py
 * does), the MPI_ROOT rank only its side (a gather's receive arguments, a
 * scatter's send arguments, a reduce's recvbuf), the other group only its
 * own. Bcast, gather(v), scatter(v) and reduce, blocking, nonblocking and
 * persistent, every root of each group; the data must arrive right and no
 * call may fail (the old checks refused them on the bystanders and the
 * others hung). Even world ranks form group 0, odd ones group 1. */
#include "../mpi/mtest.h"

static MPI_Comm inter;
static int color, lrank, lsize, rsize;

enum { N = 3, MAXR = 8 };

static int v(int grp, int r, int i) { return grp * 1000 + r * 10 + i; }

/* Blocking (form 0), nonblocking (1) and persistent (2). */
static void finish(int form, MPI_Request *req)
{
    if (form == 1) {
        CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
    } else if (form == 2) {
        CHECK_RC(MPI_Start(req));
        CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Request_free(req));
    }
}

#define CALL3(form, blocking, nb, pers)                     \
    do {                                                    \
        MPI_Request req_ = MPI_REQUEST_NULL;                \
        if ((form) == 0)                                    \
            CHECK_RC(blocking);                             \
        else if ((form) == 1)                               \
            CHECK_RC(nb);                                   \
        else                                                \
            CHECK_RC(pers);                                 \
        finish(form, &req_);                                \
    } while (0)
#define REQ &req_
#define INFO MPI_INFO_NULL

static void one_root(int form, int rg, int root)
{
    /* Role: 'R' the root, 'N' a bystander of its group, 'P' a peer of the
     * other group. */
    int myroot = rg == color ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
    char role = myroot == MPI_ROOT ? 'R' : myroot == MPI_PROC_NULL ? 'N' : 'P';
    int buf[N], all[MAXR * N], out[N];
    int counts[MAXR], displs[MAXR];
    for (int q = 0; q < MAXR; q++) {
        counts[q] = N;
        displs[q] = q * N;
    }

    /* Bcast: bystanders pass count -1 and no datatype. */
    for (int i = 0; i < N; i++)
        buf[i] = role == 'R' ? v(rg, root, i) : -1;
    if (role == 'N')
        CALL3(form, MPI_Bcast(NULL, -1, MPI_DATATYPE_NULL, myroot, inter),
              MPI_Ibcast(NULL, -1, MPI_DATATYPE_NULL, myroot, inter, REQ),
              MPI_Bcast_init(NULL, -1, MPI_DATATYPE_NULL, myroot, inter, INFO, REQ));
    else
        CALL3(form, MPI_Bcast(buf, N, MPI_INT, myroot, inter),
              MPI_Ibcast(buf, N, MPI_INT, myroot, inter, REQ),
              MPI_Bcast_init(buf, N, MPI_INT, myroot, inter, INFO, REQ));
    if (role == 'P')
        for (int i = 0; i < N; i++)
            CHECK_INT(buf[i], v(rg, root, i), "bcast");

    /* Gather: the root's send side and the peers' receive side are junk. */
    for (int i = 0; i < N; i++)
        buf[i] = v(color, lrank, i);
    for (int i = 0; i < MAXR * N; i++)
        all[i] = -1;
    if (role == 'R')
        CALL3(form, MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, N, MPI_INT, myroot, inter),
              MPI_Igather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, N, MPI_INT, myroot, inter, REQ),
              MPI_Gather_init(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, N, MPI_INT, myroot, inter,
                              INFO, REQ));
    else if (role == 'P')
        CALL3(form, MPI_Gather(buf, N, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, myroot, inter),
              MPI_Igather(buf, N, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, myroot, inter, REQ),
              MPI_Gather_init(buf, N, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, myroot, inter, INFO,
                              REQ));
    else
        CALL3(form, MPI_Gather(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, myroot,
                               inter),
              MPI_Igather(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, myroot, inter,
                          REQ),
              MPI_Gather_init(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, myroot,
                              inter, INFO, REQ));
    if (role == 'R')
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < N; i++)
                CHECK_INT(all[q * N + i], v(1 - color, q, i), "gather");

    /* Gatherv: the peers and bystanders pass no counts or displacements. */
    for (int i = 0; i < MAXR * N; i++)
        all[i] = -1;
    if (role == 'R')
        CALL3(form,
              MPI_Gatherv(NULL, -1, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, myroot, inter),
              MPI_Igatherv(NULL, -1, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, myroot,
                           inter, REQ),
              MPI_Gatherv_init(NULL, -1, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, myroot,
                               inter, INFO, REQ));
    else if (role == 'P')
        CALL3(form, MPI_Gatherv(buf, N, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, myroot, inter),
              MPI_Igatherv(buf, N, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, myroot, inter,
                           REQ),
              MPI_Gatherv_init(buf, N, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, myroot,
                               inter, INFO, REQ));
    else
        CALL3(form,
              MPI_Gatherv(NULL, -1, MPI_DATATYPE_NULL, NULL, NULL, NULL, MPI_DATATYPE_NULL, myroot,
                          inter),
              MPI_Igatherv(NULL, -1, MPI_DATATYPE_NULL, NULL, NULL, NULL, MPI_DATATYPE_NULL,
                           myroot, inter, REQ),
              MPI_Gatherv_init(NULL, -1, MPI_DATATYPE_NULL, NULL, NULL, NULL, MPI_DATATYPE_NULL,
                               myroot, inter, INFO, REQ));
    if (role == 'R')
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < N; i++)
                CHECK_INT(all[q * N + i], v(1 - color, q, i), "gatherv");

    /* Scatter and scatterv: the root's receive side, the peers' send side
     * are junk. */
    for (int q = 0; q < MAXR; q++)
        for (int i = 0; i < N; i++)
            all[q * N + i] = v(1 - color, q, i) + 1;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < N; i++)
            buf[i] = -1;
        if (role == 'R' && !k)
            CALL3(form,
                  MPI_Scatter(all, N, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, myroot, inter),
                  MPI_Iscatter(all, N, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, myroot, inter,
                               REQ),
                  MPI_Scatter_init(all, N, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, myroot,
                                   inter, INFO, REQ));
        else if (role == 'R')
            CALL3(form,
                  MPI_Scatterv(all, counts, displs, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, myroot,
                               inter),
                  MPI_Iscatterv(all, counts, displs, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, myroot,
                                inter, REQ),
                  MPI_Scatterv_init(all, counts, displs, MPI_INT, NULL, -1, MPI_DATATYPE_NULL,
                                    myroot, inter, INFO, REQ));
        else if (role == 'P' && !k)
            CALL3(form, MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, buf, N, MPI_INT, myroot, inter),
                  MPI_Iscatter(NULL, -1, MPI_DATATYPE_NULL, buf, N, MPI_INT, myroot, inter, REQ),
                  MPI_Scatter_init(NULL, -1, MPI_DATATYPE_NULL, buf, N, MPI_INT, myroot, inter,
                                   INFO, REQ));
        else if (role == 'P')
            CALL3(form,
                  MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, buf, N, MPI_INT, myroot, inter),
                  MPI_Iscatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, buf, N, MPI_INT, myroot,
                                inter, REQ),
                  MPI_Scatterv_init(NULL, NULL, NULL, MPI_DATATYPE_NULL, buf, N, MPI_INT, myroot,
                                    inter, INFO, REQ));
        else if (!k)
            CALL3(form,
                  MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, myroot,
                              inter),
                  MPI_Iscatter(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, myroot,
                               inter, REQ),
                  MPI_Scatter_init(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL,
                                   myroot, inter, INFO, REQ));
        else
            CALL3(form,
                  MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL,
                               myroot, inter),
                  MPI_Iscatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL,
                                myroot, inter, REQ),
                  MPI_Scatterv_init(NULL, NULL, NULL, MPI_DATATYPE_NULL, NULL, -1,
                                    MPI_DATATYPE_NULL, myroot, inter, INFO, REQ));
        if (role == 'P')
            for (int i = 0; i < N; i++)
                CHECK_INT(buf[i], v(color, lrank, i) + 1, k ? "scatterv" : "scatter");
    }

    /* Reduce: bystanders pass MPI_BYTE with MPI_SUM (undefined together)
     * and no buffers, the root no sendbuf, the peers no recvbuf. */
    for (int i = 0; i < N; i++) {
        buf[i] = v(color, lrank, i);
        out[i] = -1;
    }
    if (role == 'R')
        CALL3(form, MPI_Reduce(NULL, out, N, MPI_INT, MPI_SUM, myroot, inter),
              MPI_Ireduce(NULL, out, N, MPI_INT, MPI_SUM, myroot, inter, REQ),
              MPI_Reduce_init(NULL, out, N, MPI_INT, MPI_SUM, myroot, inter, INFO, REQ));
    else if (role == 'P')
        CALL3(form, MPI_Reduce(buf, NULL, N, MPI_INT, MPI_SUM, myroot, inter),
              MPI_Ireduce(buf, NULL, N, MPI_INT, MPI_SUM, myroot, inter, REQ),
              MPI_Reduce_init(buf, NULL, N, MPI_INT, MPI_SUM, myroot, inter, INFO, REQ));
    else
        CALL3(form, MPI_Reduce(NULL, NULL, 7, MPI_BYTE, MPI_SUM, myroot, inter),
              MPI_Ireduce(NULL, NULL, -1, MPI_DATATYPE_NULL, MPI_OP_NULL, myroot, inter, REQ),
              MPI_Reduce_init(NULL, NULL, 7, MPI_BYTE, MPI_SUM, myroot, inter, INFO, REQ));
    if (role == 'R')
        for (int i = 0; i < N; i++) {
            int e = 0;
            for (int q = 0; q < rsize; q++)
                e += v(1 - color, q, i);
            CHECK_INT(out[i], e, "reduce");
        }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_size < 2 || mtest_size > 2 * MAXR)
        FATAL("needs 2..%d ranks", 2 * MAXR);
    MPI_Comm local;
    color = mtest_rank % 2;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, mtest_rank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 78, &inter));
    /* A refused call must be seen (and fail the test), not abort. */
    CHECK_RC(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    static const char *names[3] = {"blocking", "nonblocking", "persistent"};
    for (int form = 0; form < 3; form++) {
        mtest_begin(names[form]);
        for (int rg = 0; rg < 2; rg++) {
            int nroots = rg == color ? lsize : rsize;
            for (int root = 0; root < nroots; root++)
                one_root(form, rg, root);
        }
        mtest_end();
    }
    CHECK_RC(MPI_Comm_free(&inter));
    CHECK_RC(MPI_Comm_free(&local));
    return mtest_finalize();
}

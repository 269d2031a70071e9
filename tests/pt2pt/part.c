/* Partitioned communication (MPI_Psend_init, MPI_Precv_init, MPI_Pready*,
 * MPI_Parrived): data checked over rounds with different partition counts
 * on the two sides, partitions readied in reverse and scattered order, a
 * non-contiguous receive type, partitions arriving before the last Pready,
 * MPI_PROC_NULL, and the error classes. Ranks pair up (mtest_partner); a
 * rank alone sends to itself. */
#include "../mpi/mtest.h"

#define TAG 7

static int partner;

/* Sender with sp partitions of sc ints, receiver with rp of rc (sp * sc ==
 * rp * rc), over `rounds` rounds; order: 0 forward, 1 reverse, 2 list
 * (odd then even), 3 ranges of two. */
static void exchange(int sp, int sc, int rp, int rc, int rounds, int order)
{
    int n = sp * sc;
    int *sbuf = malloc(sizeof(int) * (size_t)n), *rbuf = malloc(sizeof(int) * (size_t)n);
    MPI_Request sreq, rreq;
    CHECK_RC(MPI_Precv_init(rbuf, rp, rc, MPI_INT, partner, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &rreq));
    CHECK_RC(MPI_Psend_init(sbuf, sp, sc, MPI_INT, partner, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &sreq));
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            sbuf[i] = mtest_rank * 1000000 + r * 10000 + i;
            rbuf[i] = -1;
        }
        MPI_Request both[2] = {rreq, sreq};
        CHECK_RC(MPI_Startall(2, both));
        if (order == 0) {
            for (int i = 0; i < sp; i++)
                CHECK_RC(MPI_Pready(i, sreq));
        } else if (order == 1) {
            for (int i = sp - 1; i >= 0; i--)
                CHECK_RC(MPI_Pready(i, sreq));
        } else if (order == 2) {
            int *list = malloc(sizeof(int) * (size_t)sp), k = 0;
            for (int i = 1; i < sp; i += 2)
                list[k++] = i;
            for (int i = 0; i < sp; i += 2)
                list[k++] = i;
            CHECK_RC(MPI_Pready_list(k, list, sreq));
            free(list);
        } else {
            for (int i = 0; i < sp; i += 2)
                CHECK_RC(MPI_Pready_range(i, i + 1 < sp ? i + 1 : i, sreq));
        }
        /* Every partition arrives; Parrived says so before the Wait. */
        for (int i = 0; i < rp; i++) {
            int flag = 0;
            while (!flag)
                CHECK_RC(MPI_Parrived(rreq, i, &flag));
            for (int k = 0; k < rc; k++) {
                int want = partner * 1000000 + r * 10000 + i * rc + k;
                if (rbuf[i * rc + k] != want) {
                    CHECK_INT(rbuf[i * rc + k], want, "received partition data");
                    break;
                }
            }
        }
        MPI_Status st[2];
        CHECK_RC(MPI_Waitall(2, both, st));
        CHECK_INT(st[0].MPI_SOURCE, partner, "receive status source");
        CHECK_INT(st[0].MPI_TAG, TAG, "receive status tag");
        int count = -1;
        MPI_Get_count(&st[0], MPI_INT, &count);
        CHECK_INT(count, n, "receive status count");
    }
    CHECK_RC(MPI_Request_free(&sreq));
    CHECK_RC(MPI_Request_free(&rreq));
    free(sbuf);
    free(rbuf);
}

/* Partition 0 is sent when it is readied, not with the last one: the
 * sender readies 0, then waits for a message the receiver sends only once
 * Parrived(0) is true, and only then readies the rest. A protocol that
 * sends at the end deadlocks here (the watchdog fails the test). */
static void early_partition(void)
{
    enum { P = 4, C = 1000 }; /* 4000 bytes per partition: eager */
    static double sbuf[P * C], rbuf[P * C];
    MPI_Request sreq, rreq;
    int go = 0, dummy = 0;
    if (partner == mtest_rank)
        return; /* the pattern needs two processes */
    int sender = mtest_rank < partner;
    if (sender) {
        for (int i = 0; i < P * C; i++)
            sbuf[i] = i * 0.5;
        CHECK_RC(MPI_Psend_init(sbuf, P, C, MPI_DOUBLE, partner, TAG + 1, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &sreq));
        CHECK_RC(MPI_Start(&sreq));
        CHECK_RC(MPI_Pready(0, sreq));
        CHECK_RC(MPI_Recv(&go, 1, MPI_INT, partner, TAG + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_INT(go, 1, "receiver saw partition 0");
        CHECK_RC(MPI_Pready_range(1, P - 1, sreq));
        CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Request_free(&sreq));
    } else {
        CHECK_RC(MPI_Precv_init(rbuf, P, C, MPI_DOUBLE, partner, TAG + 1, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &rreq));
        CHECK_RC(MPI_Start(&rreq));
        int flag = 0, later = 1;
        while (!flag)
            CHECK_RC(MPI_Parrived(rreq, 0, &flag));
        CHECK_RC(MPI_Parrived(rreq, P - 1, &later));
        CHECK_INT(later, 0, "Parrived of a partition not readied yet");
        for (int i = 0; i < C; i++)
            if (rbuf[i] != i * 0.5) {
                CHECK(0, "partition 0 element %d: %g", i, rbuf[i]);
                break;
            }
        go = 1;
        CHECK_RC(MPI_Send(&go, 1, MPI_INT, partner, TAG + 2, MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        for (int i = 0; i < P * C; i++)
            if (rbuf[i] != i * 0.5) {
                CHECK(0, "element %d: %g", i, rbuf[i]);
                break;
            }
        CHECK_RC(MPI_Request_free(&rreq));
    }
    (void)dummy;
}

/* A receive type with gaps (every other int) and a large message
 * (rendezvous), 3 sender partitions against 6 receive ones. */
static void noncontig(void)
{
    enum { N = 60000 };
    MPI_Datatype vec, every_other;
    MPI_Type_vector(N / 6, 1, 2, MPI_INT, &vec);
    /* Extent of N / 6 pairs, so partition i starts where i - 1 ended. */
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * (N / 6) * sizeof(int)), &every_other);
    MPI_Type_free(&vec);
    MPI_Type_commit(&every_other);
    int *sbuf = malloc(sizeof(int) * N), *rbuf = malloc(sizeof(int) * 2 * N);
    for (int i = 0; i < N; i++)
        sbuf[i] = i ^ mtest_rank;
    for (int i = 0; i < 2 * N; i++)
        rbuf[i] = -1;
    MPI_Request rq[2];
    CHECK_RC(MPI_Precv_init(rbuf, 6, 1, every_other, partner, TAG + 3, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &rq[0]));
    CHECK_RC(MPI_Psend_init(sbuf, 3, N / 3, MPI_INT, partner, TAG + 3, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &rq[1]));
    CHECK_RC(MPI_Startall(2, rq));
    CHECK_RC(MPI_Pready(2, rq[1]));
    CHECK_RC(MPI_Pready(0, rq[1]));
    CHECK_RC(MPI_Pready(1, rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        if (rbuf[2 * i] != (i ^ partner) || rbuf[2 * i + 1] != -1) {
            CHECK(0, "element %d: %d (gap %d)", i, rbuf[2 * i], rbuf[2 * i + 1]);
            break;
        }
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    MPI_Type_free(&every_other);
    free(sbuf);
    free(rbuf);
}

/* Pairs with the same communicator, peer and tag match in the order of
 * their inits, whatever the order of their starts (MPICH's
 * part/multipart found replies going out newest first). */
static void init_order(void)
{
    enum { K = 3, P = 4, C = 16 };
    static int sbuf[K][P * C], rbuf[K][P * C];
    MPI_Request s[K], r[K];
    for (int k = 0; k < K; k++)
        CHECK_RC(MPI_Psend_init(sbuf[k], P, C, MPI_INT, partner, 20, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &s[k]));
    for (int k = 0; k < K; k++)
        CHECK_RC(MPI_Precv_init(rbuf[k], P, C, MPI_INT, partner, 20, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &r[k]));
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < P * C; i++) {
            sbuf[k][i] = 100 * k + mtest_rank;
            rbuf[k][i] = -1;
        }
    }
    CHECK_RC(MPI_Startall(K, r));
    for (int k = K - 1; k >= 0; k--) {
        CHECK_RC(MPI_Start(&s[k]));
        CHECK_RC(MPI_Pready_range(0, P - 1, s[k]));
    }
    CHECK_RC(MPI_Waitall(K, s, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Waitall(K, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < K; k++) {
        CHECK_INT(rbuf[k][0], 100 * k + partner, "pair matched in init order");
        CHECK_INT(rbuf[k][P * C - 1], 100 * k + partner, "pair matched in init order (last)");
        MPI_Request_free(&s[k]);
        MPI_Request_free(&r[k]);
    }
}

static void proc_null(void)
{
    int buf[4] = {0};
    MPI_Request s, r;
    CHECK_RC(MPI_Psend_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Precv_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK_RC(MPI_Start(&s));
    CHECK_RC(MPI_Start(&r));
    CHECK_RC(MPI_Pready_range(0, 1, s));
    int flag = 0;
    CHECK_RC(MPI_Parrived(r, 1, &flag));
    CHECK_INT(flag, 1, "Parrived from MPI_PROC_NULL");
    MPI_Status st;
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "status source of MPI_PROC_NULL");
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void errors(void)
{
    int buf[8] = {0}, flag;
    MPI_Request s, r, plain;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Psend_init(buf, -1, 1, MPI_INT, partner, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
                MPI_ERR_ARG, "negative partitions");
    CHECK_CLASS(MPI_Psend_init(buf, 2, -1, MPI_INT, partner, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
                MPI_ERR_COUNT, "negative count");
    CHECK_CLASS(MPI_Psend_init(buf, 2, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
                MPI_ERR_RANK, "dest out of range");
    CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &r),
                MPI_ERR_RANK, "MPI_ANY_SOURCE");
    CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, partner, MPI_ANY_TAG, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &r),
                MPI_ERR_TAG, "MPI_ANY_TAG");
    CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_DATATYPE_NULL, partner, 0, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &r),
                MPI_ERR_TYPE, "MPI_DATATYPE_NULL");
    CHECK_CLASS(MPI_Psend_init(buf, 2, 1, MPI_INT, partner, 0, MPI_COMM_NULL, MPI_INFO_NULL, &s),
                MPI_ERR_COMM, "MPI_COMM_NULL");

    CHECK_RC(MPI_Psend_init(buf, 4, 2, MPI_INT, partner, TAG + 4, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Precv_init(buf, 4, 2, MPI_INT, partner, TAG + 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST, "Pready on an inactive request");
    CHECK_RC(MPI_Parrived(r, 0, &flag)); /* MPI-4.1: inactive counts as arrived */
    CHECK_INT(flag, 1, "Parrived on an inactive request");
    MPI_Request both[2] = {r, s};
    CHECK_RC(MPI_Startall(2, both));
    CHECK_CLASS(MPI_Start(&s), MPI_ERR_REQUEST, "Start of an active partitioned request");
    CHECK_CLASS(MPI_Pready(4, s), MPI_ERR_ARG, "partition 4 of 4");
    CHECK_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG, "partition -1");
    CHECK_CLASS(MPI_Pready_range(2, 1, s), MPI_ERR_ARG, "Pready_range low > high");
    int bad[2] = {0, 9};
    CHECK_CLASS(MPI_Pready_list(2, bad, s), MPI_ERR_ARG, "Pready_list entry 9");
    CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST, "Pready on a receive");
    CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "Parrived on a send");
    CHECK_CLASS(MPI_Parrived(r, 4, &flag), MPI_ERR_ARG, "Parrived partition 4 of 4");
    CHECK_RC(MPI_Pready_range(0, 3, s));
    CHECK_CLASS(MPI_Pready(1, s), MPI_ERR_ARG, "Pready twice in a round");
    CHECK_RC(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST, "Pready after the round ended");
    MPI_Request_free(&s);
    MPI_Request_free(&r);

    CHECK_RC(MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &plain));
    CHECK_CLASS(MPI_Pready(0, plain), MPI_ERR_REQUEST, "Pready on a point-to-point request");
    CHECK_RC(MPI_Wait(&plain, MPI_STATUS_IGNORE));
    CHECK_CLASS(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST, "Pready on MPI_REQUEST_NULL");

    /* Total sizes that differ: both sides' rounds fail with MPI_ERR_TRUNCATE. */
    CHECK_RC(MPI_Psend_init(buf, 2, 2, MPI_INT, partner, TAG + 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Precv_init(buf + 4, 2, 1, MPI_INT, partner, TAG + 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r));
    CHECK_RC(MPI_Start(&r));
    CHECK_RC(MPI_Start(&s));
    CHECK_RC(MPI_Pready_range(0, 1, s));
    CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "receive of a larger send");
    CHECK_CLASS(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "send to a smaller receive");
    MPI_Request_free(&s);
    MPI_Request_free(&r);

    /* Freed while inactive, before anything matched: nothing is left behind
     * (the next pair with the same tag matches each other). */
    CHECK_RC(MPI_Precv_init(buf, 1, 1, MPI_INT, partner, TAG + 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK_RC(MPI_Request_free(&r));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();

    mtest_begin("part_same_counts");
    exchange(4, 3, 4, 3, 3, 0);
    mtest_end();
    mtest_begin("part_more_recv_partitions");
    exchange(2, 6, 6, 2, 3, 1);
    mtest_end();
    mtest_begin("part_more_send_partitions");
    exchange(8, 5, 2, 20, 3, 2);
    mtest_end();
    mtest_begin("part_ranges_rendezvous");
    exchange(5, 40000, 4, 50000, 2, 3);
    mtest_end();
    mtest_begin("part_early_partition");
    early_partition();
    mtest_end();
    mtest_begin("part_noncontig");
    noncontig();
    mtest_end();
    mtest_begin("part_init_order");
    init_order();
    mtest_end();
    mtest_begin("part_proc_null");
    proc_null();
    mtest_end();
    mtest_begin("part_errors");
    errors();
    mtest_end();
    return mtest_finalize();
}

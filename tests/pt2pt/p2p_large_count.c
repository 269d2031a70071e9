/* The large-count (_c) forms of point-to-point: every one is called with
 * checked data, between partners (mtest_partner: a rank alone talks to
 * itself). Sends go to the partner's receive posted first, so the
 * synchronous and ready modes can complete on one rank too. Small messages
 * (eager) and large ones (rendezvous) both. Then the errors and outputs
 * the int forms cannot hold: a negative MPI_Count is MPI_ERR_COUNT, a
 * detached buffer or count past INT_MAX is MPI_UNDEFINED in the int form. */
#include "../mpi/mtest.h"

#include <limits.h>
#include <string.h>

#define SMALL 100
#define LARGE (256 * 1024) /* ints: 1 MB, past every eager limit */

static int me, peer;

static int value(int from, int tag, MPI_Count i) { return from * 1000003 + tag * 7919 + (int)i; }

static void fill(int *buf, MPI_Count n, int tag)
{
    for (MPI_Count i = 0; i < n; i++)
        buf[i] = value(me, tag, i);
}

/* buf holds what the partner sent with tag; status says n ints came. */
static void check_from_peer(const int *buf, MPI_Count n, int tag, const MPI_Status *st,
                            const char *what)
{
    MPI_Count bad = -1;
    for (MPI_Count i = 0; i < n && bad < 0; i++)
        if (buf[i] != value(peer, tag, i))
            bad = i;
    CHECK(bad < 0, "%s: element %lld is %d, expected %d", what, (long long)bad,
          bad < 0 ? 0 : buf[bad], bad < 0 ? 0 : value(peer, tag, bad));
    if (st) {
        MPI_Count count = -1;
        CHECK_RC(MPI_Get_count_c(st, MPI_INT, &count));
        CHECK_INT(count, n, what);
        CHECK_INT(st->MPI_SOURCE, peer, what);
        CHECK_INT(st->MPI_TAG, tag, what);
    }
}

typedef enum { SEND, SSEND, RSEND, BSEND } mode_t_;

/* A blocking _c send of mode to the partner, into an int-form receive
 * posted before. */
static void blocking_send(mode_t_ mode, MPI_Count n, int tag, const char *what)
{
    int *out = malloc((size_t)n * sizeof(int)), *in = calloc((size_t)n, sizeof(int));
    MPI_Request r;
    MPI_Status st;
    fill(out, n, tag);
    CHECK_RC(MPI_Irecv(in, (int)n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: ready mode is legal */
    switch (mode) {
    case SEND: CHECK_RC(MPI_Send_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
    case SSEND: CHECK_RC(MPI_Ssend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
    case RSEND: CHECK_RC(MPI_Rsend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
    case BSEND: CHECK_RC(MPI_Bsend_c(out, n, MPI_INT, peer, tag, MPI_COMM_WORLD)); break;
    }
    CHECK_RC(MPI_Wait(&r, &st));
    check_from_peer(in, n, tag, &st, what);
    free(out);
    free(in);
}

/* A nonblocking or persistent _c send of mode; the receive is Irecv_c or
 * Recv_init_c. */
static void request_send(mode_t_ mode, int persistent, MPI_Count n, int tag, const char *what)
{
    int *out = malloc((size_t)n * sizeof(int)), *in = calloc((size_t)n, sizeof(int));
    MPI_Request r[2];
    MPI_Status st[2];
    fill(out, n, tag);
    if (persistent)
        CHECK_RC(MPI_Recv_init_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]));
    else
        CHECK_RC(MPI_Irecv_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[0]));
    if (persistent)
        CHECK_RC(MPI_Start(&r[0]));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm w = MPI_COMM_WORLD;
    int rc = MPI_ERR_OTHER;
    switch (mode * 2 + persistent) {
    case SEND * 2: rc = MPI_Isend_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case SSEND * 2: rc = MPI_Issend_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case RSEND * 2: rc = MPI_Irsend_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case BSEND * 2: rc = MPI_Ibsend_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case SEND * 2 + 1: rc = MPI_Send_init_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case SSEND * 2 + 1: rc = MPI_Ssend_init_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case RSEND * 2 + 1: rc = MPI_Rsend_init_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    case BSEND * 2 + 1: rc = MPI_Bsend_init_c(out, n, MPI_INT, peer, tag, w, &r[1]); break;
    }
    CHECK_RC(rc);
    if (persistent)
        CHECK_RC(MPI_Start(&r[1]));
    CHECK_RC(MPI_Waitall(2, r, st));
    check_from_peer(in, n, tag, &st[0], what);
    if (persistent) {
        CHECK_RC(MPI_Request_free(&r[0]));
        CHECK_RC(MPI_Request_free(&r[1]));
    }
    free(out);
    free(in);
}

/* The receive side: Recv_c, Mrecv_c, Imrecv_c of an int-form Isend. */
static void receive(int how, MPI_Count n, int tag, const char *what)
{
    int *out = malloc((size_t)n * sizeof(int)), *in = calloc((size_t)n, sizeof(int));
    MPI_Request r, rr;
    MPI_Status st;
    MPI_Message msg;
    int flag = 0;
    fill(out, n, tag);
    CHECK_RC(MPI_Isend(out, (int)n, MPI_INT, peer, tag, MPI_COMM_WORLD, &r));
    switch (how) {
    case 0: CHECK_RC(MPI_Recv_c(in, n, MPI_INT, peer, tag, MPI_COMM_WORLD, &st)); break;
    case 1:
        CHECK_RC(MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &msg, &st));
        CHECK_RC(MPI_Mrecv_c(in, n, MPI_INT, &msg, &st));
        break;
    default:
        while (!flag)
            CHECK_RC(MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, &msg, &st));
        CHECK_RC(MPI_Imrecv_c(in, n, MPI_INT, &msg, &rr));
        CHECK_RC(MPI_Wait(&rr, &st));
        break;
    }
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_from_peer(in, n, tag, &st, what);
    free(out);
    free(in);
}

static void sendrecv(MPI_Count n, int tag)
{
    int *out = malloc((size_t)n * sizeof(int)), *in = calloc((size_t)n, sizeof(int));
    MPI_Status st;
    fill(out, n, tag);
    CHECK_RC(MPI_Sendrecv_c(out, n, MPI_INT, peer, tag, in, n, MPI_INT, peer, tag, MPI_COMM_WORLD,
                            &st));
    check_from_peer(in, n, tag, &st, "MPI_Sendrecv_c");
    fill(out, n, tag + 1);
    CHECK_RC(MPI_Sendrecv_replace_c(out, n, MPI_INT, peer, tag + 1, peer, tag + 1, MPI_COMM_WORLD,
                                    &st));
    check_from_peer(out, n, tag + 1, &st, "MPI_Sendrecv_replace_c");
    MPI_Request r;
    memset(in, 0, (size_t)n * sizeof(int));
    fill(out, n, tag + 2);
    CHECK_RC(MPI_Isendrecv_c(out, n, MPI_INT, peer, tag + 2, in, n, MPI_INT, peer, tag + 2,
                             MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    check_from_peer(in, n, tag + 2, &st, "MPI_Isendrecv_c");
    fill(out, n, tag + 3);
    CHECK_RC(MPI_Isendrecv_replace_c(out, n, MPI_INT, peer, tag + 3, peer, tag + 3,
                                     MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    check_from_peer(out, n, tag + 3, &st, "MPI_Isendrecv_replace_c");
    free(out);
    free(in);
}

static void all_procedures(MPI_Count n, int tag0)
{
    static const char *const names[] = {"MPI_Send_c", "MPI_Ssend_c", "MPI_Rsend_c", "MPI_Bsend_c"};
    static const char *const inames[] = {"MPI_Isend_c", "MPI_Issend_c", "MPI_Irsend_c",
                                         "MPI_Ibsend_c"};
    static const char *const pnames[] = {"MPI_Send_init_c", "MPI_Ssend_init_c",
                                         "MPI_Rsend_init_c", "MPI_Bsend_init_c"};
    /* Room for every buffered send in flight at once (at most 2 here). */
    MPI_Count bsize = 2 * (n * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach_c(bbuf, bsize));
    for (int m = SEND; m <= BSEND; m++) {
        blocking_send((mode_t_)m, n, tag0 + m, names[m]);
        request_send((mode_t_)m, 0, n, tag0 + 10 + m, inames[m]);
        request_send((mode_t_)m, 1, n, tag0 + 20 + m, pnames[m]);
    }
    void *back = NULL;
    MPI_Count bsize_back = -1;
    CHECK_RC(MPI_Buffer_detach_c(&back, &bsize_back));
    CHECK(back == bbuf, "MPI_Buffer_detach_c gave back another buffer");
    CHECK_INT(bsize_back, bsize, "MPI_Buffer_detach_c size");
    free(bbuf);
    receive(0, n, tag0 + 30, "MPI_Recv_c");
    receive(1, n, tag0 + 31, "MPI_Mrecv_c");
    receive(2, n, tag0 + 32, "MPI_Imrecv_c");
    sendrecv(n, tag0 + 40);
}

static void errors(void)
{
    int x = 0;
    MPI_Request r;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Send_c(&x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Send_c -1");
    CHECK_CLASS(MPI_Irecv_c(&x, -((MPI_Count)1 << 40), MPI_INT, peer, 0, MPI_COMM_WORLD, &r),
                MPI_ERR_COUNT, "Irecv_c -2^40");
    CHECK_CLASS(MPI_Send(&x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Send -1");
    CHECK_CLASS(MPI_Sendrecv_c(&x, 1, MPI_INT, peer, 0, &x, -5, MPI_INT, peer, 0, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE),
                MPI_ERR_COUNT, "Sendrecv_c recvcount -5");
    CHECK_CLASS(MPI_Buffer_attach_c(&x, -1), MPI_ERR_ARG, "Buffer_attach_c -1");

    /* A buffer past INT_MAX bytes (never touched, so never backed): the
     * int form's size cannot hold it. */
    MPI_Count big = (MPI_Count)INT_MAX + 4096;
    void *b = malloc((size_t)big), *back = NULL;
    int isize = 0;
    if (b) {
        CHECK_RC(MPI_Buffer_attach_c(b, big));
        CHECK_RC(MPI_Buffer_detach(&back, &isize));
        CHECK(back == b, "MPI_Buffer_detach gave back another buffer");
        CHECK_INT(isize, MPI_UNDEFINED, "MPI_Buffer_detach of a buffer past INT_MAX");
        free(b);
    }

    /* A count past INT_MAX in a status: MPI_Get_count says MPI_UNDEFINED. */
    MPI_Status st;
    MPI_Count c = 0;
    int ic = 0;
    CHECK_RC(MPI_Status_set_elements_x(&st, MPI_BYTE, big));
    CHECK_RC(MPI_Get_count_c(&st, MPI_BYTE, &c));
    CHECK_INT(c, big, "MPI_Get_count_c of 2^31 + 4095 bytes");
    CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &ic));
    CHECK_INT(ic, MPI_UNDEFINED, "MPI_Get_count of 2^31 + 4095 bytes");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank;
    peer = mtest_partner();

    mtest_begin("p2p_c_small");
    all_procedures(SMALL, 100);
    mtest_end();

    mtest_begin("p2p_c_large");
    all_procedures(LARGE, 200);
    mtest_end();

    mtest_begin("p2p_c_errors");
    errors();
    mtest_end();
    return mtest_finalize();
}

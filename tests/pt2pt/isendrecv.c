/* MPI_Isendrecv and MPI_Isendrecv_replace around a ring (small and
 * rendezvous sizes, a non-contiguous type), their argument errors, and
 * MPI-4.1's MPI_Request_get_status_all/any/some, which report completion
 * without freeing or deactivating requests. */
#include "../mpi/mtest.h"

static int left, right;

static void ring(int n)
{
    int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        s[i] = mtest_rank * 7919 + i;
        r[i] = -1;
    }
    MPI_Request req;
    MPI_Status st;
    CHECK_RC(MPI_Isendrecv(s, n, MPI_INT, right, 3, r, n, MPI_INT, left, 3, MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "request freed by Wait");
    CHECK_INT(st.MPI_SOURCE, left, "status source");
    CHECK_INT(st.MPI_TAG, 3, "status tag");
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, n, "status count");
    for (int i = 0; i < n; i++)
        if (r[i] != left * 7919 + i) {
            CHECK_INT(r[i], left * 7919 + i, "Isendrecv data");
            break;
        }

    /* Replace: the same buffer goes right and comes back from the left;
     * every rank then shifts again, twice in flight on one rank at most. */
    CHECK_RC(MPI_Isendrecv_replace(s, n, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, &req));
    int flag = 0;
    while (!flag)
        CHECK_RC(MPI_Test(&req, &flag, &st));
    for (int i = 0; i < n; i++)
        if (s[i] != left * 7919 + i) {
            CHECK_INT(s[i], left * 7919 + i, "Isendrecv_replace data");
            break;
        }
    free(s);
    free(r);
}

static void replace_noncontig(void)
{
    enum { N = 3000 };
    int buf[2 * N];
    MPI_Datatype vec;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 2 * N; i++)
        buf[i] = i % 2 ? -5 : mtest_rank * 100000 + i;
    MPI_Request req;
    CHECK_RC(MPI_Isendrecv_replace(buf, 1, vec, right, 5, left, 5, MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * N; i++) {
        int want = i % 2 ? -5 : left * 100000 + i;
        if (buf[i] != want) {
            CHECK_INT(buf[i], want, "non-contiguous replace");
            break;
        }
    }
    MPI_Type_free(&vec);
}

static void proc_null_and_errors(void)
{
    int a = 1, b = 2;
    MPI_Request req;
    MPI_Status st;
    CHECK_RC(MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 0, &b, 1, MPI_INT, MPI_PROC_NULL, 0,
                           MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "MPI_PROC_NULL source");
    CHECK_INT(b, 2, "nothing received from MPI_PROC_NULL");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Isendrecv(&a, 1, MPI_INT, mtest_size, 0, &b, 1, MPI_INT, left, 0,
                              MPI_COMM_WORLD, &req),
                MPI_ERR_RANK, "Isendrecv dest out of range");
    CHECK_CLASS(MPI_Isendrecv(&a, 1, MPI_INT, right, -2, &b, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                              &req),
                MPI_ERR_TAG, "Isendrecv negative send tag");
    CHECK_CLASS(MPI_Isendrecv(&a, -1, MPI_INT, right, 0, &b, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                              &req),
                MPI_ERR_COUNT, "Isendrecv negative count");
    CHECK_CLASS(MPI_Isendrecv(&a, 1, MPI_INT, right, 0, &b, 1, MPI_DATATYPE_NULL, left, 0,
                              MPI_COMM_WORLD, &req),
                MPI_ERR_TYPE, "Isendrecv MPI_DATATYPE_NULL");
    CHECK_CLASS(MPI_Isendrecv(&a, 1, MPI_INT, right, 0, &b, 1, MPI_INT, left, 0, MPI_COMM_NULL,
                              &req),
                MPI_ERR_COMM, "Isendrecv MPI_COMM_NULL");
    CHECK_CLASS(MPI_Isendrecv(&a, 1, MPI_INT, right, 0, &b, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                              NULL),
                MPI_ERR_ARG, "Isendrecv request NULL");
    CHECK_CLASS(MPI_Isendrecv_replace(&a, 1, MPI_INT, right, 0, mtest_size, 0, MPI_COMM_WORLD,
                                      &req),
                MPI_ERR_RANK, "Isendrecv_replace source out of range");
    CHECK_CLASS(MPI_Isendrecv_replace(&a, 1, MPI_INT, right, 0, left, -7, MPI_COMM_WORLD, &req),
                MPI_ERR_TAG, "Isendrecv_replace receive tag -7");

    /* A truncated receive: the request's error is MPI_ERR_TRUNCATE. */
    int two[2] = {1, 2}, one = 0;
    CHECK_RC(MPI_Isendrecv(two, 2, MPI_INT, right, 9, &one, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                           &req));
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "Isendrecv truncation");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Request_get_status_all/any/some leave requests as they are: Wait still
 * finds them (and their data) afterwards. */
static void get_status(void)
{
    int v[3] = {0, 0, 0}, out = 42, flag = -1, index = -2, outcount = -1, idx[3];
    MPI_Request reqs[3];
    MPI_Status st, sts[3];
    CHECK_RC(MPI_Irecv(&v[0], 1, MPI_INT, left, 11, MPI_COMM_WORLD, &reqs[0]));
    reqs[1] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Recv_init(&v[2], 1, MPI_INT, left, 12, MPI_COMM_WORLD, &reqs[2])); /* inactive */

    /* Nothing sent yet (the barrier orders it): not complete. */
    CHECK_RC(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK_INT(flag, 0, "get_status_all before the send");
    CHECK_RC(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK_INT(flag, 0, "get_status_any before the send");
    CHECK_INT(index, MPI_UNDEFINED, "get_status_any index before the send");
    CHECK_RC(MPI_Request_get_status_some(3, reqs, &outcount, idx, sts));
    CHECK_INT(outcount, 0, "get_status_some before the send");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Send(&out, 1, MPI_INT, right, 11, MPI_COMM_WORLD));

    flag = 0;
    while (!flag)
        CHECK_RC(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK_INT(sts[0].MPI_SOURCE, left, "get_status_all source");
    CHECK_INT(sts[0].MPI_TAG, 11, "get_status_all tag");
    CHECK_INT(sts[1].MPI_SOURCE, MPI_ANY_SOURCE, "get_status_all: empty status of a null request");
    CHECK_INT(sts[2].MPI_TAG, MPI_ANY_TAG, "get_status_all: empty status of an inactive request");
    CHECK(reqs[0] != MPI_REQUEST_NULL, "get_status_all freed a request");
    CHECK_RC(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK_INT(flag, 1, "get_status_any flag");
    CHECK_INT(index, 0, "get_status_any index");
    CHECK_INT(st.MPI_TAG, 11, "get_status_any tag");
    CHECK_RC(MPI_Request_get_status_some(3, reqs, &outcount, idx, sts));
    CHECK_INT(outcount, 1, "get_status_some outcount");
    CHECK_INT(idx[0], 0, "get_status_some index");
    CHECK_INT(sts[0].MPI_SOURCE, left, "get_status_some source");
    CHECK(reqs[0] != MPI_REQUEST_NULL, "get_status_some freed a request");
    CHECK_RC(MPI_Wait(&reqs[0], &st));
    CHECK_INT(v[0], 42, "data after get_status_*");
    CHECK_INT(st.MPI_SOURCE, left, "Wait's status after get_status_*");

    /* Only null and inactive requests. */
    CHECK_RC(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK_INT(flag, 1, "get_status_any with none active: flag");
    CHECK_INT(index, MPI_UNDEFINED, "get_status_any with none active: index");
    CHECK_RC(MPI_Request_get_status_some(3, reqs, &outcount, idx, sts));
    CHECK_INT(outcount, MPI_UNDEFINED, "get_status_some with none active");
    CHECK_RC(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
    CHECK_INT(flag, 1, "get_status_all of no requests");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request bogus[1] = {(MPI_Request)0x12345};
    CHECK_CLASS(MPI_Request_get_status_all(1, bogus, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST,
                "get_status_all of a bad handle");
    CHECK_CLASS(MPI_Request_get_status_any(1, bogus, &index, &flag, &st), MPI_ERR_REQUEST,
                "get_status_any of a bad handle");
    CHECK_CLASS(MPI_Request_get_status_some(1, bogus, &outcount, idx, sts), MPI_ERR_REQUEST,
                "get_status_some of a bad handle");
    CHECK_CLASS(MPI_Request_get_status_all(-1, reqs, &flag, sts), MPI_ERR_COUNT,
                "get_status_all negative count");
    CHECK_CLASS(MPI_Request_get_status_some(1, reqs, &outcount, NULL, sts), MPI_ERR_ARG,
                "get_status_some NULL indices");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Request_free(&reqs[2]);
}

static void pcontrol(void)
{
    /* Any level, with or without more arguments: nothing else happens. */
    CHECK_RC(MPI_Pcontrol(0));
    CHECK_RC(MPI_Pcontrol(1));
    CHECK_RC(MPI_Pcontrol(2, "extra", 3));
    CHECK_RC(MPI_Pcontrol(-4));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    right = (mtest_rank + 1) % mtest_size;
    mtest_begin("isendrecv_ring_small");
    ring(10);
    mtest_end();
    mtest_begin("isendrecv_ring_large");
    ring(300000);
    mtest_end();
    mtest_begin("isendrecv_replace_noncontig");
    replace_noncontig();
    mtest_end();
    mtest_begin("isendrecv_errors");
    proc_null_and_errors();
    mtest_end();
    mtest_begin("request_get_status_all_any_some");
    get_status();
    mtest_end();
    mtest_begin("pcontrol");
    pcontrol();
    mtest_end();
    return mtest_finalize();
}

/* Point-to-point through the ABI: statuses in the ABI layout (source, tag,
 * count, MPI_PROC_NULL and MPI_ANY_* constants of the ABI), arrays of
 * requests and statuses (Waitall past the stack buffer), thread levels,
 * comparisons, handle <-> int, error classes, the ABI version. */
#include "abi_test.h"

#include <string.h>

#define NREQ 40

int main(int argc, char **argv)
{
    int provided, rank, size, maj = -1, min = -1;
    CHECK_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    CHECK(provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE ||
              provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SINGLE,
          "provided %d is not an ABI thread level", provided);
    int q;
    CHECK_OK(MPI_Query_thread(&q));
    CHECK(q == provided, "query %d provided %d", q, provided);
    CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_OK(MPI_Abi_get_version(&maj, &min));
    CHECK(maj == 1 && min == 0, "ABI version %d.%d", maj, min);
    /* The MPI level: libtern's 5.0, as the ABI's mpi.h says. */
    CHECK_OK(MPI_Get_version(&maj, &min));
    CHECK(maj == MPI_VERSION && min == MPI_SUBVERSION && maj == 5 && min == 0, "MPI %d.%d", maj,
          min);

    /* A receive from MPI_PROC_NULL: the ABI's constants in the status. */
    MPI_Status st;
    int cnt = -1;
    memset(&st, 0x55, sizeof st);
    CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
          "source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 0, "count %d", cnt);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    /* Ring with wildcards: the status names the sender and the tag. */
    double out[5], in[6];
    for (int i = 0; i < 5; i++)
        out[i] = rank * 10 + i;
    CHECK_OK(MPI_Sendrecv(out, 5, MPI_DOUBLE, next, 100 + rank, in, 6, MPI_DOUBLE,
                          MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 100 + prev, "source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    CHECK_OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
    CHECK(cnt == 5 && in[4] == prev * 10 + 4, "count %d in[4] %g", cnt, in[4]);

    /* NREQ requests, statuses: more than the layer's stack buffer. */
    MPI_Request reqs[2 * NREQ];
    MPI_Status sts[2 * NREQ];
    int sbuf[NREQ], rbuf[NREQ];
    for (int i = 0; i < NREQ; i++) {
        sbuf[i] = rank * 1000 + i;
        CHECK_OK(MPI_Irecv(&rbuf[i], 1, MPI_INT, prev, i, MPI_COMM_WORLD, &reqs[i]));
    }
    for (int i = 0; i < NREQ; i++)
        CHECK_OK(MPI_Isend(&sbuf[i], 1, MPI_INT, next, i, MPI_COMM_WORLD, &reqs[NREQ + i]));
    CHECK_OK(MPI_Waitall(2 * NREQ, reqs, sts));
    for (int i = 0; i < NREQ; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not MPI_REQUEST_NULL", i);
        CHECK(rbuf[i] == prev * 1000 + i, "rbuf[%d] %d", i, rbuf[i]);
        CHECK(sts[i].MPI_SOURCE == prev && sts[i].MPI_TAG == i, "status %d: %d %d", i,
              sts[i].MPI_SOURCE, sts[i].MPI_TAG);
    }
    /* Waitany on an array of null requests: MPI_UNDEFINED. */
    int idx = 0;
    CHECK_OK(MPI_Waitany(NREQ, reqs, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "index %d", idx);

    /* Communicators: comparisons, handle <-> int. */
    MPI_Comm dup;
    int res;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare %d", res);
    CHECK_OK(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT, "compare %d", res);
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(dup)) == dup, "toint/fromint");
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101, "MPI_COMM_WORLD toint %x",
          MPI_Comm_toint(MPI_COMM_WORLD));
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_INT)) == MPI_INT, "MPI_INT toint");
    CHECK_OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "freed comm is %p", (void *)dup);

    /* MPI_Comm_idup writes the new handle at completion. */
    MPI_Request ireq;
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &ireq));
    CHECK_OK(MPI_Wait(&ireq, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "idup compare %d", res);
    CHECK_OK(MPI_Barrier(dup));
    CHECK_OK(MPI_Comm_free(&dup));

    /* Ranks that are constants: a non-periodic ring's ends, a translated
     * MPI_PROC_NULL. */
    MPI_Comm cart;
    int dims[1] = {size}, periods[1] = {0}, src, dst;
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    CHECK_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == (rank == 0 ? MPI_PROC_NULL : rank - 1), "shift source %d", src);
    CHECK(dst == (rank == size - 1 ? MPI_PROC_NULL : rank + 1), "shift dest %d", dst);
    int topo;
    CHECK_OK(MPI_Topo_test(cart, &topo));
    CHECK(topo == MPI_CART, "topo %d", topo);
    CHECK_OK(MPI_Comm_free(&cart));
    MPI_Group wg;
    int in2[2] = {MPI_PROC_NULL, 0}, out2[2] = {7, 7};
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_OK(MPI_Group_translate_ranks(wg, 2, in2, wg, out2));
    CHECK(out2[0] == MPI_PROC_NULL && out2[1] == 0, "translated %d %d", out2[0], out2[1]);
    CHECK_OK(MPI_Group_compare(wg, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_UNEQUAL, "group compare %d", res);
    CHECK_OK(MPI_Group_free(&wg));

    /* Iprobe with the ABI's wildcards. */
    int flag = 0;
    CHECK_OK(MPI_Send(sbuf, 2, MPI_INT, 0, 33, MPI_COMM_SELF));
    while (!flag)
        CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, &st));
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 33, "iprobe %d %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 2, "iprobe count %d", cnt);
    CHECK_OK(MPI_Recv(rbuf, 2, MPI_INT, 0, 33, MPI_COMM_SELF, MPI_STATUS_IGNORE));

    /* Errors: the ABI's classes (MPI_ERR_ROOT is 8 there, 7 in libtern). */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int err = MPI_Bcast(sbuf, 1, MPI_INT, size + 3, MPI_COMM_WORLD), cls = -1;
    CHECK(err != MPI_SUCCESS, "a bad root succeeded");
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_ROOT, "class %d, not MPI_ERR_ROOT %d", cls, MPI_ERR_ROOT);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_OK(MPI_Error_string(err, msg, &len));
    CHECK(strstr(msg, "MPI_Bcast") != NULL, "message '%s'", msg);
    err = MPI_Send(sbuf, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_COMM, "class %d", cls);
    /* A send's tag passes unconverted (abi_std.py, SEND_TAG_PROCS): the
     * ABI's MPI_ANY_TAG and any other negative tag are still MPI_ERR_TAG,
     * and the message names the value the program passed. */
    const int bad_tags[] = {MPI_ANY_TAG, -1, -7};
    for (int i = 0; i < 3; i++) {
        MPI_Request sreq = MPI_REQUEST_NULL;
        int errs[3] = {MPI_Send(sbuf, 1, MPI_INT, 0, bad_tags[i], MPI_COMM_WORLD),
                       MPI_Isend(sbuf, 1, MPI_INT, 0, bad_tags[i], MPI_COMM_WORLD, &sreq),
                       MPI_Sendrecv(sbuf, 1, MPI_INT, 0, bad_tags[i], rbuf, 1, MPI_INT, 0, 0,
                                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)};
        for (int k = 0; k < 3; k++) {
            CHECK_OK(MPI_Error_class(errs[k], &cls));
            CHECK(cls == MPI_ERR_TAG, "tag %d, call %d: class %d", bad_tags[i], k, cls);
        }
        CHECK(sreq == MPI_REQUEST_NULL, "a failed MPI_Isend made a request");
        CHECK_OK(MPI_Error_string(errs[0], msg, &len));
        char want[32];
        snprintf(want, sizeof want, "tag=%d", bad_tags[i]);
        CHECK(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
    }
    err = MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS, "wait on MPI_REQUEST_NULL: %d", err);

    /* Matched receives: a received message becomes MPI_MESSAGE_NULL (in
     * libtern it shares MPI_REQUEST_NULL's value), MPI_MESSAGE_NO_PROC's
     * too; a status a probe does not fill keeps its fields. */
    MPI_Message m = MPI_MESSAGE_NO_PROC;
    MPI_Status ps;
    CHECK_OK(MPI_Mrecv(NULL, 0, MPI_INT, &m, &ps));
    CHECK(m == MPI_MESSAGE_NULL, "message after MPI_Mrecv: %p", (void *)m);
    CHECK(ps.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL receive's source %d", ps.MPI_SOURCE);
    int one = rank, got = -1, pflag = 1;
    CHECK_OK(MPI_Isend(&one, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &reqs[0]));
    CHECK_OK(MPI_Mprobe(0, 9, MPI_COMM_SELF, &m, &ps));
    CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "probed message %p", (void *)m);
    CHECK_OK(MPI_Imrecv(&got, 1, MPI_INT, &m, &reqs[1]));
    CHECK(m == MPI_MESSAGE_NULL, "message after MPI_Imrecv: %p", (void *)m);
    CHECK_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    CHECK(got == rank, "matched receive got %d", got);
    ps.MPI_SOURCE = 77;
    ps.MPI_TAG = 78;
    CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &pflag, &ps));
    CHECK(!pflag && ps.MPI_SOURCE == 77 && ps.MPI_TAG == 78, "empty probe: %d %d/%d", pflag,
          ps.MPI_SOURCE, ps.MPI_TAG);

    /* Single requests, which the layer passes in place (libtern's copy
     * takes and writes the ABI's MPI_REQUEST_NULL itself): MPI_Wait,
     * MPI_Test, MPI_Start, MPI_Request_free, on live, persistent and null
     * requests. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Request sr = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
    int sv = rank + 40, rv = -1, tflag = 0;
    CHECK_OK(MPI_Irecv(&rv, 1, MPI_INT, 0, 41, MPI_COMM_SELF, &rr));
    CHECK_OK(MPI_Isend(&sv, 1, MPI_INT, 0, 41, MPI_COMM_SELF, &sr));
    CHECK(sr != MPI_REQUEST_NULL && rr != MPI_REQUEST_NULL, "live requests");
    CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    CHECK(sr == MPI_REQUEST_NULL, "request after MPI_Wait: %p", (void *)sr);
    for (int i = 0; i < 1000000 && !tflag; i++)
        CHECK_OK(MPI_Test(&rr, &tflag, &st));
    CHECK(tflag && rr == MPI_REQUEST_NULL && rv == rank + 40, "MPI_Test: %d %p %d", tflag,
          (void *)rr, rv);
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 41, "MPI_Test's status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
    st.MPI_SOURCE = st.MPI_TAG = 5;
    CHECK_OK(MPI_Wait(&rr, &st));
    CHECK(rr == MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "MPI_Wait on MPI_REQUEST_NULL: %p %d %d", (void *)rr, st.MPI_SOURCE, st.MPI_TAG);
    tflag = 0;
    CHECK_OK(MPI_Test(&rr, &tflag, MPI_STATUS_IGNORE));
    CHECK(tflag == 1 && rr == MPI_REQUEST_NULL, "MPI_Test on MPI_REQUEST_NULL: %d", tflag);
    CHECK_OK(MPI_Send_init(&sv, 1, MPI_INT, 0, 42, MPI_COMM_SELF, &sr));
    CHECK_OK(MPI_Recv_init(&rv, 1, MPI_INT, 0, 42, MPI_COMM_SELF, &rr));
    for (int round = 0; round < 2; round++) {
        rv = -1;
        CHECK_OK(MPI_Start(&rr));
        CHECK_OK(MPI_Start(&sr));
        CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&rr, &st));
        CHECK(sr != MPI_REQUEST_NULL && rr != MPI_REQUEST_NULL && rv == rank + 40 &&
                  st.MPI_TAG == 42, "persistent round %d: %d %d", round, rv, st.MPI_TAG);
    }
    CHECK_OK(MPI_Request_free(&sr));
    CHECK_OK(MPI_Request_free(&rr));
    CHECK(sr == MPI_REQUEST_NULL && rr == MPI_REQUEST_NULL, "requests after MPI_Request_free");
    err = MPI_Start(&sr);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_REQUEST, "MPI_Start(MPI_REQUEST_NULL): class %d", cls);
    err = MPI_Request_free(&sr);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_REQUEST && sr == MPI_REQUEST_NULL,
          "MPI_Request_free(MPI_REQUEST_NULL): class %d", cls);
    err = MPI_Wait(NULL, MPI_STATUS_IGNORE);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_Wait(NULL): class %d", cls);

    CHECK_OK(MPI_Finalize());
    if (rank == 0)
        printf("test abi_p2p ok\n");
    return 0;
}

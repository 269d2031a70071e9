/* Error handlers and error classes of the point-to-point layer.
 *
 * The default handler on WORLD and SELF is MPI_ERRORS_ARE_FATAL; with
 * MPI_ERRORS_RETURN set, bad arguments return an error of the right class and
 * the program goes on. Also: MPI_ERR_TRUNCATE (Recv and Waitall with
 * MPI_ERR_IN_STATUS), Bsend buffer overflow, error strings naming the
 * function, and user error handlers (Comm_create_errhandler,
 * Comm_call_errhandler).
 *
 * Bad-argument calls are made towards the calling rank itself, so a check the
 * library misses leaves at worst a stray self-message, which is reported. */
#include "mtest.h"

#include <limits.h>

static int tag_ub;

/* No message may be left over from a call that should have failed. */
static void check_no_stray(void)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(mtest_rank, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
            break;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(0, "stray message from self (tag %d, %d bytes): a failing call sent it anyway",
              st.MPI_TAG, n);
        char *b = malloc((size_t)n + 1);
        MPI_Recv(b, n, MPI_BYTE, mtest_rank, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        free(b);
    }
}

/* A receive that should have failed was posted: take it back. */
static void undo_irecv(MPI_Request *req)
{
    if (*req != MPI_REQUEST_NULL) {
        MPI_Cancel(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
}

static void check_mentions(int code, const char *fname)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = 0;
    CHECK_RC(MPI_Error_string(code, s, &len));
    CHECK(strstr(s, fname) != NULL, "Error_string of the code returned by %s does not mention it: '%s'",
          fname, s);
}

static void test_default(void)
{
    mtest_begin("default_errhandler");
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "WORLD handler 0x%x, expected MPI_ERRORS_ARE_FATAL", (unsigned)eh);
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not set the handle to NULL (0x%x)", (unsigned)eh);
    eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "SELF handler 0x%x, expected MPI_ERRORS_ARE_FATAL", (unsigned)eh);
    CHECK_RC(MPI_Errhandler_free(&eh));

    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "WORLD handler 0x%x after set, expected MPI_ERRORS_RETURN", (unsigned)eh);
    CHECK_RC(MPI_Errhandler_free(&eh));
    eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "SELF handler 0x%x after set, expected MPI_ERRORS_RETURN", (unsigned)eh);
    CHECK_RC(MPI_Errhandler_free(&eh));
    mtest_end();
}

static void test_bad_comm(void)
{
    mtest_begin("err_comm");
    int buf[4] = {1, 2, 3, 4}, x = -1, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    CHECK_CLASS(rc, MPI_ERR_COMM, "Send on MPI_COMM_NULL");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Send");
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)0x12345), MPI_ERR_COMM, "Send on a garbage comm handle");
    CHECK_CLASS(MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &req), MPI_ERR_COMM, "Isend on MPI_COMM_NULL");
    CHECK_CLASS(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE), MPI_ERR_COMM,
                "Recv on MPI_COMM_NULL");
    CHECK_CLASS(MPI_Comm_rank(MPI_COMM_NULL, &x), MPI_ERR_COMM, "Comm_rank(MPI_COMM_NULL)");
    CHECK_CLASS(MPI_Comm_size(MPI_COMM_NULL, &x), MPI_ERR_COMM, "Comm_size(MPI_COMM_NULL)");
    CHECK_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier(MPI_COMM_NULL)");
    CHECK_CLASS(MPI_Iprobe(0, 0, MPI_COMM_NULL, &x, MPI_STATUS_IGNORE), MPI_ERR_COMM, "Iprobe(MPI_COMM_NULL)");
    check_no_stray();
    mtest_end();
}

static void test_bad_rank(void)
{
    mtest_begin("err_rank");
    int buf[4] = {1, 2, 3, 4}, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Send(buf, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_RANK, "Send to rank == size");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Send");
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "Send to rank -5");
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                "Send to MPI_ANY_SOURCE");
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK, "Send to rank 1 on SELF");
    rc = MPI_Isend(buf, 1, MPI_INT, mtest_size + 3, 0, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_RANK, "Isend to rank size+3");
    if (rc == MPI_SUCCESS)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    req = MPI_REQUEST_NULL;
    rc = MPI_Irecv(buf, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_RANK, "Irecv from rank == size");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Irecv");
    else
        undo_irecv(&req);
    req = MPI_REQUEST_NULL;
    rc = MPI_Irecv(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_RANK, "Irecv from rank -7");
    if (rc == MPI_SUCCESS)
        undo_irecv(&req);
    check_no_stray();
    mtest_end();
}

static void test_bad_tag(void)
{
    mtest_begin("err_tag");
    int buf[4] = {1, 2, 3, 4}, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Send(buf, 1, MPI_INT, mtest_rank, -5, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TAG, "Send with tag -5");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Send");
    CHECK_CLASS(MPI_Send(buf, 1, MPI_INT, mtest_rank, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG,
                "Send with tag MPI_ANY_TAG");
    CHECK_CLASS(MPI_Ssend(buf, 1, MPI_INT, mtest_rank, -100, MPI_COMM_WORLD), MPI_ERR_TAG, "Ssend with tag -100");
    if (tag_ub < INT_MAX) {
        rc = MPI_Isend(buf, 1, MPI_INT, mtest_rank, tag_ub + 1, MPI_COMM_WORLD, &req);
        CHECK_CLASS(rc, MPI_ERR_TAG, "Isend with tag MPI_TAG_UB+1");
        if (rc == MPI_SUCCESS)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        req = MPI_REQUEST_NULL;
        rc = MPI_Irecv(buf, 1, MPI_INT, mtest_rank, tag_ub + 1, MPI_COMM_WORLD, &req);
        CHECK_CLASS(rc, MPI_ERR_TAG, "Irecv with tag MPI_TAG_UB+1");
        if (rc == MPI_SUCCESS)
            undo_irecv(&req);
    }
    /* tag_ub itself is valid. */
    CHECK_RC(MPI_Isend(buf, 1, MPI_INT, mtest_rank, tag_ub, MPI_COMM_WORLD, &req));
    int x = -1;
    MPI_Status st;
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, mtest_rank, tag_ub, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_INT(x, 1, "data of a message with tag MPI_TAG_UB");
    CHECK_INT(st.MPI_TAG, tag_ub, "status tag of a message with tag MPI_TAG_UB");
    req = MPI_REQUEST_NULL;
    rc = MPI_Irecv(buf, 1, MPI_INT, mtest_rank, -5, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_TAG, "Irecv with tag -5");
    if (rc == MPI_SUCCESS)
        undo_irecv(&req);
    check_no_stray();
    mtest_end();
}

static void test_bad_count_type_buffer(void)
{
    mtest_begin("err_count_type_buffer");
    int buf[4] = {1, 2, 3, 4}, rc, size = -1;
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Send(buf, -1, MPI_INT, mtest_rank, 1, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "Send with count -1");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Send");
    rc = MPI_Irecv(buf, -1, MPI_INT, mtest_rank, 1, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "Irecv with count -1");
    if (rc == MPI_SUCCESS)
        undo_irecv(&req);

    rc = MPI_Send(buf, 1, MPI_DATATYPE_NULL, mtest_rank, 1, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "Send with MPI_DATATYPE_NULL");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Send");
    req = MPI_REQUEST_NULL;
    rc = MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, mtest_rank, 1, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "Irecv with MPI_DATATYPE_NULL");
    if (rc == MPI_SUCCESS)
        undo_irecv(&req);
    CHECK_CLASS(MPI_Type_size(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE, "Type_size(MPI_DATATYPE_NULL)");
    CHECK_CLASS(MPI_Send(buf, 1, (MPI_Datatype)0x12345, mtest_rank, 1, MPI_COMM_WORLD), MPI_ERR_TYPE,
                "Send with a garbage datatype handle");

    rc = MPI_Send(NULL, 1, MPI_INT, mtest_rank, 1, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_BUFFER, "Send of NULL with count 1");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Send");
    /* NULL with count 0 is fine. */
    CHECK_RC(MPI_Isend(NULL, 0, MPI_INT, mtest_rank, 2, MPI_COMM_WORLD, &req));
    MPI_Status st;
    CHECK_RC(MPI_Recv(NULL, 0, MPI_INT, mtest_rank, 2, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_STATUS(&st, mtest_rank, 2, 0, "zero-count message with NULL buffers");
    check_no_stray();
    mtest_end();
}

static void test_bad_request(void)
{
    mtest_begin("err_request");
    MPI_Request bad[] = {(MPI_Request)12345, (MPI_Request)MPI_COMM_WORLD, (MPI_Request)0x2c00ffff};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        MPI_Request r = bad[i];
        int flag = 0, rc;
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK_CLASS(rc, MPI_ERR_REQUEST, "Wait on a garbage request handle");
        if (rc != MPI_SUCCESS)
            check_mentions(rc, "MPI_Wait");
        r = bad[i];
        CHECK_CLASS(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "Test on a garbage request handle");
        r = bad[i];
        CHECK_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST, "Request_free on a garbage request handle");
    }
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST, "Request_free(MPI_REQUEST_NULL)");
    mtest_end();
}

static void test_truncate(void)
{
    mtest_begin("err_truncate");
    int src[10], dst[10], rc;
    MPI_Request sreq;
    MPI_Status st;
    for (int i = 0; i < 10; i++)
        src[i] = 100 + i;

    /* Small message to self, receive too short. */
    CHECK_RC(MPI_Isend(src, 10, MPI_INT, mtest_rank, 20, MPI_COMM_WORLD, &sreq));
    rc = MPI_Recv(dst, 5, MPI_INT, mtest_rank, 20, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "Recv of 10 ints into 5");
    if (rc != MPI_SUCCESS)
        check_mentions(rc, "MPI_Recv");
    CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* Large message between partners (rendezvous-sized), receiver too short:
     * the receiver gets MPI_ERR_TRUNCATE, the sender completes normally. */
    int partner = mtest_partner();
    size_t big = 256 * 1024;
    char *b = malloc(big);
    mtest_fill(b, big, 7);
    CHECK_RC(MPI_Isend(b, (int)big, MPI_BYTE, partner, 21, MPI_COMM_WORLD, &sreq));
    char *small = malloc(4000);
    MPI_Request rreq;
    CHECK_RC(MPI_Irecv(small, 4000, MPI_BYTE, partner, 21, MPI_COMM_WORLD, &rreq));
    rc = MPI_Wait(&rreq, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "Irecv+Wait of 256 KB into 4000 bytes");
    CHECK(rreq == MPI_REQUEST_NULL, "request not freed after a failed Wait");
    CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    free(small);
    free(b);

    /* Waitall: one truncated receive among good ones. */
    int other[2] = {7, 8}, odst[2] = {0, 0};
    MPI_Request reqs[4];
    MPI_Status sts[4];
    CHECK_RC(MPI_Isend(src, 10, MPI_INT, mtest_rank, 22, MPI_COMM_WORLD, &reqs[2]));
    CHECK_RC(MPI_Isend(other, 2, MPI_INT, mtest_rank, 23, MPI_COMM_WORLD, &reqs[3]));
    CHECK_RC(MPI_Irecv(dst, 5, MPI_INT, mtest_rank, 22, MPI_COMM_WORLD, &reqs[0]));
    CHECK_RC(MPI_Irecv(odst, 2, MPI_INT, mtest_rank, 23, MPI_COMM_WORLD, &reqs[1]));
    for (int i = 0; i < 4; i++)
        sts[i].MPI_ERROR = -12345;
    rc = MPI_Waitall(4, reqs, sts);
    CHECK_INT(rc, MPI_ERR_IN_STATUS, "Waitall return code with one truncated receive");
    if (rc == MPI_ERR_IN_STATUS) {
        int cls = -1;
        MPI_Error_class(sts[0].MPI_ERROR, &cls);
        CHECK_INT(cls, MPI_ERR_TRUNCATE, "class of status[0].MPI_ERROR (truncated receive)");
        CHECK(reqs[0] == MPI_REQUEST_NULL, "failed request not freed by Waitall");
        for (int i = 1; i < 4; i++) {
            CHECK(sts[i].MPI_ERROR == MPI_SUCCESS || sts[i].MPI_ERROR == MPI_ERR_PENDING,
                  "status[%d].MPI_ERROR = %d, expected MPI_SUCCESS or MPI_ERR_PENDING", i, sts[i].MPI_ERROR);
            if (sts[i].MPI_ERROR == MPI_SUCCESS)
                CHECK(reqs[i] == MPI_REQUEST_NULL, "completed request %d not freed", i);
        }
    }
    for (int i = 0; i < 4; i++)
        if (reqs[i] != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
    CHECK(odst[0] == 7 && odst[1] == 8, "good receive in a failing Waitall got %d %d", odst[0], odst[1]);
    check_no_stray();
    mtest_end();
}

static void test_bsend_overflow(void)
{
    mtest_begin("err_bsend_overflow");
    int bsize = 100 + MPI_BSEND_OVERHEAD, rc;
    char *bbuf = malloc((size_t)bsize);
    char msg[1000];
    memset(msg, 3, sizeof msg);
    CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
    rc = MPI_Bsend(msg, (int)sizeof msg, MPI_BYTE, mtest_rank, 30, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_BUFFER, "Bsend of 1000 bytes with a 100+MPI_BSEND_OVERHEAD byte buffer");
    if (rc == MPI_SUCCESS)
        MPI_Recv(msg, (int)sizeof msg, MPI_BYTE, mtest_rank, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* A message that fits still works after the failure. */
    CHECK_RC(MPI_Bsend(msg, 50, MPI_BYTE, mtest_rank, 31, MPI_COMM_WORLD));
    MPI_Status st;
    CHECK_RC(MPI_Recv(msg, (int)sizeof msg, MPI_BYTE, mtest_rank, 31, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, mtest_rank, 31, 50, "Bsend that fits after an overflow");
    void *det = NULL;
    int dsize = -1;
    CHECK_RC(MPI_Buffer_detach(&det, &dsize));
    CHECK(det == bbuf, "Buffer_detach pointer %p, attached %p", det, (void *)bbuf);
    CHECK_INT(dsize, bsize, "Buffer_detach size");
    free(bbuf);
    check_no_stray();
    mtest_end();
}

static int handler_calls;
static MPI_Comm handler_comm;
static int handler_code;

static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm = *comm;
    handler_code = *code;
}

static void test_user_handler(void)
{
    mtest_begin("user_errhandler");
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    int buf = 5, rc;
    CHECK_RC(MPI_Comm_create_errhandler(my_handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "Comm_create_errhandler gave MPI_ERRHANDLER_NULL");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == eh, "Comm_get_errhandler 0x%x, set 0x%x", (unsigned)got, (unsigned)eh);
    MPI_Errhandler_free(&got);

    handler_calls = 0;
    handler_code = -1;
    handler_comm = MPI_COMM_NULL;
    rc = MPI_Send(&buf, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
    CHECK_INT(handler_calls, 1, "user handler calls after a bad Send");
    CHECK(handler_comm == MPI_COMM_WORLD, "handler got comm 0x%x, expected MPI_COMM_WORLD", (unsigned)handler_comm);
    int cls = -1;
    MPI_Error_class(handler_code, &cls);
    CHECK_INT(cls, MPI_ERR_RANK, "class of the code given to the user handler");
    CHECK_INT(rc, handler_code, "Send return value vs code given to the handler");

    handler_calls = 0;
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK_INT(rc, MPI_SUCCESS, "Comm_call_errhandler return value");
    CHECK_INT(handler_calls, 1, "user handler calls after Comm_call_errhandler");
    CHECK_INT(handler_code, MPI_ERR_OTHER, "code given by Comm_call_errhandler");
    CHECK(handler_comm == MPI_COMM_WORLD, "Comm_call_errhandler: handler got comm 0x%x", (unsigned)handler_comm);

    /* SELF still has ERRORS_RETURN: its errors do not reach the WORLD handler. */
    handler_calls = 0;
    rc = MPI_Send(&buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    CHECK_CLASS(rc, MPI_ERR_RANK, "Send to rank 1 on SELF");
    CHECK_INT(handler_calls, 0, "WORLD user handler calls for an error on SELF");

    /* Freeing the handle keeps the handler alive while attached. */
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not null the handle");
    handler_calls = 0;
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_ARG);
    CHECK_INT(handler_calls, 1, "handler calls after freeing the attached handler's handle");
    CHECK_INT(handler_code, MPI_ERR_ARG, "code after freeing the handle");

    /* A handler on SELF gets MPI_COMM_SELF. */
    MPI_Errhandler eh2 = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_create_errhandler(my_handler, &eh2));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh2));
    handler_calls = 0;
    rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_TAG);
    CHECK_INT(handler_calls, 1, "SELF handler calls");
    CHECK(handler_comm == MPI_COMM_SELF, "SELF handler got comm 0x%x", (unsigned)handler_comm);
    CHECK_INT(handler_code, MPI_ERR_TAG, "SELF handler code");
    CHECK_RC(MPI_Errhandler_free(&eh2));

    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    handler_calls = 0;
    rc = MPI_Send(&buf, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_RANK, "bad Send after restoring MPI_ERRORS_RETURN");
    CHECK_INT(handler_calls, 0, "user handler calls after restoring MPI_ERRORS_RETURN");
    check_no_stray();
    mtest_end();
}

/* Handlers created and freed by the thousand (MPICH errhan/commcall):
 * freed ones are reclaimed once no communicator uses them, and one still
 * set on a communicator keeps working. */
static void test_many_handlers(void)
{
    mtest_begin("many_errhandlers");
    MPI_Errhandler kept;
    CHECK_RC(MPI_Comm_create_errhandler(my_handler, &kept));
    MPI_Comm keep;
    MPI_Comm_dup(MPI_COMM_SELF, &keep);
    CHECK_RC(MPI_Comm_set_errhandler(keep, kept));
    CHECK_RC(MPI_Errhandler_free(&kept));
    for (int i = 0; i < 1000 && mtest_sub_errors == 0; i++) {
        MPI_Comm c, c2;
        MPI_Errhandler eh;
        MPI_Comm_dup(MPI_COMM_SELF, &c);
        CHECK_RC(MPI_Comm_create_errhandler(my_handler, &eh));
        CHECK_RC(MPI_Comm_set_errhandler(c, eh));
        MPI_Comm_dup(c, &c2);
        handler_calls = 0;
        CHECK_RC(MPI_Comm_call_errhandler(c2, MPI_ERR_OTHER));
        CHECK_INT(handler_calls, 1, "handler inherited by a dup");
        CHECK_INT(handler_code, MPI_ERR_OTHER, "code given to the handler");
        CHECK(handler_comm == c2, "handler got comm 0x%x, expected 0x%x", (unsigned)handler_comm,
              (unsigned)c2);
        CHECK_RC(MPI_Errhandler_free(&eh));
        MPI_Comm_free(&c);
        MPI_Comm_free(&c2);
    }
    handler_calls = 0;
    CHECK_RC(MPI_Comm_call_errhandler(keep, MPI_ERR_TAG));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_TAG && handler_comm == keep,
          "a freed handler still set on a communicator");
    MPI_Comm_free(&keep);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub = flag && ub ? *ub : 32767;

    test_default();
    test_bad_comm();
    test_bad_rank();
    test_bad_tag();
    test_bad_count_type_buffer();
    test_bad_request();
    test_truncate();
    test_bsend_overflow();
    test_user_handler();
    test_many_handlers();
    return mtest_finalize();
}

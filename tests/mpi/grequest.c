/* Generalized requests: the callbacks run when the standard says (query_fn
 * when Wait/Test complete the request or Request_get_status finds it
 * complete; free_fn after query_fn, or in the later of MPI_Request_free
 * and MPI_Grequest_complete; cancel_fn in MPI_Cancel with the completion
 * flag), the status is the one query_fn wrote, callback errors come back
 * (free_fn's over query_fn's; MPI_ERR_IN_STATUS with per-status codes in
 * the multi-request calls), mixed with ordinary requests, and the
 * argument errors. */
#include "mtest.h"

typedef struct {
    char log[64]; /* q = query, f = free, c = cancel (0/1: complete flag) */
    int query_err, free_err;
    int cancelled;
} state_t;

static void add(state_t *s, char c)
{
    size_t n = strlen(s->log);
    if (n + 1 < sizeof s->log) {
        s->log[n] = c;
        s->log[n + 1] = 0;
    }
}

static int query_fn(void *extra, MPI_Status *status)
{
    state_t *s = extra;
    add(s, 'q');
    status->MPI_SOURCE = 11;
    status->MPI_TAG = 22;
    MPI_Status_set_elements(status, MPI_INT, 5);
    MPI_Status_set_cancelled(status, s->cancelled);
    return s->query_err;
}

static int free_fn(void *extra)
{
    state_t *s = extra;
    add(s, 'f');
    return s->free_err;
}

static int cancel_fn(void *extra, int complete)
{
    state_t *s = extra;
    add(s, complete ? '1' : '0');
    s->cancelled = 1;
    return MPI_SUCCESS;
}

static void test_wait_test(void)
{
    mtest_begin("grequest_wait_test");
    state_t s = {0};
    MPI_Request r;
    MPI_Status st;
    int flag = 1, count = -1;
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    CHECK_RC(MPI_Test(&r, &flag, &st));
    CHECK(!flag, "not complete before MPI_Grequest_complete");
    CHECK_RC(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag && s.log[0] == 0, "get_status before completion calls nothing: %s", s.log);
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK(s.log[0] == 0, "complete calls nothing: %s", s.log);
    CHECK_RC(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && !strcmp(s.log, "q"), "get_status after completion queries: %s", s.log);
    CHECK_INT(st.MPI_SOURCE, 11, "status source from query_fn");
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(!strcmp(s.log, "qqf"), "wait: query then free: %s", s.log);
    CHECK(r == MPI_REQUEST_NULL, "request freed");
    CHECK_INT(st.MPI_TAG, 22, "status tag from query_fn");
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 5, "count from query_fn");
    /* Test completes it too; MPI_STATUS_IGNORE still calls query_fn. */
    state_t t = {0};
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t, &r));
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && r == MPI_REQUEST_NULL && !strcmp(t.log, "qf"), "test: %s", t.log);
    mtest_end();
}

static void test_free_cancel(void)
{
    mtest_begin("grequest_free_cancel");
    /* Request_free first: free_fn runs in Grequest_complete. */
    state_t s = {0};
    MPI_Request r, keep;
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    keep = r;
    CHECK_RC(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && s.log[0] == 0, "free before completion waits: %s", s.log);
    CHECK_RC(MPI_Grequest_complete(keep));
    CHECK(!strcmp(s.log, "f"), "free_fn in Grequest_complete, no query: %s", s.log);
    /* Complete first: free_fn runs in Request_free. */
    state_t t = {0};
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t, &r));
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK_RC(MPI_Request_free(&r));
    CHECK(!strcmp(t.log, "f"), "free_fn in Request_free: %s", t.log);
    /* Cancel: before and after completion. */
    state_t u = {0};
    MPI_Status st;
    int flag = 0;
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &u, &r));
    CHECK_RC(MPI_Cancel(&r));
    CHECK_RC(MPI_Grequest_complete(r));
    CHECK_RC(MPI_Cancel(&r));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(!strcmp(u.log, "01qf"), "cancel flags then query, free: %s", u.log);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "cancelled as query_fn said");
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("grequest_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int mycode, cls = -1;
    MPI_Add_error_code(MPI_ERR_OTHER, &mycode);
    /* query_fn's code when free_fn succeeds; free_fn's when it fails. */
    state_t s = {.query_err = MPI_ERR_ARG};
    MPI_Request r[3];
    MPI_Status st[3];
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r[0]);
    MPI_Grequest_complete(r[0]);
    CHECK_INT(MPI_Wait(&r[0], &st[0]), MPI_ERR_ARG, "query_fn's code");
    CHECK(r[0] == MPI_REQUEST_NULL && !strcmp(s.log, "qf"), "still freed: %s", s.log);
    state_t t = {.query_err = MPI_ERR_ARG, .free_err = mycode};
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t, &r[0]);
    MPI_Grequest_complete(r[0]);
    int rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK_INT(rc, mycode, "free_fn's code wins");
    MPI_Error_class(rc, &cls);
    CHECK_INT(cls, MPI_ERR_OTHER, "class of the user code");
    /* Waitall: MPI_ERR_IN_STATUS, each status with its request's code. */
    state_t a = {0}, b = {.free_err = mycode};
    int x = 0, y = 1;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &a, &r[0]);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &b, &r[1]);
    MPI_Irecv(&x, 1, MPI_INT, mtest_rank, 4, MPI_COMM_WORLD, &r[2]);
    MPI_Send(&y, 1, MPI_INT, mtest_rank, 4, MPI_COMM_WORLD);
    MPI_Grequest_complete(r[1]);
    MPI_Grequest_complete(r[0]);
    rc = MPI_Waitall(3, r, st);
    CHECK_INT(rc, MPI_ERR_IN_STATUS, "waitall");
    CHECK_INT(st[0].MPI_ERROR, MPI_SUCCESS, "status 0");
    CHECK_INT(st[1].MPI_ERROR, mycode, "status 1 has free_fn's code");
    CHECK_INT(st[2].MPI_ERROR, MPI_SUCCESS, "the receive's status");
    CHECK_INT(x, 1, "received");
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "all freed");
    /* Waitany over an incomplete one and a complete one. */
    state_t c = {0}, d = {0};
    int idx = -1;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r[0]);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &d, &r[1]);
    MPI_Grequest_complete(r[1]);
    CHECK_RC(MPI_Waitany(2, r, &idx, &st[0]));
    CHECK_INT(idx, 1, "the completed one");
    CHECK(c.log[0] == 0 && !strcmp(d.log, "qf"), "callbacks: %s / %s", c.log, d.log);
    MPI_Grequest_complete(r[0]);
    CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    /* Bad arguments. */
    MPI_Request rr;
    MPI_Irecv(&x, 1, MPI_INT, mtest_rank, 5, MPI_COMM_WORLD, &rr);
    CHECK_CLASS(MPI_Grequest_complete(rr), MPI_ERR_REQUEST, "not a generalized request");
    CHECK_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST, "MPI_REQUEST_NULL");
    MPI_Send(&y, 1, MPI_INT, mtest_rank, 5, MPI_COMM_WORLD);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    state_t e = {0};
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &e, &r[0]);
    MPI_Grequest_complete(r[0]);
    CHECK_CLASS(MPI_Grequest_complete(r[0]), MPI_ERR_REQUEST, "completed twice");
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK_CLASS(MPI_Grequest_start(NULL, free_fn, cancel_fn, NULL, &r[0]), MPI_ERR_ARG,
                "NULL query_fn");
    CHECK_CLASS(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, NULL), MPI_ERR_ARG,
                "NULL request");
    MPI_Remove_error_code(mycode);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_wait_test();
    test_free_cancel();
    test_errors();
    return mtest_finalize();
}

/* Sessions beside the world model, in both orders:
 *   init-first:    MPI_Init, MPI_Session_init; MPI_Finalize while the
 *                  session is open, whose communicator still works after
 *                  it; MPI_Session_finalize ends MPI, which a new
 *                  session starts again;
 *   session-first: MPI_Session_init, MPI_Init (which finds the runtime
 *                  up), MPI_Session_finalize while the world model runs,
 *                  whose communicators still work; MPI_Finalize ends MPI.
 * MPI_Initialized and MPI_Finalized follow the world model only. */
#include "stest.h"

static MPI_Comm session_comm(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CHECK_RC(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Group_free(&g);
    return c;
}

static void check_sum(MPI_Comm c, const char *what)
{
    int rank, size, sum = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "%s: Allreduce gave %d", what, sum);
}

static void check_flags(int initialized, int finalized, const char *what)
{
    int i = -1, f = -1;
    MPI_Initialized(&i);
    MPI_Finalized(&f);
    CHECK(i == initialized && f == finalized, "%s: Initialized %d, Finalized %d", what, i, f);
}

static int init_first(void)
{
    stest_where = "init-first";
    MPI_Init(NULL, NULL);
    MPI_Session s = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    check_flags(1, 0, "after MPI_Init and MPI_Session_init");
    MPI_Comm c = session_comm(s, "tern.test.init-first");
    /* Both communicators carry traffic, and their messages stay apart. */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, a = -1, b = -1;
    MPI_Request r[4];
    int va = 100 + rank, vb = 200 + rank;
    MPI_Irecv(&a, 1, MPI_INT, from, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&b, 1, MPI_INT, from, 0, c, &r[1]);
    MPI_Isend(&vb, 1, MPI_INT, to, 0, c, &r[2]);
    MPI_Isend(&va, 1, MPI_INT, to, 0, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    CHECK(a == 100 + from && b == 200 + from, "world got %d, session comm got %d", a, b);
    check_sum(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    CHECK_RC(MPI_Finalize());
    check_flags(1, 1, "after MPI_Finalize");
    /* The session outlives the world model. */
    check_sum(c, "session communicator after MPI_Finalize");
    int status = stest_report(c, "session_world init-first");
    MPI_Comm_free(&c);
    CHECK_RC(MPI_Session_finalize(&s));
    /* MPI ended; a session starts it again (MPI-4.1 11.3), and its
     * communicators work. */
    MPI_Session again = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &again));
    check_flags(1, 1, "after MPI started again");
    MPI_Comm c3 = session_comm(again, "tern.test.again");
    check_sum(c3, "communicator of the session started again");
    MPI_Comm_free(&c3);
    CHECK_RC(MPI_Session_finalize(&again));
    return status || stest_errors;
}

static int session_first(void)
{
    stest_where = "session-first";
    MPI_Session s = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    check_flags(0, 0, "after MPI_Session_init");
    MPI_Comm c = session_comm(s, "tern.test.session-first");
    int provided = -1;
    CHECK_RC(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
    CHECK_INT(provided, MPI_THREAD_FUNNELED, "provided");
    check_flags(1, 0, "after MPI_Init");
    check_sum(c, "session communicator");
    check_sum(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    /* A second session while both run. */
    MPI_Session s2 = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Comm c2 = session_comm(s2, "tern.test.second");
    check_sum(c2, "second session's communicator");
    MPI_Comm_free(&c2);
    CHECK_RC(MPI_Session_finalize(&s2));
    MPI_Comm_free(&c);
    CHECK_RC(MPI_Session_finalize(&s));
    /* The world model still runs. */
    check_sum(MPI_COMM_WORLD, "MPI_COMM_WORLD after MPI_Session_finalize");
    int status = stest_report(MPI_COMM_WORLD, "session_world session-first");
    CHECK_RC(MPI_Finalize());
    check_flags(1, 1, "after MPI_Finalize");
    return status || stest_errors;
}

int main(int argc, char **argv)
{
    stest_watchdog();
    if (argc > 1 && strcmp(argv[1], "session-first") == 0)
        return session_first();
    return init_first();
}

/* A program that never calls MPI_Init: everything through sessions. Psets
 * (names, the pset_len rules, mpi_size), groups and communicators from
 * them, point-to-point and collectives on those, a communicator of a
 * subgroup built while the other ranks build their own, an
 * intercommunicator between the two, session error handlers, a second
 * session with a thread level, and the error classes of bad arguments. */
#include "stest.h"

static int handler_calls, handler_last_code;
static MPI_Session handler_last_session = MPI_SESSION_NULL;

static void on_session_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_last_session = *s;
    handler_last_code = *code;
}

static void on_comm_error(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
}

static void check_psets(MPI_Session s, int size)
{
    stest_where = "psets";
    static const char *const want[] = {"mpi://WORLD", "mpi://SELF", "tern://node"};
    int np = -1;
    CHECK_RC(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &np));
    CHECK_INT(np, 3, "number of psets");
    for (int i = 0; i < np && i < 3; i++) {
        int len = 0;
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK_INT(len, strlen(want[i]) + 1, "pset_len of a length query");
        char name[MPI_MAX_PSET_NAME_LEN];
        CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(strcmp(name, want[i]) == 0, "pset %d is \"%s\", expected \"%s\"", i, name, want[i]);
    }
    /* A short buffer: pset_len - 1 characters and a NUL, the full length back. */
    char small[5] = "xxxx";
    int len = 5;
    CHECK_RC(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, small));
    CHECK(strcmp(small, "mpi:") == 0, "truncated name \"%s\"", small);
    CHECK_INT(len, 12, "pset_len after truncation");
    len = 0;
    CHECK_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 3, &len, NULL), MPI_ERR_ARG,
                "n=3 is out of range");
    CHECK_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, NULL), MPI_ERR_ARG,
                "n=-1");

    /* mpi_size of each set (one host: the node holds every rank). */
    const char *const sets[] = {"mpi://WORLD", "mpi://self", "tern://node"};
    const int sizes[] = {size, 1, size};
    for (int i = 0; i < 3; i++) {
        MPI_Info info;
        CHECK_RC(MPI_Session_get_pset_info(s, sets[i], &info));
        char v[32] = "";
        int flag = 0;
        CHECK_RC(MPI_Info_get(info, "mpi_size", sizeof v - 1, v, &flag));
        CHECK(flag && atoi(v) == sizes[i], "%s: mpi_size \"%s\", expected %d", sets[i], v,
              sizes[i]);
        MPI_Info_free(&info);
    }
    MPI_Info info = MPI_INFO_NULL;
    CHECK_CLASS(MPI_Session_get_pset_info(s, "mpi://nothing", &info), MPI_ERR_ARG,
                "MPI_Session_get_pset_info: pset_name \"mpi://nothing\" is not a process set");
    MPI_Group g;
    CHECK_CLASS(MPI_Group_from_session_pset(s, "WORLD", &g), MPI_ERR_ARG, "not a process set");
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    int gs = -1, gr = -1;
    MPI_Group_size(g, &gs);
    MPI_Group_rank(g, &gr);
    CHECK(gs == 1 && gr == 0, "mpi://SELF: size %d rank %d", gs, gr);
    MPI_Group_free(&g);
}

static void check_world_comm(MPI_Comm wc, int rank, int size)
{
    stest_where = "world communicator";
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, wc,
                          MPI_STATUS_IGNORE));
    CHECK_INT(got, prev, "ring value");
    int sum = -1;
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, wc));
    CHECK_INT(sum, size * (size - 1) / 2, "Allreduce of the ranks");
    int root_val = rank == size - 1 ? 4242 : 0;
    CHECK_RC(MPI_Bcast(&root_val, 1, MPI_INT, size - 1, wc));
    CHECK_INT(root_val, 4242, "Bcast from the last rank");
    /* MPI-4.1 10.1.2: MPI_TAG_UB is attached to communicators made from
     * groups. */
    int *ub = NULL, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(wc, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB: flag %d", flag);
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(wc, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the communicator's handler is 0x%x", (unsigned)eh);
}

/* Even ranks make a communicator of theirs while odd ranks make one of
 * theirs (another tag); then an intercommunicator joins the two. */
static void check_subgroups(MPI_Group wg, int rank, int size)
{
    stest_where = "subgroups";
    int mine[64], other[64], nm = 0, no = 0;
    for (int r = 0; r < size; r++) {
        if (r % 2 == rank % 2)
            mine[nm++] = r;
        else
            other[no++] = r;
    }
    MPI_Group mg, og;
    MPI_Group_incl(wg, nm, mine, &mg);
    MPI_Group_incl(wg, no, other, &og);
    MPI_Comm pc;
    CHECK_RC(MPI_Comm_create_from_group(mg, rank % 2 ? "tern.test.odd" : "tern.test.even",
                                        MPI_INFO_NULL, MPI_ERRORS_RETURN, &pc));
    int ps = -1, pr = -1, sum = -1;
    MPI_Comm_size(pc, &ps);
    MPI_Comm_rank(pc, &pr);
    CHECK_INT(ps, nm, "size of my parity's communicator");
    CHECK_INT(pr, rank / 2, "rank in my parity's communicator");
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, pc));
    int want = 0;
    for (int i = 0; i < nm; i++)
        want += mine[i];
    CHECK_INT(sum, want, "Allreduce over my parity");
    MPI_Comm_free(&pc);

    /* Not a member: MPI_COMM_NULL at once (tests/session/session_from_group.c). */
    MPI_Comm bad = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_create_from_group(og, "tern.test.bad", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &bad));
    CHECK(bad == MPI_COMM_NULL, "a non-member got 0x%x", (unsigned)bad);
    CHECK_CLASS(MPI_Intercomm_create_from_groups(mg, nm, og, 0, "tern.test.bad", MPI_INFO_NULL,
                                                 MPI_ERRORS_RETURN, &bad),
                MPI_ERR_RANK, "local_leader");
    CHECK_CLASS(MPI_Intercomm_create_from_groups(mg, 0, mg, 0, "tern.test.bad", MPI_INFO_NULL,
                                                 MPI_ERRORS_RETURN, &bad),
                MPI_ERR_GROUP, "disjoint");
    char longtag[MPI_MAX_STRINGTAG_LEN + 8];
    memset(longtag, 'a', sizeof longtag - 1);
    longtag[sizeof longtag - 1] = 0;
    CHECK_CLASS(MPI_Comm_create_from_group(mg, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad),
                MPI_ERR_ARG, "stringtag");

    if (no > 0) {
        /* Leaders: the last of each group. */
        MPI_Comm ic;
        CHECK_RC(MPI_Intercomm_create_from_groups(mg, nm - 1, og, no - 1, "tern.test.inter",
                                                  MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        int inter = 0, rs = -1;
        MPI_Comm_test_inter(ic, &inter);
        MPI_Comm_remote_size(ic, &rs);
        CHECK(inter, "not an intercommunicator");
        CHECK_INT(rs, no, "remote size");
        /* Rank i of each side sends its world rank to rank i of the other
         * where both exist. */
        int lr = -1, got = -1;
        MPI_Comm_rank(ic, &lr);
        if (lr < no) {
            CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, lr, 3, &got, 1, MPI_INT, lr, 3, ic,
                                  MPI_STATUS_IGNORE));
            CHECK_INT(got, other[lr], "world rank across the intercommunicator");
        }
        CHECK_RC(MPI_Barrier(ic));
        MPI_Comm_free(&ic);
    }
    MPI_Group_free(&mg);
    MPI_Group_free(&og);
}

static void check_errhandlers(MPI_Session s, MPI_Errhandler seh, MPI_Comm wc)
{
    stest_where = "session error handlers";
    CHECK_RC(MPI_Session_set_errhandler(s, seh));
    MPI_Errhandler got;
    CHECK_RC(MPI_Session_get_errhandler(s, &got));
    CHECK(got == seh, "get_errhandler gave 0x%x", (unsigned)got);
    CHECK_RC(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_last_session == s && handler_last_code == MPI_ERR_OTHER,
          "call_errhandler: %d calls, session 0x%x, code %d", handler_calls,
          (unsigned)handler_last_session, handler_last_code);
    /* An error of a session procedure goes to the session's handler. */
    MPI_Group g;
    int rc = MPI_Group_from_session_pset(s, "mpi://none", &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_from_session_pset");
    CHECK(handler_calls == 2 && handler_last_code == rc, "handler saw %d calls, code %d (rc %d)",
          handler_calls, handler_last_code, rc);
    /* A handler made for communicators does not serve a session. */
    MPI_Errhandler ceh;
    CHECK_RC(MPI_Comm_create_errhandler(on_comm_error, &ceh));
    CHECK_CLASS(MPI_Session_set_errhandler(s, ceh), MPI_ERR_ARG, "made for communicators");
    CHECK_CLASS(MPI_Comm_set_errhandler(wc, seh), MPI_ERR_ARG, "made for sessions");
    MPI_Errhandler_free(&ceh);
    CHECK_RC(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    int n;
    CHECK_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION,
                "session is MPI_SESSION_NULL");
    CHECK_CLASS(MPI_Session_get_num_psets((MPI_Session)0xb8000123, MPI_INFO_NULL, &n),
                MPI_ERR_SESSION, "invalid session handle");
}

static int other_calls;

static void other_session_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    (void)code;
    other_calls++;
}

/* Handlers the user freed are reclaimed when the table is full, but not
 * one a session still uses. */
static void check_errhandler_reclaim(MPI_Session s)
{
    stest_where = "handler reclaim";
    MPI_Errhandler ehs[256];
    int n = 0;
    while (n < 256 && MPI_Session_create_errhandler(on_session_error, &ehs[n]) == MPI_SUCCESS)
        n++;
    CHECK(n > 0 && n < 256, "%d handlers made before the table was full", n);
    CHECK_RC(MPI_Session_set_errhandler(s, ehs[0]));
    for (int i = 0; i < n; i++)
        MPI_Errhandler_free(&ehs[i]);
    MPI_Errhandler again[256];
    int m = 0;
    while (m < 256 && MPI_Session_create_errhandler(other_session_error, &again[m]) == MPI_SUCCESS)
        m++;
    CHECK_INT(m, n - 1, "handlers made again (all but the session's)");
    int before = handler_calls;
    CHECK_RC(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == before + 1 && other_calls == 0,
          "the session's freed handler was reused: %d, %d calls", handler_calls - before,
          other_calls);
    CHECK_RC(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    for (int i = 0; i < m; i++)
        MPI_Errhandler_free(&again[i]);
}

/* A second session asking for a thread level by name. */
static void check_second_session(void)
{
    stest_where = "second session";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "mpi_thread_funneled");
    MPI_Session s2 = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(info, MPI_ERRORS_RETURN, &s2));
    MPI_Info used;
    CHECK_RC(MPI_Session_get_info(s2, &used));
    char v[64] = "";
    int flag = 0;
    MPI_Info_get(used, "thread_level", sizeof v - 1, v, &flag);
    CHECK(flag && strcmp(v, "MPI_THREAD_FUNNELED") == 0, "thread_level \"%s\"", v);
    MPI_Info_free(&used);
    /* MPI_THREAD_MULTIPLE is granted and reported as granted. */
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    MPI_Session sm = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(info, MPI_ERRORS_RETURN, &sm));
    CHECK_RC(MPI_Session_get_info(sm, &used));
    flag = 0;
    MPI_Info_get(used, "thread_level", sizeof v - 1, v, &flag);
    CHECK(flag && strcmp(v, "MPI_THREAD_MULTIPLE") == 0, "thread_level \"%s\"", v);
    MPI_Info_free(&used);
    /* Once in force, MULTIPLE is what a session asking for nothing gets
     * (MPICH's threads/init/mult_session). */
    MPI_Session sd = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &sd));
    CHECK_RC(MPI_Session_get_info(sd, &used));
    flag = 0;
    MPI_Info_get(used, "thread_level", sizeof v - 1, v, &flag);
    CHECK(flag && strcmp(v, "MPI_THREAD_MULTIPLE") == 0, "default thread_level after MULTIPLE \"%s\"",
          v);
    MPI_Info_free(&used);
    CHECK_RC(MPI_Session_finalize(&sd));
    CHECK_RC(MPI_Session_finalize(&sm));
    MPI_Info_set(info, "thread_level", "lots");
    MPI_Session s3 = MPI_SESSION_NULL;
    CHECK_CLASS(MPI_Session_init(info, MPI_ERRORS_RETURN, &s3), MPI_ERR_ARG, "thread_level");
    MPI_Info_free(&info);
    CHECK_RC(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "Session_finalize left 0x%x", (unsigned)s2);
}

int main(void)
{
    stest_watchdog();
    int flag = -1;
    MPI_Initialized(&flag);
    CHECK_INT(flag, 0, "MPI_Initialized before anything");
    MPI_Errhandler seh;
    CHECK_RC(MPI_Session_create_errhandler(on_session_error, &seh));
    MPI_Session s = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    if (s == MPI_SESSION_NULL)
        return 1;
    MPI_Initialized(&flag);
    CHECK_INT(flag, 0, "MPI_Initialized with a session (the world model is not)");
    MPI_Info used;
    CHECK_RC(MPI_Session_get_info(s, &used));
    char v[64] = "";
    MPI_Info_get(used, "thread_level", sizeof v - 1, v, &flag);
    CHECK(flag && strcmp(v, "MPI_THREAD_SINGLE") == 0, "default thread_level \"%s\"", v);
    MPI_Info_free(&used);

    MPI_Group wg;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    MPI_Comm wc = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_create_from_group(wg, "tern.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &wc));
    if (wc == MPI_COMM_NULL)
        return 1;
    int rank, size, grank;
    MPI_Comm_rank(wc, &rank);
    MPI_Comm_size(wc, &size);
    MPI_Group_rank(wg, &grank);
    CHECK_INT(rank, grank, "communicator rank against the group's");

    check_psets(s, size);
    check_world_comm(wc, rank, size);
    check_subgroups(wg, rank, size);
    check_errhandlers(s, seh, wc);
    check_errhandler_reclaim(s);
    check_second_session();
    MPI_Errhandler_free(&seh);

    int status = stest_report(wc, "session_only");
    MPI_Comm_free(&wc);
    MPI_Group_free(&wg);
    if (MPI_Session_finalize(&s) != MPI_SUCCESS)
        status = 1;
    MPI_Finalized(&flag);
    if (flag) {
        fprintf(stderr, "MPI_Finalized is true with no MPI_Init\n");
        status = 1;
    }
    return status;
}

/* MPI_Comm_create_from_group with processes outside the group (issue 31,
 * item 3): a process that passes MPI_GROUP_EMPTY or a group it is not in
 * gets MPI_COMM_NULL at once, without the members, and the members
 * complete without it (this hung). The same with a group of a session
 * initialized after another was finalized (while a third keeps the runtime
 * up: starting MPI again after every session ended is another issue). */
#include "stest.h"

static int rank, size;

/* The even ranks make a communicator; odd ranks pass MPI_GROUP_EMPTY
 * (1 mod 4) or the even ranks' group (3 mod 4). Non-members return first:
 * each tells its even neighbour only after its call returned, and the
 * members wait for that message before they start theirs. */
static void members_only(MPI_Session s, MPI_Comm wc, const char *tag)
{
    MPI_Group wg, evens;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    int ranks[64], n = 0;
    for (int r = 0; r < size; r += 2)
        ranks[n++] = r;
    CHECK_RC(MPI_Group_incl(wg, n, ranks, &evens));
    MPI_Comm c = MPI_COMM_WORLD;
    if (rank % 2) {
        CHECK_RC(MPI_Comm_create_from_group(rank % 4 == 1 ? MPI_GROUP_EMPTY : evens, tag,
                                            MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        CHECK(c == MPI_COMM_NULL, "%s: rank %d (not a member) got 0x%x", tag, rank, (unsigned)c);
        int done = 1;
        CHECK_RC(MPI_Send(&done, 1, MPI_INT, rank - 1, 5, wc));
    } else {
        if (rank + 1 < size) {
            int done = 0;
            CHECK_RC(MPI_Recv(&done, 1, MPI_INT, rank + 1, 5, wc, MPI_STATUS_IGNORE));
            CHECK_INT(done, 1, "the non-member's word");
        }
        CHECK_RC(MPI_Comm_create_from_group(evens, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        CHECK(c != MPI_COMM_NULL, "%s: member %d got MPI_COMM_NULL", tag, rank);
        if (c != MPI_COMM_NULL) {
            int cs = -1, cr = -1, sum = -1;
            MPI_Comm_size(c, &cs);
            MPI_Comm_rank(c, &cr);
            CHECK_INT(cs, n, "size of the members' communicator");
            CHECK_INT(cr, rank / 2, "rank in the members' communicator");
            CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
            CHECK_INT(sum, n * (n - 1), "Allreduce of the members' world ranks");
            CHECK_RC(MPI_Comm_free(&c));
        }
    }
    /* Everyone with MPI_GROUP_EMPTY: MPI_COMM_NULL everywhere. */
    c = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    CHECK(c == MPI_COMM_NULL, "%s: MPI_GROUP_EMPTY gave 0x%x", tag, (unsigned)c);
    CHECK_RC(MPI_Barrier(wc));
    MPI_Group_free(&evens);
    MPI_Group_free(&wg);
}

/* A world communicator of session s. */
static MPI_Comm world_of(MPI_Session s, const char *tag)
{
    MPI_Group wg;
    MPI_Comm wc = MPI_COMM_NULL;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    CHECK_RC(MPI_Comm_create_from_group(wg, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &wc));
    MPI_Group_free(&wg);
    if (wc == MPI_COMM_NULL) {
        fprintf(stderr, "no world communicator\n");
        exit(1);
    }
    return wc;
}

int main(void)
{
    stest_watchdog();
    MPI_Session keep = MPI_SESSION_NULL, s1 = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &keep));
    if (keep == MPI_SESSION_NULL)
        return 1;
    MPI_Comm kc = world_of(keep, "tern.test.keep");
    MPI_Comm_rank(kc, &rank);
    MPI_Comm_size(kc, &size);

    stest_where = "first session";
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
    MPI_Comm c1 = world_of(s1, "tern.test.s1");
    members_only(s1, c1, "tern.test.evens");
    CHECK_RC(MPI_Comm_free(&c1));
    CHECK_RC(MPI_Session_finalize(&s1));

    stest_where = "a session initialized after one was finalized";
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Comm c2 = world_of(s2, "tern.test.s2");
    members_only(s2, c2, "tern.test.evens");
    CHECK_RC(MPI_Comm_free(&c2));
    CHECK_RC(MPI_Session_finalize(&s2));

    int status = stest_report(kc, "session_from_group");
    MPI_Comm_free(&kc);
    if (MPI_Session_finalize(&keep) != MPI_SUCCESS)
        status = 1;
    return status;
}

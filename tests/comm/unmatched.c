/* Messages nobody receives (docs/design.md, "Messages nobody receives"):
 * run by unmatched_test.sh, which checks what the job prints on stderr;
 * this program checks the return codes, by TERN_UNMATCHED.
 *   lost:    rank 0 sends rank 1 three messages on a duplicate named
 *            "lost.comm" (tags 5, 7, 8; rank 1 receives only tag 5) and one
 *            on MPI_COMM_WORLD (tag 9) that rank 1 never receives; rank 1
 *            frees the duplicate (reported there) and finalizes (reported
 *            there). Under TERN_UNMATCHED=error MPI_Comm_free fails on the
 *            communicator's handler and leaves it, and MPI_Finalize
 *            returns the error.
 *   clean:   the same traffic, all received: nothing is reported.
 *   session: no MPI_Init; a communicator from a session's mpi://WORLD,
 *            a message on it never received, MPI_Session_finalize. */
#include "../session/stest.h"

static int error_mode(void)
{
    const char *v = getenv("TERN_UNMATCHED");
    return v && strcmp(v, "error") == 0;
}

static int class_of(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

static int lost(int receive_all)
{
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "lost.comm");
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    char a[40] = "forty", b[3] = "ab", c[16] = "received", w[8] = "world";
    if (rank == 0 && size > 1) {
        MPI_Send(c, 16, MPI_CHAR, 1, 5, dup);
        MPI_Send(a, 40, MPI_CHAR, 1, 7, dup);
        MPI_Send(b, 3, MPI_CHAR, 1, 8, dup);
        MPI_Send(w, 8, MPI_CHAR, 1, 9, MPI_COMM_WORLD);
    }
    int expect_free_error = 0, expect_final_error = 0;
    if (rank == 1) {
        char buf[40];
        MPI_Recv(buf, 16, MPI_CHAR, 0, 5, dup, MPI_STATUS_IGNORE);
        CHECK(strcmp(buf, "received") == 0, "tag 5 carried \"%s\"", buf);
        if (receive_all) {
            MPI_Recv(buf, 40, MPI_CHAR, 0, 7, dup, MPI_STATUS_IGNORE);
            MPI_Recv(buf, 3, MPI_CHAR, 0, 8, dup, MPI_STATUS_IGNORE);
            MPI_Recv(buf, 8, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            /* The messages of tags 7 and 8 are here once the probe sees
             * the later one (a pair's messages arrive in order). */
            int flag = 0;
            while (!flag)
                MPI_Iprobe(0, 8, dup, &flag, MPI_STATUS_IGNORE);
            expect_free_error = expect_final_error = error_mode();
        }
    }
    int rc = MPI_Comm_free(&dup);
    if (expect_free_error) {
        CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_OTHER,
              "MPI_Comm_free returned %d (class %d), expected MPI_ERR_OTHER", rc, class_of(rc));
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        CHECK(strstr(text, "2 messages arrived and were never received") != NULL,
              "MPI_Comm_free's error says \"%s\"", text);
        CHECK(dup != MPI_COMM_NULL, "the communicator was freed despite the error");
        /* Its messages are gone: freeing it again succeeds. */
        rc = MPI_Comm_free(&dup);
    }
    CHECK(rc == MPI_SUCCESS && dup == MPI_COMM_NULL, "MPI_Comm_free returned %d", rc);
    /* The error counts meet before MPI_Finalize, which reports the world's
     * lost message. */
    int total = 0;
    MPI_Allreduce(&stest_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Finalize();
    if (expect_final_error) {
        CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_OTHER,
              "MPI_Finalize returned %d (class %d), expected MPI_ERR_OTHER", rc, class_of(rc));
    } else {
        CHECK(rc == MPI_SUCCESS, "MPI_Finalize returned %d", rc);
    }
    if (rank == 0 && !total && !stest_errors)
        printf("unmatched: ok\n");
    return total || stest_errors;
}

static int session(void)
{
    MPI_Session s;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group g;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm comm;
    MPI_Comm_create_from_group(g, "tern.test.unmatched", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&g);
    int rank, size, v = 42;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0 && size > 1)
        MPI_Send(&v, 1, MPI_INT, 1, 11, comm);
    if (rank == 1) {
        int flag = 0;
        while (!flag)
            MPI_Iprobe(0, 11, comm, &flag, MPI_STATUS_IGNORE);
    }
    int total = 0;
    MPI_Allreduce(&stest_errors, &total, 1, MPI_INT, MPI_SUM, comm);
    /* The communicator is left for MPI_Session_finalize to find. */
    int rc = MPI_Session_finalize(&s);
    if (rank == 1 && error_mode())
        CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_OTHER,
              "MPI_Session_finalize returned %d (class %d), expected MPI_ERR_OTHER", rc,
              class_of(rc));
    else
        CHECK(rc == MPI_SUCCESS, "MPI_Session_finalize returned %d", rc);
    if (rank == 0 && !total && !stest_errors)
        printf("unmatched: ok\n");
    return total || stest_errors;
}

int main(int argc, char **argv)
{
    stest_watchdog();
    const char *mode = argc > 1 ? argv[1] : "lost";
    if (strcmp(mode, "session") == 0)
        return session();
    return lost(strcmp(mode, "clean") == 0);
}

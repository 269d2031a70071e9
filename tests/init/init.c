/* MPI_Init (not Init_thread): Initialized/Finalized before and after, the
 * thread level reported, and a message across WORLD so Init did wire up. */
#include "../mpi/mtest.h"

int main(int argc, char **argv)
{
    int flag = -1, rc = 0;
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "Initialized before Init: expected 0, got %d\n", flag);
        rc = 1;
    }
    mtest_init(&argc, &argv);
    mtest_errors += rc;

    mtest_begin("init");
    flag = -1;
    CHECK_RC(MPI_Initialized(&flag));
    CHECK_INT(flag, 1, "Initialized after Init");
    flag = -1;
    CHECK_RC(MPI_Finalized(&flag));
    CHECK_INT(flag, 0, "Finalized after Init");
    int provided = -1;
    CHECK_RC(MPI_Query_thread(&provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "Query_thread %d", provided);
    flag = -1;
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK_INT(flag, 1, "Is_thread_main");
    /* Token around the ring. */
    int token = -1;
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    CHECK_RC(MPI_Sendrecv(&mtest_rank, 1, MPI_INT, right, 3, &token, 1, MPI_INT, left, 3,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_INT(token, left, "token from the left neighbour");
    mtest_end();

    rc = mtest_finalize();
    flag = -1;
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != 1) {
        fprintf(stderr, "rank %d: Finalized after Finalize: expected 1, got %d\n", mtest_rank, flag);
        rc = 1;
    }
    return rc;
}

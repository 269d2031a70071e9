/* A nonblocking collective started on one rank while another first runs a
 * blocking one (mpi4py's Comm.Iagree fallback: one rank starts an
 * Iallreduce, tests it, then joins a barrier that the others run before
 * their Iallreduce). MPI calls the order erroneous, yet MPICH and Open MPI
 * match each collective with its own kind, and programs rely on it: the
 * barrier must not take the Iallreduce's message, the Iallreduce must not
 * complete early, and its result must be every rank's contribution. */
#include "../mpi/mtest.h"

static void test_iallreduce_across_barrier(int root)
{
    mtest_begin("iallreduce_across_barrier");
    int r = mtest_rank, p = mtest_size;
    /* Bit r+1 clear on rank r only; bit 0 set everywhere. */
    int all_bits = (1 << (p + 1)) - 1;
    int in = all_bits & ~(1 << (r + 1)), out = -1;
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (r == root) {
        CHECK_RC(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &req));
        int done = 1;
        CHECK_RC(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (p > 1)
            CHECK_INT(done, 0, "Iallreduce complete before the other ranks started it");
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &req));
    }
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_INT(out, 1, "bitwise and of every rank's flags");
    mtest_end();
}

/* The same with a blocking Allreduce in between carrying its own data. */
static void test_ibcast_across_allreduce(int root)
{
    mtest_begin("ibcast_across_allreduce");
    int r = mtest_rank, p = mtest_size;
    int val = r == root ? 4242 : -1, one = 1, sum = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    if (r == root) {
        CHECK_RC(MPI_Ibcast(&val, 1, MPI_INT, root, MPI_COMM_WORLD, &req));
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    } else {
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_RC(MPI_Ibcast(&val, 1, MPI_INT, root, MPI_COMM_WORLD, &req));
    }
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_INT(sum, p, "allreduced count");
    CHECK_INT(val, 4242, "broadcast value");
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    for (int root = 0; root < mtest_size; root++) {
        test_iallreduce_across_barrier(root);
        test_ibcast_across_allreduce(root);
    }
    return mtest_finalize();
}

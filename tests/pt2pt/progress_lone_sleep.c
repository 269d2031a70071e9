/* A waiting rank whose yields return at once (nothing else runnable on
 * its core) sleeps once TERN_PROGRESS_LONE_YIELDS of them came in a row,
 * counted by the MPI_T counter tern_progress_lone_sleeps. Rank 0 waits
 * in MPI_Recv while rank 1 naps 50 ms before each send, yielding at once
 * (TERN_PROGRESS_SPIN=0). "on" (the count 1): rank 0 sleeps within at most
 * 40 such waits (on a machine so loaded that every one of its yields ran
 * another task for 2 s, the test fails); "off" (0): no rank ever sleeps.
 * Every message's value is checked. */
#include "../mpi/mtest.h"
#include "../mpit/mpit_util.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    int on = argc > 1 && strcmp(argv[1], "on") == 0;
    setenv("TERN_PROGRESS_SPIN", "0", 1);
    setenv("TERN_PROGRESS_LONE_YIELDS", on ? "1" : "0", 1);
    mtest_init(&argc, &argv);
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h =
        mpit_handle("tern_progress_lone_sleeps", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, NULL, 1);
    unsigned long long base = rd(h);

    mtest_begin(on ? "a lone waiting rank sleeps" : "no sleep when the count is 0");
    if (mtest_size >= 2 && mtest_rank < 2) {
        int more = 1, rounds = on ? 40 : 4;
        for (int r = 0; r < rounds && more; r++) {
            int v = -1;
            if (mtest_rank == 1) {
                usleep(50000);
                CHECK_RC(MPI_Send(&r, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
            } else {
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_INT(v, r, "message value");
                more = !on || rd(h) == base;
            }
            CHECK_RC(MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD));
        }
        if (mtest_rank == 0 && on)
            CHECK(rd(h) > base, "no sleep after %d waits of 50 ms", rounds);
    }
    if (!on)
        CHECK(rd(h) == base, "%llu sleeps with TERN_PROGRESS_LONE_YIELDS=0", rd(h) - base);
    mtest_end();

    MPI_T_pvar_stop(sess, h);
    MPI_T_pvar_handle_free(sess, &h);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    return mtest_finalize();
}

/* Whether MPI_Win_create windows on one node take CMA (core/rma/rma_cma.c)
 * as the environment says: TERN_RMA_CMA=on or off decides; auto takes it
 * unless a started transport declines CMA (its attribute cma_declined,
 * which shm publishes from TERN_SHM_CMA=off). Rank 1 puts into rank 0's
 * window and gets it back under a lock; the counter tern_rma_cma must
 * have grown on rank 1 exactly when CMA is wanted, and the values arrive
 * either way. */
#include "../mpit/mpit_util.h"

#include <string.h>

static int env_is(const char *name, const char *value)
{
    const char *s = getenv(name);
    return s && strcmp(s, value) == 0;
}

int main(int argc, char **argv)
{
    int provided;
    mtest_init(&argc, &argv);
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h = mpit_handle("tern_rma_cma", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    int want_cma = env_is("TERN_RMA_CMA", "on") ||
                   (!env_is("TERN_RMA_CMA", "off") && !env_is("TERN_SHM_CMA", "off"));
    int mem[4] = {0};
    MPI_Win win;
    mtest_begin("put and get");
    CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof mem[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    if (mtest_rank == 1) {
        int v[2] = {41, 42}, back[2] = {0, 0};
        unsigned long long before = rd(h);
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Put(v, 2, MPI_INT, 0, 1, 2, MPI_INT, win));
        CHECK_RC(MPI_Win_flush(0, win));
        CHECK_RC(MPI_Get(back, 2, MPI_INT, 0, 1, 2, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        unsigned long long got = rd(h) - before;
        CHECK(want_cma ? got == 2 : got == 0, "tern_rma_cma grew by %llu, want %s", got,
              want_cma ? "2 (CMA)" : "0 (active messages)");
        CHECK(back[0] == 41 && back[1] == 42, "got back %d %d, want 41 42", back[0], back[1]);
    }
    CHECK_RC(MPI_Win_free(&win));
    if (mtest_rank == 0)
        CHECK(mem[1] == 41 && mem[2] == 42, "rank 0's window holds %d %d, want 41 42", mem[1],
              mem[2]);
    mtest_end();
    RC(MPI_T_pvar_handle_free(sess, &h), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    RC(MPI_T_finalize(), MPI_SUCCESS);
    return mtest_finalize();
}

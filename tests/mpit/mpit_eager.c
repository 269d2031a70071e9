/* The eager limit written through MPI_T (2 ranks): TERN_P2P_EAGER_MAX is
 * writable with scope MPI_T_SCOPE_LOCAL, and the next message takes the
 * protocol the new limit gives it, seen in the eager and rendezvous
 * counters: 1000 bytes go eagerly by default, by rendezvous under a
 * 512-byte limit (written on the sender only), eagerly again after
 * "auto"; a value the knob does not allow gets MPI_T_ERR_INVALID and
 * changes nothing. */
#include "mpit_util.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static MPI_T_pvar_handle counter(const char *name)
{
    return mpit_handle(name, MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
}

static int rank;
static MPI_T_pvar_handle eager, rndv;
static char buf[1000];

/* One 1000-byte message from rank 0 to rank 1; the protocol it took on
 * rank 0 (1 rendezvous, 0 eager). */
static int one_message(int round)
{
    unsigned long long e0 = rd(eager), r0 = rd(rndv);
    if (rank == 0) {
        memset(buf, round, sizeof buf);
        MPI_Send(buf, sizeof buf, MPI_BYTE, 1, round, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(buf[0] == round && buf[999] == round, "round %d data %d", round, buf[999]);
    }
    int by_rndv = rd(rndv) - r0 == 1;
    if (rank == 0)
        CHECK(rd(eager) - e0 + rd(rndv) - r0 == 1, "round %d: %llu eager, %llu rendezvous", round,
              rd(eager) - e0, rd(rndv) - r0);
    return by_rndv;
}

int main(int argc, char **argv)
{
    int provided, n;
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) {
        MPI_Finalize();
        return 77;
    }
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    eager = counter("tern_p2p_eager_sent");
    rndv = counter("tern_p2p_rndv_sent");

    int idx, scope = -1, count;
    RC(MPI_T_cvar_get_index("TERN_P2P_EAGER_MAX", &idx), MPI_SUCCESS);
    RC(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope),
       MPI_SUCCESS);
    CHECK(scope == MPI_T_SCOPE_LOCAL, "scope %d", scope);
    MPI_T_cvar_handle ch;
    RC(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count), MPI_SUCCESS);
    char now[1024];
    RC(MPI_T_cvar_read(ch, now), MPI_SUCCESS);
    CHECK(strcmp(now, "auto") == 0, "TERN_P2P_EAGER_MAX reads %s", now);

    CHECK(!one_message(1), "1000 bytes went by rendezvous under the default limit");
    if (rank == 0) {
        RC(MPI_T_cvar_write(ch, "512"), MPI_SUCCESS);
        RC(MPI_T_cvar_read(ch, now), MPI_SUCCESS);
        CHECK(strcmp(now, "512") == 0, "read back %s", now);
        RC(MPI_T_cvar_write(ch, "lots"), MPI_T_ERR_INVALID);
        RC(MPI_T_cvar_write(ch, "2g"), MPI_T_ERR_INVALID); /* above the knob's range */
        RC(MPI_T_cvar_read(ch, now), MPI_SUCCESS);
        CHECK(strcmp(now, "512") == 0, "a refused write left %s", now);
    }
    int r = one_message(2);
    if (rank == 0)
        CHECK(r, "1000 bytes went eagerly under a 512-byte limit");
    if (rank == 0)
        RC(MPI_T_cvar_write(ch, "auto"), MPI_SUCCESS);
    CHECK(!one_message(3), "1000 bytes went by rendezvous after auto");
    RC(MPI_T_cvar_handle_free(&ch), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    MPI_Finalize();
    RC(MPI_T_finalize(), MPI_SUCCESS);
    if (mtest_errors)
        fprintf(stderr, "rank %d: %d errors\n", rank, mtest_errors);
    return mtest_errors != 0;
}

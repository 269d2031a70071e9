#include "core/init/init.h"
#include "core/coll/coll.h"
#include "core/coll/shm_region.h"
#include "core/comm/comm.h"
#include "core/dynamic/comm_dynamic.h"
#include "core/comm/comm_p2p.h"
#include "core/comm/ulfm.h"
#include "core/comm/unmatched.h"
#include "core/init/env.h"
#include "core/io/file.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/pt2pt/progress_thread.h"
#include "core/rma/window.h"
#include "core/runtime/api_lock.h"
#include "core/runtime/runtime.h"
#include "pmi/pmi.h"
#include "pmi/pmi_profile.h"

#include <mpi.h>

int tern_runtime_thread_level(int required)
{
    /* Once MULTIPLE is in force every later start (a session, the world
     * model) gets it too, asked or not: the level provided may exceed the
     * one required, and it is what the process has (MPICH does the same;
     * MPICH's threads/init/mult_session counts on it). */
    static int in_force = MPI_THREAD_SINGLE;
    int level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    level = level < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : level;
    if (in_force == MPI_THREAD_MULTIPLE)
        level = MPI_THREAD_MULTIPLE;
    /* MULTIPLE: from now on every entry point takes the global lock
     * (runtime/api_lock.h). The caller is the only thread in MPI now: a
     * lower level granted before bound the program to serialize. */
    if (level == MPI_THREAD_MULTIPLE) {
        in_force = level;
        tern_api_locking_on();
    }
    return level;
}

tern_status_t tern_runtime_init(int required, int *provided)
{
    if (tern_rt.active) {
        *provided = tern_runtime_thread_level(required);
        return TERN_OK;
    }
    /* Starting again (only sessions may: MPI_Init after MPI_Finalize is
     * refused before this): the job is still joined (the PMI client
     * finalizes at exit), and this start's keys are new ones. Every
     * process of the job starts again, as every process started. */
    int again = tern_rt.ended;
    if (again)
        tern_pmi_next_epoch();
    /* A failed peer's posted receives are found through the communicator
     * their source rank belongs to: the comm room tells pt2pt how. */
    tern_peer_failure_set_source_map(tern_comm_request_source_world);
    /* Failures and ULFM's packets reach the communicators (ulfm.c). */
    tern_peer_failure_set_ulfm(tern_ulfm_on_failure, tern_ulfm_packet);
    (void)tern_ulfm_ft();
    tern_status_t st = tern_runtime_start(tern_p2p_am_handler, tern_peer_failed);
    if (st != TERN_OK)
        return st;

    tern_comm_init_predefined(tern_rt.rank, tern_rt.size);
    tern_init_profile_mark("communicators");
    *provided = tern_runtime_thread_level(required);
    tern_rt.wtime_base = tern_env_clock();
    tern_rt.active = 1;
    /* A spawned process meets its parents before the first init returns
     * (once: a later start has no parents). */
    if (!again && (st = tern_comm_parent_init()) != TERN_OK)
        return st;
    st = tern_progress_thread_start();
    tern_init_profile_mark("parent, progress");
    tern_init_profile_report(tern_rt.rank, tern_rt.size, tern_rt.local_size);
    return st;
}

tern_status_t tern_runtime_release(const char *func)
{
    if (tern_rt.n_sessions > 0 || (tern_rt.initialized && !tern_rt.finalized))
        return TERN_OK;
    /* Everyone arrives before anyone tears down its transports (the
     * world's internal object serves sessions too). */
    tern_comm_t *world = tern_comm_lookup(MPI_COMM_WORLD);
    /* A world that ran no blocking collective has no shm region: one
     * barrier does not repay creating one (a segment reserved and mapped by
     * every rank, two agreement exchanges) only to unmap it at once. */
    tern_shm_coll_off(world);
    /* In fault-tolerant mode the survivors meet in the fault-tolerant
     * agreement instead: a barrier fails on every survivor once a rank
     * died, and some might have passed it before. */
    tern_status_t st;
    if (tern_ulfm_ft()) {
        st = tern_ulfm_sync(world);
    } else {
        /* A peer that passed this barrier may end at once, before this
         * rank has taken the message it sent: the liveness watch then
         * drains its ring (the message is here) and counts it failed,
         * which must not fail the steps left, that need nothing more of it
         * (its message came). A peer that really died still fails the
         * receive waiting for it. */
        tern_rt.in_final_barrier = 1;
        st = tern_coll_barrier(world);
        tern_rt.in_final_barrier = 0;
    }
    /* What the peers sent before they arrived is here now: messages left
     * unmatched are reported (their status is the caller's to return,
     * once MPI has ended). */
    if (st == TERN_OK)
        (void)tern_unmatched_check_all(func);
    if (st == TERN_OK)
        st = tern_runtime_finalize();
    return st;
}

static int runtime_running(void)
{
    return tern_rt.active;
}

tern_status_t tern_runtime_finalize(void)
{
    tern_progress_thread_stop();
    /* Queued packets (e.g. credit returns, acknowledgements) must leave
     * before the transports close. */
    while (tern_rt.n_pending_peers)
        tern_progress();
    tern_runtime_close_transports();
    tern_io_finalize();
    tern_win_finalize();
    tern_comm_finalize();
    tern_runtime_free();
    /* The job stays joined, so that sessions may start MPI again (PMI
     * cannot be joined twice): the PMI client finalizes when the process
     * exits, unless MPI runs again by then. */
    tern_pmi_finalize_at_exit(runtime_running);
    tern_rt.active = 0;
    tern_rt.ended = 1;
    return TERN_OK;
}

#include "core/init/init.h"
#include "core/comm/comm.h"
#include "core/comm/comm_dynamic.h"
#include "core/comm/comm_p2p.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"
#include "pmi/pmi.h"

#include <mpi.h>

tern_status_t tern_runtime_init(int required, int *provided)
{
    /* A failed peer's posted receives are found through the communicator
     * their source rank belongs to: the comm room tells pt2pt how. */
    tern_peer_failure_set_source_map(tern_comm_request_source_world);
    tern_status_t st = tern_runtime_start(tern_p2p_am_handler, tern_peer_failed);
    if (st != TERN_OK)
        return st;

    tern_comm_init_predefined(tern_rt.rank, tern_rt.size);
    /* We progress from the calling thread only: FUNNELED covers SERIALIZED
     * use too, but claim only what is true. */
    tern_rt.thread_level = required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : required;
    if (tern_rt.thread_level < MPI_THREAD_SINGLE)
        tern_rt.thread_level = MPI_THREAD_SINGLE;
    *provided = tern_rt.thread_level;
    tern_rt.initialized = 1;
    /* A spawned process meets its parents before MPI_Init returns. */
    return tern_comm_parent_init();
}

tern_status_t tern_runtime_finalize(void)
{
    /* Queued packets (e.g. credit returns, acknowledgements) must leave
     * before the transports close. */
    while (tern_rt.n_pending_peers)
        tern_progress();
    tern_runtime_close_transports();
    tern_comm_finalize();
    tern_status_t st = tern_pmi_finalize();
    tern_rt.finalized = 1;
    return st;
}

/* PMI client: how a rank learns its place in the job and exchanges
 * addresses with its peers.
 *
 * Contract: tern_pmi_init detects the process manager from the environment
 * unless TERN_PMI (auto, pmi1, pmi2, pmix, singleton) forces one:
 *   PMIX_NAMESPACE: PMIx through libpmix (srun --mpi=pmix, Open MPI's
 *     mpirun), when Tern was built with it;
 *   PMI_FD: under Slurm (srun --mpi=pmi2) the PMI-2 wire protocol over that
 *     fd, or PMI-1 if refused; under Tern's mpiexec and Hydra, PMI-1 (Hydra's
 *     PMI-2 fence is no barrier, so TERN_PMI=pmi2 is refused there);
 *   PMI_PORT "host:port": PMI-1 over TCP;
 *   nothing: singleton, size 1 (an error under srun with several tasks).
 * put/get use the job's key-value space; a put becomes visible to other ranks
 * after every rank has called tern_pmi_fence. All calls are made by one
 * thread. Values are printable strings without spaces or '=' (encode
 * binary data as hex). */
#ifndef TERN_PMI_PMI_H
#define TERN_PMI_PMI_H

#include "base/status.h"
#include <stddef.h>

typedef struct {
    int rank;
    int size;
    int appnum;
    int universe_size;
    int singleton;       /* no process manager: size 1 */
    char kvsname[256];   /* unique per job: use it to name shared resources */
    size_t key_max;      /* longest key, value the manager accepts */
    size_t value_max;
    const char *flavour; /* "pmi1", "pmi2", "pmix" or "singleton" */
} tern_pmi_info_t;

tern_status_t tern_pmi_init(tern_pmi_info_t *info_p);
tern_status_t tern_pmi_put(const char *key, const char *value);
/* Commit this rank's puts and wait until every rank of the job arrives. */
tern_status_t tern_pmi_fence(void);
tern_status_t tern_pmi_get(const char *key, char *value, size_t value_len);
/* Which node each rank runs on, as the launcher tells it without an
 * exchange (PMI-2's PMI_process_mapping, the PMI-1 key of that name, PMIx's
 * PMIX_NODEID): node_of_rank[size] gets dense ids 0..n_nodes-1 in order of
 * first appearance. TERN_ERR_NOT_SUPPORTED when the launcher offers none:
 * then exchange host names. */
tern_status_t tern_pmi_node_map(int *node_of_rank);
/* MPI started again in this process (sessions may, MPI-4.1 11.3): the job
 * stays joined, and every rank's puts and gets from now on go to keys of
 * a new epoch ("e<n>." before the key), so the keys of the last start,
 * which a process manager may refuse to overwrite, are never met. Every
 * rank calls it before its first put of the new start. */
void tern_pmi_next_epoch(void);
/* tern_pmi_finalize when the process exits, unless MPI is running then
 * (running(): then the process ended without finalizing, as before). */
void tern_pmi_finalize_at_exit(int (*running)(void));
/* One command of a spawn: maxprocs copies of command with argv
 * (NULL-terminated, without the command; NULL: none) and info pairs the
 * process manager reads (host, wdir, path). */
typedef struct {
    const char *command;
    char *const *argv;
    int maxprocs;
    int n_info;
    const char *const *info_keys;
    const char *const *info_values;
} tern_pmi_spawn_cmd_t;
/* Starts the commands' processes as one new job (its own world and
 * key-value space), in which (preput_key, preput_value) is set before they
 * start. errcodes (one per process, in order) get 0 or -1 for a process
 * that did not start. TERN_ERR_NOT_SUPPORTED when the process manager has
 * no spawn; TERN_ERR_SPAWN when it refused or some process did not start
 * (the detail says why). */
tern_status_t tern_pmi_spawn(int n_cmds, const tern_pmi_spawn_cmd_t *cmds, const char *preput_key,
                             const char *preput_value, int *errcodes);
/* The process manager's name service (MPI_Publish_name & co.): what one
 * process publishes, every process this manager serves can look up.
 * TERN_ERR_SERVICE: publish of a name already there, unpublish of one not
 * there; TERN_ERR_NAME: lookup of a name not there; TERN_ERR_NOT_SUPPORTED
 * when the manager has no name service. */
tern_status_t tern_pmi_publish(const char *service, const char *port);
tern_status_t tern_pmi_unpublish(const char *service);
tern_status_t tern_pmi_lookup(const char *service, char *port, size_t port_len);
/* Asks the process manager to end the whole job with exit code `code`,
 * printing msg; then exits this process. Never returns. */
_Noreturn void tern_pmi_abort(int code, const char *msg);
/* The same for the world ranks listed ("0,3,5"), where the process manager
 * keeps the others running (Tern's mpiexec --ft; others end the job). */
_Noreturn void tern_pmi_abort_ranks(int code, const char *msg, const char *ranks);
/* The list tern_pmi_abort_ranks passes (for the flavours), or NULL. */
extern const char *tern_pmi_abort_scope;
/* Tells the process manager this rank finalized cleanly (so exiting after it
 * is not a failure). */
tern_status_t tern_pmi_finalize(void);

#endif

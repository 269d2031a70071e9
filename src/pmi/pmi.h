/* PMI client: how a rank learns its place in the job and exchanges
 * addresses with its peers.
 *
 * Contract: tern_pmi_init detects the process manager from the environment
 * (PMI_FD + PMI_RANK + PMI_SIZE: PMI-1 "simple" wire protocol over that fd,
 * as Tern's mpiexec and MPICH's Hydra provide; PMI_PORT "host:port": same
 * protocol over TCP; nothing: singleton, size 1) unless TERN_PMI forces one.
 * put/get use the job's key-value space; a put becomes visible to other ranks
 * after every rank has called tern_pmi_fence. All calls are made by one
 * thread. Values are printable strings without spaces or '=' (encode binary
 * data as hex). */
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
} tern_pmi_info_t;

tern_status_t tern_pmi_init(tern_pmi_info_t *info_p);
tern_status_t tern_pmi_put(const char *key, const char *value);
/* Commit this rank's puts and wait until every rank of the job arrives. */
tern_status_t tern_pmi_fence(void);
tern_status_t tern_pmi_get(const char *key, char *value, size_t value_len);
/* Asks the process manager to end the whole job with exit code `code`,
 * printing msg; then exits this process. Never returns. */
_Noreturn void tern_pmi_abort(int code, const char *msg);
/* Tells the process manager this rank finalized cleanly (so exiting after it
 * is not a failure). */
tern_status_t tern_pmi_finalize(void);

#endif

/* The MPI environment: init, finalize, abort, thread queries, versions,
 * processor name, clock (env.h). */
#include "core/init/env.h"
#include "core/comm/attr.h"
#include "core/info/info.h"
#include "core/comm/unmatched.h"
#include "core/coll/coll.h"
#include "core/init/init.h"
#include "core/init/profile.h"
#include "core/runtime/mem.h"
#include "core/runtime/runtime.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "pmi/pmi.h"
#include "transport/transport.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;

double tern_env_clock(void)
{
    return tern_clock_s();
}

tern_status_t tern_env_init(const char *func, int required, int *provided)
{
    if (tern_rt.initialized || tern_rt.finalized) {
        tern_error("%s called twice (MPI may be initialised only once)", func);
        tern_pmi_abort(1, "MPI initialised twice");
    }
    int prov = MPI_THREAD_SINGLE;
    tern_status_t st = tern_runtime_init(required, &prov);
    if (st != TERN_OK) {
        const char *detail = tern_status_take_detail(st);
        tern_error("%s failed: %s", func, detail ? detail : tern_status_string(st));
        tern_pmi_abort(1, "MPI_Init failed");
    }
    tern_rt.initialized = 1;
    tern_rt.thread_level = prov;
    main_thread = pthread_self();
    if (provided)
        *provided = prov;
    tern_profile_begin();
    return TERN_OK;
}

tern_status_t tern_env_finalize(void)
{
    /* MPI 3.1 8.7.1: MPI_COMM_SELF's attributes are deleted first, while
     * MPI still works, so libraries can clean up (even communicate) in
     * their delete callbacks. */
    (void)tern_attr_delete_all(tern_comm_lookup(MPI_COMM_SELF));
    /* The profile of the job (TERN_PROFILE), while MPI_COMM_WORLD works. */
    tern_profile_end();
    /* Nobody can receive on MPI_COMM_WORLD and MPI_COMM_SELF any more:
     * messages that arrived on them unmatched are reported (those still on
     * the way when the runtime comes down, after its barrier). */
    uint64_t unmatched = tern_rt.n_unmatched;
    (void)tern_unmatched_check(tern_comm_lookup(MPI_COMM_WORLD), "MPI_Finalize");
    (void)tern_unmatched_check(tern_comm_lookup(MPI_COMM_SELF), "MPI_Finalize");
    /* The world model ends; the runtime too unless sessions still use it
     * (the last MPI_Session_finalize then brings it down). */
    tern_rt.finalized = 1;
    tern_status_t st = tern_runtime_release("MPI_Finalize");
    if (st != TERN_OK)
        return tern_status_detail(st, "finalization failed: %s", tern_status_string(st));
    /* MPI has ended (or the world model has): the code is returned. */
    return tern_unmatched_since(unmatched);
}

tern_status_t tern_env_initialized(int *flag)
{
    *flag = tern_rt.initialized;
    return TERN_OK;
}

tern_status_t tern_env_finalized(int *flag)
{
    *flag = tern_rt.finalized;
    return TERN_OK;
}

tern_status_t tern_env_abort(const tern_comm_t *c, int errorcode)
{
    char msg[256];
    snprintf(msg, sizeof msg, "MPI_Abort called by rank %d on %s with error code %d", tern_rt.rank,
             c->name, errorcode);
    /* The process manager prints msg (our mpiexec names the rank and code;
     * under others the PMI client prints it). Aborting a sub-communicator
     * ends the whole job too: the processes of a job are not independent;
     * except in fault-tolerant mode (TERN_FT, mpiexec --ft), where the
     * others go on and see the aborted ranks as failed (ULFM). */
    if (tern_knob_bool(TERN_KNOB_FT) && !c->is_inter && c->size < tern_rt.size) {
        size_t cap = (size_t)c->size * 12 + 1;
        char *ranks = malloc(cap);
        if (ranks) {
            size_t n = 0;
            ranks[0] = 0;
            for (int r = 0; r < c->size; r++)
                n += (size_t)snprintf(ranks + n, cap - n, "%s%d", r ? "," : "",
                                      tern_comm_local_world_rank(c, r));
            tern_pmi_abort_ranks(errorcode, msg, ranks);
        }
    }
    tern_pmi_abort(errorcode, msg);
}

tern_status_t tern_env_query_thread(int *provided)
{
    *provided = tern_rt.thread_level;
    return TERN_OK;
}

tern_status_t tern_env_is_thread_main(int *flag)
{
    *flag = pthread_equal(main_thread, pthread_self()) != 0;
    return TERN_OK;
}

tern_status_t tern_env_get_processor_name(char *name, int *resultlen)
{
    if (!tern_rt.processor_name[0] && gethostname(tern_rt.processor_name, 255) != 0)
        strcpy(tern_rt.processor_name, "localhost");
    /* The standard's limit, not the host's: a longer name is cut there. */
    size_t n = strnlen(tern_rt.processor_name, MPI_MAX_PROCESSOR_NAME - 1);
    memcpy(name, tern_rt.processor_name, n);
    name[n] = '\0';
    *resultlen = (int)n;
    return TERN_OK;
}

tern_status_t tern_env_get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return TERN_OK;
}

tern_status_t tern_env_get_library_version(char *version, int *resultlen)
{
    /* The transports compiled in (tern_tl_all), so a user can tell a build
     * with the network transport from one without. */
    char tls[128] = "";
    size_t n = 0;
    for (int i = 0; tern_tl_all[i] && n < sizeof tls; i++)
        n += (size_t)snprintf(tls + n, sizeof tls - n, "%s%s", i ? ", " : "", tern_tl_all[i]->name);
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
             "Tern %s (MPI %d.%d; transports %s)",
             TERN_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION, tls);
    *resultlen = (int)strlen(version);
    return TERN_OK;
}

double tern_env_wtime(void) { return tern_env_clock() - tern_rt.wtime_base; }

double tern_env_wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}

tern_status_t tern_env_alloc_mem(MPI_Aint size, const tern_info_t *info, void *baseptr)
{
    /* MPI-4.1's hint: the least alignment the caller needs (a power of two);
     * other keys are ignored. */
    size_t align = TERN_MEM_MIN_ALIGN;
    const char *a = info ? tern_info_get(info, "mpi_minimum_memory_alignment") : NULL;
    if (a) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(a, &end, 10);
        if (errno || end == a || *end || v == 0 || (v & (v - 1)) || v > (1ull << 30))
            return tern_status_detail(TERN_ERR_ARG,
                                      "info value mpi_minimum_memory_alignment=\"%s\" is not a "
                                      "power of two up to 2^30", a);
        if (v > align)
            align = (size_t)v;
    }
    return tern_mem_alloc((size_t)size, align, (void **)baseptr);
}

tern_status_t tern_env_free_mem(void *base)
{
    return tern_mem_free(base);
}

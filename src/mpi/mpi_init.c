/* Environment: init, finalize, abort, versions, clocks. */
#include "mpi/mpi_errors.h"
#include "core/comm/attr.h"
#include "core/coll/coll.h"
#include "core/init/init.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int init_common(const char *func, int required, int *provided)
{
    if (tern_rt.initialized || tern_rt.finalized) {
        tern_error("%s called twice (MPI may be initialised only once)", func);
        tern_pmi_abort(1, "MPI initialised twice");
    }
    int prov = MPI_THREAD_SINGLE;
    tern_status_t st = tern_runtime_init(required, &prov);
    if (st != TERN_OK) {
        tern_error("%s failed: %s", func, tern_status_string(st));
        tern_pmi_abort(1, "MPI_Init failed");
    }
    main_thread = pthread_self();
    tern_rt.wtime_base = now();
    if (provided)
        *provided = prov;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Init)
int PMPI_Init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    int provided;
    return init_common("MPI_Init", MPI_THREAD_SINGLE, &provided);
}

TERN_PMPI_ALIAS(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc, (void)argv;
    return init_common("MPI_Init_thread", required, provided);
}

TERN_PMPI_ALIAS(Finalize)
int PMPI_Finalize(void)
{
    static const char *const func = "MPI_Finalize";
    TERN_CHECK_INIT(func);
    /* MPI 3.1 8.7.1: MPI_COMM_SELF's attributes are deleted first, while
     * MPI still works, so libraries can clean up (even communicate) in
     * their delete callbacks. */
    (void)tern_attr_delete_all(tern_comm_lookup(MPI_COMM_SELF));
    /* Everyone arrives before anyone tears down its transports. */
    tern_status_t st = tern_coll_barrier(tern_comm_lookup(MPI_COMM_WORLD));
    if (st == TERN_OK)
        st = tern_runtime_finalize();
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_WORLD, st, func, "finalization failed");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Initialized)
int PMPI_Initialized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = tern_rt.initialized;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Finalized)
int PMPI_Finalized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = tern_rt.finalized;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Abort)
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[256];
    tern_comm_t *c = tern_comm_lookup(comm);
    snprintf(msg, sizeof msg, "MPI_Abort called by rank %d on %s with error code %d", tern_rt.rank,
             c ? c->name : "an invalid communicator", errorcode);
    /* The process manager prints msg (our mpiexec names the rank and code;
     * under others the PMI client prints it). Aborting a sub-communicator
     * ends the whole job too: the processes of a job are not independent. */
    tern_pmi_abort(errorcode, msg);
}

TERN_PMPI_ALIAS(Query_thread)
int PMPI_Query_thread(int *provided)
{
    static const char *const func = "MPI_Query_thread";
    TERN_CHECK_INIT(func);
    if (!provided)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "provided is NULL");
    *provided = tern_rt.thread_level;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
    static const char *const func = "MPI_Is_thread_main";
    TERN_CHECK_INIT(func);
    if (!flag)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "flag is NULL");
    *flag = pthread_equal(main_thread, pthread_self()) != 0;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    static const char *const func = "MPI_Get_processor_name";
    if (!name || !resultlen)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !name ? "name" : "resultlen");
    if (!tern_rt.processor_name[0] && gethostname(tern_rt.processor_name, 255) != 0)
        strcpy(tern_rt.processor_name, "localhost");
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", tern_rt.processor_name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Get_library_version)
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    /* The transports compiled in (tern_tl_all), so a user can tell a build
     * with the network transport from one without. */
    char tls[128] = "";
    size_t n = 0;
    for (int i = 0; tern_tl_all[i] && n < sizeof tls; i++)
        n += (size_t)snprintf(tls + n, sizeof tls - n, "%s%s", i ? ", " : "", tern_tl_all[i]->name);
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Tern %s (MPI %d.%d; transports %s)",
             TERN_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION, tls);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Wtime)
double PMPI_Wtime(void) { return now() - tern_rt.wtime_base; }

TERN_PMPI_ALIAS(Wtick)
double PMPI_Wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9;
    return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}

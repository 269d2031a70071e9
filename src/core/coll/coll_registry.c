/* The one list of collective algorithms (from TERN_COLL_ALGORITHMS in
 * coll.h). The first algorithm of each collective is the general fallback:
 * it serves every communicator size and every op. */
#include "core/coll/coll.h"

#include <string.h>

static const tern_coll_algo_t algorithms[] = {
#define TERN_COLL_ENTRY(K, coll, algo, flags)                                                      \
    {TERN_COLL_##K, #algo, tern_coll_##coll##_##algo, flags, TERN_COLL_ALGO_##coll##_##algo},
    TERN_COLL_ALGORITHMS(TERN_COLL_ENTRY)
#undef TERN_COLL_ENTRY
};

_Static_assert(TERN_COLL_ALGO_N <= TERN_PVAR_COLL_MAX,
               "TERN_PVAR_COLL_MAX (base/pvars.h) must count every algorithm");

static const char *const kind_names[TERN_COLL_N] = {
    "barrier",   "bcast",          "gather",          "gatherv",
    "scatter",   "scatterv",       "allgather",       "allgatherv",
    "alltoall",  "alltoallv",      "alltoallw",       "reduce",
    "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",
    "exscan"};

const tern_coll_algo_t *tern_coll_algorithms(size_t *n_p)
{
    *n_p = sizeof algorithms / sizeof algorithms[0];
    return algorithms;
}

const char *tern_coll_kind_name(tern_coll_kind_t kind)
{
    return (unsigned)kind < TERN_COLL_N ? kind_names[kind] : "?";
}

const tern_coll_algo_t *tern_coll_find(tern_coll_kind_t kind, const char *name)
{
    for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
        if (algorithms[i].kind == kind && (!name || !strcmp(algorithms[i].name, name)))
            return &algorithms[i];
    return NULL;
}

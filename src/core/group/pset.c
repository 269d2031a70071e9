/* Process sets (pset.h): computed from the world and the node map, so every
 * process of a set names the same members. */
#include "core/group/pset.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <strings.h>

static const char *const names[TERN_PSET_COUNT] = {"mpi://WORLD", "mpi://SELF", "tern://node"};

const char *tern_pset_name(int n)
{
    return n >= 0 && n < TERN_PSET_COUNT ? names[n] : NULL;
}

/* Whether world rank r belongs to set n. */
static int member(int n, int r)
{
    switch (n) {
    case 0: return 1;
    case 1: return r == tern_rt.rank;
    default: return tern_rt.node_of_rank ? tern_rt.node_of_rank[r] == tern_rt.node
                                         : r == tern_rt.rank;
    }
}

tern_status_t tern_pset_members(const char *name, int **ranks_p, int *n_p)
{
    int set = -1;
    for (int i = 0; i < TERN_PSET_COUNT && set < 0; i++)
        if (strcasecmp(name, names[i]) == 0)
            set = i;
    if (set < 0)
        return tern_status_detail(TERN_ERR_ARG,
                                  "pset_name \"%s\" is not a process set (there are mpi://WORLD, "
                                  "mpi://SELF and tern://node)", name);
    int *r = malloc((size_t)tern_rt.size * sizeof *r), n = 0;
    if (!r)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a process set's members");
    for (int i = 0; i < tern_rt.size; i++)
        if (member(set, i))
            r[n++] = i;
    *ranks_p = r;
    *n_p = n;
    return TERN_OK;
}

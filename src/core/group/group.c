#include "core/group/group.h"
#include "core/runtime/handle_table.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

static tern_group_t group_empty = {
    .handle = MPI_GROUP_EMPTY, .size = 0, .rank = MPI_UNDEFINED, .session = MPI_SESSION_NULL};
static tern_handle_table_t groups = TERN_HANDLE_TABLE(TERN_KIND_GROUP, 64);

tern_group_t *tern_group_lookup(MPI_Group handle)
{
    if (handle == MPI_GROUP_EMPTY)
        return &group_empty;
    return tern_handle_get(&groups, handle);
}

int tern_group_rank_of_world(const tern_group_t *g, int world_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->world_ranks[i] == world_rank)
            return i;
    return MPI_UNDEFINED;
}

tern_status_t tern_group_new(const int *world_ranks, int n, MPI_Group *handle_p)
{
    if (n == 0) {
        *handle_p = MPI_GROUP_EMPTY;
        return TERN_OK;
    }
    tern_group_t *g = malloc(sizeof *g);
    int *wr = malloc((size_t)n * sizeof *wr);
    if (!g || !wr) {
        free(g);
        free(wr);
        return TERN_ERR_NOMEM;
    }
    memcpy(wr, world_ranks, (size_t)n * sizeof *wr);
    *g = (tern_group_t){.size = n, .world_ranks = wr, .session = MPI_SESSION_NULL};
    g->rank = tern_group_rank_of_world(g, tern_rt.rank);
    tern_status_t st = tern_handle_new(&groups, g, &g->handle);
    if (st != TERN_OK) {
        free(g);
        free(wr);
        return st;
    }
    *handle_p = g->handle;
    return TERN_OK;
}

void tern_group_set_session(MPI_Group handle, MPI_Session session)
{
    tern_group_t *g = handle == MPI_GROUP_EMPTY ? NULL : tern_group_lookup(handle);
    if (g)
        g->session = session;
}

static void free_group(void *obj)
{
    tern_group_t *g = obj;
    free(g->world_ranks);
    free(g);
}

void tern_group_free(MPI_Group handle)
{
    tern_group_t *g = tern_group_lookup(handle);
    if (!g || g == &group_empty)
        return;
    tern_handle_release(&groups, handle);
    free_group(g);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int tern_group_compare_ranks(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    if (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0)
        return MPI_IDENT;
    int *sa = malloc((size_t)na * sizeof *sa), *sb = malloc((size_t)nb * sizeof *sb);
    int result = MPI_UNEQUAL;
    if (sa && sb) {
        memcpy(sa, a, (size_t)na * sizeof *sa);
        memcpy(sb, b, (size_t)nb * sizeof *sb);
        qsort(sa, (size_t)na, sizeof *sa, cmp_int);
        qsort(sb, (size_t)nb, sizeof *sb, cmp_int);
        if (memcmp(sa, sb, (size_t)na * sizeof *sa) == 0)
            result = MPI_SIMILAR;
    }
    free(sa);
    free(sb);
    return result;
}

void tern_group_finalize(void)
{
    tern_handle_table_clear(&groups, free_group);
}

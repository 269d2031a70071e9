#include "core/comm/group.h"
#include "core/runtime/handle.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#define GROUP_DYNAMIC (TERN_HANDLE_DYNAMIC | TERN_KIND_GROUP)

static tern_group_t group_empty = {.handle = MPI_GROUP_EMPTY, .size = 0, .rank = MPI_UNDEFINED};
static tern_group_t **table;
static int table_len, table_cap;
static int *free_slots;
static int n_free_slots;

tern_group_t *tern_group_lookup(MPI_Group handle)
{
    if (handle == MPI_GROUP_EMPTY)
        return &group_empty;
    if (((uint32_t)handle & 0xfc000000u) != GROUP_DYNAMIC)
        return NULL;
    int slot = (int)TERN_HANDLE_INDEX(handle);
    if (slot >= table_len || !table[slot])
        return NULL;
    return table[slot];
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
    int slot;
    if (n_free_slots) {
        slot = free_slots[--n_free_slots];
    } else {
        if (table_len == table_cap) {
            int cap = table_cap ? table_cap * 2 : 64;
            tern_group_t **t = realloc(table, (size_t)cap * sizeof *t);
            if (!t) {
                free(g);
                free(wr);
                return TERN_ERR_NOMEM;
            }
            table = t;
            int *fs = realloc(free_slots, (size_t)cap * sizeof *fs);
            if (!fs) {
                free(g);
                free(wr);
                return TERN_ERR_NOMEM;
            }
            free_slots = fs;
            table_cap = cap;
        }
        slot = table_len++;
    }
    *g = (tern_group_t){.handle = (MPI_Group)(GROUP_DYNAMIC | (uint32_t)slot), .size = n,
                        .world_ranks = wr};
    g->rank = tern_group_rank_of_world(g, tern_rt.rank);
    table[slot] = g;
    *handle_p = g->handle;
    return TERN_OK;
}

void tern_group_free(MPI_Group handle)
{
    tern_group_t *g = tern_group_lookup(handle);
    if (!g || g == &group_empty)
        return;
    int slot = (int)TERN_HANDLE_INDEX(handle);
    table[slot] = NULL;
    free_slots[n_free_slots++] = slot;
    free(g->world_ranks);
    free(g);
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
    for (int i = 0; i < table_len; i++)
        if (table[i]) {
            free(table[i]->world_ranks);
            free(table[i]);
        }
    free(table);
    free(free_slots);
    table = NULL;
    free_slots = NULL;
    table_len = table_cap = n_free_slots = 0;
}

/* Groups: queries, comparison, rank translation, and the constructors
 * (incl/excl, ranges, set operations). Results keep MPI's orders: incl in
 * the given order, set operations in the first group's order. */
#include "mpi/mpi_group.h"

#include <stdlib.h>
#include <string.h>

int tern_check_group(const char *func, MPI_Comm comm, MPI_Group g, tern_group_t **g_p)
{
    tern_group_t *grp = tern_group_lookup(g);
    if (__builtin_expect(!grp, 0)) {
        if (g == MPI_GROUP_NULL)
            return tern_mpi_error(comm, MPI_ERR_GROUP, func, "group is MPI_GROUP_NULL");
        return tern_mpi_error(comm, MPI_ERR_GROUP, func, "invalid group handle 0x%x",
                              (unsigned)g);
    }
    *g_p = grp;
    return MPI_SUCCESS;
}

/* Makes a group from world ranks and stores its handle. */
static int new_group(const char *func, const int *world_ranks, int n, MPI_Group *newgroup)
{
    tern_status_t st = tern_group_new(world_ranks, n, newgroup);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot create the group");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
    static const char *const func = "MPI_Group_size";
    TERN_CHECK_INIT(func);
    tern_group_t *g = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group, &g);
    if (err)
        return err;
    if (!size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    static const char *const func = "MPI_Group_rank";
    TERN_CHECK_INIT(func);
    tern_group_t *g = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group, &g);
    if (err)
        return err;
    if (!rank)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "rank is NULL");
    *rank = g->rank;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
    static const char *const func = "MPI_Group_free";
    TERN_CHECK_INIT(func);
    if (!group)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "group is NULL");
    tern_group_t *g = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, *group, &g);
    if (err)
        return err;
    tern_group_free(*group); /* leaves MPI_GROUP_EMPTY alone */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Group_compare)
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char *const func = "MPI_Group_compare";
    TERN_CHECK_INIT(func);
    tern_group_t *g1 = NULL, *g2 = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group1, &g1);
    if (!err)
        err = tern_check_group(func, MPI_COMM_NULL, group2, &g2);
    if (err)
        return err;
    if (!result)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "result is NULL");
    *result = tern_group_compare_ranks(g1->world_ranks, g1->size, g2->world_ranks, g2->size);
    return MPI_SUCCESS;
}

/* world rank -> rank in g, or -1: a table over the world, for O(n) lookups. */
static int *rank_index(const tern_group_t *g)
{
    int *idx = malloc((size_t)tern_rt.size * sizeof *idx);
    if (!idx)
        return NULL;
    memset(idx, 0xff, (size_t)tern_rt.size * sizeof *idx);
    for (int i = 0; i < g->size; i++)
        idx[g->world_ranks[i]] = i;
    return idx;
}

TERN_PMPI_ALIAS(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    static const char *const func = "MPI_Group_translate_ranks";
    TERN_CHECK_INIT(func);
    tern_group_t *g1 = NULL, *g2 = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group1, &g1);
    if (!err)
        err = tern_check_group(func, MPI_COMM_NULL, group2, &g2);
    if (err)
        return err;
    if (n < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "n=%d is negative", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !ranks1 ? "ranks1" : "ranks2");
    for (int i = 0; i < n; i++)
        if ((ranks1[i] < 0 || ranks1[i] >= g1->size) && ranks1[i] != MPI_PROC_NULL)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, func,
                                  "ranks1[%d]=%d is out of range (group1 has %d ranks)", i,
                                  ranks1[i], g1->size);
    int *idx = rank_index(g2);
    if (!idx)
        return tern_mpi_status_error(MPI_COMM_NULL, TERN_ERR_NOMEM, func, "rank table");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = idx[g1->world_ranks[ranks1[i]]];
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    free(idx);
    return MPI_SUCCESS;
}

/* Checks a list of n distinct ranks of g; seen (g->size entries) is
 * scratch. */
static int check_rank_list(const char *func, const tern_group_t *g, int n, const int ranks[],
                           char *seen)
{
    if (n < 0 || n > g->size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "n=%d is outside 0..%d (the group's size)", n, g->size);
    if (n > 0 && !ranks)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "ranks is NULL");
    memset(seen, 0, (size_t)g->size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, func,
                                  "ranks[%d]=%d is out of range (the group has %d ranks)", i,
                                  ranks[i], g->size);
        if (seen[ranks[i]])
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, func,
                                  "ranks[%d]=%d appears twice", i, ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(const char *func, MPI_Group group, int n, const int ranks[], int excl,
                     MPI_Group *newgroup)
{
    TERN_CHECK_INIT(func);
    tern_group_t *g = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group, &g);
    if (err)
        return err;
    if (!newgroup)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "newgroup is NULL");
    char *seen = malloc((size_t)g->size + 1);
    int *wr = malloc(((size_t)g->size + 1) * sizeof *wr);
    if (!seen || !wr) {
        free(seen);
        free(wr);
        return tern_mpi_status_error(MPI_COMM_NULL, TERN_ERR_NOMEM, func, "rank list");
    }
    err = check_rank_list(func, g, n, ranks, seen);
    int m = 0;
    if (!err && excl) {
        for (int i = 0; i < g->size; i++)
            if (!seen[i])
                wr[m++] = g->world_ranks[i];
    } else if (!err) {
        for (int i = 0; i < n; i++)
            wr[m++] = g->world_ranks[ranks[i]];
    }
    if (!err)
        err = new_group(func, wr, m, newgroup);
    free(seen);
    free(wr);
    return err;
}

TERN_PMPI_ALIAS(Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_incl", group, n, ranks, 0, newgroup);
}

TERN_PMPI_ALIAS(Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl("MPI_Group_excl", group, n, ranks, 1, newgroup);
}

/* Expands (first, last, stride) triplets into a rank list; every rank must
 * be valid and appear once in all. */
static int expand_ranges(const char *func, const tern_group_t *g, int n, int ranges[][3],
                         int **list_p, int *count_p)
{
    if (n < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "n=%d is negative", n);
    if (n > 0 && !ranges)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "ranges is NULL");
    int *list = malloc(((size_t)g->size + 1) * sizeof *list);
    char *seen = calloc((size_t)g->size + 1, 1);
    if (!list || !seen) {
        free(list);
        free(seen);
        return tern_mpi_status_error(MPI_COMM_NULL, TERN_ERR_NOMEM, func, "rank list");
    }
    int count = 0, err = MPI_SUCCESS;
    for (int i = 0; i < n && !err; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) {
            err = tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "ranges[%d] has stride 0", i);
            break;
        }
        if (first < 0 || first >= g->size || last < 0 || last >= g->size) {
            err = tern_mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, func,
                                 "ranges[%d]=(%d,%d,%d) leaves the group (%d ranks)", i, first,
                                 last, stride, g->size);
            break;
        }
        if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
            err = tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                                 "ranges[%d]=(%d,%d,%d) is empty", i, first, last, stride);
            break;
        }
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (seen[r]) {
                err = tern_mpi_error(MPI_COMM_NULL, MPI_ERR_RANK, func,
                                     "rank %ld appears twice in the ranges", r);
                break;
            }
            seen[r] = 1;
            list[count++] = (int)r;
        }
    }
    free(seen);
    if (err) {
        free(list);
        return err;
    }
    *list_p = list;
    *count_p = count;
    return MPI_SUCCESS;
}

static int range_incl_excl(const char *func, MPI_Group group, int n, int ranges[][3], int excl,
                           MPI_Group *newgroup)
{
    TERN_CHECK_INIT(func);
    tern_group_t *g = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group, &g);
    if (err)
        return err;
    if (!newgroup)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "newgroup is NULL");
    int *list = NULL, count = 0;
    err = expand_ranges(func, g, n, ranges, &list, &count);
    if (err)
        return err;
    err = incl_excl(func, group, count, list, excl, newgroup);
    free(list);
    return err;
}

TERN_PMPI_ALIAS(Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_incl", group, n, ranges, 0, newgroup);
}

TERN_PMPI_ALIAS(Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl("MPI_Group_range_excl", group, n, ranges, 1, newgroup);
}

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int set_op(const char *func, MPI_Group group1, MPI_Group group2, int op,
                  MPI_Group *newgroup)
{
    TERN_CHECK_INIT(func);
    tern_group_t *g1 = NULL, *g2 = NULL;
    int err = tern_check_group(func, MPI_COMM_NULL, group1, &g1);
    if (!err)
        err = tern_check_group(func, MPI_COMM_NULL, group2, &g2);
    if (err)
        return err;
    if (!newgroup)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "newgroup is NULL");
    int *in2 = rank_index(g2);
    int *wr = malloc(((size_t)g1->size + (size_t)g2->size + 1) * sizeof *wr);
    if (!in2 || !wr) {
        free(in2);
        free(wr);
        return tern_mpi_status_error(MPI_COMM_NULL, TERN_ERR_NOMEM, func, "rank list");
    }
    int m = 0;
    for (int i = 0; i < g1->size; i++) {
        int w = g1->world_ranks[i];
        int keep = op == SET_UNION || (op == SET_INTERSECTION) == (in2[w] >= 0);
        if (keep)
            wr[m++] = w;
    }
    if (op == SET_UNION) {
        /* g2's ranks not in g1, in g2's order: reuse in2 as "in g1". */
        for (int i = 0; i < g2->size; i++)
            in2[g2->world_ranks[i]] = -1;
        for (int i = 0; i < g1->size; i++)
            in2[g1->world_ranks[i]] = i;
        for (int i = 0; i < g2->size; i++)
            if (in2[g2->world_ranks[i]] < 0)
                wr[m++] = g2->world_ranks[i];
    }
    err = new_group(func, wr, m, newgroup);
    free(in2);
    free(wr);
    return err;
}

TERN_PMPI_ALIAS(Group_union)
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_union", group1, group2, SET_UNION, newgroup);
}

TERN_PMPI_ALIAS(Group_intersection)
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_intersection", group1, group2, SET_INTERSECTION, newgroup);
}

TERN_PMPI_ALIAS(Group_difference)
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_difference", group1, group2, SET_DIFFERENCE, newgroup);
}

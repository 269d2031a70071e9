/* The group operations of MPI (queries, comparison, rank translation, and
 * the constructors: incl/excl, ranges, set operations) on groups the MPI
 * layer has checked. Results keep MPI's orders: incl in the given order,
 * set operations in the first group's order. Errors name the argument
 * (tern_status_detail). */
#include "core/group/group.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

tern_status_t tern_group_get_size(const tern_group_t *g, int *size)
{
    *size = g->size;
    return TERN_OK;
}

tern_status_t tern_group_get_rank(const tern_group_t *g, int *rank)
{
    *rank = g->rank;
    return TERN_OK;
}

tern_status_t tern_group_release(MPI_Group *handle)
{
    tern_group_free(*handle); /* leaves MPI_GROUP_EMPTY alone */
    *handle = MPI_GROUP_NULL;
    return TERN_OK;
}

tern_status_t tern_group_compare(const tern_group_t *g1, const tern_group_t *g2, int *result)
{
    *result = tern_group_compare_ranks(g1->world_ranks, g1->size, g2->world_ranks, g2->size);
    return TERN_OK;
}

/* world rank -> rank in g, or -1: a table over the world, for O(n) lookups. */
static int *rank_index(const tern_group_t *g)
{
    int *idx = malloc((size_t)tern_rt.n_peers * sizeof *idx);
    if (!idx)
        return NULL;
    memset(idx, 0xff, (size_t)tern_rt.n_peers * sizeof *idx);
    for (int i = 0; i < g->size; i++)
        idx[g->world_ranks[i]] = i;
    return idx;
}

tern_status_t tern_group_translate_ranks(const tern_group_t *g1, int n, const int *ranks1,
                                         const tern_group_t *g2, int *ranks2)
{
    for (int i = 0; i < n; i++)
        if ((ranks1[i] < 0 || ranks1[i] >= g1->size) && ranks1[i] != MPI_PROC_NULL)
            return tern_status_detail(TERN_ERR_RANK,
                                      "ranks1[%d]=%d is out of range (group1 has %d ranks)", i,
                                      ranks1[i], g1->size);
    int *idx = rank_index(g2);
    if (!idx)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a rank table");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = idx[g1->world_ranks[ranks1[i]]];
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    free(idx);
    return TERN_OK;
}

/* Checks a list of n distinct ranks of g; seen (g->size entries) is
 * scratch. */
static tern_status_t check_rank_list(const tern_group_t *g, int n, const int *ranks, char *seen)
{
    if (n > g->size)
        return tern_status_detail(TERN_ERR_ARG, "n=%d is outside 0..%d (the group's size)", n,
                                  g->size);
    memset(seen, 0, (size_t)g->size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return tern_status_detail(TERN_ERR_RANK,
                                      "ranks[%d]=%d is out of range (the group has %d ranks)", i,
                                      ranks[i], g->size);
        if (seen[ranks[i]])
            return tern_status_detail(TERN_ERR_RANK, "ranks[%d]=%d appears twice", i, ranks[i]);
        seen[ranks[i]] = 1;
    }
    return TERN_OK;
}

static tern_status_t incl_excl(const tern_group_t *g, int n, const int *ranks, int excl,
                               MPI_Group *newgroup)
{
    char *seen = malloc((size_t)g->size + 1);
    int *wr = malloc(((size_t)g->size + 1) * sizeof *wr);
    tern_status_t st = seen && wr ? check_rank_list(g, n, ranks, seen)
                                  : tern_status_detail(TERN_ERR_NOMEM, "out of memory for a rank list");
    int m = 0;
    if (st == TERN_OK && excl) {
        for (int i = 0; i < g->size; i++)
            if (!seen[i])
                wr[m++] = g->world_ranks[i];
    } else if (st == TERN_OK) {
        for (int i = 0; i < n; i++)
            wr[m++] = g->world_ranks[ranks[i]];
    }
    if (st == TERN_OK)
        st = tern_group_new(wr, m, newgroup);
    if (st == TERN_OK)
        tern_group_set_session(*newgroup, g->session);
    free(seen);
    free(wr);
    return st;
}

tern_status_t tern_group_incl(const tern_group_t *g, int n, const int *ranks, MPI_Group *newgroup)
{
    return incl_excl(g, n, ranks, 0, newgroup);
}

tern_status_t tern_group_excl(const tern_group_t *g, int n, const int *ranks, MPI_Group *newgroup)
{
    return incl_excl(g, n, ranks, 1, newgroup);
}

/* Expands (first, last, stride) triplets into a rank list; every rank must
 * be valid and appear once in all. */
static tern_status_t expand_ranges(const tern_group_t *g, int n, int ranges[][3], int **list_p,
                                   int *count_p)
{
    int *list = malloc(((size_t)g->size + 1) * sizeof *list);
    char *seen = calloc((size_t)g->size + 1, 1);
    tern_status_t st = TERN_OK;
    if (!list || !seen)
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for a rank list");
    int count = 0;
    for (int i = 0; i < n && st == TERN_OK; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) {
            st = tern_status_detail(TERN_ERR_ARG, "ranges[%d] has stride 0", i);
        } else if (first < 0 || first >= g->size || last < 0 || last >= g->size) {
            st = tern_status_detail(TERN_ERR_RANK, "ranges[%d]=(%d,%d,%d) leaves the group (%d ranks)",
                                    i, first, last, stride, g->size);
        } else if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
            st = tern_status_detail(TERN_ERR_ARG, "ranges[%d]=(%d,%d,%d) is empty", i, first, last,
                                    stride);
        }
        for (long r = first; st == TERN_OK && (stride > 0 ? r <= last : r >= last); r += stride) {
            if (seen[r])
                st = tern_status_detail(TERN_ERR_RANK, "rank %ld appears twice in the ranges", r);
            seen[r] = 1;
            list[count++] = (int)r;
        }
    }
    free(seen);
    if (st != TERN_OK) {
        free(list);
        return st;
    }
    *list_p = list;
    *count_p = count;
    return TERN_OK;
}

static tern_status_t range_incl_excl(const tern_group_t *g, int n, int ranges[][3], int excl,
                                     MPI_Group *newgroup)
{
    int *list = NULL, count = 0;
    tern_status_t st = expand_ranges(g, n, ranges, &list, &count);
    if (st == TERN_OK)
        st = incl_excl(g, count, list, excl, newgroup);
    free(list);
    return st;
}

tern_status_t tern_group_range_incl(const tern_group_t *g, int n, int ranges[][3],
                                    MPI_Group *newgroup)
{
    return range_incl_excl(g, n, ranges, 0, newgroup);
}

tern_status_t tern_group_range_excl(const tern_group_t *g, int n, int ranges[][3],
                                    MPI_Group *newgroup)
{
    return range_incl_excl(g, n, ranges, 1, newgroup);
}

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static tern_status_t set_op(const tern_group_t *g1, const tern_group_t *g2, int op,
                            MPI_Group *newgroup)
{
    int *in2 = rank_index(g2);
    int *wr = malloc(((size_t)g1->size + (size_t)g2->size + 1) * sizeof *wr);
    if (!in2 || !wr) {
        free(in2);
        free(wr);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a rank list");
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
    tern_status_t st = tern_group_new(wr, m, newgroup);
    if (st == TERN_OK) /* mixing sessions' groups is erroneous: g1's */
        tern_group_set_session(*newgroup, g1->session != MPI_SESSION_NULL ? g1->session : g2->session);
    free(in2);
    free(wr);
    return st;
}

tern_status_t tern_group_union(const tern_group_t *g1, const tern_group_t *g2, MPI_Group *newgroup)
{
    return set_op(g1, g2, SET_UNION, newgroup);
}

tern_status_t tern_group_intersection(const tern_group_t *g1, const tern_group_t *g2,
                                      MPI_Group *newgroup)
{
    return set_op(g1, g2, SET_INTERSECTION, newgroup);
}

tern_status_t tern_group_difference(const tern_group_t *g1, const tern_group_t *g2,
                                    MPI_Group *newgroup)
{
    return set_op(g1, g2, SET_DIFFERENCE, newgroup);
}

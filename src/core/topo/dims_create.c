/* MPI_Dims_create: the balanced grid of MPI-4.1 8.5.2. The dimensions the
 * caller left 0 get the factorisation of nnodes / (product of the given
 * ones) into that many factors, in non-increasing order, whose largest
 * minus smallest is least; ties go to the largest smallest factor, then
 * to the least sum (the choices of MPICH's test table, topo/baddims.h). A search
 * over non-increasing sequences of divisors finds it; greedy assignment of
 * prime factors does not (72 in 2-D would be 12 x 6, not 9 x 8). */
#include "core/topo/topo.h"

#include <stdlib.h>

typedef struct {
    const int *divs; /* divisors of the number to split, ascending */
    int n_divs;
    int k;           /* factors wanted */
    int *cur, *best;
    int best_spread; /* largest - smallest of best; -1: none yet */
    long long best_sum;
} search_t;

/* Whether k factors of at most d can reach m (d^k >= m). */
static int reaches(long long d, int k, long long m)
{
    long long p = 1;
    for (int i = 0; i < k; i++) {
        p *= d;
        if (p >= m)
            return 1;
    }
    return p >= m;
}

static void search(search_t *s, int pos, long long rest, int max)
{
    if (pos == s->k - 1) {
        if (rest > max)
            return;
        s->cur[pos] = (int)rest;
        long long sum = 0;
        for (int i = 0; i < s->k; i++)
            sum += s->cur[i];
        int spread = s->cur[0] - (int)rest;
        if (s->best_spread < 0 || spread < s->best_spread ||
            (spread == s->best_spread &&
             (rest > s->best[s->k - 1] || (rest == s->best[s->k - 1] && sum < s->best_sum)))) {
            s->best_spread = spread;
            s->best_sum = sum;
            for (int i = 0; i < s->k; i++)
                s->best[i] = s->cur[i];
        }
        return;
    }
    for (int i = s->n_divs - 1; i >= 0; i--) {
        int d = s->divs[i];
        if (d > max || rest % d)
            continue;
        /* Factors come in non-increasing order: the rest must fit in
         * k - pos factors of at most d. Smaller d only lowers that. */
        if (!reaches(d, s->k - pos, rest))
            break;
        int first = pos == 0 ? d : s->cur[0];
        /* The last factor is at most d: the spread is at least first - d. */
        if (s->best_spread >= 0 && first - d > s->best_spread)
            break;
        s->cur[pos] = d;
        search(s, pos + 1, rest / d, d);
    }
}

/* The balanced split of m into k >= 1 factors, non-increasing, in out. */
static tern_status_t balance(int m, int k, int *out)
{
    /* Divisors in ascending order: the small ones (d * d <= m), then their
     * partners, so at most twice as many as the small ones. Counting them
     * first costs one more pass of at most sqrt(INT_MAX) steps. */
    int n_small = 0;
    for (long long d = 1; d * d <= m; d++)
        n_small += m % d == 0;
    int *divs = malloc(2 * (size_t)n_small * sizeof *divs);
    int *buf = malloc(2 * (size_t)k * sizeof *buf);
    if (!divs || !buf) {
        free(divs);
        free(buf);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the search");
    }
    int n_divs = 0;
    for (long long d = 1; d * d <= m; d++)
        if (m % d == 0)
            divs[n_divs++] = (int)d;
    for (int i = n_small - 1; i >= 0; i--)
        if (m / divs[i] != divs[i])
            divs[n_divs++] = m / divs[i];
    search_t s = {divs, n_divs, k, buf, buf + k, -1, 0};
    search(&s, 0, m, m);
    for (int i = 0; i < k; i++)
        out[i] = s.best[i];
    free(divs);
    free(buf);
    return TERN_OK;
}

tern_status_t tern_dims_create(int nnodes, int ndims, int *dims)
{
    if (nnodes <= 0)
        return tern_status_detail(TERN_ERR_ARG, "nnodes=%d is not positive", nnodes);
    if (ndims < 0)
        return tern_status_detail(TERN_ERR_DIMS, "ndims=%d is negative", ndims);
    long long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return tern_status_detail(TERN_ERR_DIMS, "dims[%d]=%d is negative", i, dims[i]);
        if (dims[i] == 0)
            free_dims++;
        else if ((fixed *= dims[i]) > nnodes)
            break;
    }
    if (nnodes % fixed || (free_dims == 0 && fixed != nnodes))
        return tern_status_detail(TERN_ERR_DIMS,
                                  "nnodes=%d is not a multiple of the product of the nonzero "
                                  "dims (%lld)%s",
                                  nnodes, fixed, ndims == 0 ? " (ndims=0 needs nnodes=1)" : "");
    if (free_dims == 0)
        return TERN_OK;
    int *f = malloc((size_t)free_dims * sizeof *f);
    if (!f)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the result");
    tern_status_t st = balance((int)(nnodes / fixed), free_dims, f);
    for (int i = 0, j = 0; st == TERN_OK && i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[j++];
    free(f);
    return st;
}

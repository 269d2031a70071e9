/* PMI_process_mapping parser and formatter; see pmi_mapping.h. */
#include "pmi/pmi_mapping.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BLOCKS = 1024 };

typedef struct {
    long start, n_nodes, ppn;
} block_t;

static int skip(const char **p, const char *lit)
{
    while (**p == ' ')
        (*p)++;
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0)
        return 0;
    *p += n;
    return 1;
}

static int number(const char **p, long *x_p)
{
    char *end;
    while (**p == ' ')
        (*p)++;
    long x = strtol(*p, &end, 10);
    if (end == *p || x < 0 || x > 1L << 30)
        return 0;
    *p = end;
    *x_p = x;
    return 1;
}

tern_status_t tern_pmi_mapping_parse(const char *text, int size, int *node_of_rank)
{
    block_t *blocks = malloc(MAX_BLOCKS * sizeof *blocks);
    if (!blocks)
        return TERN_ERR_NOMEM;
    const char *p = text;
    int n = 0;
    tern_status_t st = TERN_ERR_ARG;
    if (!skip(&p, "(") || !skip(&p, "vector"))
        goto out;
    while (skip(&p, ",")) {
        block_t b;
        if (n == MAX_BLOCKS || !skip(&p, "(") || !number(&p, &b.start) || !skip(&p, ",") ||
            !number(&p, &b.n_nodes) || !skip(&p, ",") || !number(&p, &b.ppn) || !skip(&p, ")"))
            goto out;
        blocks[n++] = b;
    }
    if (!skip(&p, ")"))
        goto out;
    while (*p == ' ')
        p++;
    if (*p != '\0')
        goto out;
    int rank = 0;
    while (rank < size) {
        int placed = 0;
        for (int i = 0; i < n && rank < size; i++)
            for (long k = 0; k < blocks[i].n_nodes && rank < size; k++)
                for (long j = 0; j < blocks[i].ppn && rank < size; j++, placed++)
                    node_of_rank[rank++] = (int)(blocks[i].start + k);
        if (!placed)
            goto out; /* an empty vector would never end */
    }
    st = TERN_OK;
out:
    free(blocks);
    return st;
}

tern_status_t tern_pmi_mapping_format(const int *node_of_rank, int size, char *buf, size_t len)
{
    size_t used = 0;
    int w = snprintf(buf, len, "(vector");
    if (w < 0 || (size_t)w >= len)
        return TERN_ERR_TRUNCATE;
    used = (size_t)w;
    block_t cur = {0, 0, 0};
    for (int r = 0; r <= size; r++) {
        /* The run of ranks on one node starting at r. */
        int run = 0;
        if (r < size)
            while (r + run < size && node_of_rank[r + run] == node_of_rank[r])
                run++;
        if (r < size && cur.n_nodes > 0 && run == cur.ppn &&
            node_of_rank[r] == cur.start + cur.n_nodes) {
            cur.n_nodes++;
        } else {
            if (cur.n_nodes > 0) {
                w = snprintf(buf + used, len - used, ",(%ld,%ld,%ld)", cur.start, cur.n_nodes,
                             cur.ppn);
                if (w < 0 || (size_t)w >= len - used)
                    return TERN_ERR_TRUNCATE;
                used += (size_t)w;
            }
            if (r < size)
                cur = (block_t){node_of_rank[r], 1, run};
        }
        if (r < size)
            r += run - 1;
    }
    if (used + 2 > len)
        return TERN_ERR_TRUNCATE;
    strcpy(buf + used, ")");
    return TERN_OK;
}

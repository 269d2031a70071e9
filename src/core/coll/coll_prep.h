/* The views of the collective entry points (coll.c, coll_v.c): a call's
 * buffers as contiguous packed views, with the packs scheduled before the
 * algorithm and the unpacks kept for after it (prep_t). Private to the
 * two files, each of which calls every function here: static, not inline,
 * so the compiler inlines them as when they were coll.c's alone. */
#ifndef TERN_CORE_COLL_PREP_H
#define TERN_CORE_COLL_PREP_H

#include "core/coll/coll.h"
#include "core/datatype/datatype.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Unpacks to do once the algorithm is done. */
typedef struct {
    tern_sched_t *s;
    struct out {
        const void *tmp;
        void *buf;
        size_t count;
        MPI_Datatype dt;
    } *outs;
    int n_outs, cap_outs;
} prep_t;

static char *offset(const void *buf, MPI_Aint off)
{
    return off ? (char *)(uintptr_t)buf + off : (char *)(uintptr_t)buf;
}

static int prep_init(prep_t *pr, tern_comm_t *c, int max_outs, int blocking)
{
    /* Blocking: steps run as they are built (no step list to interpret). */
    pr->s = tern_sched_create(c, blocking);
    if (!pr->s)
        return -1;
    pr->n_outs = 0;
    pr->cap_outs = max_outs;
    pr->outs = NULL; /* allocated by the first add_out: contiguous calls never need it */
    return 0;
}

/* Read view of count x dt at buf. */
static const void *in_view(prep_t *pr, const void *buf, size_t count, MPI_Datatype dt)
{
    if (count == 0 || tern_datatype_is_contig(dt))
        return offset(buf, tern_datatype_true_lb(dt));
    void *t = tern_sched_tmp(pr->s, tern_datatype_packed_size(dt, count));
    if (t)
        tern_sched_pack(pr->s, buf, count, dt, t);
    return t;
}

static void add_out(prep_t *pr, const void *tmp, void *buf, size_t count, MPI_Datatype dt)
{
    if (!pr->outs && pr->cap_outs)
        pr->outs = tern_sched_tmp(pr->s, (size_t)pr->cap_outs * sizeof *pr->outs);
    if (pr->outs && pr->n_outs < pr->cap_outs)
        pr->outs[pr->n_outs++] = (struct out){tmp, buf, count, dt};
}

/* Write view: the algorithm's result lands here; unpacked at the end. */
static void *out_view(prep_t *pr, void *buf, size_t count, MPI_Datatype dt)
{
    if (count == 0 || tern_datatype_is_contig(dt))
        return offset(buf, tern_datatype_true_lb(dt));
    void *t = tern_sched_tmp(pr->s, tern_datatype_packed_size(dt, count));
    if (t)
        add_out(pr, t, buf, count, dt);
    return t;
}

/* Field by field: the compiler turns a memset or a compound literal of
 * this size into `rep stosq`, whose start-up costs tens of cycles on
 * every call of a 2-rank 8 B collective; these become vector stores. The
 * size check asks for a line here when a field is added. */
static void args_init(tern_coll_args_t *a, tern_comm_t *c)
{
    _Static_assert(offsetof(tern_coll_args_t, blocking) + sizeof(int) ==
                       11 * sizeof(void *) + sizeof(MPI_Datatype) + sizeof(MPI_Op) +
                           3 * sizeof(int),
                   "args_init sets every field of tern_coll_args_t");
    a->comm = c;
    a->sbuf = NULL;
    a->rbuf = NULL;
    a->bytes = a->rbytes = 0;
    a->scounts = a->sdispls = a->rcounts = a->rdispls = NULL;
    a->count = a->esz = 0;
    a->dt = 0; /* as the memset that was here: 0, not MPI_DATATYPE_NULL */
    a->op = 0;
    a->commutative = 1;
    a->root = 0;
    a->blocking = 0;
}

#define PREP(pr, c, n, req_p)                                                  \
    do {                                                                       \
        if (prep_init(&(pr), (c), (n), !(req_p)))                              \
            return TERN_ERR_NOMEM;                                             \
    } while (0)

/* Selects, builds, appends the unpacks and launches (coll.c). */
tern_status_t tern_coll_finish(prep_t *pr, tern_coll_args_t *a, tern_coll_kind_t kind,
                               size_t msg_bytes, tern_req_t **req_p, int persistent);

#endif

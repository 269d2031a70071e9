/* The collectives with per-rank blocks, the v and w variants (gatherv,
 * scatterv, allgatherv, alltoallv/w): each block's view, then the common
 * finish (coll_prep.h). */
#include "core/coll/coll.h"
#include "core/coll/coll_prep.h"
#include "core/datatype/datatype.h"

#include <stdint.h>

/* Per-rank blocks (v and w variants): block i is counts[i] x types[i] at
 * buf + disp[i] (bytes). Produces a base view and byte counts/displacements
 * into it; packs (input) or schedules unpacks (output) per block when a
 * type is not contiguous. */
typedef struct {
    tern_nums_t counts;         /* int or MPI_Count (the _c forms) */
    tern_nums_t displs;         /* int or MPI_Aint; in elements of the type (v) ... */
    const MPI_Datatype *types;  /* ... or bytes when types are per rank (w) */
    MPI_Datatype type;
} blocks_t;

static MPI_Datatype block_type(const blocks_t *b, int i) { return b->types ? b->types[i] : b->type; }
static MPI_Aint block_disp(const blocks_t *b, int i)
{
    MPI_Aint d = (MPI_Aint)tern_nums_at(b->displs, i);
    return b->types ? d : d * (MPI_Aint)tern_datatype_extent(b->type);
}

static void *blocks_view(prep_t *pr, const void *buf, const blocks_t *b, int p, int output,
                         size_t **bytes_p, size_t **disp_p)
{
    *bytes_p = *disp_p = NULL; /* on failure too: callers read them */
    size_t *bytes = tern_sched_tmp(pr->s, 2 * (size_t)p * sizeof(size_t));
    if (!bytes)
        return NULL;
    size_t *disp = bytes + p;
    *bytes_p = bytes;
    *disp_p = disp;
    int contig = 1;
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        MPI_Datatype dt = block_type(b, i);
        size_t count = (size_t)tern_nums_at(b->counts, i);
        bytes[i] = tern_datatype_packed_size(dt, count);
        total += bytes[i];
        if (count && !tern_datatype_is_contig(dt))
            contig = 0;
    }
    if (contig) {
        for (int i = 0; i < p; i++)
            disp[i] = (size_t)(block_disp(b, i) + tern_datatype_true_lb(block_type(b, i)));
        return (void *)(uintptr_t)buf;
    }
    char *t = tern_sched_tmp(pr->s, total);
    if (!t)
        return NULL;
    size_t off = 0;
    for (int i = 0; i < p; i++) {
        disp[i] = off;
        char *user = offset(buf, block_disp(b, i));
        if (output)
            add_out(pr, t + off, user, (size_t)tern_nums_at(b->counts, i), block_type(b, i));
        else
            tern_sched_pack(pr->s, user, (size_t)tern_nums_at(b->counts, i), block_type(b, i),
                            t + off);
        off += bytes[i];
    }
    return t;
}

tern_status_t tern_coll_gatherv(tern_comm_t *c, const void *sbuf, size_t scount,
                                MPI_Datatype stype, void *rbuf, tern_nums_t rcounts,
                                tern_nums_t displs, MPI_Datatype rtype, int root,
                                tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    int p = c->is_inter ? c->remote_size : c->size;
    PREP(pr, c, p, req_p);
    args_init(&a, c);
    a.root = root;
    if (c->is_inter ? root == MPI_ROOT : c->rank == root) {
        blocks_t b = {rcounts, displs, NULL, rtype};
        size_t *rc, *rd;
        a.rbuf = blocks_view(&pr, rbuf, &b, p, 1, &rc, &rd);
        a.rcounts = rc;
        a.rdispls = rd;
        if (!c->is_inter)
            a.sbuf = sbuf == MPI_IN_PLACE ? in_view(&pr, offset(rbuf, block_disp(&b, root)),
                                                    (size_t)tern_nums_at(rcounts, root), rtype)
                                          : in_view(&pr, sbuf, scount, stype);
    } else if (!(c->is_inter && root == MPI_PROC_NULL)) {
        a.bytes = tern_datatype_packed_size(stype, scount);
        a.sbuf = in_view(&pr, sbuf, scount, stype);
    }
    return tern_coll_finish(&pr, &a, TERN_COLL_GATHERV, 0, req_p, persistent);
}

tern_status_t tern_coll_scatterv(tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                                 tern_nums_t displs, MPI_Datatype stype, void *rbuf, size_t rcount,
                                 MPI_Datatype rtype, int root, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    int p = c->is_inter ? c->remote_size : c->size;
    PREP(pr, c, 1, req_p);
    args_init(&a, c);
    a.root = root;
    if (c->is_inter ? root == MPI_ROOT : c->rank == root) {
        blocks_t b = {scounts, displs, NULL, stype};
        size_t *sc, *sd;
        a.sbuf = blocks_view(&pr, sbuf, &b, p, 0, &sc, &sd);
        a.scounts = sc;
        a.sdispls = sd;
        if (!c->is_inter)
            a.rbuf = rbuf == MPI_IN_PLACE ? offset(a.sbuf, (MPI_Aint)(sd ? sd[root] : 0))
                                          : out_view(&pr, rbuf, rcount, rtype);
    } else if (!(c->is_inter && root == MPI_PROC_NULL)) {
        a.bytes = tern_datatype_packed_size(rtype, rcount);
        a.rbuf = out_view(&pr, rbuf, rcount, rtype);
    }
    return tern_coll_finish(&pr, &a, TERN_COLL_SCATTERV, 0, req_p, persistent);
}

tern_status_t tern_coll_allgatherv(tern_comm_t *c, const void *sbuf, size_t scount,
                                   MPI_Datatype stype, void *rbuf, tern_nums_t rcounts,
                                   tern_nums_t displs, MPI_Datatype rtype, tern_req_t **req_p,
                                   int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    int p = c->is_inter ? c->remote_size : c->size, r = c->rank;
    PREP(pr, c, p, req_p);
    args_init(&a, c);
    blocks_t b = {rcounts, displs, NULL, rtype};
    a.bytes = tern_datatype_packed_size(stype, scount);
    a.sbuf = sbuf == MPI_IN_PLACE
                 ? in_view(&pr, offset(rbuf, block_disp(&b, r)),
                           (size_t)tern_nums_at(rcounts, r), rtype)
                 : in_view(&pr, sbuf, scount, stype);
    size_t *rc, *rd;
    a.rbuf = blocks_view(&pr, rbuf, &b, p, 1, &rc, &rd);
    a.rcounts = rc;
    a.rdispls = rd;
    size_t total = 0;
    for (int i = 0; rc && i < p; i++)
        total += rc[i];
    return tern_coll_finish(&pr, &a, TERN_COLL_ALLGATHERV, total / (size_t)p, req_p,
                            persistent);
}

tern_status_t tern_coll_alltoallvw(tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                                   tern_nums_t sdispls, const MPI_Datatype *stypes,
                                   MPI_Datatype stype, void *rbuf, tern_nums_t rcounts,
                                   tern_nums_t rdispls, const MPI_Datatype *rtypes,
                                   MPI_Datatype rtype, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    int p = c->is_inter ? c->remote_size : c->size;
    PREP(pr, c, p, req_p);
    args_init(&a, c);
    blocks_t rb = {rcounts, rdispls, rtypes, rtype};
    size_t *sc, *sd, *rc, *rd;
    if (sbuf == MPI_IN_PLACE) {
        /* The send blocks are the receive blocks: read a private copy. */
        const char *v = blocks_view(&pr, rbuf, &rb, p, 0, &sc, &sd);
        size_t lo = SIZE_MAX, hi = 0;
        for (int i = 0; sc && i < p; i++)
            if (sc[i]) {
                lo = sd[i] < lo ? sd[i] : lo;
                hi = sd[i] + sc[i] > hi ? sd[i] + sc[i] : hi;
            }
        if (lo == SIZE_MAX)
            lo = hi = 0;
        char *copy = tern_sched_tmp(pr.s, hi - lo);
        if (copy && v) {
            tern_sched_copy(pr.s, v + lo, copy, hi - lo);
            for (int i = 0; i < p; i++)
                sd[i] -= lo;
        }
        a.sbuf = copy;
    } else {
        blocks_t sb = {scounts, sdispls, stypes, stype};
        a.sbuf = blocks_view(&pr, sbuf, &sb, p, 0, &sc, &sd);
    }
    a.rbuf = blocks_view(&pr, rbuf, &rb, p, 1, &rc, &rd);
    a.scounts = sc;
    a.sdispls = sd;
    a.rcounts = rc;
    a.rdispls = rd;
    return tern_coll_finish(&pr, &a, stypes || rtypes ? TERN_COLL_ALLTOALLW : TERN_COLL_ALLTOALLV,
                            0, req_p, persistent);
}

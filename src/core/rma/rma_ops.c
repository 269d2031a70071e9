/* The communication calls of one-sided communication: Put, Get,
 * Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and the
 * request-based forms. Each checks the epoch and the target range here,
 * at the origin (every rank knows every window's size), packs its data,
 * flattens the target type, and hands one request to the engine. */
#include "core/rma/rma_ops.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"
#include "core/rma/rma_am.h"
#include "core/rma/rma_atomic.h"
#include "core/rma/rma_rdma.h"
#include "core/rma/rma_cma.h"
#include "core/rma/rma_shm.h"
#include "core/rma/rma_sync.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <string.h>

/* What one operation moves. */
typedef struct {
    int type;
    const void *origin; MPI_Count ocount; MPI_Datatype otype;
    void *result; MPI_Count rcount; MPI_Datatype rtype;
    int target; MPI_Aint disp; MPI_Count tcount; MPI_Datatype ttype;
    MPI_Op op;
    const void *compare;
    int passive;          /* request-based: passive-target epochs only */
} rma_call_t;

static tern_status_t size_mismatch(const char *a, size_t na, const char *b, size_t nb)
{
    return tern_status_detail(TERN_ERR_ARG, "the %s data (%zu bytes) and the %s data (%zu "
                              "bytes) differ in size", a, na, b, nb);
}

/* Accumulates: one predefined op (or MPI_REPLACE, MPI_NO_OP) on one basic
 * type that both sides are made of. *basic gets it. */
static tern_status_t check_acc(const rma_call_t *c, MPI_Datatype *basic)
{
    if (!tern_op_is_predefined(c->op))
        return tern_status_detail(TERN_ERR_OP, "%s is not a predefined operation (one-sided "
                                  "accumulates take only those)", tern_op_name(c->op));
    MPI_Datatype tb = tern_datatype_basic(c->ttype);
    if (tb == MPI_DATATYPE_NULL)
        return tern_status_detail(TERN_ERR_TYPE, "target_datatype mixes basic types");
    if (c->op != MPI_NO_OP && c->otype != MPI_DATATYPE_NULL &&
        tern_datatype_basic(c->otype) != tb)
        return tern_status_detail(TERN_ERR_TYPE, "origin and target datatypes are made of "
                                  "different basic types (%s, %s)",
                                  tern_datatype_name(tern_datatype_basic(c->otype)),
                                  tern_datatype_name(tb));
    if (c->op != MPI_REPLACE && c->op != MPI_NO_OP && !tern_op_allowed(c->op, tb))
        return tern_status_detail(TERN_ERR_OP, "%s is not defined on %s", tern_op_name(c->op),
                                  tern_datatype_name(tb));
    *basic = tb;
    return TERN_OK;
}

static tern_status_t issue(tern_win_t *w, const rma_call_t *c, tern_req_t **req_p)
{
    if (req_p)
        *req_p = NULL;
    tern_status_t st;
    if (c->target == MPI_PROC_NULL)
        goto done_now;
    if (c->target < 0 || c->target >= w->size)
        return tern_status_detail(TERN_ERR_RANK, "target_rank=%d is out of range (the window "
                                  "has %d ranks)", c->target, w->size);
    if ((st = tern_rma_check_epoch(w, c->target, c->passive)) != TERN_OK)
        return st;
    size_t tbytes = tern_datatype_packed_size(c->ttype, (size_t)c->tcount);
    int ships = c->type == RMA_PUT || c->type == RMA_ACC || c->type == RMA_CAS ||
                (c->type == RMA_GACC && c->op != MPI_NO_OP);
    size_t obytes = ships || c->type == RMA_GET
                        ? tern_datatype_packed_size(c->otype, (size_t)c->ocount) : 0;
    size_t rbytes = c->type == RMA_GACC
                        ? tern_datatype_packed_size(c->rtype, (size_t)c->rcount) : 0;
    /* Nothing moves (zero counts or zero-size types): nothing to check
     * further, nothing to do. */
    if (!tbytes && !obytes && !rbytes)
        goto done_now;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    if ((c->type == RMA_ACC || c->type == RMA_GACC) && (st = check_acc(c, &basic)) != TERN_OK)
        return st;
    if ((ships || c->type == RMA_GET) && obytes != tbytes)
        return size_mismatch("origin", obytes, "target", tbytes);
    if (c->type == RMA_GACC) {
        if (rbytes != tbytes)
            return size_mismatch("result", rbytes, "target", tbytes);
        if (tern_datatype_basic(c->rtype) != basic)
            return tern_status_detail(TERN_ERR_TYPE, "result_datatype is not made of %s",
                                      tern_datatype_name(basic));
    }
    tern_dt_seg_t *segs;
    size_t nsegs;
    if ((st = tern_datatype_flatten((size_t)c->tcount, c->ttype, &segs, &nsegs)) != TERN_OK)
        return st;
    /* The target range, in bytes from the window's base. */
    MPI_Aint lo = segs[0].offset, hi = segs[0].offset + (MPI_Aint)segs[0].len;
    for (size_t i = 1; i < nsegs; i++) {
        if (segs[i].offset < lo)
            lo = segs[i].offset;
        if (segs[i].offset + (MPI_Aint)segs[i].len > hi)
            hi = segs[i].offset + (MPI_Aint)segs[i].len;
    }
    rma_hdr_t h = {.type = (uint32_t)c->type, .op = (int32_t)c->op, .basic = (int32_t)basic,
                   .nsegs = nsegs, .bytes = tbytes};
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        h.addr = (uint64_t)c->disp; /* an address at the target; it checks the range */
    } else {
        MPI_Aint off = c->disp * (MPI_Aint)w->disp_units[c->target];
        if (off + lo < 0 || off + hi > w->sizes[c->target]) {
            free(segs);
            return tern_status_detail(TERN_ERR_RMA_RANGE,
                                      "bytes [%lld, %lld) of target rank %d are outside its "
                                      "window of %lld bytes",
                                      (long long)(off + lo), (long long)(off + hi), c->target,
                                      (long long)w->sizes[c->target]);
        }
        h.addr = (uint64_t)off;
    }
    char *data = NULL;
    /* The packed origin data; a contiguous origin going by CMA is used
     * where it lies (no copy of a large accumulate). */
    const char *src = NULL;
    const int cma = tern_rma_cma_covers(w, c->target, h.type);
    if (ships) {
        h.data_bytes = c->type == RMA_CAS ? 2 * tbytes : tbytes;
        if (cma && c->type != RMA_CAS && tern_datatype_is_contig(c->otype)) {
            src = (const char *)c->origin + tern_datatype_true_lb(c->otype);
        } else if (!(data = malloc(h.data_bytes))) {
            free(segs);
            return TERN_ERR_NOMEM;
        } else {
            st = tern_datatype_pack(c->origin, (size_t)c->ocount, c->otype, data);
            if (st == TERN_OK && c->type == RMA_CAS)
                memcpy(data + tbytes, c->compare, tbytes);
            src = data;
        }
    }
    int fetch = c->type == RMA_GET || c->type == RMA_GACC || c->type == RMA_CAS;
    if (w->direct && st == TERN_OK) {
        /* Shared memory: done now, complete locally and at the target. */
        char *out = fetch ? malloc(tbytes) : NULL;
        if (fetch && !out) {
            st = TERN_ERR_NOMEM;
        } else {
            tern_rma_shm_apply(w, c->target, &h, segs, data, out);
            tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
            if (fetch)
                st = tern_datatype_unpack(out, tbytes, c->result, (size_t)c->rcount, c->rtype);
        }
        free(out);
        free(segs);
        free(data);
        if (st != TERN_OK)
            return st;
        goto done_now;
    }
    if (st == TERN_OK && cma) {
        /* Win_create on one node: done now, complete at once (rma_cma.c). */
        /* A get into a contiguous buffer reads straight into it. */
        int in_place = c->type == RMA_GET && tern_datatype_is_contig(c->rtype);
        char *out = !fetch ? NULL
                    : in_place ? (char *)c->result + tern_datatype_true_lb(c->rtype)
                               : malloc(tbytes);
        st = fetch && !out ? TERN_ERR_NOMEM
                           : tern_rma_cma_apply(w, c->target, &h, segs, nsegs, src, out);
        if (st == TERN_OK && out && !in_place)
            st = tern_datatype_unpack(out, tbytes, c->result, (size_t)c->rcount, c->rtype);
        if (!in_place)
            free(out);
        if (st != TERN_ERR_NOT_SUPPORTED) {
            free(segs);
            free(data);
            if (st != TERN_OK)
                return st;
            tern_pvar_add(TERN_PVAR_RMA_CMA, 1);
            goto done_now;
        }
        st = TERN_OK; /* refused by the kernel: by active messages instead */
        if (ships && !data) {
            if (!(data = malloc(h.data_bytes))) {
                free(segs);
                return TERN_ERR_NOMEM;
            }
            memcpy(data, src, h.data_bytes);
        }
    }
    if (st == TERN_OK && w->atomic) {
        /* Accumulates as the network's remote atomics (rma_atomic.c). */
        st = tern_rma_atomic_issue(w, c->target, &h, c->type == RMA_CAS ? c->ttype : basic,
                                   segs, (void **)&data, c->result, c->rcount, c->rtype, req_p);
        if (st != TERN_ERR_NOT_SUPPORTED) {
            free(segs);
            free(data);
            if (st == TERN_OK)
                tern_pvar_add(TERN_PVAR_RMA_ATOMIC, 1);
            return st;
        }
        st = TERN_OK;
    }
    if (st == TERN_OK && w->rdma) {
        /* Over the network: the target's memory directly (rma_rdma.c). */
        st = tern_rma_rdma_issue(w, c->target, &h, segs, (void **)&data, c->result, c->rcount,
                                 c->rtype, req_p);
        if (st != TERN_ERR_NOT_SUPPORTED) {
            free(segs);
            free(data);
            if (st == TERN_OK)
                tern_pvar_add(TERN_PVAR_RMA_RDMA, 1);
            return st;
        }
        st = TERN_OK;
    }
    rma_op_t *op = NULL;
    if (st == TERN_OK)
        st = tern_rma_am_issue(w, c->target, &h, segs, data, fetch ? tbytes : 0,
                               fetch ? c->result : NULL, c->rcount, c->rtype, &op);
    if (st == TERN_OK)
        tern_pvar_add(TERN_PVAR_RMA_AM, 1);
    free(segs);
    free(data);
    if (st == TERN_OK && req_p) {
        if (!(op->user_req = tern_req_alloc(TERN_REQ_GENERIC)))
            return TERN_ERR_NOMEM; /* the operation goes on; the epoch's end completes it */
        op->user_req->comm = w->comm->handle;
        *req_p = op->user_req;
    }
    return st;

done_now:
    /* Nothing to move: a request that is complete already. */
    if (req_p) {
        if (!(*req_p = tern_req_alloc(TERN_REQ_GENERIC)))
            return TERN_ERR_NOMEM;
        (*req_p)->comm = w->comm->handle;
        tern_req_complete(*req_p);
    }
    return TERN_OK;
}

tern_status_t tern_rma_put(const void *origin, MPI_Count ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, tern_win_t *w,
                           tern_req_t **req_p)
{
    if (!req_p && w->direct &&
        tern_rma_shm_copy(w, 0, (void *)(uintptr_t)origin, ocount, otype, target, disp, tcount,
                          ttype)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    rma_call_t c = {.type = RMA_PUT, .origin = origin, .ocount = ocount, .otype = otype,
                    .target = target, .disp = disp, .tcount = tcount, .ttype = ttype,
                    .passive = req_p != NULL};
    return issue(w, &c, req_p);
}

tern_status_t tern_rma_get(void *origin, MPI_Count ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, tern_win_t *w,
                           tern_req_t **req_p)
{
    if (!req_p && w->direct &&
        tern_rma_shm_copy(w, 1, origin, ocount, otype, target, disp, tcount, ttype)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    rma_call_t c = {.type = RMA_GET, .origin = origin, .ocount = ocount, .otype = otype,
                    .result = origin, .rcount = ocount, .rtype = otype, .target = target,
                    .disp = disp, .tcount = tcount, .ttype = ttype, .passive = req_p != NULL};
    return issue(w, &c, req_p);
}

tern_status_t tern_rma_accumulate(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                                  int target, MPI_Aint disp, MPI_Count tcount,
                                  MPI_Datatype ttype, MPI_Op op, tern_win_t *w,
                                  tern_req_t **req_p)
{
    if (op == MPI_NO_OP)
        return tern_status_detail(TERN_ERR_OP, "MPI_NO_OP is for the fetching accumulates only");
    rma_call_t c = {.type = RMA_ACC, .origin = origin, .ocount = ocount, .otype = otype,
                    .target = target, .disp = disp, .tcount = tcount, .ttype = ttype, .op = op,
                    .passive = req_p != NULL};
    return issue(w, &c, req_p);
}

tern_status_t tern_rma_get_accumulate(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                                      void *result, MPI_Count rcount, MPI_Datatype rtype,
                                      int target, MPI_Aint disp, MPI_Count tcount,
                                      MPI_Datatype ttype, MPI_Op op, tern_win_t *w,
                                      tern_req_t **req_p)
{
    /* With MPI_NO_OP the origin is ignored (its type may be NULL). */
    if (op != MPI_NO_OP && !tern_datatype_is_valid(otype))
        return tern_status_detail(TERN_ERR_TYPE, "origin_datatype 0x%x is not a committed "
                                  "datatype", (unsigned)otype);
    rma_call_t c = {.type = RMA_GACC, .origin = origin, .ocount = ocount, .otype = otype,
                    .result = result, .rcount = rcount, .rtype = rtype, .target = target,
                    .disp = disp, .tcount = tcount, .ttype = ttype, .op = op,
                    .passive = req_p != NULL};
    return issue(w, &c, req_p);
}

tern_status_t tern_rma_fetch_and_op(const void *origin, void *result, MPI_Datatype dt,
                                    int target, MPI_Aint disp, MPI_Op op, tern_win_t *w)
{
    if (!tern_datatype_is_predefined(dt))
        return tern_status_detail(TERN_ERR_TYPE, "datatype must be predefined");
    rma_call_t c = {.type = RMA_GACC, .origin = origin, .ocount = 1, .otype = dt,
                    .result = result, .rcount = 1, .rtype = dt, .target = target, .disp = disp,
                    .tcount = 1, .ttype = dt, .op = op};
    return issue(w, &c, NULL);
}

tern_status_t tern_rma_compare_and_swap(const void *origin, const void *compare, void *result,
                                        MPI_Datatype dt, int target, MPI_Aint disp,
                                        tern_win_t *w)
{
    if (!tern_datatype_is_predefined(dt) || tern_datatype_size(dt) <= 0)
        return tern_status_detail(TERN_ERR_TYPE, "datatype must be a predefined type");
    /* Integer, logical, byte or multi-language types: those MPI_BAND or
     * MPI_LAND take (not floating point or complex). */
    if (!tern_op_allowed(MPI_BAND, dt) && !tern_op_allowed(MPI_LAND, dt))
        return tern_status_detail(TERN_ERR_TYPE, "%s is not an integer, logical or byte type "
                                  "(MPI_Compare_and_swap takes only those)",
                                  tern_datatype_name(dt));
    rma_call_t c = {.type = RMA_CAS, .origin = origin, .ocount = 1, .otype = dt,
                    .result = result, .rcount = 1, .rtype = dt, .target = target, .disp = disp,
                    .tcount = 1, .ttype = dt, .compare = compare};
    return issue(w, &c, NULL);
}

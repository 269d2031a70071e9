/* The communication calls of one-sided communication: Put, Get,
 * Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and the
 * request-based forms. Each checks the epoch and the target range here,
 * at the origin (every rank knows every window's size), flattens the
 * target type and hands the request to the path chosen for its target when
 * the window was made (rma_path.h). */
#include "core/rma/rma_ops.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"
#include "core/rma/rma_path.h"
#include "core/rma/rma_shm.h"
#include "core/rma/rma_sync.h"
#include "base/profile.h"
#include "base/pvars.h"

#include <stdio.h>
#include <stdlib.h>

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
    if ((st = tern_rma_check_revoked(w)) != TERN_OK)
        return st;
    if (c->target == MPI_PROC_NULL)
        return tern_rma_done_now(w, req_p);
    if (c->target < 0 || c->target >= w->size)
        return tern_status_detail(TERN_ERR_RANK, "target_rank=%d is out of range (the window "
                                  "has %d ranks)", c->target, w->size);
    if ((st = tern_rma_check_epoch(w, c->target, c->passive)) != TERN_OK)
        return st;
    if ((st = tern_rma_check_target_alive(w, c->target)) != TERN_OK)
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
        return tern_rma_done_now(w, req_p);
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    int acc = c->type == RMA_ACC || c->type == RMA_GACC || c->type == RMA_CAS;
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
    if (ships)
        h.data_bytes = c->type == RMA_CAS ? 2 * tbytes : tbytes;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        h.addr = (uint64_t)c->disp; /* an address at the target; it checks the range */
    } else {
        MPI_Aint off = c->disp * (MPI_Aint)w->disp_units[c->target];
        if (off + lo < 0 || off + hi > w->sizes[c->target]) {
            free(segs);
            char win[MPI_MAX_OBJECT_NAME + 32];
            if (w->name[0])
                snprintf(win, sizeof win, "%s", w->name);
            else
                snprintf(win, sizeof win, "window 0x%x", (unsigned)w->handle);
            return tern_status_detail(TERN_ERR_RMA_RANGE,
                                      "bytes [%lld, %lld) of target rank %d are outside its "
                                      "%lld bytes of %s",
                                      (long long)(off + lo), (long long)(off + hi), c->target,
                                      (long long)w->sizes[c->target], win);
        }
        h.addr = (uint64_t)off;
    }
    /* One indirect call: the path chosen for this target at creation
     * (rma_path.h). */
    tern_rma_call_t call = {.type = c->type, .ships = ships,
                            .fetch = c->type == RMA_GET || c->type == RMA_GACC ||
                                     c->type == RMA_CAS,
                            .origin = c->origin, .ocount = c->ocount, .otype = c->otype,
                            .result = c->result, .rcount = c->rcount, .rtype = c->rtype,
                            .target = c->target,
                            .basic = c->type == RMA_CAS ? c->ttype : basic,
                            .compare = c->compare, .req_p = req_p};
    const tern_rma_route_t *r = &w->route[c->target];
    st = (acc ? r->acc : r->rw)->issue(w, &call, &h, segs);
    free(segs);
    return st;
}

/* The profile of the job (base/profile.h) counts a one-sided operation
 * as one message of count elements of dt from the origin to the target;
 * a tool's handle bound to the window counts it as an operation. One
 * test of the watch word (base/pvars.h) for both. */
static void watched_op(const tern_win_t *w, int target, MPI_Count count, MPI_Datatype dt)
{
    if (target == MPI_PROC_NULL)
        return;
    unsigned watch = tern_watching();
    if (watch & TERN_WATCH_PROFILE) {
        long size = tern_datatype_size(dt);
        tern_profile_row_add(0, tern_win_world(w, target),
                             size > 0 ? (uint64_t)count * (uint64_t)size : 0);
    }
    if (watch & TERN_WATCH_OBJECTS)
        tern_pvar_obj_add(w, TERN_PVAR_WIN_OPS, 1);
}

static inline void profile_op(const tern_win_t *w, int target, MPI_Count count, MPI_Datatype dt)
{
    if (__builtin_expect(tern_watching(), 0))
        watched_op(w, target, count, dt);
}

tern_status_t tern_rma_put_any(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                               int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                               tern_win_t *w, tern_req_t **req_p)
{
    profile_op(w, target, ocount, otype);
    /* Unwatched, the inline caller (rma_ops.h) tried the direct copy. */
    if (!req_p && w->direct && tern_watching() &&
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

tern_status_t tern_rma_get_any(void *origin, MPI_Count ocount, MPI_Datatype otype, int target,
                               MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                               tern_win_t *w, tern_req_t **req_p)
{
    profile_op(w, target, ocount, otype);
    if (!req_p && w->direct && tern_watching() &&
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
    profile_op(w, target, ocount, otype);
    if (op == MPI_NO_OP)
        return tern_status_detail(TERN_ERR_OP, "MPI_NO_OP is for the fetching accumulates only");
    if (!req_p && w->direct &&
        tern_rma_shm_accumulate(w, origin, ocount, otype, target, disp, tcount, ttype, op)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
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
    profile_op(w, target, op == MPI_NO_OP ? rcount : ocount, op == MPI_NO_OP ? rtype : otype);
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

tern_status_t tern_rma_fetch_and_op_any(const void *origin, void *result, MPI_Datatype dt,
                                        int target, MPI_Aint disp, MPI_Op op, tern_win_t *w)
{
    profile_op(w, target, 1, dt);
    if (!tern_datatype_is_predefined(dt))
        return tern_status_detail(TERN_ERR_TYPE, "datatype must be predefined");
    /* The inline caller (rma_ops.h) tried the direct path for plain types
     * unwatched; the pair types and watched calls try it here. */
    if (w->direct && tern_rma_shm_fetch_atomic(w, target, disp, dt, op, origin, NULL, result)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    rma_call_t c = {.type = RMA_GACC, .origin = origin, .ocount = 1, .otype = dt,
                    .result = result, .rcount = 1, .rtype = dt, .target = target, .disp = disp,
                    .tcount = 1, .ttype = dt, .op = op};
    return issue(w, &c, NULL);
}

tern_status_t tern_rma_compare_and_swap_any(const void *origin, const void *compare,
                                            void *result, MPI_Datatype dt, int target,
                                            MPI_Aint disp, tern_win_t *w)
{
    profile_op(w, target, 1, dt);
    if (!tern_datatype_is_predefined(dt) || tern_datatype_size(dt) <= 0)
        return tern_status_detail(TERN_ERR_TYPE, "datatype must be a predefined type");
    /* Integer, logical, byte or multi-language types (not floating point
     * or complex). */
    if (!tern_rma_cas_type_fits(dt))
        return tern_status_detail(TERN_ERR_TYPE, "%s is not an integer, logical or byte type "
                                  "(MPI_Compare_and_swap takes only those)",
                                  tern_datatype_name(dt));
    /* The inline caller (rma_ops.h) tried the direct path unwatched. */
    if (w->direct && tern_rma_shm_fetch_atomic(w, target, disp, dt, MPI_NO_OP, origin, compare,
                                               result)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    rma_call_t c = {.type = RMA_CAS, .origin = origin, .ocount = 1, .otype = dt,
                    .result = result, .rcount = 1, .rtype = dt, .target = target, .disp = disp,
                    .tcount = 1, .ttype = dt, .compare = compare};
    return issue(w, &c, NULL);
}

/* The communication calls of one-sided communication (rma_ops.c), on
 * arguments the MPI layer checked by kind (counts and displacements not
 * negative, datatypes committed, op handles live). req_p non-NULL: the
 * request-based form (Rput...), allowed in passive-target epochs only,
 * whose request completes with the operation. */
#ifndef TERN_CORE_RMA_OPS_H
#define TERN_CORE_RMA_OPS_H

#include "core/rma/rma_shm.h"
#include "core/rma/window.h"
#include "base/pvars.h"

#include <stdint.h>

/* Put and Get by any path, watched or not (tern_rma_put and tern_rma_get
 * take the direct copy inline first). */
tern_status_t tern_rma_put_any(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                               int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                               tern_win_t *w, tern_req_t **req_p);
tern_status_t tern_rma_get_any(void *origin, MPI_Count ocount, MPI_Datatype otype, int target,
                               MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                               tern_win_t *w, tern_req_t **req_p);

/* Inline into the MPI layer's entry points: a contiguous put or get to a
 * direct window, while nothing watches the job (profile, counters per
 * object), is copied with no call but the copy's (docs/performance.md row
 * putinline). */
static inline __attribute__((always_inline)) tern_status_t
tern_rma_put(const void *origin, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
             MPI_Count tcount, MPI_Datatype ttype, tern_win_t *w, tern_req_t **req_p)
{
    if (__builtin_expect(!req_p && w->direct && !tern_watching(), 1) &&
        tern_rma_shm_copy(w, 0, (void *)(uintptr_t)origin, ocount, otype, target, disp, tcount,
                          ttype)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    return tern_rma_put_any(origin, ocount, otype, target, disp, tcount, ttype, w, req_p);
}

static inline __attribute__((always_inline)) tern_status_t
tern_rma_get(void *origin, MPI_Count ocount, MPI_Datatype otype, int target, MPI_Aint disp,
             MPI_Count tcount, MPI_Datatype ttype, tern_win_t *w, tern_req_t **req_p)
{
    if (__builtin_expect(!req_p && w->direct && !tern_watching(), 1) &&
        tern_rma_shm_copy(w, 1, origin, ocount, otype, target, disp, tcount, ttype)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    return tern_rma_get_any(origin, ocount, otype, target, disp, tcount, ttype, w, req_p);
}
tern_status_t tern_rma_accumulate(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                                  int target, MPI_Aint disp, MPI_Count tcount,
                                  MPI_Datatype ttype, MPI_Op op, tern_win_t *w,
                                  tern_req_t **req_p);
tern_status_t tern_rma_get_accumulate(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                                      void *result, MPI_Count rcount, MPI_Datatype rtype,
                                      int target, MPI_Aint disp, MPI_Count tcount,
                                      MPI_Datatype ttype, MPI_Op op, tern_win_t *w,
                                      tern_req_t **req_p);
/* Fetch_and_op by any path, watched or not. */
tern_status_t tern_rma_fetch_and_op_any(const void *origin, void *result, MPI_Datatype dt,
                                        int target, MPI_Aint disp, MPI_Op op, tern_win_t *w);
/* Inline into the entry point, as tern_rma_put: a plain type's element on
 * a direct window, unwatched, by tern_rma_shm_fetch_atomic. */
static inline __attribute__((always_inline)) tern_status_t
tern_rma_fetch_and_op(const void *origin, void *result, MPI_Datatype dt, int target,
                      MPI_Aint disp, MPI_Op op, tern_win_t *w)
{
    if (__builtin_expect(w->direct && !tern_watching(), 1) && tern_datatype_is_plain(dt) &&
        tern_rma_shm_fetch_atomic(w, target, disp, dt, op, origin, NULL, result)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    return tern_rma_fetch_and_op_any(origin, result, dt, target, disp, op, w);
}
/* Compare_and_swap by any path, watched or not. */
tern_status_t tern_rma_compare_and_swap_any(const void *origin, const void *compare,
                                            void *result, MPI_Datatype dt, int target,
                                            MPI_Aint disp, tern_win_t *w);
/* Inline as tern_rma_fetch_and_op (the type's rule checked by
 * tern_rma_shm_fetch_atomic; a type it does not take goes the general
 * way, which says why). */
static inline __attribute__((always_inline)) tern_status_t
tern_rma_compare_and_swap(const void *origin, const void *compare, void *result,
                          MPI_Datatype dt, int target, MPI_Aint disp, tern_win_t *w)
{
    if (__builtin_expect(w->direct && !tern_watching(), 1) && tern_datatype_is_plain(dt) &&
        tern_rma_shm_fetch_atomic(w, target, disp, dt, MPI_NO_OP, origin, compare, result)) {
        tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
        return TERN_OK;
    }
    return tern_rma_compare_and_swap_any(origin, compare, result, dt, target, disp, w);
}

#endif

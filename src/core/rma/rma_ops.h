/* The communication calls of one-sided communication (rma_ops.c), on
 * arguments the MPI layer checked by kind (counts and displacements not
 * negative, datatypes committed, op handles live). req_p non-NULL: the
 * request-based form (Rput...), allowed in passive-target epochs only,
 * whose request completes with the operation. */
#ifndef TERN_CORE_RMA_OPS_H
#define TERN_CORE_RMA_OPS_H

#include "core/rma/window.h"

tern_status_t tern_rma_put(const void *origin, MPI_Count ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, tern_win_t *w,
                           tern_req_t **req_p);
tern_status_t tern_rma_get(void *origin, MPI_Count ocount, MPI_Datatype otype, int target,
                           MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype, tern_win_t *w,
                           tern_req_t **req_p);
tern_status_t tern_rma_accumulate(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                                  int target, MPI_Aint disp, MPI_Count tcount,
                                  MPI_Datatype ttype, MPI_Op op, tern_win_t *w,
                                  tern_req_t **req_p);
tern_status_t tern_rma_get_accumulate(const void *origin, MPI_Count ocount, MPI_Datatype otype,
                                      void *result, MPI_Count rcount, MPI_Datatype rtype,
                                      int target, MPI_Aint disp, MPI_Count tcount,
                                      MPI_Datatype ttype, MPI_Op op, tern_win_t *w,
                                      tern_req_t **req_p);
tern_status_t tern_rma_fetch_and_op(const void *origin, void *result, MPI_Datatype dt,
                                    int target, MPI_Aint disp, MPI_Op op, tern_win_t *w);
tern_status_t tern_rma_compare_and_swap(const void *origin, const void *compare, void *result,
                                        MPI_Datatype dt, int target, MPI_Aint disp,
                                        tern_win_t *w);

#endif

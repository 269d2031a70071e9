/* The paths of one-sided operations (rma_path.c), chosen once per window
 * and target.
 *
 * A path is a const ops table, as a transport is (transport/transport.h):
 * direct load/store and atomics on shared-memory windows (rma_shm.c), CMA
 * into Win_create memory of ranks on this node (rma_cma.c), RDMA over the
 * network transport (rma_rdma.c), the network's remote atomics
 * (rma_atomic.c) and active messages (rma_am.c), which carry anything.
 * When a window is made, and again when what reaches a target changes (the
 * kernel refused CMA to it), each target gets a route: the path of its
 * puts and gets, and the path of its accumulates (Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap). An operation is then
 * one indirect call, after the checks and the flattening of rma_ops.c.
 * What a path cannot carry is known from the operation's properties (RDMA:
 * a target layout of more than 16 pieces, a dynamic region not registered;
 * remote atomics: a type and operation the window leaves to messages; a
 * failed peer, whose error the messages answer with): the path hands such
 * an operation to active messages itself, it never fails to make another
 * path try. */
#ifndef TERN_CORE_RMA_PATH_H
#define TERN_CORE_RMA_PATH_H

#include "core/rma/rma_am.h"

/* One operation, checked by rma_ops.c. */
typedef struct tern_rma_call {
    int type;                   /* RMA_PUT ... RMA_CAS */
    int ships;                  /* origin data goes to the target */
    int fetch;                  /* target data comes back into result */
    const void *origin;
    MPI_Count ocount;
    MPI_Datatype otype;
    void *result;
    MPI_Count rcount;
    MPI_Datatype rtype;
    int target;
    MPI_Datatype basic;         /* accumulates: their basic type; CAS: the type */
    const void *compare;        /* CAS */
    tern_req_t **req_p;         /* Rput...: the request, completed with it */
} tern_rma_call_t;

typedef struct tern_rma_path {
    const char *name;
    /* Carries c to c->target: h is the request (addr: byte offset at the
     * target, the address on a dynamic window; bytes, nsegs, data_bytes,
     * type, op, basic), segs the target layout (the caller's). The path
     * takes the origin data where it lies or packs it. */
    tern_status_t (*issue)(tern_win_t *w, const tern_rma_call_t *c, rma_hdr_t *h,
                           const tern_dt_seg_t *segs);
} tern_rma_path_t;

extern const tern_rma_path_t tern_rma_path_am, tern_rma_path_direct, tern_rma_path_cma,
    tern_rma_path_rdma, tern_rma_path_atomic;

/* A target's route. */
typedef struct tern_rma_route {
    const tern_rma_path_t *rw;  /* Put, Get */
    const tern_rma_path_t *acc; /* Accumulate, Get_accumulate, Fetch_and_op, CAS */
} tern_rma_route_t;

/* Every target's route, from what the window has (w->direct, w->cma,
 * w->ctrl, w->rdma, w->atomic): at the end of its creation. */
tern_status_t tern_rma_route_all(tern_win_t *w);
/* Target's route again (what reaches it changed). */
void tern_rma_route_target(tern_win_t *w, int target);

/* The origin data of c as the request carries it (h->data_bytes bytes:
 * packed, CAS: the new value then the compare value). in_place: a
 * contiguous origin is used where it lies (*owned NULL); else it is packed
 * into a buffer that *owned gets (the caller frees it). */
tern_status_t tern_rma_origin_data(const tern_rma_call_t *c, const rma_hdr_t *h, int in_place,
                                   const char **data_p, char **owned_p);
/* Where fetched bytes land: the result buffer itself when it is
 * contiguous (*owned NULL), else a buffer of h->bytes that *owned gets,
 * to unpack from (tern_rma_unpack_result). */
tern_status_t tern_rma_result_buf(const tern_rma_call_t *c, const rma_hdr_t *h, char **out_p,
                                  char **owned_p);
tern_status_t tern_rma_unpack_result(const tern_rma_call_t *c, const rma_hdr_t *h,
                                     const char *owned);
/* The operation is complete already: Rput's request is made complete. */
tern_status_t tern_rma_done_now(tern_win_t *w, tern_req_t **req_p);

#endif

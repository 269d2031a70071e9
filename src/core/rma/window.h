/* One-sided communication windows (MPI-5.0 chapter 12).
 *
 * A window owns a duplicate of the communicator it was made on: its context
 * id carries the window's active messages (rma_am.c: requests on tag 0,
 * their large payloads on tag 1, replies on the tag the origin chose), and
 * its collectives are the window's fences and creation exchanges. Every
 * rank knows every other's size and displacement unit (gathered at
 * creation), so an origin checks the target range itself. Errors on a
 * window go through the window's own error handler (errhandler:
 * MPI_ERRORS_ARE_FATAL unless set), raised on its handle. */
#ifndef TERN_CORE_RMA_WINDOW_H
#define TERN_CORE_RMA_WINDOW_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/datatype/dtype_nums.h"
#include "core/pt2pt/request.h"
#include "core/runtime/attr.h"
#include "core/runtime/handle_table.h"
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A region attached to a dynamic window. */
typedef struct tern_win_region {
    struct tern_win_region *next;
    uintptr_t base;
    size_t size;
    int registered;          /* with the network transport (rma_rdma.c) */
    tern_rkey_t rkey;
} tern_win_region_t;

/* The access epoch an origin is in, per window. */
enum { TERN_EPOCH_NONE = 0, TERN_EPOCH_FENCE = 1, TERN_EPOCH_PSCW = 2, TERN_EPOCH_LOCK = 4,
       TERN_EPOCH_LOCK_ALL = 8 };

/* Lock-waiter at a target: origin rank and lock type, in arrival order. */
typedef struct tern_win_waiter {
    struct tern_win_waiter *next;
    int origin;
    int type;
    uint32_t reply_tag;
} tern_win_waiter_t;

typedef struct tern_win {
    MPI_Win handle;
    MPI_Errhandler errhandler;
    tern_comm_t *comm;       /* the window's own duplicate */
    int rank, size;          /* in comm */
    int flavor;              /* MPI_WIN_FLAVOR_* */
    void *base;              /* this rank's memory (NULL for dynamic) */
    MPI_Aint win_size;
    int disp_unit;
    MPI_Aint *sizes;         /* every rank's size and displacement unit */
    int *disp_units;
    void *alloc;             /* Win_allocate's block (tern_mem), to free */
    void *shm;               /* Win_allocate_shared: the mapping of every rank's memory */
    size_t shm_bytes;
    MPI_Aint *shm_offsets;   /* rank -> offset of its memory in shm */
    struct tern_rma_shm_ctrl *ctrl; /* in shm: per rank, its lock word and accumulate lock */
    size_t ctrl_bytes;       /* Win_create on one node: ctrl is a mapping of its own */
    char *acc_stripes;       /* direct: in shm, per rank, its accumulate stripes' locks */
    int direct;              /* operations and locks go straight to shm (rma_shm.c) */
    /* Every target's route is the direct path, whose operations are
     * complete when their call returns: a flush is a fence, no pass of the
     * active-message engine (rma_sync.c). Kept by rma_path.c as it routes
     * the targets: 0 once any target is routed otherwise. */
    int flush_fence_only;
    struct tern_rma_cma *cma; /* Win_create on one node: puts and gets by CMA (rma_cma.c) */
    tern_win_region_t *regions; /* dynamic: attached memory */
    struct tern_rma_rdma *rdma; /* RDMA over the network (rma_rdma.c), or NULL */
    struct tern_rma_atomic *atomic; /* accumulates, locks as remote atomics (rma_atomic.c) */
    struct tern_rma_route *route; /* per target: the paths of its operations (rma_path.h) */
    char name[MPI_MAX_OBJECT_NAME];
    tern_attr_t *attrs;
    /* Hints (info keys the window understands). */
    int no_locks, same_size, same_disp_unit, alloc_shared_noncontig;
    char accumulate_ordering[64];
    char accumulate_ops[32];
    size_t min_alignment;

    /* Origin side. */
    int epoch;               /* TERN_EPOCH_* bits */
    int fence_open;          /* the last fence had no MPI_MODE_NOSUCCEED (and no lock,
                              * lock_all or start since ended the fence sequence) */
    int fence_used;          /* an operation was issued since that fence: its epoch is
                              * open, and only a fence ends it (rma_sync.c) */
    uint8_t *locked;         /* per target: 0, or the lock type held */
    int n_locked;
    int lock_all_nocheck;    /* Win_lock_all with MPI_MODE_NOCHECK: no lock messages */
    unsigned *pending;       /* per target: operations not yet acknowledged */
    unsigned n_pending;
    size_t inflight_bytes;   /* buffers of the operations pending */
    unsigned max_inflight;   /* the caps on those two (rma_track.h) */
    size_t max_inflight_bytes;
    int *access_group;       /* PSCW: targets (window ranks) of Win_start */
    int n_access;
    int *posts_seen;         /* per target: POSTs received not yet used by a start */
    tern_status_t deferred;  /* a target refused an operation (range on a dynamic window) */
    uint32_t next_tag;       /* reply tags, from 2 */

    /* Target side. */
    tern_req_t *rx;          /* the posted receive of requests (tag 0, any source) */
    void *rx_buf;
    int excl_holder;         /* window rank holding the exclusive lock, or -1 */
    int shared_holders;
    tern_win_waiter_t *waiters, **waiters_tail;
    int *exposure_group;     /* PSCW: origins of Win_post */
    int n_exposure;
    int *completes_seen;     /* per origin: COMPLETEs received */
    struct rma_incoming *in_head, **in_tail; /* requests in arrival order */

    struct tern_win *next_live; /* windows the progress hook serves */
    int freeing;
} tern_win_t;

/* Live windows by handle (window.c). */
extern tern_handle_table_t tern_win_handles;

/* The window of a handle, NULL if not a live one. Inline: every put, get
 * and flush looks one up. */
static inline tern_win_t *tern_win_lookup(MPI_Win win)
{
    return tern_handle_get(&tern_win_handles, win);
}
/* Whether a live window has error handler eh (a handler the user freed is
 * kept while one uses it). */
int tern_win_errhandler_in_use(MPI_Errhandler eh);
void tern_win_finalize(void);

/* A window rank's world rank. */
static inline int tern_win_world(const tern_win_t *w, int rank)
{
    return tern_comm_world_rank(w->comm, rank);
}

/* Creation and destruction (window.c), on checked arguments. */
tern_status_t tern_win_create(void *base, MPI_Aint size, tern_num_t disp_unit, MPI_Info info,
                              tern_comm_t *comm, MPI_Win *win);
tern_status_t tern_win_allocate(MPI_Aint size, tern_num_t disp_unit, MPI_Info info,
                                tern_comm_t *comm, void *baseptr, MPI_Win *win);
tern_status_t tern_win_allocate_shared(MPI_Aint size, tern_num_t disp_unit, MPI_Info info,
                                       tern_comm_t *comm, void *baseptr, MPI_Win *win);
tern_status_t tern_win_create_dynamic(MPI_Info info, tern_comm_t *comm, MPI_Win *win);
tern_status_t tern_win_free(tern_win_t *w, MPI_Win *win);
tern_status_t tern_win_shared_query(tern_win_t *w, int rank, MPI_Aint *size,
                                    tern_num_ref_t disp_unit, void *baseptr);
tern_status_t tern_win_attach(tern_win_t *w, void *base, MPI_Aint size);
tern_status_t tern_win_detach(tern_win_t *w, const void *base);
tern_status_t tern_win_get_group(tern_win_t *w, MPI_Group *group);
tern_status_t tern_win_set_info(tern_win_t *w, MPI_Info info);
tern_status_t tern_win_get_info(tern_win_t *w, MPI_Info *info_used);
tern_status_t tern_win_set_name(tern_win_t *w, const char *name);
tern_status_t tern_win_get_name(tern_win_t *w, char *name, int *resultlen);

/* An operation of w toward target ended with st, whichever path carried it
 * (active messages, RDMA, remote atomics): the fetched bytes (result
 * non-NULL) are unpacked into the origin's result buffer and its type is
 * released, a failure becomes the window's deferred error, the user's
 * request (if any) completes, and the operation leaves the window's counts
 * (footprint: the bytes it held in flight). */
void tern_win_op_ended(tern_win_t *w, int target, size_t footprint, tern_status_t st,
                       const void *fetched, size_t fetched_bytes, void *result,
                       MPI_Count rcount, MPI_Datatype rtype, tern_req_t *user_req);

/* Attributes and error handlers (win_attr.c). */
tern_status_t tern_win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                                     MPI_Win_delete_attr_function *delete_fn, void *extra_state,
                                     int *keyval);
tern_status_t tern_win_free_keyval(int *keyval);
tern_status_t tern_win_set_attr(tern_win_t *w, int keyval, void *value);
tern_status_t tern_win_get_attr(tern_win_t *w, int keyval, void *value, int *flag);
tern_status_t tern_win_delete_attr(tern_win_t *w, int keyval);

#endif

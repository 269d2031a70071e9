/* The general engine of one-sided communication: active messages over
 * point-to-point on the window's context id, served by a progress hook so
 * that a target applies operations whenever its progress engine runs (in
 * any MPI call that waits or tests).
 *
 * A request is a header, then the target layout (the target datatype
 * flattened to (offset, length) pieces) and the packed origin data: one
 * message on tag 0 when it fits RMA_INLINE_MAX, else the header alone on
 * tag 0 and the rest on tag 1 (point-to-point keeps the pair's order, so
 * a target that posts the tag-1 receive when it reads the header gets the
 * right payload). The target applies requests in arrival order (so
 * accumulates are ordered and atomic per element: one process applies
 * them all) and answers each on the origin's reply tag with an 8-byte
 * status and, for the fetching operations, the packed target data. The
 * origin counts answers per target: an operation is complete (locally and
 * at the target) when its answer came. */
#ifndef TERN_CORE_RMA_AM_H
#define TERN_CORE_RMA_AM_H

#include "core/datatype/datatype.h"
#include "core/rma/window.h"

enum {
    RMA_PUT = 1, RMA_GET, RMA_ACC, RMA_GACC, RMA_CAS,
    RMA_LOCK, RMA_UNLOCK, RMA_POST, RMA_COMPLETE,
    RMA_KEYQ,              /* dynamic window: the RDMA key of the region at addr */
};

enum { RMA_TAG_REQ = 0, RMA_TAG_DATA = 1, RMA_TAG_FIRST_REPLY = 2 };

/* Requests up to this size (header included) travel in one message. */
#define RMA_INLINE_MAX 8192

typedef struct {
    uint32_t type;
    int32_t origin;        /* window rank */
    uint32_t reply_tag;    /* 0: no answer wanted */
    int32_t op;            /* MPI_Op of accumulates */
    int32_t basic;         /* the basic datatype of accumulates */
    int32_t lock_type;
    uint64_t addr;         /* target byte offset (dynamic: absolute address) */
    uint64_t nsegs;        /* pieces of the target layout */
    uint64_t bytes;        /* packed target data */
    uint64_t data_bytes;   /* origin data shipped (CAS: twice bytes) */
} rma_hdr_t;

/* Origin: one operation in flight. */
typedef struct rma_op {
    struct rma_op *next;
    tern_win_t *win;
    int target;
    tern_req_t *sends[2];
    void *msg;              /* the request's bytes, until sent */
    tern_req_t *reply;
    void *reply_buf;        /* status word + packed data */
    size_t reply_bytes;
    void *result;           /* where fetched data goes, in the user's layout */
    MPI_Count result_count;
    MPI_Datatype result_type;
    tern_req_t *user_req;   /* Rput...: completed with the operation */
    size_t footprint;       /* bytes its buffers take (w->inflight_bytes) */
} rma_op_t;

/* Serves the window (posts its receive of requests; the hook runs). */
tern_status_t tern_rma_am_open(tern_win_t *w);
/* Stops serving (cancels the posted receive; requests queued are dropped:
 * callers have synchronised). */
void tern_rma_am_close(tern_win_t *w);

/* Sends a request to target: hdr, then segs (nsegs pieces) and data
 * (data_bytes) as the payload. A reply of reply_bytes packed bytes is
 * awaited when want_reply; fetched data is unpacked into (result,
 * result_count, result_type) when result is not NULL. *op_p (may be NULL)
 * gets the operation for the caller to attach a user request to. */
tern_status_t tern_rma_am_issue(tern_win_t *w, int target, rma_hdr_t *hdr,
                                const tern_dt_seg_t *segs, const void *data, size_t reply_bytes,
                                void *result, MPI_Count result_count, MPI_Datatype result_type,
                                rma_op_t **op_p);
/* A control message (LOCK, UNLOCK, POST, COMPLETE) to target; with
 * want_reply, the call waits for the answer. */
tern_status_t tern_rma_am_control(tern_win_t *w, int target, uint32_t type, int lock_type,
                                  int want_reply);
/* Progress until every operation to target (-1: all) is answered; the
 * first refusal a target sent (w->deferred) is returned and cleared. */
tern_status_t tern_rma_am_wait_target(tern_win_t *w, int target);
/* Applies a request to target memory at base (pieces segs, origin data
 * data); fetched bytes go to out (GET, GACC, CAS). The caller makes it
 * atomic: the engine serves one request at a time, direct access holds the
 * target's accumulate lock. */
void tern_rma_apply(char *base, const rma_hdr_t *h, const tern_dt_seg_t *segs, const char *data,
                    char *out);
/* op (or MPI_REPLACE, MPI_NO_OP) applied to the len bytes at t, whole
 * elements of basic, with the packed origin bytes in. */
void tern_rma_accumulate_bytes(MPI_Op op, MPI_Datatype basic, const char *in, char *t,
                               size_t len);
/* One pass of the engine over every live window (also the progress hook). */
int tern_rma_am_poll(void);

#endif

/* Requests: the state of one nonblocking operation. Blocking calls use them
 * too (from the same pool), so there is one completion path. */
#ifndef TERN_CORE_REQUEST_H
#define TERN_CORE_REQUEST_H

#include "base/status.h"
#include "transport/transport.h"
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TERN_REQ_SEND = 1,
    TERN_REQ_RECV,
    TERN_REQ_PROBE_DUMMY, /* completed receive from MPI_PROC_NULL etc. */
    TERN_REQ_GENERIC,     /* driven by its own callbacks (collectives, RMA) */
    TERN_REQ_GREQUEST,    /* a generalized request: the user completes it
                             (src/mpi/mpi_grequest.c; its callbacks in ext) */
} tern_req_kind_t;

typedef enum {
    TERN_SEND_STANDARD = 0,
    TERN_SEND_SYNC,
    TERN_SEND_READY,
    TERN_SEND_BUFFERED,
} tern_send_mode_t;

typedef enum {
    TERN_CANCEL_NONE = 0,
    TERN_CANCEL_ASKED, /* the receiver was asked; the request waits for its answer */
    TERN_CANCEL_ANSWERED,
} tern_cancel_state_t;

typedef struct tern_req tern_req_t;
struct tern_req {
    tern_req_t *next;           /* link in a queue (posted, pending, free) */
    int handle;                 /* MPI_Request handle, or MPI_REQUEST_NULL */
    uint8_t kind;
    uint8_t mode;               /* tern_send_mode_t */
    uint8_t persistent;
    uint8_t active;             /* persistent: started and not yet completed */
    volatile int complete;
    uint8_t cancelled;
    uint8_t freed;              /* MPI_Request_free called while active */
    uint8_t in_posted;          /* receive sits in the posted queue */
    int error;                  /* tern_status_t of the operation */

    MPI_Comm comm;
    uint32_t context_id;
    int peer;                   /* comm rank: dest (send) or source (recv, may be ANY) */
    int peer_world;             /* world rank of dest (send) */
    int comm_rank;              /* our rank in comm (sends) */
    int tag;
    void *buf;                  /* user buffer */
    size_t bytes;               /* send: message size; recv: capacity */
    MPI_Count count;            /* the user's count and type (persistent restart) */
    MPI_Datatype datatype;
    /* Non-contiguous data (derived or padded types, tern_p2p_set_data): buf,
     * count and datatype describe the user's layout, bytes is the packed
     * size, and the protocols pack / unpack at their copy points (eager
     * payload, rendezvous fragments) instead of memcpy. The request holds a
     * reference on the datatype until it is released. */
    uint8_t noncontig;
    void *staging;              /* eager send of non-contiguous data that had to queue */

    /* Result (receives). */
    int status_source;
    int status_tag;
    size_t status_bytes;

    /* Rendezvous state. */
    size_t offset;              /* bytes streamed / received so far */
    size_t transfer_bytes;      /* bytes to move (min(message, capacity)) */
    uint64_t remote_req;        /* peer's request id */
    tern_tl_comp_t get_comp;    /* rendezvous get completion */
    tern_req_t *inflight_prev;  /* in its peer's inflight list (runtime.h), with next */

    /* Send cancellation (send_cancel.c). match_seq numbers the match packet
     * this send put on the wire to its peer (valid when has_seq), so the
     * receiver can find exactly that message in its unexpected queue. */
    uint64_t match_seq;
    uint8_t has_seq;
    uint8_t rndv;               /* went as a rendezvous (RTS) */
    uint8_t cancel_state;       /* tern_cancel_state_t */
    uint8_t proto_done;         /* its protocol finished while a cancel was asked */
    size_t coop_bytes;          /* receive by get: the tail the sender writes (p2p_coop.h) */
    /* A rendezvous receive counted in a timed run of its size class for
     * the choice of path (rndv_path.h): 1 + the class, 0 when not; the
     * class's round it belongs to. */
    uint8_t rndv_sample;
    uint8_t rndv_round;

    /* The owner's state and callbacks. TERN_REQ_GENERIC: start (persistent
     * requests: MPI_Start) begins the operation. Any kind: release frees
     * ext when the request is released (a buffered send's block goes back
     * to the attached buffer this way, so the protocols need not know
     * bsend). Completion is signalled with tern_req_complete. */
    void *ext;
    const char *error_text;     /* TERN_REQ_GENERIC: the owner's words for error, or NULL */
    tern_status_t (*start_fn)(tern_req_t *req);
    void (*release_fn)(tern_req_t *req);
};

tern_req_t *tern_req_alloc(tern_req_kind_t kind);
/* A request not from the pool (a blocking call's, on its stack): init
 * clears it, fini drops what it holds (a datatype reference). Never given a
 * handle. */
void tern_req_init(tern_req_t *req, tern_req_kind_t kind);
void tern_req_fini(tern_req_t *req);
/* Gives the request an MPI handle (done lazily: blocking calls never need
 * one); MPI_REQUEST_NULL when the handle table cannot grow. */
MPI_Request tern_req_handle(tern_req_t *req);
/* Handle to request; NULL if the handle is not a live request. */
tern_req_t *tern_req_lookup(MPI_Request handle);
void tern_req_release(tern_req_t *req);
/* Operations on communicator comm not complete yet (MPI_Comm_disconnect):
 * those with a handle, active persistent ones included. */
int tern_req_pending_on(MPI_Comm comm);
/* Marks complete; frees it if the user already called MPI_Request_free. */
void tern_req_complete(tern_req_t *req);
/* Fills an MPI_Status from a completed request (status may be IGNORE). */
void tern_req_status(const tern_req_t *req, MPI_Status *status);
void tern_status_set(MPI_Status *status, int source, int tag, int error, size_t bytes, int cancelled);
size_t tern_status_bytes(const MPI_Status *status);

#endif

/* Partitioned communication (MPI-4 chapter 4): MPI_Psend_init /
 * MPI_Precv_init make persistent requests whose partitions move one by one.
 *
 * Protocol (docs/design.md, "Partitioned communication"): at init the
 * sender sends a setup message {partitions, total bytes} on a hidden
 * context of the communicator (TERN_PART_CTX_SETUP | ctx) with the user's
 * tag, which the receiver's init matches like any receive, in order; the
 * receiver answers on TERN_PART_CTX_REPLY | ctx with the number of a data
 * channel of its own. Each MPI_Pready then sends that partition's bytes at
 * once as an ordinary message on TERN_PART_CTX_DATA | channel, tagged with
 * the sender's partition index; the receiver posts one receive per sender
 * partition when a round starts, straight into its buffer (or a staging
 * copy, unpacked as each partition lands, for non-contiguous types), so
 * MPI_Parrived is true as soon as every sender partition that overlaps the
 * receive partition is in. Partition counts may differ on the two sides;
 * the total sizes must agree. */
#ifndef TERN_CORE_PARTITIONED_H
#define TERN_CORE_PARTITIONED_H

#include "base/status.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/request.h"

#include <stddef.h>
#include <stdint.h>

/* Hidden contexts. Communicator context ids stay below 0x10000
 * (core/comm/comm.h: 2 * TERN_CTX_SLOTS); the data channels are numbered
 * by the receiver, below 2^24. */
#define TERN_PART_CTX_SETUP 0x40000000u
#define TERN_PART_CTX_REPLY 0x40010000u
#define TERN_PART_CTX_DATA 0x41000000u

/* Where a partitioned request's messages go, in point-to-point's terms. */
typedef struct {
    MPI_Comm comm;
    uint32_t ctx;     /* the communicator's point-to-point context id */
    int comm_rank;    /* our rank in it */
    int peer;         /* dest or source rank (MPI_PROC_NULL allowed) */
    int peer_world;   /* its world rank (-1 for MPI_PROC_NULL) */
    int tag;
} tern_part_addr_t;

/* A new inactive persistent request for `partitions` partitions of count
 * elements of dt each at buf (checked by the caller; count * partitions
 * elements fit in the address space). Sends its setup message (sender) or
 * posts the setup receive (receiver) at once. */
tern_status_t tern_part_init(int is_send, const tern_part_addr_t *a, const void *buf,
                             int partitions, size_t count, MPI_Datatype dt, tern_req_t **req_p);
/* Whether req is a partitioned request. */
int tern_part_is(const tern_req_t *req);
/* MPI_Pready_range and MPI_Pready (lo == hi) on an active send request;
 * MPI_Pready_list. Errors carry their words (tern_status_detail). */
tern_status_t tern_part_pready_range(MPI_Request request, int lo, int hi);
tern_status_t tern_part_pready_list(MPI_Request request, int n, const int *parts);
/* MPI_Parrived on a receive request: progress once, then *flag. */
tern_status_t tern_part_parrived(MPI_Request request, int partition, int *flag);

#endif

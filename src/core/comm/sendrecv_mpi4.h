/* MPI-4's point-to-point calls on a communicator (sendrecv_mpi4.c):
 * MPI_Isendrecv, MPI_Isendrecv_replace, and the constructors of
 * partitioned requests (the protocol is core/pt2pt/partitioned.c), on
 * arguments the MPI layer has checked. */
#ifndef TERN_CORE_COMM_SENDRECV_MPI4_H
#define TERN_CORE_COMM_SENDRECV_MPI4_H

#include "core/comm/comm.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/request.h"

/* *req_p completes when both the send and the receive have; its status is
 * the receive's, its error the receive's, else the send's. */
tern_status_t tern_isendrecv_call(tern_comm_t *c, const void *sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, const tern_dt_desc_t *sd, int dest,
                                  int sendtag, void *recvbuf, MPI_Count recvcount,
                                  MPI_Datatype recvtype,
                                  const tern_dt_desc_t *rd, int source, int recvtag,
                                  tern_req_t **req_p);
/* The send goes out of a packed copy of buf, so the receive may land in
 * buf before the send's data has left. */
tern_status_t tern_isendrecv_replace_call(tern_comm_t *c, void *buf, MPI_Count count,
                                          MPI_Datatype dt, const tern_dt_desc_t *d, int dest,
                                          int sendtag, int source, int recvtag,
                                          tern_req_t **req_p);
/* MPI_Psend_init (is_send) and MPI_Precv_init. */
tern_status_t tern_part_init_call(int is_send, tern_comm_t *c, const void *buf, int partitions,
                                  size_t count, MPI_Datatype dt, int peer, int tag,
                                  tern_req_t **req_p);

#endif

/* The MPI communicator constructors and MPI_Comm_free (comm_new.c), on
 * arguments the MPI layer has checked: they add what comm_create.c leaves
 * to the MPI level (attributes copied or deleted, info hints, argument
 * rules that need the communicator) and return handles. Errors carry a
 * detail naming the argument. */
#ifndef TERN_CORE_COMM_NEW_H
#define TERN_CORE_COMM_NEW_H

#include "core/comm/comm.h"
#include "core/group/group.h"
#include "core/info/info.h"
#include "core/pt2pt/request.h"

/* What a duplicate nc of c takes from c, for MPI_Comm_dup and idup alike:
 * a copy of hints (MPI_INFO_NULL: none), the topology, the attributes
 * through their copy callbacks. On failure nc is destroyed. */
tern_status_t tern_comm_dup_contents(tern_comm_t *c, tern_comm_t *nc, MPI_Info hints);
/* MPI_Comm_dup (info MPI_INFO_NULL and !use_info: the parent's hints) and
 * MPI_Comm_dup_with_info (use_info: info's hints, or none). */
tern_status_t tern_comm_new_dup(tern_comm_t *c, MPI_Info info, int use_info, MPI_Comm *newcomm);
/* MPI_Comm_idup and MPI_Comm_idup_with_info (comm_idup.c): nonblocking
 * on an intracommunicator, the agreement advanced by progress; *newcomm is
 * written when *req_p completes. On an intercommunicator the agreement
 * runs inside the call and *req_p is already complete. */
tern_status_t tern_comm_new_idup(tern_comm_t *c, MPI_Info info, int use_info, MPI_Comm *newcomm,
                                 tern_req_t **req_p);
tern_status_t tern_comm_new_split(tern_comm_t *c, int color, int key, MPI_Comm *newcomm);
/* split_type: MPI_COMM_TYPE_* (split_type.h) or MPI_UNDEFINED; info NULL
 * for MPI_INFO_NULL. */
tern_status_t tern_comm_new_split_type(tern_comm_t *c, int split_type, int key,
                                      const tern_info_t *info, MPI_Comm *newcomm);
tern_status_t tern_comm_new_create(tern_comm_t *c, const tern_group_t *g, MPI_Comm *newcomm);
tern_status_t tern_comm_new_create_group(tern_comm_t *c, const tern_group_t *g, int tag,
                                         MPI_Comm *newcomm);
/* peer_comm and remote_leader are read on the local leader only. */
tern_status_t tern_comm_new_intercomm(tern_comm_t *local, int local_leader, MPI_Comm peer_comm,
                                      int remote_leader, int tag, MPI_Comm *newintercomm);
tern_status_t tern_comm_new_merge(tern_comm_t *inter, int high, MPI_Comm *newintracomm);
/* MPI_Comm_free: delete callbacks, then the object; *comm = MPI_COMM_NULL. */
tern_status_t tern_comm_free_handle(tern_comm_t *c, MPI_Comm *comm);
/* MPI_Comm_disconnect: waits until every operation this process started on
 * c (sends, receives, nonblocking and active persistent collectives) is
 * complete, then frees it as MPI_Comm_free does. */
tern_status_t tern_comm_disconnect(tern_comm_t *c, MPI_Comm *comm);

#endif

/* Dynamic processes: ports, accept/connect (comm_dynamic.c) and spawn
 * (comm_spawn.c), on the transport between jobs (runtime/dyn_peers.c). */
#ifndef TERN_CORE_COMM_DYNAMIC_H
#define TERN_CORE_COMM_DYNAMIC_H

#include "core/comm/comm.h"
#include "core/info/info.h"

/* The context the roots of an accept/connect meet on: slot 4095, which
 * tern_ctx_init keeps from every communicator. */
#define TERN_CTX_BRIDGE (2u * (TERN_CTX_SLOTS - 1))

/* A new port name (MPI_MAX_PORT_NAME bytes) of this process. */
tern_status_t tern_port_open(char *port_name);
/* TERN_ERR_PORT (with a detail) unless port is a port name. */
tern_status_t tern_port_check(const char *port);
/* Collective over comm: an intercommunicator between comm's group and
 * the group that calls the other side (accept or connect) with the same
 * port; port is read on root only. port_tag: the port's tag when every
 * member knows it already (spawn bcasts it), else -1 (the root bcasts it
 * first). timeout_s (connect, read at the root; 0: none): how long the
 * connecting root waits for an accept before it withdraws its request
 * and every member fails with TERN_ERR_PORT. */
tern_status_t tern_comm_dyn_join(tern_comm_t *comm, int root, int accept, const char *port,
                                 int port_tag, double timeout_s, tern_comm_t **new_p);
/* The tag of a port name (>= 0), 0 if it is not one. */
int tern_port_tag(const char *port);

/* The MPI procedures: check comm (an intracommunicator) and root, then
 * join; *newcomm is the new intercommunicator's handle. info (connect,
 * significant at root; NULL: MPI_INFO_NULL): its key "timeout" in
 * seconds overrides TERN_PORT_CONNECT_TIMEOUT. */
tern_status_t tern_comm_check_root(const tern_comm_t *comm, int root);
tern_status_t tern_comm_dyn_join_checked(tern_comm_t *comm, int root, int accept,
                                         const char *port, const tern_info_t *info,
                                         MPI_Comm *newcomm);

/* MPI_Publish_name, MPI_Unpublish_name, MPI_Lookup_name (port:
 * MPI_MAX_PORT_NAME bytes), through the process manager's name service. */
tern_status_t tern_name_publish(const char *service, const char *port);
tern_status_t tern_name_unpublish(const char *service, const char *port);
tern_status_t tern_name_lookup(const char *service, char *port);

/* MPI_Comm_join over a connected socket fd (both processes call it). */
tern_status_t tern_comm_join(int fd, MPI_Comm *intercomm);

/* comm_spawn.c. MPI_Comm_spawn_multiple on arguments read at root only
 * (argvs may be NULL: MPI_ARGVS_NULL; errcodes may be NULL:
 * MPI_ERRCODES_IGNORE). */
tern_status_t tern_comm_spawn(tern_comm_t *comm, int root, int count, char *commands[],
                              char **argvs[], const int maxprocs[], const MPI_Info infos[],
                              MPI_Comm *intercomm, int errcodes[]);
/* MPI_Comm_spawn_multiple and MPI_Comm_spawn after tern_comm_check_root. */
tern_status_t tern_comm_spawn_checked(tern_comm_t *comm, int root, int count, char *commands[],
                                      char **argvs[], const int maxprocs[],
                                      const MPI_Info infos[], MPI_Comm *intercomm,
                                      int errcodes[]);
tern_status_t tern_comm_spawn_one(tern_comm_t *comm, int root, const char *command, char *argv[],
                                  int maxprocs, MPI_Info info, MPI_Comm *intercomm,
                                  int errcodes[]);
/* At MPI_Init: a spawned process connects to its parents. */
tern_status_t tern_comm_parent_init(void);
/* MPI_Comm_get_parent: MPI_COMM_NULL unless spawned (and not yet freed). */
tern_status_t tern_comm_get_parent(MPI_Comm *parent);

#endif

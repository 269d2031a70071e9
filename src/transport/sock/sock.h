/* The transport between processes of different jobs (dynamic processes:
 * MPI_Comm_spawn, accept/connect), which the start-up transports cannot
 * reach: their peer tables are fixed at MPI_Init. TCP streams, opened only
 * when a process first takes part in a dynamic connection; a process is
 * known by its listening address ("tcp:<ipv4>:<port>"), which the core
 * passes in port names and connection handshakes.
 *
 * Each ordered pair uses the connection its sender opened (one per
 * direction), so messages stay in order per pair. The first frame on a
 * connection is the sender's address; the receiver asks the core for the
 * peer index of that address (peer_for_addr), so a process can receive
 * from one it has not heard of yet (an accepting root). Frames are a
 * 4-byte length and the message. No get/put: rendezvous streams through
 * active messages. */
#ifndef TERN_TRANSPORT_SOCK_H
#define TERN_TRANSPORT_SOCK_H

#include "transport/transport.h"

enum { TERN_SOCK_ADDR_MAX = 64 };

typedef struct {
    tern_am_handler_fn am_handler;
    void *am_ctx;
    tern_peer_failed_fn peer_failed;
    /* The peer index for a process's address (created if new); -1 when
     * no more peers fit. */
    int (*peer_for_addr)(const char *addr);
} tern_sock_params_t;

extern const tern_tl_ops_t tern_tl_sock_ops;

/* Opens the listening socket. */
tern_status_t tern_sock_open(const tern_sock_params_t *p, tern_tl_t **tl_p);
/* This process's address (NUL-terminated, < TERN_SOCK_ADDR_MAX). */
const char *tern_sock_address(const tern_tl_t *tl);
/* Peer index `peer` is the process listening at addr. */
tern_status_t tern_sock_add_peer(tern_tl_t *tl, int peer, const char *addr);

#endif

/* Messages nobody receives: a message that arrived and was never matched
 * when its communicator can no longer receive it (MPI_Comm_free,
 * MPI_Comm_disconnect, MPI_Finalize for MPI_COMM_WORLD and MPI_COMM_SELF,
 * MPI_Session_finalize for the session's communicators, and every
 * communicator still alive when MPI ends) is reported, dropped (its eager
 * credit returned) and counted in tern_rt.n_unmatched. TERN_UNMATCHED
 * says how: warn (the default: a warning on stderr whatever
 * TERN_LOG_LEVEL), error (the same lines as errors, and the call fails
 * with TERN_ERR_UNMATCHED, MPI_ERR_OTHER), off (silent; still dropped and
 * counted). docs/design.md, "Messages nobody receives". */
#ifndef TERN_CORE_COMM_UNMATCHED_H
#define TERN_CORE_COMM_UNMATCHED_H

#include "base/status.h"
#include "core/comm/comm.h"

#include <stdint.h>

/* The messages on c's point-to-point context, at func. TERN_OK, or
 * TERN_ERR_UNMATCHED when there were some and TERN_UNMATCHED=error. */
tern_status_t tern_unmatched_check(tern_comm_t *c, const char *func);
/* The same for the communicators bound to a session's buffered-send pool
 * (those made from its groups and derived from them). */
tern_status_t tern_unmatched_check_session(uint32_t session, const char *func);
/* Every unexpected message left when MPI ends: those on a live
 * communicator are reported as above, the rest (internal traffic, a
 * communicator already freed) dropped silently. */
tern_status_t tern_unmatched_check_all(const char *func);
/* For a call that checks several times and tears down in between
 * (MPI_Finalize): TERN_ERR_UNMATCHED, with the count in its words, when
 * TERN_UNMATCHED=error and tern_rt.n_unmatched grew past before. */
tern_status_t tern_unmatched_since(uint64_t before);

#endif

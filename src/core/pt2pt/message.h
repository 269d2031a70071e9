/* MPI_Message handles: messages that a matched probe (MPI_Mprobe) took out
 * of the unexpected queue, held until MPI_Mrecv receives them. */
#ifndef TERN_CORE_PT2PT_MESSAGE_H
#define TERN_CORE_PT2PT_MESSAGE_H

#include "base/status.h"
#include "core/pt2pt/match.h"
#include <mpi.h>

/* A handle for u (never MPI_MESSAGE_NULL or MPI_MESSAGE_NO_PROC). */
tern_status_t tern_message_new(tern_unexp_t *u, MPI_Message *handle_p);
/* The message behind h, which stops being valid; TERN_ERR_NOT_FOUND when h
 * is no matched message. */
tern_status_t tern_message_take(MPI_Message h, tern_unexp_t **u_p);

#endif

#include "core/pt2pt/message.h"
#include "core/runtime/handle_table.h"

/* Matched messages (MPI_Mprobe) waiting for their MPI_Mrecv. Their
 * handles have a kind of their own (requests use 0x2c). */
static tern_handle_table_t messages = TERN_HANDLE_TABLE(TERN_KIND_MESSAGE, 16);

tern_status_t tern_message_new(tern_unexp_t *u, MPI_Message *handle_p)
{
    return tern_handle_new(&messages, u, handle_p);
}

tern_status_t tern_message_take(MPI_Message h, tern_unexp_t **u_p)
{
    tern_unexp_t *u = tern_handle_get(&messages, h);
    if (!u)
        return TERN_ERR_NOT_FOUND;
    tern_handle_release(&messages, h);
    *u_p = u;
    return TERN_OK;
}

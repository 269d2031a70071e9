#include "core/pt2pt/message.h"

#include <stdlib.h>
#include <string.h>

/* Handle = MPI_MESSAGE_NULL + 2 + slot (MPI_MESSAGE_NO_PROC is + 1); freed
 * slots are reused, the table grows by 16. */
#define MESSAGE_BASE ((unsigned)MPI_MESSAGE_NULL)
static tern_unexp_t **messages;
static size_t n_messages;

tern_status_t tern_message_new(tern_unexp_t *u, MPI_Message *handle_p)
{
    size_t i;
    for (i = 0; i < n_messages; i++)
        if (!messages[i])
            break;
    if (i == n_messages) {
        tern_unexp_t **m = realloc(messages, (n_messages + 16) * sizeof *m);
        if (!m)
            return TERN_ERR_NOMEM;
        memset(m + n_messages, 0, 16 * sizeof *m);
        messages = m;
        n_messages += 16;
    }
    messages[i] = u;
    *handle_p = (MPI_Message)(MESSAGE_BASE + 2 + (unsigned)i);
    return TERN_OK;
}

tern_status_t tern_message_take(MPI_Message h, tern_unexp_t **u_p)
{
    size_t i = (unsigned)h - MESSAGE_BASE - 2;
    if ((unsigned)h < MESSAGE_BASE + 2 || i >= n_messages || !messages[i])
        return TERN_ERR_NOT_FOUND;
    *u_p = messages[i];
    messages[i] = NULL;
    return TERN_OK;
}

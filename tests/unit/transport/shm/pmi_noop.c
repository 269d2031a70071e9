/* PMI for shm unit tests that run in one process: shm.c and
 * shm_node_segment.c call it in their collective set-up, which these
 * tests do not use. */
#include "pmi/pmi.h"

tern_status_t tern_pmi_fence(void)
{
    return TERN_OK;
}

tern_status_t tern_pmi_put(const char *key, const char *value)
{
    (void)key;
    (void)value;
    return TERN_OK;
}

tern_status_t tern_pmi_get(const char *key, char *value, size_t value_len)
{
    (void)key;
    (void)value;
    (void)value_len;
    return TERN_ERR_NOT_FOUND;
}

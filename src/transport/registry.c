#include "transport/transport.h"

const tern_tl_ops_t *const tern_tl_all[] = {&tern_tl_self_ops, &tern_tl_shm_ops, NULL};

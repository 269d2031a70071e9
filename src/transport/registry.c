#include "transport/transport.h"

#ifdef TERN_HAVE_OFI
extern const tern_tl_ops_t tern_tl_ofi_ops;
#endif

const tern_tl_ops_t *const tern_tl_all[] = {&tern_tl_self_ops, &tern_tl_shm_ops,
#ifdef TERN_HAVE_OFI
                                            &tern_tl_ofi_ops,
#endif
                                            NULL};

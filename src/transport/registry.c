/* The registry: every transport compiled in (transport.h, tern_tl_all). */
#include "transport/transport.h"

#ifdef TERN_HAVE_OFI
extern const tern_tl_ops_t tern_tl_ofi_ops;
#endif
extern const tern_tl_ops_t tern_tl_sock_ops;

const tern_tl_ops_t *const tern_tl_all[] = {&tern_tl_self_ops, &tern_tl_shm_ops,
#ifdef TERN_HAVE_OFI
                                            &tern_tl_ofi_ops,
#endif
                                            &tern_tl_sock_ops, NULL};

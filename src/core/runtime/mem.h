/* MPI_Alloc_mem's memory: the one place it is allocated and freed, so
 * that a transport that must register memory for RMA or RDMA (ofi) can
 * register it here, once, when it is allocated (not done yet). Every live
 * block is recorded, so freeing an address that is not one (a pointer into
 * a block, malloc's memory, a block freed twice) is an error, not a crash. */
#ifndef TERN_CORE_MEM_H
#define TERN_CORE_MEM_H

#include "base/status.h"
#include <stddef.h>

/* Cache-line alignment at least, for the transports' copies. */
#define TERN_MEM_MIN_ALIGN 64

/* size bytes aligned to align (a power of two; at least
 * TERN_MEM_MIN_ALIGN is used). Size 0 gives a valid unique block too. */
tern_status_t tern_mem_alloc(size_t size, size_t align, void **base_p);
/* NULL is allowed (nothing to free); an address tern_mem_alloc did not
 * return is TERN_ERR_BASE. */
tern_status_t tern_mem_free(void *base);
/* Blocks still allocated (MPI_Finalize frees none: the user may use them). */
size_t tern_mem_live(void);

#endif

/* Single-copy transfers between processes of one node with Cross Memory
 * Attach (process_vm_readv / process_vm_writev). The remote side is named by
 * its pid (tern_rkey_t.words[0] for the shm transport) and a virtual address
 * in its address space.
 *
 * The kernel allows CMA when the caller may ptrace the target (same uid and,
 * under Yama ptrace_scope 1, an ancestor or a process that declared us its
 * tracer): tern_shm_cma_allow_peers declares any process of the same uid a
 * permitted tracer, as Open MPI's vader does. A transfer that the kernel
 * denies (EPERM, ENOSYS) returns TERN_ERR_NOT_SUPPORTED so that the caller
 * falls back to copying through the queue. */
#ifndef TERN_TRANSPORT_SHM_SHM_CMA_H
#define TERN_TRANSPORT_SHM_SHM_CMA_H

#include "base/status.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Lets processes of the same uid read and write this one with CMA (Yama). */
void tern_shm_cma_allow_peers(void);
/* Copies len bytes from remote_addr in process pid to local. Loops over
 * partial transfers; any size. */
tern_status_t tern_shm_cma_read(pid_t pid, void *local, uint64_t remote_addr, size_t len);
/* Copies len bytes from local to remote_addr in process pid. */
tern_status_t tern_shm_cma_write(pid_t pid, const void *local, uint64_t remote_addr, size_t len);
/* Reads one 64-bit word at remote_addr in pid and checks it equals expected:
 * TERN_OK, TERN_ERR_NOT_SUPPORTED when the kernel denies CMA, another error
 * otherwise. */
tern_status_t tern_shm_cma_probe(pid_t pid, uint64_t remote_addr, uint64_t expected);

#endif

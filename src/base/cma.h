/* Single-copy transfers between processes of one node with Cross Memory
 * Attach (process_vm_readv / process_vm_writev): a Linux service with no
 * knowledge of transports. The remote side is named by its pid and a
 * virtual address in its address space (the shm transport carries the pid
 * in its remote keys).
 *
 * The kernel allows CMA when the caller may ptrace the target (same uid and,
 * under Yama ptrace_scope 1, an ancestor or a process that declared us its
 * tracer): tern_cma_allow_peers declares any process of the same uid a
 * permitted tracer, as Open MPI's vader does. A transfer that the kernel
 * denies (EPERM, ENOSYS) returns TERN_ERR_NOT_SUPPORTED so that the caller
 * falls back to copying through the queue. */
#ifndef TERN_BASE_CMA_H
#define TERN_BASE_CMA_H

#include "base/status.h"
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Lets processes of the same uid read and write this one with CMA (Yama). */
void tern_cma_allow_peers(void);
/* Copies len bytes from remote_addr in process pid to local. Loops over
 * partial transfers; any size. */
tern_status_t tern_cma_read(pid_t pid, void *local, uint64_t remote_addr, size_t len);
/* Copies len bytes from local to remote_addr in process pid. */
tern_status_t tern_cma_write(pid_t pid, const void *local, uint64_t remote_addr, size_t len);
/* Reads one 64-bit word at remote_addr in pid and checks it equals expected:
 * TERN_OK, TERN_ERR_NOT_SUPPORTED when the kernel denies CMA, another error
 * otherwise. */
tern_status_t tern_cma_probe(pid_t pid, uint64_t remote_addr, uint64_t expected);
/* This process's probe word, for a peer's tern_cma_probe to read at this
 * address: a value of this process alone (random, drawn at the first
 * call), so that a pid naming the wrong process (a peer in a pid namespace
 * of its own: that pid is another process here, often this one, whose
 * word may sit at the same address) never reads back right. */
const _Atomic uint64_t *tern_cma_probe_word(void);
/* Copies total bytes between local (contiguous) and the cnt pieces riov of
 * pid, in one system call where the kernel takes it whole (cnt at most
 * TERN_CMA_IOV_MAX); a partial transfer is finished piece by piece.
 * write: local to the pieces; else the pieces to local. Nothing logged:
 * TERN_ERR_NOT_SUPPORTED when the kernel refuses, else a status with its
 * detail. */
enum { TERN_CMA_IOV_MAX = 1024 }; /* the kernel's UIO_MAXIOV */
tern_status_t tern_cma_copyv(pid_t pid, int write, char *local, const struct iovec *riov, size_t cnt,
                             size_t total);

#endif

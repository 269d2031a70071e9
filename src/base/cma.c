/* Cross Memory Attach: process_vm_readv / process_vm_writev with a loop over
 * partial transfers. */
#include "base/cma.h"
#include "base/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Bytes per system call: keeps each call's page pinning bounded and the
 * length well inside ssize_t. */
#define CMA_CHUNK ((size_t)1 << 30)

void tern_cma_allow_peers(void)
{
#if defined(PR_SET_PTRACER) && defined(PR_SET_PTRACER_ANY)
    /* Fails with EINVAL where Yama is absent: then nothing is needed. */
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

static tern_status_t cma_errno_status(int err)
{
    switch (err) {
    case EPERM:
    case EACCES:
    case ENOSYS:
        return TERN_ERR_NOT_SUPPORTED;
    case ESRCH:
        return TERN_ERR_PEER;
    case EFAULT:
    case EINVAL:
        return TERN_ERR_ARG;
    case ENOMEM:
        return TERN_ERR_NOMEM;
    default:
        return TERN_ERR_IO;
    }
}

static tern_status_t cma_copy(pid_t pid, char *local, uint64_t remote_addr, size_t len, int write)
{
    while (len > 0) {
        size_t n = len < CMA_CHUNK ? len : CMA_CHUNK;
        struct iovec liov = {.iov_base = local, .iov_len = n};
        struct iovec riov = {.iov_base = (void *)(uintptr_t)remote_addr, .iov_len = n};
        ssize_t done = write ? process_vm_writev(pid, &liov, 1, &riov, 1, 0)
                             : process_vm_readv(pid, &liov, 1, &riov, 1, 0);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            tern_status_t st = cma_errno_status(err);
            if (st != TERN_ERR_NOT_SUPPORTED)
                tern_error("process_vm_%s(pid %d, %zu bytes at 0x%llx): %s", write ? "writev" : "readv",
                           (int)pid, n, (unsigned long long)remote_addr, strerror(err));
            else
                tern_debug("process_vm_%s(pid %d): %s", write ? "writev" : "readv", (int)pid, strerror(err));
            return st;
        }
        if (done == 0) {
            /* No progress: the remote range is not mapped. */
            tern_error("process_vm_%s(pid %d, %zu bytes at 0x%llx) made no progress",
                       write ? "writev" : "readv", (int)pid, n, (unsigned long long)remote_addr);
            return TERN_ERR_ARG;
        }
        local += done;
        remote_addr += (uint64_t)done;
        len -= (size_t)done;
    }
    return TERN_OK;
}

tern_status_t tern_cma_read(pid_t pid, void *local, uint64_t remote_addr, size_t len)
{
    return cma_copy(pid, (char *)local, remote_addr, len, 0);
}

tern_status_t tern_cma_write(pid_t pid, const void *local, uint64_t remote_addr, size_t len)
{
    return cma_copy(pid, (char *)(uintptr_t)local, remote_addr, len, 1);
}

tern_status_t tern_cma_probe(pid_t pid, uint64_t remote_addr, uint64_t expected)
{
    uint64_t word = 0;
    struct iovec liov = {.iov_base = &word, .iov_len = sizeof word};
    struct iovec riov = {.iov_base = (void *)(uintptr_t)remote_addr, .iov_len = sizeof word};
    ssize_t done;
    do
        done = process_vm_readv(pid, &liov, 1, &riov, 1, 0);
    while (done < 0 && errno == EINTR);
    if (done < 0)
        return cma_errno_status(errno);
    if (done != (ssize_t)sizeof word || word != expected)
        return TERN_ERR_INTERNAL;
    return TERN_OK;
}

const _Atomic uint64_t *tern_cma_probe_word(void)
{
    static _Atomic uint64_t value;
    uint64_t v = atomic_load_explicit(&value, memory_order_relaxed);
    while (v == 0) {
        if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            v = ((uint64_t)t.tv_nsec << 32 ^ (uint64_t)t.tv_sec ^ (uint64_t)getpid() << 16 ^
                 (uint64_t)(uintptr_t)&t) * 0x9e3779b97f4a7c15ull;
        }
        uint64_t none = 0; /* every thread keeps the first value drawn */
        if (!atomic_compare_exchange_strong(&value, &none, v))
            v = none;
    }
    return &value;
}

tern_status_t tern_cma_copyv(pid_t pid, int write, char *local, const struct iovec *riov, size_t cnt,
                             size_t total)
{
    struct iovec liov = {.iov_base = local, .iov_len = total};
    ssize_t done;
    do
        done = write ? process_vm_writev(pid, &liov, 1, riov, cnt, 0)
                     : process_vm_readv(pid, &liov, 1, riov, cnt, 0);
    while (done < 0 && errno == EINTR);
    if (done < 0) {
        int err = errno;
        if (err == EPERM || err == EACCES || err == ENOSYS)
            return TERN_ERR_NOT_SUPPORTED;
        return tern_status_detail(err == ESRCH ? TERN_ERR_PEER : TERN_ERR_INTERNAL,
                                  "process_vm_%s of %zu bytes in %zu pieces of pid %d: %s",
                                  write ? "writev" : "readv", total, cnt, (int)pid, strerror(err));
    }
    /* Partial: the kernel stops at a piece boundary or inside one. */
    size_t skip = (size_t)done;
    for (size_t i = 0; i < cnt; i++) {
        size_t len = riov[i].iov_len;
        if (skip >= len) {
            skip -= len;
            local += len;
            continue;
        }
        uint64_t at = (uint64_t)(uintptr_t)riov[i].iov_base + skip;
        tern_status_t st = write ? tern_cma_write(pid, local + skip, at, len - skip)
                                 : tern_cma_read(pid, local + skip, at, len - skip);
        if (st != TERN_OK)
            return st;
        local += len;
        skip = 0;
    }
    return TERN_OK;
}

/* The shared-memory transport's get and put: Cross Memory Attach
 * (base/cma.h) into the process a key names, complete at once. */
#include "transport/shm/shm_internal.h"
#include "base/cma.h"
#include "base/log.h"

tern_status_t tern_shm_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p)
{
    rkey_p->words[0] = (uint64_t)tl->pid;
    rkey_p->words[1] = (uint64_t)(uintptr_t)buf;
    rkey_p->words[2] = (uint64_t)len;
    return TERN_OK;
}

void tern_shm_mem_dereg(tern_tl_t *tl, void *buf, size_t len)
{
    (void)tl;
    (void)buf;
    (void)len;
}

static tern_status_t shm_rma_done(tern_tl_t *tl, tern_status_t st, tern_tl_comp_t *comp)
{
    if (st == TERN_OK) {
        if (comp != NULL && comp->cb != NULL)
            comp->cb(comp, TERN_OK);
    } else if (st == TERN_ERR_NOT_SUPPORTED && tl->cma) {
        tern_info("CMA denied by the kernel; falling back to copying through the queue");
        tl->cma = 0;
    }
    return st;
}

/* Completion is reported through comp before returning TERN_OK; on any
 * error the callback is not called. */
tern_status_t tern_shm_get(tern_tl_t *tl, int peer, void *local, size_t len, uint64_t remote_addr,
                           const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)peer;
    if (!tl->cma)
        return TERN_ERR_NOT_SUPPORTED;
    return shm_rma_done(tl, tern_cma_read((pid_t)rkey->words[0], local, remote_addr, len), comp);
}

tern_status_t tern_shm_put(tern_tl_t *tl, int peer, const void *local, size_t len, uint64_t remote_addr,
                           const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)peer;
    if (!tl->cma)
        return TERN_ERR_NOT_SUPPORTED;
    return shm_rma_done(tl, tern_cma_write((pid_t)rkey->words[0], local, remote_addr, len), comp);
}

/* CMA into the process named by the key; complete at once. Unlike get and
 * put, a refusal leaves the messages' use of CMA alone. */
static tern_status_t shm_rma_vector(int write, void *local, size_t len, const struct iovec *remote,
                                    size_t n_remote, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    tern_status_t st = tern_cma_copyv((pid_t)rkey->words[0], write, local, remote, n_remote, len);
    if (st == TERN_OK && comp != NULL)
        comp->cb(comp, TERN_OK);
    return st;
}

tern_status_t tern_shm_getv(tern_tl_t *tl, int peer, void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp)
{
    (void)tl, (void)peer;
    return shm_rma_vector(0, local, len, remote, n_remote, rkey, comp);
}

tern_status_t tern_shm_putv(tern_tl_t *tl, int peer, const void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp)
{
    (void)tl, (void)peer;
    return shm_rma_vector(1, (void *)(uintptr_t)local, len, remote, n_remote, rkey, comp);
}

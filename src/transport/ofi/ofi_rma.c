/* Zero-copy rendezvous support: exposing send buffers to peers (mem_reg) and
 * one-sided reads and writes, split into chunks the provider accepts and
 * issued as queue slots allow (a full queue defers, never blocks).
 *
 * Registrations of the same buffer are shared (refcounted): two sends from
 * one buffer in flight at once hand out the same key, so releasing one never
 * revokes the other's. A registration lives from the RTS to the FIN; nothing
 * is cached past that, so freed memory can never be reached through a stale
 * key. (Providers with their own MR cache, such as verbs and efa, cache
 * underneath, invalidated by libfabric's monitor: FI_MR_CACHE_MONITOR.) */
#include "transport/ofi/ofi_internal.h"
#include "base/log.h"

#include <stdlib.h>

tern_status_t tern_ofi_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p)
{
    ofi_reg_t *r;
    for (r = tl->regs; r; r = r->next)
        if (r->buf == buf && r->len == len)
            break;
    if (r) {
        r->refs++;
    } else {
        r = calloc(1, sizeof *r);
        if (!r)
            return TERN_ERR_NOMEM;
        /* A zero-length registration is not portable: expose one byte. */
        int ret = tern_ofi_mr_reg(tl, buf, len ? len : 1, FI_REMOTE_READ | FI_REMOTE_WRITE, &r->mr);
        if (ret) {
            tern_error("ofi: registering %zu bytes at %p failed: %s", len, buf, fi_strerror(-ret));
            free(r);
            return TERN_ERR_NOMEM;
        }
        r->buf = buf;
        r->len = len;
        r->refs = 1;
        r->next = tl->regs;
        tl->regs = r;
    }
    rkey_p->words[0] = fi_mr_key(r->mr);
    rkey_p->words[1] = (uint64_t)(uintptr_t)buf;
    rkey_p->words[2] = 0;
    return TERN_OK;
}

void tern_ofi_mem_dereg(tern_tl_t *tl, void *buf, size_t len)
{
    for (ofi_reg_t **pp = &tl->regs; *pp; pp = &(*pp)->next) {
        ofi_reg_t *r = *pp;
        if (r->buf != buf || r->len != len)
            continue;
        if (--r->refs == 0) {
            *pp = r->next;
            fi_close(&r->mr->fid);
            free(r);
        }
        return;
    }
}

static tern_status_t rma_start(tern_tl_t *tl, int is_write, int peer, void *local, size_t len,
                               uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    if (!tl->peers[peer].resolved) {
        tern_status_t st = tern_ofi_resolve(tl, peer);
        if (st != TERN_OK)
            return st;
    }
    ofi_rma_t *x = calloc(1, sizeof *x);
    if (!x)
        return TERN_ERR_NOMEM;
    x->is_write = is_write;
    x->peer = peer;
    x->local = local;
    x->len = len;
    x->comp = comp;
    x->key = rkey->words[0];
    /* Without FI_MR_VIRT_ADDR the target address is an offset into the
     * registration, whose base travels in the key. */
    x->remote = tl->mr_virt_addr ? remote_addr : remote_addr - rkey->words[1];
    tern_status_t st = tern_ofi_reg_local(tl, local, len ? len : 1, is_write ? FI_WRITE : FI_READ,
                                          &x->local_mr, &x->local_desc);
    if (st != TERN_OK) {
        free(x);
        return st;
    }
    if (tl->rma_tail)
        tl->rma_tail->next = x;
    else
        tl->rma_head = x;
    tl->rma_tail = x;
    tern_ofi_rma_push(tl);
    return TERN_OK;
}

tern_status_t tern_ofi_get(tern_tl_t *tl, int peer, void *local, size_t len, uint64_t remote_addr,
                           const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    return rma_start(tl, 0, peer, local, len, remote_addr, rkey, comp);
}

tern_status_t tern_ofi_put(tern_tl_t *tl, int peer, const void *local, size_t len,
                           uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    return rma_start(tl, 1, peer, (void *)local, len, remote_addr, rkey, comp);
}

static void rma_release(ofi_rma_t *x)
{
    if (x->local_mr)
        fi_close(&x->local_mr->fid);
    free(x);
}

/* Issues chunks of the transfer at the head; stops when the queue is full.
 * Returns 1 when every chunk of it is issued. */
static int rma_issue(tern_tl_t *tl, ofi_rma_t *x)
{
    fi_addr_t addr = tl->peers[x->peer].addr;
    do {
        size_t n = x->len - x->issued;
        if (n > tl->max_msg_size)
            n = tl->max_msg_size;
        ofi_op_t *op = calloc(1, sizeof *op);
        if (!op)
            tern_fatal("ofi: out of memory issuing a one-sided transfer");
        op->kind = OFI_OP_RMA;
        op->rma = x;
        ssize_t ret = x->is_write
                          ? fi_write(tl->ep, x->local + x->issued, n, x->local_desc, addr,
                                     x->remote + x->issued, x->key, &op->ctx)
                          : fi_read(tl->ep, x->local + x->issued, n, x->local_desc, addr,
                                    x->remote + x->issued, x->key, &op->ctx);
        if (ret == -FI_EAGAIN) {
            free(op);
            return 0;
        }
        if (ret)
            tern_fatal("ofi: %s of %zu bytes with rank %d failed: %s",
                       x->is_write ? "RDMA write" : "RDMA read", n, x->peer,
                       fi_strerror((int)-ret));
        x->issued += n;
        x->outstanding++;
        tl->rma_in_flight++;
    } while (x->issued < x->len);
    return 1;
}

int tern_ofi_rma_push(tern_tl_t *tl)
{
    int n = 0;
    while (tl->rma_head && rma_issue(tl, tl->rma_head)) {
        tl->rma_head = tl->rma_head->next;
        if (!tl->rma_head)
            tl->rma_tail = NULL;
        n++;
    }
    return n;
}

void tern_ofi_rma_chunk_done(tern_tl_t *tl, ofi_op_t *op)
{
    ofi_rma_t *x = op->rma;
    free(op);
    tl->rma_in_flight--;
    if (--x->outstanding == 0 && x->issued == x->len) {
        tern_tl_comp_t *comp = x->comp;
        rma_release(x);
        comp->cb(comp, TERN_OK);
    }
}

void tern_ofi_rma_finalize(tern_tl_t *tl)
{
    while (tl->regs) {
        ofi_reg_t *r = tl->regs;
        tl->regs = r->next;
        fi_close(&r->mr->fid);
        free(r);
    }
    while (tl->rma_head) {
        ofi_rma_t *x = tl->rma_head;
        tl->rma_head = x->next;
        rma_release(x);
    }
}

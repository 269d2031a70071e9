/* Zero-copy rendezvous support: exposing send buffers to peers (mem_reg) and
 * one-sided reads and writes, split into chunks the provider accepts and
 * issued as queue slots allow (a full queue defers, never blocks).
 *
 * Sends of the same buffer in flight at once share one registration
 * (refcounted here), so releasing one never revokes the other's key. The
 * registration comes from Tern's cache (ofi_regcache.c): it covers the
 * buffer's pages and stays cached after the FIN for later sends within
 * them (TERN_OFI_REGCACHE), until the application unmaps or frees that
 * memory, which a userfaultfd monitor thread sees before munmap returns.
 * Without userfaultfd each send registers its buffer and closes it at the
 * FIN. (Providers with their own MR cache, such as verbs and efa, may cache
 * underneath, invalidated by libfabric's monitor: FI_MR_CACHE_MONITOR.)
 *
 * Several rails: a buffer is registered on every rail's domain and the
 * remote key carries every rail's key (or the one key we asked for on all
 * of them). A transfer of at least TERN_OFI_STRIPE_MIN bytes is striped:
 * split into one contiguous piece per rail, of equal size (rails of one
 * provider are taken to be alike), issued on each rail's endpoint; the
 * completion, and so the core's FIN, comes when every piece is done.
 * Smaller ones go whole on the peer's rail. */
#include "transport/ofi/ofi_internal.h"
#include "transport/ofi/ofi_regcache.h"
#include "base/cma.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

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
        tern_status_t st = tern_ofi_regcache_get(tl, buf, len, &r->entry);
        if (st != TERN_OK) {
            free(r);
            return st;
        }
        r->buf = buf;
        r->len = len;
        r->refs = 1;
        r->next = tl->regs;
        tl->regs = r;
    }
    /* Keys first (one per rail, or the shared one), then the base address
     * of the registration (it may start below buf) where a word is left:
     * without FI_MR_VIRT_ADDR remote addresses are offsets from it, and
     * check_rkey_room guaranteed it room. */
    rkey_p->words[0] = rkey_p->words[1] = rkey_p->words[2] = 0;
    for (int k = 0; k < tl->rkey_key_words; k++)
        rkey_p->words[k] = fi_mr_key(r->entry->mr[k]);
    if (tl->rkey_key_words < 3)
        rkey_p->words[tl->rkey_key_words] = (uint64_t)r->entry->base;
    return TERN_OK;
}

/* The vector ops reach the ranks of this host only (ofi_query), by CMA to
 * the pid their address carries: complete at once, and the target's
 * process need not call into libfabric (a Win_create window whose owner
 * computes). No pid (another pid namespace): TERN_ERR_NOT_SUPPORTED. */
static tern_status_t ofi_rma_vector(tern_tl_t *tl, int peer, int write, void *local, size_t len,
                                    const struct iovec *remote, size_t n_remote,
                                    tern_tl_comp_t *comp)
{
    if (peer < 0 || peer >= tl->size || tl->node_of_rank[peer] != tl->node)
        return TERN_ERR_NOT_SUPPORTED;
    if (!tl->peers[peer].resolved) {
        tern_status_t st = tern_ofi_resolve(tl, peer);
        if (st != TERN_OK)
            return st;
    }
    if (!tl->peers[peer].pid)
        return TERN_ERR_NOT_SUPPORTED;
    pid_t pid = (pid_t)tl->peers[peer].pid;
    tern_status_t st = tern_cma_copyv(pid, write, local, remote, n_remote, len);
    if (st == TERN_OK && comp != NULL)
        comp->cb(comp, TERN_OK);
    return st;
}

tern_status_t tern_ofi_getv(tern_tl_t *tl, int peer, void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp)
{
    (void)rkey;
    return ofi_rma_vector(tl, peer, 0, local, len, remote, n_remote, comp);
}

tern_status_t tern_ofi_putv(tern_tl_t *tl, int peer, const void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp)
{
    (void)rkey;
    return ofi_rma_vector(tl, peer, 1, (void *)(uintptr_t)local, len, remote, n_remote, comp);
}

void tern_ofi_mem_dereg(tern_tl_t *tl, void *buf, size_t len)
{
    for (ofi_reg_t **pp = &tl->regs; *pp; pp = &(*pp)->next) {
        ofi_reg_t *r = *pp;
        if (r->buf != buf || r->len != len)
            continue;
        if (--r->refs == 0) {
            *pp = r->next;
            tern_ofi_regcache_put(tl, r->entry);
            free(r);
        }
        return;
    }
}

/* Transfers and their chunks come from free lists kept on tl until
 * finalize: once warm, a get or put allocates nothing (one-sided
 * operations issue one per target piece; rma_rdma.c). */
static ofi_rma_t *rma_alloc(tern_tl_t *tl)
{
    ofi_rma_t *x = tl->rma_free;
    if (x)
        tl->rma_free = x->next;
    else if (!(x = malloc(sizeof *x)))
        return NULL;
    memset(x, 0, sizeof *x);
    return x;
}

static void rma_release(tern_tl_t *tl, ofi_rma_t *x)
{
    for (int r = 0; r < OFI_RAILS_MAX; r++)
        if (x->local_mr[r])
            fi_close(&x->local_mr[r]->fid);
    x->next = tl->rma_free;
    tl->rma_free = x;
}

static ofi_op_t *chunk_alloc(tern_tl_t *tl)
{
    ofi_op_t *op = tl->chunk_free;
    if (op)
        tl->chunk_free = op->next;
    else if (!(op = malloc(sizeof *op)))
        return NULL;
    memset(op, 0, sizeof *op);
    return op;
}

static void chunk_release(tern_tl_t *tl, ofi_op_t *op)
{
    op->next = tl->chunk_free;
    tl->chunk_free = op;
}

static tern_status_t rma_start(tern_tl_t *tl, int is_write, int peer, void *local, size_t len,
                               uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    if (!tl->peers[peer].resolved) {
        tern_status_t st = tern_ofi_resolve(tl, peer);
        if (st != TERN_OK)
            return st;
    }
    if (len == 0) {
        comp->cb(comp, TERN_OK);   /* nothing to move (the contract allows it here) */
        return TERN_OK;
    }
    ofi_rma_t *x = rma_alloc(tl);
    if (!x)
        return TERN_ERR_NOMEM;
    x->is_write = is_write;
    x->peer = peer;
    x->local = local;
    x->len = len;
    x->comp = comp;
    for (int r = 0; r < tl->n_rails; r++)
        x->key[r] = rkey->words[tl->rkey_key_words > 1 ? r : 0];
    /* Without FI_MR_VIRT_ADDR the target address is an offset into the
     * registration, whose base travels in the key after the keys. */
    if (!tl->mr_virt_addr)
        x->remote = remote_addr - rkey->words[tl->rkey_key_words];
    else
        x->remote = remote_addr;
    /* Striped: equal pieces, page-aligned cuts; else whole on the peer's rail. */
    int pieces = len >= tl->stripe_min && len >= (size_t)tl->n_rails * 4096 ? tl->n_rails : 1;
    size_t at = 0;
    for (int i = 0; i < pieces; i++) {
        size_t end = i == pieces - 1 ? len : (len / (size_t)pieces * (size_t)(i + 1)) & ~(size_t)4095;
        x->piece[i].rail = pieces == 1 ? tl->peers[peer].rail : i;
        x->piece[i].issued = at;
        x->piece[i].end = end;
        at = end;
    }
    x->n_pieces = pieces;
    for (int i = 0; i < pieces; i++) {
        int rail = x->piece[i].rail;
        tern_status_t st = tern_ofi_reg_local(tl, rail, local, len,
                                              is_write ? FI_WRITE : FI_READ, &x->local_mr[rail],
                                              &x->local_desc[rail]);
        if (st != TERN_OK) {
            rma_release(tl, x);
            return st;
        }
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

/* Issues chunks of one piece; stops when its rail's queue is full.
 * Returns 1 when every chunk of it is issued. */
static int piece_issue(tern_tl_t *tl, ofi_rma_t *x, ofi_piece_t *pc)
{
    ofi_rail_t *rl = &tl->rails[pc->rail];
    struct fid_ep *ep = tern_ofi_rma_ep(tl, pc->rail, x->is_write);
    fi_addr_t addr = tl->peers[x->peer].addr[pc->rail];
    void *desc = x->local_desc[pc->rail];
    uint64_t key = x->key[pc->rail];
    while (pc->issued < pc->end) {
        size_t n = pc->end - pc->issued;
        if (n > rl->max_msg_size)
            n = rl->max_msg_size;
        ofi_op_t *op = chunk_alloc(tl);
        if (!op)
            return 0; /* as a full queue: tried again at the next progress */
        op->kind = OFI_OP_RMA;
        op->rail = pc->rail;
        op->rma = x;
        ssize_t ret;
        if (x->is_write) {
            /* Delivery complete: the origin's completion says the data is
             * in the target's memory (one-sided puts end an epoch on it). */
            struct iovec iov = {x->local + pc->issued, n};
            struct fi_rma_iov riov = {x->remote + pc->issued, n, key};
            struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                                     .addr = addr, .rma_iov = &riov, .rma_iov_count = 1,
                                     .context = &op->ctx};
            ret = fi_writemsg(ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
        } else {
            ret = fi_read(ep, x->local + pc->issued, n, desc, addr, x->remote + pc->issued,
                          key, &op->ctx);
        }
        if (ret == -FI_EAGAIN) {
            chunk_release(tl, op);
            return 0;
        }
        pc->issued += n;
        x->issued += n;
        if (ret) {
            /* Counted as done: the transfer ends without a callback
             * (rma_finish) once its other chunks are back. */
            chunk_release(tl, op);
            tern_ofi_peer_error(tl, x->peer, TERN_ERR_PEER, "ofi: issuing an RDMA %s of %zu bytes on rail %d failed: %s",
                                x->is_write ? "write" : "read", n, pc->rail, fi_strerror((int)-ret));
            continue;
        }
        x->outstanding++;
        tl->rma_in_flight++;
    }
    return 1;
}

/* Every chunk of x is back (or failed at issue): release it and tell the
 * core, unless its peer has failed; then the core has already completed
 * the request with the error (transport.h, disconnect). */
static void rma_finish(tern_tl_t *tl, ofi_rma_t *x)
{
    tern_tl_comp_t *comp = x->comp;
    int peer_failed = tl->peers[x->peer].failed;
    rma_release(tl, x);
    if (!peer_failed)
        comp->cb(comp, TERN_OK);
}

/* Issues what it can of every piece of the transfer at the head (a full
 * queue on one rail does not hold back the others). Returns 1 when all of
 * it is issued. */
static int rma_issue(tern_tl_t *tl, ofi_rma_t *x)
{
    int done = 1;
    for (int i = 0; i < x->n_pieces; i++)
        done &= piece_issue(tl, x, &x->piece[i]);
    return done;
}

int tern_ofi_rma_push(tern_tl_t *tl)
{
    int n = 0;
    while (tl->rma_head && rma_issue(tl, tl->rma_head)) {
        ofi_rma_t *x = tl->rma_head;
        tl->rma_head = x->next;
        if (!tl->rma_head)
            tl->rma_tail = NULL;
        if (x->outstanding == 0) /* its last chunks failed at issue */
            rma_finish(tl, x);
        n++;
    }
    return n;
}

void tern_ofi_rma_chunk_done(tern_tl_t *tl, ofi_op_t *op)
{
    ofi_rma_t *x = op->rma;
    chunk_release(tl, op);
    tl->rma_in_flight--;
    if (--x->outstanding == 0 && x->issued == x->len)
        rma_finish(tl, x);
}

void tern_ofi_rma_finalize(tern_tl_t *tl)
{
    while (tl->regs) {
        ofi_reg_t *r = tl->regs;
        tl->regs = r->next;
        tern_ofi_regcache_put(tl, r->entry);
        free(r);
    }
    tern_ofi_regcache_finalize(tl);
    while (tl->rma_head) {
        ofi_rma_t *x = tl->rma_head;
        tl->rma_head = x->next;
        rma_release(tl, x);
    }
    while (tl->rma_free) {
        ofi_rma_t *x = tl->rma_free;
        tl->rma_free = x->next;
        free(x);
    }
    while (tl->chunk_free) {
        ofi_op_t *op = tl->chunk_free;
        tl->chunk_free = op->next;
        free(op);
    }
}

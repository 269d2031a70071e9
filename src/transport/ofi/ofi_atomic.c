/* Remote atomics over libfabric (transport.h: atomic_max, atomic):
 * fi_atomic, fi_fetch_atomic and fi_compare_atomic on memory registered
 * with mem_reg, on the peer's rail.
 *
 * The endpoint must be opened with FI_ATOMIC for any of it: unless
 * TERN_RMA_ATOMICS=off, each rail's entry is asked for again with FI_ATOMIC
 * added (all rails or none), so a provider without atomics still serves
 * messages and RDMA. What the provider offers per kind, op and type comes
 * from fi_atomicvalid, fi_fetch_atomicvalid and fi_compare_atomicvalid,
 * asked once. A peer may be this rank or one on this node (served by shm
 * for messages): its address is resolved here on first use, so one-sided
 * atomics to one location all go through the provider. */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"

#include <rdma/fi_atomic.h>
#include <stdlib.h>

static const enum fi_op OPS[TERN_TL_AOP_COUNT] = {
    FI_MIN, FI_MAX, FI_SUM, FI_PROD, FI_LOR, FI_LAND, FI_BOR, FI_BAND, FI_LXOR, FI_BXOR,
    FI_ATOMIC_READ, FI_ATOMIC_WRITE, FI_CSWAP};
static const enum fi_datatype TYPES[TERN_TL_AT_COUNT] = {
    FI_INT8, FI_UINT8, FI_INT16, FI_UINT16, FI_INT32, FI_UINT32, FI_INT64, FI_UINT64,
    FI_FLOAT, FI_DOUBLE, FI_FLOAT_COMPLEX, FI_DOUBLE_COMPLEX};
static const size_t TYPE_BYTES[TERN_TL_AT_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16};

/* One atomic in flight: the op the completion queue hands back, first. */
typedef struct {
    ofi_op_t op;
    tern_tl_comp_t *comp;
    struct fid_mr *mr[3];   /* FI_MR_LOCAL: src, compare, result */
} ofi_atomic_t;

/* The same entry with FI_ATOMIC asked for, or NULL. */
static struct fi_info *with_atomics(const struct fi_info *info)
{
    struct fi_info *hints = fi_dupinfo(info), *out = NULL;
    if (!hints)
        return NULL;
    hints->caps |= FI_ATOMIC;
    hints->tx_attr->caps |= FI_ATOMIC;
    hints->rx_attr->caps |= FI_ATOMIC;
    /* Only the order Tern needs (rxm offers fewer orders with atomics). */
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    int ret = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &out);
    fi_freeinfo(hints);
    if (ret || !out)
        return NULL;
    if (out->next) { /* the first is the closest match */
        fi_freeinfo(out->next);
        out->next = NULL;
    }
    return out;
}

void tern_ofi_atomic_choose(tern_tl_t *tl)
{
    if (tern_knob_is(TERN_KNOB_RMA_ATOMICS, "off"))
        return;
    struct fi_info *up[OFI_RAILS_MAX] = {0};
    int ok = 1;
    for (int r = 0; r < tl->n_rails && ok; r++)
        ok = (up[r] = with_atomics(tl->rails[r].info)) != NULL;
    for (int r = 0; r < tl->n_rails; r++) {
        if (ok) {
            fi_freeinfo(tl->rails[r].info);
            tl->rails[r].info = up[r];
        } else if (up[r]) {
            fi_freeinfo(up[r]);
        }
    }
    tl->atomics = ok;
    if (!ok)
        tern_debug("ofi: provider %s has no FI_ATOMIC: one-sided accumulates by messages",
                   tl->rails[0].info->fabric_attr->prov_name);
}

size_t tern_ofi_atomic_max(tern_tl_t *tl, int kind, int op, int type)
{
    if (tl->idle || !tl->atomics || kind < 0 || kind >= TERN_TL_ATOMIC_KINDS || op < 0 ||
        op >= TERN_TL_AOP_COUNT || type < 0 || type >= TERN_TL_AT_COUNT)
        return 0;
    if (!tl->atomic_probed) {
        struct fid_ep *ep = tl->rails[0].ep;
        for (int k = 0; k < TERN_TL_ATOMIC_KINDS; k++)
            for (int o = 0; o < TERN_TL_AOP_COUNT; o++)
                for (int t = 0; t < TERN_TL_AT_COUNT; t++) {
                    size_t n = 0;
                    int ret = k == TERN_TL_ATOMIC_PLAIN ? fi_atomicvalid(ep, TYPES[t], OPS[o], &n)
                              : k == TERN_TL_ATOMIC_FETCH
                                  ? fi_fetch_atomicvalid(ep, TYPES[t], OPS[o], &n)
                                  : fi_compare_atomicvalid(ep, TYPES[t], OPS[o], &n);
                    tl->atomic_count[k][o][t] = ret ? 0 : n;
                }
        tl->atomic_probed = 1;
    }
    return tl->atomic_count[kind][op][type];
}

static void atomic_release(ofi_atomic_t *a)
{
    for (int i = 0; i < 3; i++)
        if (a->mr[i])
            fi_close(&a->mr[i]->fid);
    free(a);
}

tern_status_t tern_ofi_atomic(tern_tl_t *tl, int peer, int kind, int op, int type,
                              const void *src, const void *compare, void *result, size_t count,
                              uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    if (!tern_ofi_atomic_max(tl, kind, op, type) || !count)
        return TERN_ERR_NOT_SUPPORTED;
    if (tl->peers[peer].failed)
        return TERN_ERR_PEER;
    if (!tl->peers[peer].resolved) {
        tern_status_t st = tern_ofi_resolve(tl, peer);
        if (st != TERN_OK)
            return st;
    }
    ofi_atomic_t *a = calloc(1, sizeof *a);
    if (!a)
        return TERN_ERR_NOMEM;
    a->op.kind = OFI_OP_ATOMIC;
    a->op.peer = peer;
    a->comp = comp;
    int rail = tl->peers[peer].rail;
    a->op.rail = rail;
    ofi_rail_t *rl = &tl->rails[rail];
    size_t bytes = count * TYPE_BYTES[type];
    void *desc[3] = {0};
    const void *bufs[3] = {src, compare, result};
    for (int i = 0; i < 3; i++) {
        if (!bufs[i])
            continue;
        tern_status_t st = tern_ofi_reg_local(tl, rail, (void *)bufs[i], bytes,
                                              FI_READ | FI_WRITE, &a->mr[i], &desc[i]);
        if (st != TERN_OK) {
            atomic_release(a);
            return st;
        }
    }
    uint64_t key = rkey->words[tl->rkey_key_words > 1 ? rail : 0];
    /* Without FI_MR_VIRT_ADDR the address is an offset into the registration. */
    uint64_t addr = tl->mr_virt_addr ? remote_addr : remote_addr - rkey->words[tl->rkey_key_words];
    /* READ takes no operand: the result buffer stands in for it. */
    struct fi_ioc iov = {(void *)(src ? src : result), count};
    struct fi_ioc cmp = {(void *)compare, count}, res = {result, count};
    struct fi_rma_ioc riov = {addr, count, key};
    struct fi_msg_atomic msg = {.msg_iov = &iov, .desc = src ? &desc[0] : &desc[2], .iov_count = 1,
                                .addr = tl->peers[peer].addr[rail], .rma_iov = &riov,
                                .rma_iov_count = 1, .datatype = TYPES[type], .op = OPS[op],
                                .context = &a->op.ctx};
    ssize_t ret;
    if (kind == TERN_TL_ATOMIC_PLAIN)
        /* Delivery complete: the completion says it is applied (an epoch's
         * end follows it). */
        ret = fi_atomicmsg(rl->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    else if (kind == TERN_TL_ATOMIC_FETCH)
        ret = fi_fetch_atomicmsg(rl->ep, &msg, &res, &desc[2], 1, FI_COMPLETION);
    else
        ret = fi_compare_atomicmsg(rl->ep, &msg, &cmp, &desc[1], 1, &res, &desc[2], 1,
                                   FI_COMPLETION);
    if (ret == -FI_EAGAIN) {
        atomic_release(a);
        return TERN_ERR_AGAIN;
    }
    if (ret) {
        atomic_release(a);
        tern_ofi_peer_error(tl, peer, TERN_ERR_PEER, "ofi: issuing a remote atomic failed: %s",
                            fi_strerror((int)-ret));
        return TERN_ERR_PEER;
    }
    tl->rma_in_flight++;
    return TERN_OK;
}

void tern_ofi_atomic_done(tern_tl_t *tl, ofi_op_t *op, int failed)
{
    ofi_atomic_t *a = (ofi_atomic_t *)op;
    tern_tl_comp_t *comp = a->comp;
    int peer_failed = failed || tl->peers[op->peer].failed;
    tl->rma_in_flight--;
    atomic_release(a);
    /* A failed peer's operations end without a callback (transport.h). */
    if (!peer_failed)
        comp->cb(comp, TERN_OK);
}

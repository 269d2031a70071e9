/* The reductions of the shm collectives: one step per slot-sized chunk.
 * Every rank copies its chunk into its slot and stores enter; then either
 * the taker(s) fold all the slots into their result (small chunks), or
 * every rank folds its slice of the chunk into the shared result slot,
 * stores reduced, and the taker(s) copy the result out once every slice is
 * there. Folds run from the right, x_0 op (x_1 op (... op x_(p-1))), so a
 * non-commutative op keeps rank order. */
#include "core/coll/shm_reduce.h"
#include "core/datatype/op.h"

#include <string.h>

/* dst = x_0 op ... op x_(p-1) over count elements at off_bytes of each
 * rank's slot of step n. */
static tern_status_t fold(tern_shm_region_t *reg, int p, uint64_t n, size_t off_bytes, size_t count,
                          const tern_coll_args_t *a, char *dst)
{
    if (count == 0)
        return TERN_OK;
    memcpy(dst, tern_shm_slot(reg, p - 1, n) + off_bytes, count * a->esz);
    for (int q = p - 2; q >= 0; q--) {
        tern_status_t st = tern_op_apply(a->op, a->dt, tern_shm_slot(reg, q, n) + off_bytes, dst, count);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

/* One chunk: elements [first, first + count) of the vector, step n. */
static tern_status_t chunk(tern_shm_region_t *reg, const tern_coll_args_t *a, int root,
                           size_t first, size_t count, uint64_t n)
{
    int p = a->comm->size, me = a->comm->rank;
    int takes = root < 0 || root == me;
    size_t esz = a->esz, bytes = count * esz;
    char *out = takes ? (char *)a->rbuf + first * esz : NULL;
    tern_status_t st = tern_shm_wait_slot_free(reg, n);
    if (st != TERN_OK)
        return st;
    /* In place, sbuf is rbuf: copied out before any result lands there. */
    memcpy(tern_shm_slot(reg, me, n), (const char *)a->sbuf + first * esz, bytes);
    tern_shm_set(reg, TERN_SHM_ENTER, n);
    if (bytes < TERN_SHM_PARALLEL_MIN || count < (size_t)p) {
        if (takes) {
            st = tern_shm_wait(reg, TERN_SHM_ENTER, -1, n);
            if (st == TERN_OK)
                st = fold(reg, p, n, 0, count, a, out);
        }
        return st;
    }
    st = tern_shm_wait(reg, TERN_SHM_ENTER, -1, n);
    if (st != TERN_OK)
        return st;
    size_t lo = count * (size_t)me / (size_t)p, hi = count * (size_t)(me + 1) / (size_t)p;
    char *res = tern_shm_result(reg, n);
    st = fold(reg, p, n, lo * esz, hi - lo, a, res + lo * esz);
    if (st != TERN_OK)
        return st;
    tern_shm_set(reg, TERN_SHM_REDUCED, n);
    if (takes) {
        st = tern_shm_wait(reg, TERN_SHM_REDUCED, -1, n);
        if (st == TERN_OK)
            memcpy(out, res, bytes);
    }
    return st;
}

tern_status_t tern_shm_reduce_chunks(tern_shm_region_t *reg, const tern_coll_args_t *a, int root)
{
    size_t per = tern_shm_slot_bytes(reg) / a->esz; /* >= 1: selection checked esz */
    tern_status_t st = TERN_OK;
    for (size_t first = 0; first < a->count && st == TERN_OK; first += per) {
        size_t count = a->count - first < per ? a->count - first : per;
        uint64_t n = tern_shm_next_step(reg);
        st = chunk(reg, a, root, first, count, n);
        tern_shm_set(reg, TERN_SHM_LEAVE, n);
    }
    return st;
}

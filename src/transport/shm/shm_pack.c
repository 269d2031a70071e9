/* Packed small messages in the shm ring: opening and closing a pack cell
 * (shm_pack.h); the per-message path is inline there. */
#include "transport/shm/shm_pack.h"

void tern_shm_pack_close(tern_shm_pack_out_t *pk)
{
    uint64_t word = pk->tag | (uint64_t)TERN_SHM_PACK_END << 32;
    __atomic_store_n((uint64_t *)(pk->cell + pk->off), word, __ATOMIC_RELEASE);
    pk->cell = NULL;
}

void *tern_shm_pack_open(tern_shm_pack_out_t *pk, tern_shm_ring_t *ring, void *payload, size_t len)
{
    if (pk->cell != NULL)
        tern_shm_pack_close(pk);
    pk->cell = (char *)payload - TERN_SHM_CELL_HDR;
    pk->off = TERN_SHM_PACK_FIRST;
    pk->next = TERN_SHM_PACK_FIRST + tern_shm_pack_entry(len);
    pk->tag = tern_shm_pack_tag(ring->index + 1);
    pk->pend = pk->cell + TERN_SHM_PACK_FIRST;
    return pk->pend + TERN_SHM_PACK_WORD;
}

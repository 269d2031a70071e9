/* Tern's registration cache for the ofi transport (ofi_regcache.c says how
 * it is kept valid). */
#ifndef TERN_TRANSPORT_OFI_REGCACHE_H
#define TERN_TRANSPORT_OFI_REGCACHE_H

#include "transport/ofi/ofi_internal.h"

/* [base, end) registered on every rail's domain. Remote addresses are
 * offsets from base when the provider lacks FI_MR_VIRT_ADDR. */
typedef struct ofi_mr_entry {
    struct fid_mr *mr[OFI_RAILS_MAX];
    uintptr_t base, end;
    /* The rest belongs to ofi_regcache.c (under its mutex). */
    int refs;
    int cached;                               /* findable and watched by the monitor */
    struct ofi_mr_entry *prev, *next;         /* the cache's list, or the dead list */
    struct ofi_mr_entry *lru_prev, *lru_next; /* unused cached entries, oldest first */
    struct ofi_mr_entry *inval_next;          /* monitor's scratch while invalidating */
} ofi_mr_entry_t;

/* A registration covering [buf, buf + len), with a reference for the
 * caller: a cached one when there is one, else a new one (cached when the
 * cache is on and the monitor can watch the range). */
tern_status_t tern_ofi_regcache_get(tern_tl_t *tl, void *buf, size_t len, ofi_mr_entry_t **e_p);
/* Drops the reference; an unused entry stays cached (LRU) or is closed. */
void tern_ofi_regcache_put(tern_tl_t *tl, ofi_mr_entry_t *e);
/* Stops the monitor, closes every registration, prints the statistics
 * (TERN_OFI_REGCACHE_STATS). Call after every put. */
void tern_ofi_regcache_finalize(tern_tl_t *tl);

#endif

/* Address exchange and connection set-up, after Xu, Abduljabbar and Panda,
 * "Optimized all-to-all connection establishment for high-performance MPI
 * libraries over InfiniBand" (OFA 2024): each rank publishes ONE compact blob
 * (its endpoint name) under one PMI key, so the key-value space holds N
 * entries, not N^2 per-pair ones; peers' blobs are fetched in rank order.
 *
 * TERN_CONNECT=all: at MPI_Init every address is fetched and inserted into
 * the address vector in one fi_av_insert batch, then one HELLO goes to every
 * peer at once (all connections are set up overlapped, as many in flight as
 * the provider's queue allows) and each rank waits for every peer's HELLO.
 * TERN_CONNECT=lazy: a peer's blob is fetched and inserted at the first
 * message to it; the provider connects on that message. */
#include "transport/ofi/ofi_internal.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFI_ADDR_MAX 256

static void key_of(int rank, char *key, size_t n) { snprintf(key, n, "tern-ofi-%d", rank); }

tern_status_t tern_ofi_publish_address(tern_tl_t *tl)
{
    unsigned char name[OFI_ADDR_MAX];
    size_t len = sizeof name;
    int ret = fi_getname(&tl->ep->fid, name, &len);
    if (ret) {
        tern_error("ofi: fi_getname failed: %s", fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    tl->addr_len = len;
    char hex[2 * OFI_ADDR_MAX + 1];
    for (size_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", name[i]);
    char key[64];
    key_of(tl->rank, key, sizeof key);
    tern_status_t st = tern_pmi_put(key, hex);
    if (st == TERN_OK)
        st = tern_pmi_fence();
    return st;
}

static tern_status_t fetch_address(tern_tl_t *tl, int peer, unsigned char *out)
{
    char key[64], hex[2 * OFI_ADDR_MAX + 1];
    key_of(peer, key, sizeof key);
    tern_status_t st = tern_pmi_get(key, hex, sizeof hex);
    if (st != TERN_OK) {
        tern_error("ofi: no network address for rank %d from the process manager", peer);
        return st;
    }
    if (strlen(hex) != 2 * tl->addr_len) {
        tern_error("ofi: rank %d published a %zu-byte address, expected %zu (mixed providers? "
                   "set TERN_OFI_PROVIDER alike on every host)",
                   peer, strlen(hex) / 2, tl->addr_len);
        return TERN_ERR_PEER;
    }
    for (size_t i = 0; i < tl->addr_len; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return TERN_ERR_PEER;
        out[i] = (unsigned char)v;
    }
    return TERN_OK;
}

tern_status_t tern_ofi_resolve(tern_tl_t *tl, int peer)
{
    unsigned char name[OFI_ADDR_MAX];
    tern_status_t st = fetch_address(tl, peer, name);
    if (st != TERN_OK)
        return st;
    fi_addr_t a;
    if (fi_av_insert(tl->av, name, 1, &a, 0, NULL) != 1) {
        tern_error("ofi: cannot insert the address of rank %d", peer);
        return TERN_ERR_PEER;
    }
    tl->peers[peer].addr = a;
    tl->peers[peer].resolved = 1;
    return TERN_OK;
}

tern_status_t tern_ofi_connect_all(tern_tl_t *tl)
{
    int n = tl->size;
    unsigned char *names = malloc((size_t)n * tl->addr_len);
    fi_addr_t *addrs = malloc((size_t)n * sizeof *addrs);
    int *ranks = malloc((size_t)n * sizeof *ranks);
    tern_status_t st = TERN_OK;
    if (!names || !addrs || !ranks) {
        st = TERN_ERR_NOMEM;
        goto out;
    }
    /* Peers in rank order starting after ours, so ranks do not all hit the
     * same peer first. */
    int count = 0;
    for (int k = 1; k < n; k++) {
        int peer = (tl->rank + k) % n;
        if (tl->peers[peer].resolved || !tl->peers[peer].net)
            continue;
        if ((st = fetch_address(tl, peer, names + (size_t)count * tl->addr_len)) != TERN_OK)
            goto out;
        ranks[count++] = peer;
    }
    if (count && fi_av_insert(tl->av, names, (size_t)count, addrs, 0, NULL) != count) {
        tern_error("ofi: inserting %d peer addresses failed", count);
        st = TERN_ERR_PEER;
        goto out;
    }
    for (int i = 0; i < count; i++) {
        tl->peers[ranks[i]].addr = addrs[i];
        tl->peers[ranks[i]].resolved = 1;
    }
    /* One HELLO per peer, all in flight together; then wait for everyone's. */
    int next = 0, missing;
    do {
        while (next < count) {
            int peer = ranks[next];
            tern_status_t s = tern_ofi_send_ctrl(tl, peer, OFI_MSG_HELLO);
            if (s == TERN_ERR_AGAIN)
                break;
            if (s != TERN_OK) {
                st = s;
                goto out;
            }
            next++;
        }
        tern_ofi_progress(tl);
        missing = 0;
        for (int r = 0; r < n; r++)
            if (tl->peers[r].net && !tl->peers[r].hello_recvd)
                missing++;
    } while (next < count || missing);
out:
    free(names);
    free(addrs);
    free(ranks);
    return st;
}

/* Address exchange and connection set-up, after Xu, Abduljabbar and Panda,
 * "Optimized all-to-all connection establishment for high-performance MPI
 * libraries over InfiniBand" (OFA 2024): each rank publishes ONE compact blob
 * (its endpoint names, one per rail) under one PMI key, so the key-value
 * space holds N entries, not N^2 per-pair ones; peers' blobs are fetched in
 * rank order. The blob, in hex: the rail count, then per rail the name's
 * length and the name, then the process's pid (4 bytes) and host identity
 * (8 bytes: its boot id and pid namespace, 0 unknown), so that a peer on
 * the same host can tell whether the process is still there (watch_peers),
 * then its liveness port for peers on other hosts (ofi_live.c: family,
 * port, address, host name; a 0 byte when it has none).
 *
 * TERN_CONNECT=all: at MPI_Init every address is fetched and inserted into
 * each rail's address vector in one fi_av_insert batch, then one HELLO per
 * rail goes to every peer at once (all connections are set up overlapped,
 * as many in flight as the provider's queue allows) and each rank waits for
 * every peer's HELLO on every rail. TERN_CONNECT=lazy: a peer's blob is
 * fetched and inserted at the first message to it; the provider connects
 * each rail on its first use. */
#include "transport/ofi/ofi_internal.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest endpoint name; the blob is at most 1 + rails x (1 + this) + the
 * process identity. */
#define OFI_ADDR_MAX 255
#define OFI_IDENT_LEN 12
#define OFI_BLOB_MAX (1 + OFI_RAILS_MAX * (1 + OFI_ADDR_MAX) + OFI_IDENT_LEN + OFI_LIVE_MAX)

/* This host's boot (the kernel's random boot id) and pid namespace, hashed;
 * 0 when either cannot be read: then no peer watches our pid. Two processes
 * with the same identity see the same pids. */
static uint64_t host_identity(void)
{
    char boot[64] = {0};
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return 0;
    size_t n = fread(boot, 1, sizeof boot - 1, f);
    fclose(f);
    struct stat ns;
    if (n < 16 || stat("/proc/self/ns/pid", &ns) != 0)
        return 0;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)boot[i]) * 0x100000001b3ull;
    h = (h ^ (uint64_t)ns.st_dev) * 0x100000001b3ull;
    h = (h ^ (uint64_t)ns.st_ino) * 0x100000001b3ull;
    return h ? h : 1;
}

static void key_of(int rank, char *key, size_t n) { snprintf(key, n, "tern-ofi-%d", rank); }

tern_status_t tern_ofi_publish_address(tern_tl_t *tl)
{
    unsigned char blob[OFI_BLOB_MAX];
    size_t used = 0;
    blob[used++] = (unsigned char)tl->n_rails;
    for (int r = 0; r < tl->n_rails; r++) {
        size_t len = OFI_ADDR_MAX;
        int ret = fi_getname(&tl->rails[r].ep->fid, blob + used + 1, &len);
        if (ret) {
            tern_error("ofi: fi_getname on rail %d failed: %s", r, fi_strerror(-ret));
            return TERN_ERR_IO;
        }
        blob[used] = (unsigned char)len;
        used += 1 + len;
        tl->rails[r].addr_len = len;
    }
    tl->host_id = host_identity();
    uint32_t pid = tl->host_id ? (uint32_t)getpid() : 0;
    memcpy(blob + used, &pid, 4);
    memcpy(blob + used + 4, &tl->host_id, 8);
    used += OFI_IDENT_LEN;
    tern_ofi_live_open(tl);
    used += tern_ofi_live_blob(tl, blob + used);
    char hex[2 * OFI_BLOB_MAX + 1];
    for (size_t i = 0; i < used; i++)
        snprintf(hex + 2 * i, 3, "%02x", blob[i]);
    char key[64];
    key_of(tl->rank, key, sizeof key);
    tern_status_t st = tern_pmi_put(key, hex);
    if (st == TERN_OK)
        st = tern_pmi_fence();
    return st;
}

/* Fetches a peer's blob; rail r's endpoint name lands at
 * out + r * stride. */
static tern_status_t fetch_address(tern_tl_t *tl, int peer, unsigned char *out, size_t stride)
{
    char key[64], hex[2 * OFI_BLOB_MAX + 1];
    key_of(peer, key, sizeof key);
    tern_status_t st = tern_pmi_get(key, hex, sizeof hex);
    if (st != TERN_OK) {
        tern_error("ofi: no network address for rank %d from the process manager", peer);
        return st;
    }
    unsigned char blob[OFI_BLOB_MAX];
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return TERN_ERR_PEER;
        blob[i] = (unsigned char)v;
    }
    if (n < 1 || blob[0] != tl->n_rails) {
        tern_error("ofi: rank %d opened %d network rails, this rank %d: set TERN_OFI_RAILS alike "
                   "on every host", peer, n ? blob[0] : 0, tl->n_rails);
        return TERN_ERR_PEER;
    }
    size_t at = 1;
    for (int r = 0; r < tl->n_rails; r++) {
        if (at >= n || blob[at] != tl->rails[r].addr_len || at + 1 + blob[at] > n) {
            tern_error("ofi: rank %d published a rail %d address of %d bytes, expected %zu "
                       "(mixed providers? set TERN_OFI_PROVIDER alike on every host)",
                       peer, r, at < n ? blob[at] : 0, tl->rails[r].addr_len);
            return TERN_ERR_PEER;
        }
        memcpy(out + (size_t)r * stride, blob + at + 1, blob[at]);
        at += 1 + blob[at];
    }
    if (at + OFI_IDENT_LEN <= n) {
        uint32_t pid;
        uint64_t host;
        memcpy(&pid, blob + at, 4);
        memcpy(&host, blob + at + 4, 8);
        tl->peers[peer].pid = host && host == tl->host_id && pid <= INT32_MAX ? (int)pid : 0;
        tern_ofi_live_parse(tl, peer, blob + at + OFI_IDENT_LEN, n - at - OFI_IDENT_LEN);
    }
    return TERN_OK;
}

tern_status_t tern_ofi_fetch_live(tern_tl_t *tl, int peer)
{
    unsigned char names[OFI_RAILS_MAX][OFI_ADDR_MAX];
    tern_status_t st = fetch_address(tl, peer, &names[0][0], OFI_ADDR_MAX);
    tl->peers[peer].live_known = 1;
    return st;
}

tern_status_t tern_ofi_resolve(tern_tl_t *tl, int peer)
{
    unsigned char names[OFI_RAILS_MAX][OFI_ADDR_MAX];
    tern_status_t st = fetch_address(tl, peer, &names[0][0], OFI_ADDR_MAX);
    if (st != TERN_OK)
        return st;
    for (int r = 0; r < tl->n_rails; r++) {
        if (fi_av_insert(tl->rails[r].av, names[r], 1, &tl->peers[peer].addr[r], 0, NULL) != 1) {
            tern_error("ofi: cannot insert the rail %d address of rank %d", r, peer);
            return TERN_ERR_PEER;
        }
    }
    tl->peers[peer].resolved = 1;
    return TERN_OK;
}

tern_status_t tern_ofi_connect_all(tern_tl_t *tl)
{
    int n = tl->size, rails = tl->n_rails;
    /* Rail r's names at names + r * n * OFI_ADDR_MAX, packed per rail for
     * fi_av_insert. */
    unsigned char *fetched = malloc((size_t)rails * OFI_ADDR_MAX);
    unsigned char *names = malloc((size_t)rails * (size_t)n * OFI_ADDR_MAX);
    fi_addr_t *addrs = malloc((size_t)n * sizeof *addrs);
    int *ranks = malloc((size_t)n * sizeof *ranks);
    tern_status_t st = TERN_OK;
    if (!fetched || !names || !addrs || !ranks) {
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
        if ((st = fetch_address(tl, peer, fetched, OFI_ADDR_MAX)) != TERN_OK)
            goto out;
        for (int r = 0; r < rails; r++)
            memcpy(names + ((size_t)r * n + count) * tl->rails[r].addr_len,
                   fetched + (size_t)r * OFI_ADDR_MAX, tl->rails[r].addr_len);
        ranks[count++] = peer;
    }
    for (int r = 0; r < rails && count; r++) {
        if (fi_av_insert(tl->rails[r].av, names + (size_t)r * n * tl->rails[r].addr_len,
                         (size_t)count, addrs, 0, NULL) != count) {
            tern_error("ofi: inserting %d peer addresses on rail %d failed", count, r);
            st = TERN_ERR_PEER;
            goto out;
        }
        for (int i = 0; i < count; i++)
            tl->peers[ranks[i]].addr[r] = addrs[i];
    }
    for (int i = 0; i < count; i++)
        tl->peers[ranks[i]].resolved = 1;
    /* One HELLO per peer and rail, all in flight together; then wait for
     * everyone's on every rail. */
    int next = 0, missing;
    do {
        while (next < count * rails) {
            int peer = ranks[next / rails];
            tern_status_t s = tern_ofi_send_ctrl(tl, peer, next % rails, OFI_MSG_HELLO);
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
            if (tl->peers[r].net && tl->peers[r].hellos_recvd < rails)
                missing++;
    } while (next < count * rails || missing);
out:
    free(fetched);
    free(names);
    free(addrs);
    free(ranks);
    return st;
}

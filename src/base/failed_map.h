/* The launcher's word on dead ranks, shared with the ranks of a host: a
 * file /dev/shm/tern-<job id>-failed that a multi-host mpiexec's proxy
 * makes before it starts its ranks (--ft only). It holds one byte per
 * world rank, set to 1 when the root reports that rank dead (it died on
 * any host, or its host or link was lost), and a generation bumped after
 * each set. A rank reads the generation while it waits (peer_failure.c,
 * every TERN_PEER_CHECK_MS) and scans the bytes when it moved, so a death
 * on another host reaches it within one check after its proxy hears.
 * Several proxies sharing one /dev/shm (network namespaces on one machine)
 * share the file: writes are idempotent. The launcher's sweep of the job's
 * /dev/shm names removes it. */
#ifndef TERN_BASE_FAILED_MAP_H
#define TERN_BASE_FAILED_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TERN_FAILED_MAP_MAGIC 0x6e726574u /* "tern" */

typedef struct tern_failed_map {
    uint32_t magic;
    uint32_t size;         /* world ranks */
    uint64_t gen;          /* atomic: bumped (release) after each rank set */
    unsigned char dead[];  /* [world rank]: 1 once reported dead */
} tern_failed_map_t;

static inline size_t tern_failed_map_bytes(int size)
{
    return sizeof(tern_failed_map_t) + (size_t)size;
}

/* The file's path, or -1 when it does not fit. */
static inline int tern_failed_map_path(char *buf, size_t len, const char *job_id)
{
    int n = snprintf(buf, len, "/dev/shm/tern-%s-failed", job_id);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

#endif

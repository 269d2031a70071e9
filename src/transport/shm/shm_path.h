/* Which copy serves a large message between two local ranks: the two-copy
 * bulk pipeline (shm.c), which wins when both cores share a cache, or the
 * single CMA copy, which wins when they do not (different packages or NUMA
 * nodes, no shared L3: every line of a chunk the sender just wrote crosses
 * the interconnect to the reader, docs/performance.md). TERN_SHM_LARGE_PATH
 * decides: pipeline, cma, auto (the hwloc places of the two ranks) or probe
 * (auto, and a cache-line ping-pong at start-up between local ranks 0 and
 * 1 that finds cores placed far apart by a VM's host, which hwloc cannot
 * see). */
#ifndef TERN_TRANSPORT_SHM_PATH_H
#define TERN_TRANSPORT_SHM_PATH_H

#include <stdint.h>

/* Where a rank runs: hwloc logical indexes of the package, NUMA node and
 * L3 cache that hold every CPU it may run on; -1 when its binding spans
 * several (an unbound rank) or the machine has none (l3). */
typedef struct {
    int32_t package, numa, l3;
} tern_shm_place_t;

/* This rank's place; all -1 when it is not bound to a strict subset of the
 * CPUs (hwloc is loaded only then). */
void tern_shm_place_self(tern_shm_place_t *p);

/* 1: the two places share no package, NUMA node or L3 (single copy wins);
 * 0: they share them, or it is not known. */
int tern_shm_places_far(const tern_shm_place_t *a, const tern_shm_place_t *b);

/* The start-up probe, run by every local rank after the segment is
 * attached: local ranks 0 and 1 ping-pong one cache line (line: 64 bytes of
 * the segment, zeroed) and local rank 0 publishes the verdict; the others
 * wait for it (bounded). Returns 1 far (round trip above far_ns), 0 near,
 * -1 unknown (a rank did not answer in time); *rtt_ns the round trip
 * measured (0 if none). */
int tern_shm_probe_far(void *line, int local_rank, double far_ns, double *rtt_ns);

#endif

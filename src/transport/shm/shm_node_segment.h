/* The shm transport's segment: one per node, named
 * /tern-<job_id>-shm-<node>, over base/shm_segment.h.
 *
 * tern_shm_segment_setup is collective over the whole job (it calls
 * tern_pmi_fence exactly twice on every rank, whatever happens):
 *   local rank 0: the create callback (tern_shm_segment_create: shm_open
 *   (O_CREAT|O_EXCL), posix_fallocate, mmap; then the format), which may
 *   also decide that the node uses no segment; rank 0 publishes the outcome
 *   under the PMI key tern-shm-<node> ("mapped", "none" or "failed-<status>")
 *   fence
 *   other local ranks: read the outcome; "mapped": shm_open, mmap (the file
 *   kept open, tern_shm_segment_reserve); "none":
 *   map nothing; "failed-": return that status without a word (rank 0 has
 *   said why: one message per node, not one misleading shm_open error per
 *   rank)
 *   every local rank: attached callback (e.g. publish its pid)
 *   fence
 *   local rank 0: shm_unlink, so that nothing is left in /dev/shm even if a
 *   rank is later killed. (The launcher also sweeps /dev/shm/tern-<job_id>-*.)
 * A rank alone on its node still fences twice but maps nothing. */
#ifndef TERN_TRANSPORT_SHM_SHM_NODE_SEGMENT_H
#define TERN_TRANSPORT_SHM_SHM_NODE_SEGMENT_H

#include "base/shm_segment.h"
#include "base/status.h"
#include "transport/transport.h"
#include <stddef.h>

/* Writes "/tern-<job_id>-shm-<node>" (characters of job_id other than
 * [A-Za-z0-9._-] become '_'). TERN_ERR_ARG if it does not fit. */
tern_status_t tern_shm_segment_name(char *buf, size_t len, const char *job_id, int node);

typedef void (*tern_shm_segment_fn)(void *base, size_t size, void *arg);
/* Local rank 0's part: TERN_OK with seg mapped and formatted, TERN_OK with
 * seg->base NULL (the node uses no segment), or an error it has reported. */
typedef tern_status_t (*tern_shm_segment_create_fn)(tern_shm_segment_t *seg, const char *name, void *arg);

/* The collective sequence above. create runs in local rank 0 before the
 * first fence, attached in every mapping rank before the second. Leaves
 * *seg unmapped (base NULL) for a rank alone on its node and when rank 0
 * chose no segment. On error every rank still fences twice; *seg is
 * unmapped. */
tern_status_t tern_shm_segment_setup(const tern_tl_params_t *params, tern_shm_segment_create_fn create,
                                     tern_shm_segment_fn attached, void *arg, tern_shm_segment_t *seg);

#endif

/* The node's shared-memory segment of the shm transport: its name and
 * its collective set-up over PMI (shm_node_segment.h). */
#include "transport/shm/shm_node_segment.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <stdio.h>
#include <string.h>

tern_status_t tern_shm_segment_name(char *buf, size_t len, const char *job_id, int node)
{
    int n = snprintf(buf, len, "/tern-%s-shm-%d", job_id ? job_id : "nojob", node);
    if (n < 0 || (size_t)n >= len || n > 255) {
        tern_error("shared-memory segment name for job %s is too long", job_id);
        return TERN_ERR_ARG;
    }
    for (char *p = buf + 1; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-'))
            *p = '_';
    }
    return TERN_OK;
}

/* Local rank 0's outcome, for the node's other ranks. */
static tern_status_t outcome_key(char *key, size_t len, int node)
{
    int n = snprintf(key, len, "tern-shm-%d", node);
    return n > 0 && (size_t)n < len ? TERN_OK : TERN_ERR_INTERNAL;
}

static tern_status_t outcome_publish(int node, tern_status_t st, const tern_shm_segment_t *seg)
{
    char key[32], value[32];
    tern_status_t kst = outcome_key(key, sizeof key, node);
    if (kst != TERN_OK)
        return kst;
    if (st != TERN_OK)
        snprintf(value, sizeof value, "failed-%d", (int)st);
    else
        snprintf(value, sizeof value, "%s", seg->base != NULL ? "mapped" : "none");
    return tern_pmi_put(key, value);
}

/* TERN_OK and *mapped: attach; TERN_OK and !*mapped: no segment; else the
 * status local rank 0 failed with (it said why). */
static tern_status_t outcome_read(int node, int *mapped)
{
    char key[32], value[32];
    tern_status_t st = outcome_key(key, sizeof key, node);
    if (st == TERN_OK)
        st = tern_pmi_get(key, value, sizeof value);
    if (st != TERN_OK) {
        tern_error("shared memory: cannot read local rank 0's outcome (PMI key %s): %s", key,
                   tern_status_string(st));
        return st;
    }
    *mapped = strcmp(value, "mapped") == 0;
    if (*mapped || strcmp(value, "none") == 0)
        return TERN_OK;
    int code;
    if (sscanf(value, "failed-%d", &code) == 1 && code > TERN_OK && code < TERN_STATUS_COUNT) {
        /* Rank 0 has said why; a word here, not a misleading shm_open error. */
        return tern_status_detail((tern_status_t)code,
                                  "local rank 0 could not set up this node's shared-memory segment (%s; its "
                                  "message says why)",
                                  tern_status_string((tern_status_t)code));
    }
    tern_error("shared memory: unexpected outcome '%s' under PMI key %s", value, key);
    return TERN_ERR_INTERNAL;
}

tern_status_t tern_shm_segment_setup(const tern_tl_params_t *params, tern_shm_segment_create_fn create,
                                     tern_shm_segment_fn attached, void *arg, tern_shm_segment_t *seg)
{
    char name[256];
    tern_status_t st = TERN_OK, fst;
    int use = params->local_size > 1, mapped = 0;

    memset(seg, 0, sizeof *seg);
    if (use)
        st = tern_shm_segment_name(name, sizeof name, params->job_id, params->node);
    if (use && params->local_rank == 0) {
        if (st == TERN_OK)
            st = create != NULL ? create(seg, name, arg) : TERN_ERR_ARG;
        tern_status_t pst = outcome_publish(params->node, st, seg);
        if (st == TERN_OK)
            st = pst;
        mapped = seg->base != NULL;
    }

    fst = tern_pmi_fence();
    if (fst != TERN_OK && st == TERN_OK)
        st = fst;

    if (use && st == TERN_OK && params->local_rank != 0) {
        st = outcome_read(params->node, &mapped);
        if (st == TERN_OK && mapped)
            st = tern_shm_segment_attach_open(seg, name, NULL); /* open: pages reserved later */
    }
    if (use && st == TERN_OK && mapped && attached != NULL)
        attached(seg->base, seg->size, arg);

    fst = tern_pmi_fence();
    if (fst != TERN_OK && st == TERN_OK)
        st = fst;

    /* Unlink at once, whatever happened, so nothing outlives the job. */
    tern_shm_segment_unlink(seg);
    if (st != TERN_OK)
        tern_shm_segment_detach(seg);
    return st;
}

/* PMIx client through the real libpmix: Slurm's srun --mpi=pmix and Open
 * MPI's launchers. Built only when pkg-config finds pmix
 * (src/CMakeLists.txt). Keys are put with global scope and committed at the
 * fence, whose collective gathers every rank's data, so later gets are
 * answered from the local copy. */
#include "pmi/pmi_flavour.h"
#include "base/log.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t me;
static tern_pmi_info_t *info;

/* A job-level value (rank wildcard) as a uint32. */
static pmix_status_t job_u32(const char *key, uint32_t *value_p)
{
    pmix_proc_t job;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&job, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (v->type == PMIX_UINT32)
        *value_p = v->data.uint32;
    else
        rc = PMIX_ERR_TYPE_MISMATCH;
    PMIX_VALUE_RELEASE(v);
    return rc;
}

static tern_status_t pmix_init(tern_pmi_info_t *info_p)
{
    info = info_p;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        tern_error("PMIx: PMIx_Init failed: %s", PMIx_Error_string(rc));
        return TERN_ERR_PMI;
    }
    uint32_t size, x;
    if ((rc = job_u32(PMIX_JOB_SIZE, &size)) != PMIX_SUCCESS) {
        tern_error("PMIx: no job size: %s", PMIx_Error_string(rc));
        PMIx_Finalize(NULL, 0);
        return TERN_ERR_PMI;
    }
    info->rank = (int)me.rank;
    info->size = (int)size;
    info->universe_size = job_u32(PMIX_UNIV_SIZE, &x) == PMIX_SUCCESS ? (int)x : info->size;
    info->appnum = job_u32(PMIX_APPNUM, &x) == PMIX_SUCCESS ? (int)x : 0;
    info->key_max = PMIX_MAX_KEYLEN;
    info->value_max = 1 << 20;
    /* The namespace names shared resources (/dev/shm files): no '/'. */
    snprintf(info->kvsname, sizeof info->kvsname, "%s", me.nspace);
    for (char *c = info->kvsname; *c; c++)
        if (*c == '/' || *c == ' ')
            *c = '_';
    return TERN_OK;
}

static tern_status_t pmix_put(const char *key, const char *value)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) {
        tern_error("PMIx: put of key %s failed: %s", key, PMIx_Error_string(rc));
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t pmix_fence(void)
{
    pmix_status_t rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS) {
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        PMIX_INFO_DESTRUCT(&collect);
    }
    if (rc != PMIX_SUCCESS) {
        tern_error("PMIx: fence failed: %s", PMIx_Error_string(rc));
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

/* The value of key as rank r put it: TERN_ERR_NOT_FOUND if r did not. */
static tern_status_t get_from(pmix_rank_t r, const char *key, char *value, size_t value_len)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_info_t optional;
    bool yes = true;
    PMIX_LOAD_PROCID(&p, me.nspace, r);
    /* After the collecting fence the data is here: do not ask the server. */
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Get(&p, key, &optional, 1, &v);
    PMIX_INFO_DESTRUCT(&optional);
    if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND)
        return TERN_ERR_NOT_FOUND;
    if (rc != PMIX_SUCCESS) {
        tern_error("PMIx: get of key %s from rank %u failed: %s", key, (unsigned)r,
                   PMIx_Error_string(rc));
        return TERN_ERR_PMI;
    }
    tern_status_t st = TERN_OK;
    if (v->type != PMIX_STRING || !v->data.string)
        st = TERN_ERR_PMI;
    else if (strlen(v->data.string) >= value_len)
        st = TERN_ERR_TRUNCATE;
    else
        strcpy(value, v->data.string);
    PMIX_VALUE_RELEASE(v);
    return st;
}

/* PMIx keys belong to the rank that put them, but pmi.h's get names no
 * rank (and Slurm's and Open MPI's servers do not search with
 * PMIX_RANK_UNDEF): look in each rank's data, which the collecting fence
 * made local, starting with the rank that answered last time, since
 * callers tend to read one rank's keys in a row. */
static tern_status_t pmix_get(const char *key, char *value, size_t value_len)
{
    static pmix_rank_t last;
    for (int i = 0; i < info->size; i++) {
        pmix_rank_t r = (pmix_rank_t)(((int)last + i) % info->size);
        tern_status_t st = get_from(r, key, value, value_len);
        if (st != TERN_ERR_NOT_FOUND) {
            if (st == TERN_OK)
                last = r;
            return st;
        }
    }
    return TERN_ERR_NOT_FOUND;
}

/* Each rank's PMIX_NODEID, which the server registers for every process of
 * the job at start-up: local look-ups, no exchange. */
static tern_status_t pmix_node_map(int *node_of_rank)
{
    for (int r = 0; r < info->size; r++) {
        pmix_proc_t p;
        pmix_value_t *v = NULL;
        PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
        pmix_status_t rc = PMIx_Get(&p, PMIX_NODEID, NULL, 0, &v);
        if (rc != PMIX_SUCCESS) {
            tern_debug("PMIx: no node id for rank %d: %s", r, PMIx_Error_string(rc));
            return TERN_ERR_NOT_SUPPORTED;
        }
        int ok = v->type == PMIX_UINT32;
        if (ok)
            node_of_rank[r] = (int)v->data.uint32;
        PMIX_VALUE_RELEASE(v);
        if (!ok)
            return TERN_ERR_NOT_SUPPORTED;
    }
    return TERN_OK;
}

static tern_status_t pmix_finalize(void)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? TERN_OK : TERN_ERR_PMI;
}

static void pmix_abort(int code, const char *msg)
{
    /* Returns once the server has the request (or not at all: it may kill
     * this process first). */
    (void)PMIx_Abort(code, msg, NULL, 0);
}

const tern_pmi_flavour_t tern_pmix_flavour = {
    .name = "pmix",
    .init = pmix_init,
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .node_map = pmix_node_map,
    .finalize = pmix_finalize,
    .abort = pmix_abort,
};

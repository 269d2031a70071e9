/* Windows: the handle table, creation in the four flavors, free, and the
 * queries of the window object (group, name, info, attached memory). */
#include "core/rma/window.h"
#include "core/coll/coll.h"
#include "core/comm/comm_create.h"
#include "core/comm/comm_query.h"
#include "core/group/group.h"
#include "core/info/info.h"
#include "core/rma/rma_am.h"
#include "core/rma/rma_atomic.h"
#include "core/rma/rma_rdma.h"
#include "core/rma/rma_cma.h"
#include "core/rma/rma_path.h"
#include "core/rma/rma_shm.h"
#include "base/pvars.h"
#include "core/rma/rma_sync.h"
#include "core/datatype/datatype.h"
#include "base/config.h"
#include "base/log.h"
#include "core/runtime/handle_table.h"
#include "core/runtime/mem.h"
#include "core/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

tern_handle_table_t tern_win_handles = TERN_HANDLE_TABLE(TERN_KIND_WIN, 8);

static int has_errhandler(const void *obj, const void *arg)
{
    return ((const tern_win_t *)obj)->errhandler == *(const MPI_Errhandler *)arg;
}

int tern_win_errhandler_in_use(MPI_Errhandler eh)
{
    return tern_handle_find(&tern_win_handles, has_errhandler, &eh) != NULL;
}

static void drop(void *obj)
{
    (void)obj; /* windows not freed at MPI_Finalize: their memory goes with the process */
}

void tern_win_finalize(void)
{
    tern_handle_table_clear(&tern_win_handles, drop);
}

/* ------------------------------------------------------------------------ */
/* Hints. */

static const char *const HINTS[] = {"no_locks", "accumulate_ordering", "accumulate_ops",
                                    "same_size", "same_disp_unit", "alloc_shared_noncontig",
                                    "mpi_minimum_memory_alignment"};

static int truth(const char *v)
{
    return v && !strcmp(v, "true");
}

static void apply_info(tern_win_t *w, const tern_info_t *info)
{
    const char *v;
    if (!info)
        return;
    if ((v = tern_info_get(info, "no_locks")))
        w->no_locks = truth(v);
    if ((v = tern_info_get(info, "same_size")))
        w->same_size = truth(v);
    if ((v = tern_info_get(info, "same_disp_unit")))
        w->same_disp_unit = truth(v);
    if ((v = tern_info_get(info, "alloc_shared_noncontig")))
        w->alloc_shared_noncontig = truth(v);
    if ((v = tern_info_get(info, "accumulate_ordering")))
        snprintf(w->accumulate_ordering, sizeof w->accumulate_ordering, "%s", v);
    if ((v = tern_info_get(info, "accumulate_ops")))
        snprintf(w->accumulate_ops, sizeof w->accumulate_ops, "%s", v);
    if ((v = tern_info_get(info, "mpi_minimum_memory_alignment"))) {
        long a = strtol(v, NULL, 10);
        if (a > 0 && !(a & (a - 1)))
            w->min_alignment = (size_t)a;
    }
}

tern_status_t tern_win_set_info(tern_win_t *w, MPI_Info info)
{
    apply_info(w, tern_info_lookup(info));
    return TERN_OK;
}

tern_status_t tern_win_get_info(tern_win_t *w, MPI_Info *info_used)
{
    tern_status_t st = tern_info_create(info_used);
    if (st != TERN_OK)
        return st;
    tern_info_t *i = tern_info_lookup(*info_used);
    char align[32];
    snprintf(align, sizeof align, "%zu", w->min_alignment);
    const char *vals[] = {w->no_locks ? "true" : "false", w->accumulate_ordering,
                          w->accumulate_ops, w->same_size ? "true" : "false",
                          w->same_disp_unit ? "true" : "false",
                          w->alloc_shared_noncontig ? "true" : "false", align};
    for (size_t k = 0; k < sizeof HINTS / sizeof *HINTS && st == TERN_OK; k++)
        st = tern_info_set(i, HINTS[k], vals[k]);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Creation. */

static void win_destroy(tern_win_t *w)
{
    tern_pvar_obj_forget(w); /* a tool's counts of it (base/pvars.h) */
    tern_rma_cma_close(w);
    if (w->handle != MPI_WIN_NULL)
        tern_handle_release(&tern_win_handles, w->handle);
    tern_rma_rdma_close(w);
    tern_rma_atomic_close(w);
    if (w->comm)
        tern_comm_destroy(w->comm);
    free(w->sizes);
    free(w->disp_units);
    free(w->locked);
    free(w->pending);
    free(w->posts_seen);
    free(w->completes_seen);
    free(w->access_group);
    free(w->exposure_group);
    free(w->shm_offsets);
    free(w->route);
    while (w->regions) {
        tern_win_region_t *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    free(w);
}

/* The window object on a duplicate of comm, its peers' sizes and units
 * gathered, served by the engine. */
static tern_status_t win_new(tern_comm_t *comm, MPI_Info info, int flavor, void *base,
                             MPI_Aint size, MPI_Count disp_unit, tern_win_t **out)
{
    if (comm->is_inter)
        return tern_status_detail(TERN_ERR_COMM, "comm is an intercommunicator");
    if (disp_unit <= 0 || disp_unit > INT32_MAX)
        return tern_status_detail(TERN_ERR_DISP, "disp_unit=%lld is not a positive int",
                                  (long long)disp_unit);
    tern_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return TERN_ERR_NOMEM;
    w->handle = MPI_WIN_NULL;
    w->flavor = flavor;
    w->base = base;
    w->win_size = size;
    w->disp_unit = (int)disp_unit;
    w->min_alignment = 64;
    snprintf(w->accumulate_ordering, sizeof w->accumulate_ordering, "rar,raw,war,waw");
    snprintf(w->accumulate_ops, sizeof w->accumulate_ops, "same_op_no_op");
    apply_info(w, tern_info_lookup(info));
    tern_status_t st = tern_comm_dup(comm, &w->comm);
    if (st != TERN_OK) {
        free(w);
        return st;
    }
    w->comm->errhandler = MPI_ERRORS_ARE_FATAL;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->rank = comm->rank;
    w->max_inflight = (unsigned)tern_knob_count(TERN_KNOB_RMA_MAX_INFLIGHT);
    w->max_inflight_bytes = tern_knob_size(TERN_KNOB_RMA_MAX_INFLIGHT_BYTES);
    int n = w->size = comm->size;
    w->sizes = calloc((size_t)n, sizeof *w->sizes);
    w->disp_units = calloc((size_t)n, sizeof *w->disp_units);
    w->locked = calloc((size_t)n, 1);
    w->pending = calloc((size_t)n, sizeof *w->pending);
    w->posts_seen = calloc((size_t)n, sizeof *w->posts_seen);
    w->completes_seen = calloc((size_t)n, sizeof *w->completes_seen);
    w->access_group = calloc((size_t)n, sizeof *w->access_group);
    w->exposure_group = calloc((size_t)n, sizeof *w->exposure_group);
    /* Per rank: size, displacement unit, then its RDMA record (rma_rdma.h)
     * and its atomics record (rma_atomic.h). */
    enum { ATOM = 2 + TERN_RMA_RDMA_WORDS, STRIDE = ATOM + TERN_RMA_ATOMIC_WORDS };
    int64_t *all = calloc((size_t)n * STRIDE, sizeof *all);
    if (!w->sizes || !w->disp_units || !w->locked || !w->pending || !w->posts_seen ||
        !w->completes_seen || !w->access_group || !w->exposure_group || !all) {
        free(all);
        win_destroy(w);
        return TERN_ERR_NOMEM;
    }
    if ((st = tern_rma_am_open(w)) != TERN_OK) {
        free(all);
        win_destroy(w);
        return st;
    }
    int64_t mine[STRIDE] = {size, disp_unit};
    tern_status_t rst = tern_rma_rdma_local(w, (uint64_t *)&mine[2]);
    if (rst == TERN_OK)
        rst = tern_rma_atomic_local(w, (uint64_t *)&mine[ATOM]);
    st = tern_coll_allgather(w->comm, mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE,
                             NULL, 0);
    for (int r = 0; r < n; r++) {
        w->sizes[r] = (MPI_Aint)all[STRIDE * r];
        w->disp_units[r] = (int)all[STRIDE * r + 1];
    }
    if (st == TERN_OK)
        st = rst;
    if (st == TERN_OK)
        st = tern_rma_rdma_remote(w, all + 2, STRIDE);
    if (st == TERN_OK)
        st = tern_rma_atomic_remote(w, all + ATOM, STRIDE);
    free(all);
    if (st == TERN_OK)
        st = tern_rma_route_all(w);
    if (st == TERN_OK)
        st = tern_handle_new(&tern_win_handles, w, &w->handle);
    if (st != TERN_OK) {
        tern_rma_am_close(w);
        win_destroy(w);
        return st;
    }
    *out = w;
    return TERN_OK;
}

tern_status_t tern_win_create(void *base, MPI_Aint size, tern_num_t disp_unit, MPI_Info info,
                              tern_comm_t *comm, MPI_Win *win)
{
    tern_win_t *w;
    tern_status_t st = win_new(comm, info, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit.v, &w);
    if (st != TERN_OK)
        return st;
    st = tern_rma_cma_open(w);
    /* Ranks on one node: shared lock words and accumulate locks (rma_shm.h).
     * Then the network's atomics stay unused: every rank mapped the words
     * (or creation failed everywhere), so all drop them alike, and no
     * location is ever updated both by the NIC and under the shared lock
     * (a CMA refusal falls back to messages, which take that lock). */
    if (st == TERN_OK && tern_comm_one_node(comm) && tern_knob_bool(TERN_KNOB_RMA_DIRECT)) {
        st = tern_rma_shm_map_ctrl(w);
        if (st == TERN_OK && w->ctrl)
            tern_rma_atomic_close(w);
    }
    if (st == TERN_OK)
        st = tern_rma_route_all(w); /* with CMA and the lock words now known */
    if (st != TERN_OK) {
        tern_rma_am_close(w);
        win_destroy(w);
        return st;
    }
    *win = w->handle;
    return TERN_OK;
}

tern_status_t tern_win_allocate(MPI_Aint size, tern_num_t disp_unit, MPI_Info info,
                                tern_comm_t *comm, void *baseptr, MPI_Win *win)
{
    if (tern_comm_one_node(comm) && tern_knob_bool(TERN_KNOB_RMA_DIRECT)) {
        /* The ranks share the memory and access it directly (rma_shm.c). */
        tern_win_t *w;
        tern_status_t st = win_new(comm, info, MPI_WIN_FLAVOR_ALLOCATE, NULL, size,
                                   disp_unit.v, &w);
        if (st != TERN_OK)
            return st;
        if ((st = tern_rma_shm_map(w)) == TERN_OK && (st = tern_rma_route_all(w)) == TERN_OK) {
            *(void **)baseptr = w->base;
            *win = w->handle;
            return TERN_OK;
        }
        tern_rma_am_close(w);
        win_destroy(w);
        /* No memory the ranks can share, as every rank agreed (ranks in pid
         * namespaces of their own cannot open each other's memfd): each
         * rank's memory its own, as across nodes. MPI_Win_allocate_shared
         * has no such way out. */
        if (st != TERN_ERR_RMA_SHARED)
            return st;
        const char *why = tern_status_take_detail(st);
        tern_info("MPI_Win_allocate: the ranks cannot share memory (%s); the window's memory "
                  "is each rank's own, reached by messages", why ? why : "refused");
    }
    void *mem = NULL;
    tern_win_t probe = {.min_alignment = 64};
    apply_info(&probe, tern_info_lookup(info));
    tern_status_t st = tern_mem_alloc(size ? (size_t)size : 1, probe.min_alignment, &mem);
    if (st != TERN_OK)
        return st;
    tern_win_t *w;
    if ((st = win_new(comm, info, MPI_WIN_FLAVOR_ALLOCATE, mem, size, disp_unit.v, &w)) !=
        TERN_OK) {
        tern_mem_free(mem);
        return st;
    }
    w->alloc = mem;
    *(void **)baseptr = mem;
    *win = w->handle;
    return TERN_OK;
}

tern_status_t tern_win_allocate_shared(MPI_Aint size, tern_num_t disp_unit, MPI_Info info,
                                       tern_comm_t *comm, void *baseptr, MPI_Win *win)
{
    if (!tern_comm_one_node(comm))
        return tern_status_detail(TERN_ERR_RMA_SHARED,
                                  "the ranks of comm span several nodes: they cannot share "
                                  "memory");
    tern_win_t *w;
    tern_status_t st = win_new(comm, info, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit.v, &w);
    if (st != TERN_OK)
        return st;
    if ((st = tern_rma_shm_map(w)) != TERN_OK || (st = tern_rma_route_all(w)) != TERN_OK) {
        tern_rma_am_close(w);
        win_destroy(w);
        return st;
    }
    *(void **)baseptr = w->base;
    *win = w->handle;
    return TERN_OK;
}

tern_status_t tern_win_create_dynamic(MPI_Info info, tern_comm_t *comm, MPI_Win *win)
{
    tern_win_t *w;
    tern_status_t st = win_new(comm, info, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, &w);
    if (st == TERN_OK)
        *win = w->handle;
    return st;
}

tern_status_t tern_win_free(tern_win_t *w, MPI_Win *win)
{
    /* A revoked window (ULFM) is freed here alone, whatever epochs it had
     * open: its members cannot meet on it any more. */
    int revoked = w->comm->revoked;
    if (!revoked &&
        (w->n_locked || (w->epoch & (TERN_EPOCH_PSCW | TERN_EPOCH_LOCK_ALL)) || w->n_exposure))
        return tern_status_detail(TERN_ERR_RMA_SYNC,
                                  "an access or exposure epoch is still open on the window");
    tern_status_t st = TERN_OK;
    if (!revoked) {
        st = tern_rma_am_wait_target(w, -1);
        /* No rank frees before every rank's operations are answered. */
        tern_status_t bst = tern_coll_barrier(w->comm);
        if (st == TERN_OK)
            st = bst;
    }
    int err = tern_attrs_delete_all(&w->attrs, w->handle);
    if (err != MPI_SUCCESS && st == TERN_OK)
        st = tern_status_detail(TERN_ERR_CALLBACK,
                                "an attribute delete callback failed with code %d", err);
    tern_rma_am_close(w);
    tern_rma_rdma_close(w); /* before the memory goes */
    tern_rma_atomic_close(w);
    if (w->shm)
        munmap(w->shm, w->shm_bytes);
    if (w->ctrl_bytes)
        munmap(w->ctrl, w->ctrl_bytes);
    if (w->alloc)
        tern_mem_free(w->alloc);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return st;
}

/* ------------------------------------------------------------------------ */
/* Queries. */

tern_status_t tern_win_shared_query(tern_win_t *w, int rank, MPI_Aint *size,
                                    tern_num_ref_t disp_unit, void *baseptr)
{
    /* MPI-4.1: any flavor but dynamic; memory not shared with this
     * process (no mapping of every rank's memory) is size 0, base NULL. */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return tern_status_detail(TERN_ERR_RMA_FLAVOR,
                                  "a window made by MPI_Win_create_dynamic has no shared memory");
    if (rank == MPI_PROC_NULL) {
        /* The first rank with memory. */
        rank = 0;
        for (int r = 0; r < w->size; r++)
            if (w->sizes[r] > 0) {
                rank = r;
                break;
            }
    } else if (rank < 0 || rank >= w->size) {
        return tern_status_detail(TERN_ERR_RANK, "rank=%d is out of range (the window has %d "
                                  "ranks)", rank, w->size);
    }
    *size = w->shm ? w->sizes[rank] : 0;
    tern_num_ref_set(disp_unit, w->disp_units[rank]);
    /* No memory, no address (as MPICH: a rank of size 0 has a NULL base). */
    *(void **)baseptr = *size ? (char *)w->shm + w->shm_offsets[rank] : NULL;
    return TERN_OK;
}

tern_status_t tern_win_attach(tern_win_t *w, void *base, MPI_Aint size)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return tern_status_detail(TERN_ERR_RMA_FLAVOR,
                                  "the window was not made by MPI_Win_create_dynamic");
    if (size > 0 && !base)
        return tern_status_detail(TERN_ERR_RMA_ATTACH, "base is NULL");
    uintptr_t lo = (uintptr_t)base;
    for (tern_win_region_t *r = w->regions; r; r = r->next)
        if (lo < r->base + r->size && r->base < lo + (size_t)size)
            return tern_status_detail(TERN_ERR_RMA_ATTACH,
                                      "[%p, +%lld) overlaps memory attached already", base,
                                      (long long)size);
    tern_win_region_t *r = malloc(sizeof *r);
    if (!r)
        return TERN_ERR_NOMEM;
    *r = (tern_win_region_t){.next = w->regions, .base = lo, .size = (size_t)size};
    tern_status_t st = tern_rma_rdma_attach(w, r);
    if (st != TERN_OK) {
        free(r);
        return st;
    }
    w->regions = r;
    return TERN_OK;
}

tern_status_t tern_win_detach(tern_win_t *w, const void *base)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return tern_status_detail(TERN_ERR_RMA_FLAVOR,
                                  "the window was not made by MPI_Win_create_dynamic");
    for (tern_win_region_t **p = &w->regions; *p; p = &(*p)->next)
        if ((*p)->base == (uintptr_t)base) {
            tern_win_region_t *r = *p;
            *p = r->next;
            tern_rma_rdma_detach(w, r);
            free(r);
            return TERN_OK;
        }
    return tern_status_detail(TERN_ERR_RMA_ATTACH, "%p is not the base of attached memory",
                              base);
}

tern_status_t tern_win_get_group(tern_win_t *w, MPI_Group *group)
{
    int *ranks = malloc((size_t)w->size * sizeof *ranks);
    if (!ranks)
        return TERN_ERR_NOMEM;
    for (int r = 0; r < w->size; r++)
        ranks[r] = tern_win_world(w, r);
    tern_status_t st = tern_group_new(ranks, w->size, group);
    free(ranks);
    return st;
}

tern_status_t tern_win_set_name(tern_win_t *w, const char *name)
{
    snprintf(w->name, sizeof w->name, "%s", name);
    return TERN_OK;
}

tern_status_t tern_win_get_name(tern_win_t *w, char *name, int *resultlen)
{
    /* MPI-4.1: the null handle has a name too (w is NULL for it). */
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w ? w->name : "MPI_WIN_NULL");
    *resultlen = (int)strlen(name);
    return TERN_OK;
}

void tern_win_op_ended(tern_win_t *w, int target, size_t footprint, tern_status_t st,
                       const void *fetched, size_t fetched_bytes, void *result,
                       MPI_Count rcount, MPI_Datatype rtype, tern_req_t *user_req)
{
    if (result) {
        if (st == TERN_OK)
            st = tern_datatype_unpack(fetched, fetched_bytes, result, (size_t)rcount, rtype);
        tern_datatype_release(rtype);
    }
    if (st != TERN_OK && w->deferred == TERN_OK)
        w->deferred = st;
    if (user_req) {
        user_req->error = st;
        tern_req_complete(user_req);
    }
    w->pending[target]--;
    w->n_pending--;
    w->inflight_bytes -= footprint;
}

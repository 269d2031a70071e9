#include "core/comm/comm.h"
#include "core/comm/attr.h"
#include "core/group/group.h"
#include "core/runtime/handle_table.h"
#include "core/info/info.h"
#include "core/comm/ulfm.h"
#include "core/pt2pt/bsend.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <string.h>


static tern_comm_t comm_world, comm_self;
static int self_world_rank;

static tern_handle_table_t comms = TERN_HANDLE_TABLE(TERN_KIND_COMM, 64);

tern_comm_t *tern_comm_lookup(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return comm_world.handle == MPI_COMM_WORLD ? &comm_world : NULL;
    if (comm == MPI_COMM_SELF)
        return comm_self.handle == MPI_COMM_SELF ? &comm_self : NULL;
    return tern_handle_get(&comms, comm);
}

tern_status_t tern_comm_new(const tern_comm_t *parent, uint32_t ctx, int rank, int n,
                            const int *world_ranks, tern_comm_t **comm_p)
{
    tern_comm_t *c = calloc(1, sizeof *c);
    if (!c)
        return TERN_ERR_NOMEM;
    if (world_ranks) {
        c->world_ranks = malloc((size_t)(n ? n : 1) * sizeof(int));
        if (!c->world_ranks) {
            free(c);
            return TERN_ERR_NOMEM;
        }
        memcpy(c->world_ranks, world_ranks, (size_t)n * sizeof(int));
    }
    /* A communicator derived from one made from a session's group uses
     * that session's buffer too (MPI-4.1 3.6). */
    tern_bsend_pool_t *session_pool = parent ? tern_bsend_ctx_fallback(parent->context_id) : NULL;
    tern_status_t st = session_pool ? tern_bsend_ctx_bind(ctx, session_pool) : TERN_OK;
    if (st == TERN_OK)
        st = tern_handle_new(&comms, c, &c->handle);
    if (st != TERN_OK) {
        tern_bsend_ctx_bind(ctx, NULL);
        free(c->world_ranks);
        free(c);
        return st;
    }
    c->context_id = ctx;
    c->rank = rank;
    c->size = n;
    c->errhandler = parent ? parent->errhandler : MPI_ERRORS_ARE_FATAL;
    c->info = MPI_INFO_NULL;
    c->refs = 1;
    *comm_p = c;
    return TERN_OK;
}

static void free_coll_shm(tern_comm_t *c)
{
    if (c->coll_shm_free)
        c->coll_shm_free(c->coll_shm);
    c->coll_shm = NULL;
    c->coll_shm_free = NULL;
}

void tern_comm_set_topo(tern_comm_t *c, struct tern_topo *t, const tern_comm_topo_ops_t *ops)
{
    if (c->topo)
        c->topo_ops->free(c->topo);
    c->topo = t;
    c->topo_ops = ops;
}

static void free_object(tern_comm_t *c)
{
    free_coll_shm(c);
    tern_ulfm_comm_free(c);
    if (c->local_comm)
        tern_comm_destroy(c->local_comm);
    tern_pvar_obj_forget(c); /* a tool's counts of it (base/pvars.h) */
    tern_ctx_release(c->context_id);
    tern_bsend_ctx_forget(c->context_id); /* its attached buffer, if any */
    if (c->info != MPI_INFO_NULL)
        tern_info_free(c->info);
    tern_comm_set_topo(c, NULL, NULL);
    free(c->world_ranks);
    free(c->remote_world_ranks);
    free(c);
}

void tern_comm_retain(tern_comm_t *c)
{
    c->refs++;
}

void tern_comm_release(tern_comm_t *c)
{
    if (--c->refs == 0 && c != &comm_world && c != &comm_self)
        free_object(c);
}

void tern_comm_destroy(tern_comm_t *c)
{
    /* Never called for WORLD and SELF (MPI_Comm_free refuses them). */
    if (tern_handle_get(&comms, c->handle) == c)
        tern_handle_release(&comms, c->handle);
    tern_comm_release(c);
}

static int has_errhandler(const void *obj, const void *eh)
{
    return ((const tern_comm_t *)obj)->errhandler == *(const MPI_Errhandler *)eh;
}

int tern_comm_errhandler_in_use(MPI_Errhandler eh)
{
    if ((comm_world.handle == MPI_COMM_WORLD && comm_world.errhandler == eh) ||
        (comm_self.handle == MPI_COMM_SELF && comm_self.errhandler == eh))
        return 1;
    return tern_handle_find(&comms, has_errhandler, &eh) != NULL;
}

void tern_comm_init_predefined(int world_rank, int world_size)
{
    tern_ctx_init();
    comm_world = (tern_comm_t){.handle = MPI_COMM_WORLD, .context_id = 0, .rank = world_rank,
                               .size = world_size, .errhandler = MPI_ERRORS_ARE_FATAL,
                               .info = MPI_INFO_NULL, .refs = 1};
    strcpy(comm_world.name, "MPI_COMM_WORLD");
    self_world_rank = world_rank;
    comm_self = (tern_comm_t){.handle = MPI_COMM_SELF, .context_id = 2, .rank = 0, .size = 1,
                              .world_ranks = &self_world_rank,
                              .errhandler = MPI_ERRORS_ARE_FATAL, .info = MPI_INFO_NULL,
                              .refs = 1};
    strcpy(comm_self.name, "MPI_COMM_SELF");
}

typedef struct {
    void (*fn)(tern_comm_t *c, void *arg);
    void *arg;
} visit_t;

static int visit(const void *obj, const void *arg)
{
    const visit_t *v = arg;
    v->fn((tern_comm_t *)obj, v->arg);
    return 0;
}

void tern_comm_each(void (*fn)(tern_comm_t *c, void *arg), void *arg)
{
    if (comm_world.handle == MPI_COMM_WORLD)
        fn(&comm_world, arg);
    if (comm_self.handle == MPI_COMM_SELF)
        fn(&comm_self, arg);
    visit_t v = {fn, arg};
    (void)tern_handle_find(&comms, visit, &v);
}

static void free_unfreed(void *obj)
{
    tern_comm_t *c = obj;
    free_coll_shm(c);
    while (c->attrs) {
        tern_attr_t *a = c->attrs;
        c->attrs = a->next;
        free(a);
    }
    tern_comm_set_topo(c, NULL, NULL);
    free(c->world_ranks);
    free(c->remote_world_ranks);
    free(c);
}

void tern_comm_finalize(void)
{
    /* Attributes of SELF go first (MPI 3.1, 8.7.1: libraries hook their
     * clean-up there), then WORLD's. Errors of callbacks cannot be
     * reported from here. */
    (void)tern_attr_delete_all(&comm_self);
    (void)tern_attr_delete_all(&comm_world);
    /* Communicators the application never freed (local_comms of
     * intercommunicators are in the table too): release memory only. */
    tern_handle_table_clear(&comms, free_unfreed);
    free_coll_shm(&comm_world);
    free_coll_shm(&comm_self);
    tern_ulfm_comm_free(&comm_world);
    tern_ulfm_comm_free(&comm_self);
    tern_ulfm_finalize();
    comm_world.handle = MPI_COMM_NULL;
    comm_self.handle = MPI_COMM_NULL;
    tern_group_finalize();
    /* Info objects outlive MPI: the Info procedures may be called before
     * MPI_Init and after MPI_Finalize (MPI-4.1 10), on the same objects. */
}

#include "core/comm/comm.h"
#include "core/comm/attr.h"
#include "core/comm/group.h"
#include "core/runtime/handle.h"
#include "core/comm/info.h"

#include <stdlib.h>
#include <string.h>

#define COMM_DYNAMIC (TERN_HANDLE_DYNAMIC | TERN_KIND_COMM)

static tern_comm_t comm_world, comm_self;
static int self_world_rank;

/* Dynamic communicators: a table of pointers, free slots reused. */
static tern_comm_t **table;
static int table_len, table_cap;
static int *free_slots;
static int n_free_slots;

tern_comm_t *tern_comm_lookup(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return comm_world.handle == MPI_COMM_WORLD ? &comm_world : NULL;
    if (comm == MPI_COMM_SELF)
        return comm_self.handle == MPI_COMM_SELF ? &comm_self : NULL;
    if (((uint32_t)comm & 0xfc000000u) != COMM_DYNAMIC)
        return NULL;
    int slot = (int)TERN_HANDLE_INDEX(comm);
    return slot < table_len ? table[slot] : NULL;
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
    int slot;
    if (n_free_slots) {
        slot = free_slots[--n_free_slots];
    } else {
        if (table_len == table_cap) {
            int cap = table_cap ? table_cap * 2 : 64;
            tern_comm_t **t = realloc(table, (size_t)cap * sizeof *t);
            int *fs = t ? realloc(free_slots, (size_t)cap * sizeof *fs) : NULL;
            if (t)
                table = t;
            if (!fs) {
                free(c->world_ranks);
                free(c);
                return TERN_ERR_NOMEM;
            }
            free_slots = fs;
            table_cap = cap;
        }
        slot = table_len++;
    }
    table[slot] = c;
    c->handle = (MPI_Comm)(COMM_DYNAMIC | (uint32_t)slot);
    c->context_id = ctx;
    c->rank = rank;
    c->size = n;
    c->errhandler = parent ? parent->errhandler : MPI_ERRORS_ARE_FATAL;
    c->info = MPI_INFO_NULL;
    c->refs = 1;
    *comm_p = c;
    return TERN_OK;
}

static void free_object(tern_comm_t *c)
{
    if (c->local_comm)
        tern_comm_destroy(c->local_comm);
    tern_ctx_release(c->context_id);
    if (c->info != MPI_INFO_NULL)
        tern_info_free(c->info);
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
    int slot = (int)TERN_HANDLE_INDEX(c->handle);
    if (slot < table_len && table[slot] == c) {
        table[slot] = NULL;
        free_slots[n_free_slots++] = slot;
    }
    tern_comm_release(c);
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

void tern_comm_finalize(void)
{
    /* Attributes of SELF go first (MPI 3.1, 8.7.1: libraries hook their
     * clean-up there), then WORLD's. Errors of callbacks cannot be
     * reported from here. */
    (void)tern_attr_delete_all(&comm_self);
    (void)tern_attr_delete_all(&comm_world);
    /* Communicators the application never freed (local_comms of
     * intercommunicators are in the table too): release memory only. */
    for (int i = 0; i < table_len; i++)
        if (table[i]) {
            tern_comm_t *c = table[i];
            while (c->attrs) {
                tern_attr_t *a = c->attrs;
                c->attrs = a->next;
                free(a);
            }
            free(c->world_ranks);
            free(c->remote_world_ranks);
            free(c);
        }
    free(table);
    free(free_slots);
    table = NULL;
    free_slots = NULL;
    table_len = table_cap = n_free_slots = 0;
    comm_world.handle = MPI_COMM_NULL;
    comm_self.handle = MPI_COMM_NULL;
    tern_group_finalize();
    tern_info_finalize();
}

/* Unit test of communicator lifetime and context ids: a communicator freed
 * while an operation holds it loses its handle at once but keeps its
 * context id until the last release; agreement picks move past freed ids. */
#include "core/comm/comm.h"
#include "base/test_check.h"

#include <stdio.h>
#include <stdlib.h>


static int slot_used(uint32_t ctx)
{
    tern_ctx_mask_t m;
    tern_ctx_mask_local(&m);
    uint32_t s = ctx / 2;
    return !(m.free[s / 32] & (1u << (s % 32)));
}

int main(void)
{
    tern_comm_init_predefined(0, 1);
    CHECK(slot_used(0) && slot_used(2)); /* WORLD and SELF */

    /* One participant: its own mask is the agreed one. */
    tern_ctx_mask_t m;
    uint32_t ctx[2];
    tern_ctx_mask_local(&m);
    CHECK(tern_ctx_pick(&m, 2, ctx) == TERN_OK);
    CHECK(ctx[0] != ctx[1] && ctx[0] >= 4 && ctx[1] >= 4);
    CHECK(ctx[0] % 2 == 0 && ctx[1] % 2 == 0);
    CHECK(slot_used(ctx[0]) && slot_used(ctx[1]));
    tern_ctx_release(ctx[1]);

    tern_comm_t *c;
    int wr[1] = {0};
    CHECK(tern_comm_new(NULL, ctx[0], 0, 1, wr, &c) == TERN_OK);
    MPI_Comm h = c->handle;
    CHECK(tern_comm_lookup(h) == c);
    CHECK(((unsigned)h & 0xfc000000u) == 0x84000000u);

    /* Freed with an operation holding it: handle gone, id kept. */
    tern_comm_retain(c);
    tern_comm_destroy(c);
    CHECK(tern_comm_lookup(h) == NULL);
    CHECK(slot_used(ctx[0]));
    CHECK(c->context_id == ctx[0]); /* still readable */
    tern_comm_release(c);
    CHECK(!slot_used(ctx[0]));

    /* The cursor moves on: the next pick is not the id just freed. */
    uint32_t next;
    tern_ctx_mask_local(&m);
    CHECK(tern_ctx_pick(&m, 1, &next) == TERN_OK);
    CHECK(next != ctx[0] && next != ctx[1]);

    /* Combining: AND of free bits, max of cursors. */
    tern_ctx_mask_t a, b;
    tern_ctx_mask_local(&a);
    b = a;
    b.free[5] &= ~1u;
    b.cursor = a.cursor + 100;
    tern_ctx_mask_combine(&a, &b, sizeof a);
    CHECK(!(a.free[5] & 1u) && a.cursor == b.cursor);

    /* Running out of ids is an error, not a collision. */
    tern_ctx_mask_t full = {0};
    CHECK(tern_ctx_pick(&full, 1, &next) != TERN_OK);

    tern_comm_finalize();
    return tern_check_result("comm_refs_test");
}

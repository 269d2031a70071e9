/* Windows' per-target routes (rma_path.c) and the flag that lets a flush
 * skip the active-message engine (w->flush_fence_only, rma_sync.c): set
 * only while every target is routed direct. Checked: a direct window (all
 * direct, flag set), a window none of whose targets is direct (active
 * messages, flag clear), a direct window one of whose targets is routed
 * again otherwise (the mixed window no creation makes today: the flag
 * clears, so its flush keeps the engine pass). */
#include "core/rma/rma_path.h"
#include "core/rma/window.h"
#include "base/test_check.h"

#include <stdlib.h>

int main(void)
{
    tern_win_t w = {0};
    w.size = 3;
    w.direct = 1;
    CHECK(tern_rma_route_all(&w) == TERN_OK);
    for (int t = 0; t < w.size; t++)
        CHECK(w.route[t].rw == &tern_rma_path_direct && w.route[t].acc == &tern_rma_path_direct);
    CHECK(w.flush_fence_only == 1);

    /* Target 1 routed again as a window without shared memory would. */
    w.direct = 0;
    tern_rma_route_target(&w, 1);
    CHECK(w.route[1].rw == &tern_rma_path_am && w.route[1].acc == &tern_rma_path_am);
    CHECK(w.route[0].rw == &tern_rma_path_direct);
    CHECK(w.flush_fence_only == 0);

    /* Routed whole again: direct, then by messages. */
    w.direct = 1;
    CHECK(tern_rma_route_all(&w) == TERN_OK);
    CHECK(w.flush_fence_only == 1);
    w.direct = 0;
    CHECK(tern_rma_route_all(&w) == TERN_OK);
    CHECK(w.flush_fence_only == 0);
    for (int t = 0; t < w.size; t++)
        CHECK(w.route[t].rw == &tern_rma_path_am);
    free(w.route);

    return tern_check_result("rma_path");
}

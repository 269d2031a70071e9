/* One allgather or alltoall of n-byte blocks for the tests that run many
 * in a row (coll_pair_exchange, coll_pair_slot_reuse): each call's bytes
 * differ from the last (bv), contiguous, strided or in place, blocking or
 * not; every received byte and every gap byte of a strided buffer is
 * checked. */
#ifndef TERN_TESTS_COLL_BLOCK_EXCHANGE_H
#define TERN_TESTS_COLL_BLOCK_EXCHANGE_H

#include "../mpi/mtest.h"
#include "byte_blocks.h"

static unsigned char bv(int from, int to, size_t i, int call)
{
    return (unsigned char)(from * 131 + to * 71 + i * 7 + i / 251 + (size_t)call * 37);
}

enum { CONTIG, STRIDED, IN_PLACE, N_KINDS };
static const char *const kind_names[N_KINDS] = {"contiguous", "strided", "in place"};

/* One allgather (a2a 0) or alltoall (a2a 1) of n-byte blocks, call `call`;
 * 0 when a byte was wrong (reported). */
static int block_exchange(int a2a, size_t n, int kind, int call, int nonblocking, int p,
                          int me, unsigned char *s, unsigned char *g)
{
    int strided = kind == STRIDED;
    size_t span = (size_t)p * n * (strided ? 2 : 1);
    MPI_Datatype t = block_type(n, strided);
    memset(g, 0xee, span);
    memset(s, 0xee, span);
    for (int d = 0; d < (a2a ? p : 1); d++)
        for (size_t i = 0; i < n; i++)
            *at(kind == IN_PLACE ? g : s, n, strided, kind == IN_PLACE && !a2a ? me : d, i) =
                bv(me, a2a ? d : 0, i, call);
    const void *src = kind == IN_PLACE ? MPI_IN_PLACE : s;
    int scount = kind == IN_PLACE ? 0 : 1;
    MPI_Datatype stype = kind == IN_PLACE ? MPI_DATATYPE_NULL : t;
    if (nonblocking) {
        MPI_Request rq;
        if (a2a)
            CHECK_RC(MPI_Ialltoall(src, scount, stype, g, 1, t, MPI_COMM_WORLD, &rq));
        else
            CHECK_RC(MPI_Iallgather(src, scount, stype, g, 1, t, MPI_COMM_WORLD, &rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (a2a)
        CHECK_RC(MPI_Alltoall(src, scount, stype, g, 1, t, MPI_COMM_WORLD));
    else
        CHECK_RC(MPI_Allgather(src, scount, stype, g, 1, t, MPI_COMM_WORLD));
    MPI_Type_free(&t);
    for (int q = 0; q < p; q++)
        for (size_t i = 0; i < n; i++) {
            unsigned char want = bv(q, a2a ? me : 0, i, call), got = *at(g, n, strided, q, i);
            if (got != want) {
                CHECK(0, "%s call %d, %zu-byte blocks, %s%s: block %d byte %zu = %u, want %u",
                      a2a ? "alltoall" : "allgather", call, n, kind_names[kind],
                      nonblocking ? ", nonblocking" : "", q, i, got, want);
                return 0;
            }
        }
    if (strided)
        for (size_t i = 0; i < (size_t)p * n; i++)
            if (g[2 * i + 1] != 0xee) {
                CHECK(0, "%s call %d, %zu-byte blocks, strided: gap byte %zu written",
                      a2a ? "alltoall" : "allgather", call, n, 2 * i + 1);
                return 0;
            }
    return 1;
}

#endif

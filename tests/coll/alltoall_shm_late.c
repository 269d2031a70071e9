/* Alltoall through shm (forced by the environment) while one rank comes
 * late, each rank in turn: the others copy in and wait for it. Blocks
 * from 1 byte (the data slots) to several 64 KB pieces (oversubscribed:
 * the alltoall area, several steps), contiguous bytes, a strided derived
 * type on both sides and MPI_IN_PLACE, blocking and nonblocking (the
 * other lane: the data slots), each followed by an allreduce that uses
 * the other slot. Every received byte is checked. */
#include "../mpi/mtest.h"

#include <time.h>

/* Byte i of the block rank `from` sends to rank `to`. */
static unsigned char bv(int from, int to, size_t i)
{
    return (unsigned char)(from * 37 + to * 101 + i * 13 + i / 509);
}

static const size_t sizes[] = {1, 100, 16384, 65535, 65536, 65537, 200003};

enum { CONTIG, STRIDED, IN_PLACE, N_KINDS };
static const char *const kind_names[N_KINDS] = {"contiguous", "strided", "in place"};

static void nap_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

/* One alltoall of n-byte blocks; rank `late` sleeps first. */
static void run(size_t n, int kind, int nonblocking, int late, int p, int me)
{
    int strided = kind == STRIDED;
    size_t step = strided ? 2 : 1, span = (size_t)p * n * step;
    unsigned char *s = malloc(span), *g = malloc(span);
    MPI_Datatype t;
    if (strided) { /* every other byte; extent 2n, blocks follow each other */
        MPI_Datatype v;
        MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n), &t);
        MPI_Type_free(&v);
    } else {
        MPI_Type_contiguous((int)n, MPI_BYTE, &t);
    }
    MPI_Type_commit(&t);
    memset(s, 0xee, span);
    memset(g, 0xee, span);
    unsigned char *src = kind == IN_PLACE ? g : s;
    for (int d = 0; d < p; d++)
        for (size_t i = 0; i < n; i++)
            src[((size_t)d * n + i) * step] = bv(me, d, i);
    if (me == late)
        nap_ms(5);
    const void *sb = kind == IN_PLACE ? MPI_IN_PLACE : s;
    int sc = kind == IN_PLACE ? 0 : 1;
    MPI_Datatype st = kind == IN_PLACE ? MPI_DATATYPE_NULL : t;
    if (nonblocking) {
        MPI_Request rq;
        CHECK_RC(MPI_Ialltoall(sb, sc, st, g, 1, t, MPI_COMM_WORLD, &rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        CHECK_RC(MPI_Alltoall(sb, sc, st, g, 1, t, MPI_COMM_WORLD));
    }
    int bad = 0;
    for (int q = 0; q < p && !bad; q++)
        for (size_t i = 0; i < n; i++) {
            unsigned char want = bv(q, me, i), got = g[((size_t)q * n + i) * step];
            if (got != want) {
                CHECK(0, "%zu-byte blocks, %s, %s, rank %d late: block %d byte %zu = %u, want %u",
                      n, kind_names[kind], nonblocking ? "nonblocking" : "blocking", late, q, i,
                      got, want);
                bad = 1;
                break;
            }
        }
    if (strided) /* the gaps stay untouched */
        for (size_t i = 0; i < (size_t)p * n && !bad; i++)
            if (g[2 * i + 1] != 0xee) {
                CHECK(0, "%zu-byte blocks, strided: gap byte %zu written", n, 2 * i + 1);
                bad = 1;
            }
    /* The next step (other slot) by another kind of collective. */
    int one = 1, sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(sum, p, "allreduce after the alltoall");
    MPI_Type_free(&t);
    free(s);
    free(g);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    int k = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int kind = 0; kind < N_KINDS; kind++)
            for (int nb = 0; nb < 2; nb++, k++)
                run(sizes[z], kind, nb, k % p, p, me);
    return mtest_finalize();
}

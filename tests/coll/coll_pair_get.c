/* 2-rank allgather and alltoall by one CMA read (core/coll/pair_get.h),
 * run with TERN_COLL_PAIR_GET=on and TERN_COLL_PAIR_GET_MIN=65536:
 * blocks either side of the threshold, each rank contiguous or strided
 * (a vector type) in every combination, in place or not, small exchanges
 * through the line between (their sequence is shared). Every byte is
 * checked, the gaps of strided buffers too, and the MPI_T counter
 * tern_coll_pair_gets counts exactly the calls from the threshold up.
 * With the argument "nocma" (TERN_SHM_CMA=off) no call reads and every
 * byte still arrives through the table's algorithm; with "forced" (run
 * with TERN_ALLGATHER_ALGORITHM and TERN_ALLTOALL_ALGORITHM set) none
 * reads either: the forced algorithms run as asked. Under
 * TERN_COLL_PAIR_GET=auto the read follows tern_single_copy_pays: with
 * TERN_CMA_PAYS_PCT at its top it pays, every call from the threshold
 * reads as under on; with the argument "never" (TERN_CMA_PAYS_PCT=0)
 * none does. */
#include "../mpi/mtest.h"
#include "../mpit/mpit_util.h"

enum { GAP = 0xEE, MIN_BLOCK = 65536 };

static int rank;

/* Byte i of the block rank `from` sends to `to` (allgather: to 0). */
static unsigned char bv(int from, int to, size_t i, int call)
{
    return (unsigned char)(from * 37 + to * 11 + i * 7 + (i >> 9) * 3 + (size_t)call * 5 + 1);
}

/* Block k's byte i in a buffer of n-byte blocks, strided: every other byte. */
static unsigned char *at(unsigned char *buf, size_t n, int strided, int k, size_t i)
{
    return strided ? buf + (size_t)k * 2 * n + 2 * i : buf + (size_t)k * n + i;
}

/* An n-byte block: n bytes, or one vector of n bytes two apart whose
 * extent is 2n (the next block follows). */
static MPI_Datatype block_type(size_t n, int strided, int *count)
{
    if (!strided) {
        *count = (int)n;
        return MPI_UNSIGNED_CHAR;
    }
    MPI_Datatype v, r;
    MPI_Type_vector((int)n, 1, 2, MPI_UNSIGNED_CHAR, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n), &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&v);
    *count = 1;
    return r;
}

/* One allgather (a2a 0) or alltoall (1) of n-byte blocks; 0 on a wrong
 * byte. */
static int exchange(MPI_Comm comm, int a2a, size_t n, int strided, int inplace, int call)
{
    int count;
    MPI_Datatype t = block_type(n, strided, &count);
    size_t span = (strided ? 2 : 1) * n * 2;
    unsigned char *s = malloc(span), *r = malloc(span);
    memset(s, GAP, span);
    memset(r, GAP, span);
    unsigned char *src = inplace ? r : s;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n; i++) {
            if (!a2a && k != rank)
                continue;
            unsigned char *sb = a2a || inplace ? src : s;
            int kk = a2a || inplace ? k : 0;
            *at(sb, n, strided, kk, i) = bv(rank, a2a ? k : 0, i, call);
        }
    if (a2a)
        CHECK_RC(MPI_Alltoall(inplace ? MPI_IN_PLACE : s, count, t, r, count, t, comm));
    else
        CHECK_RC(MPI_Allgather(inplace ? MPI_IN_PLACE : s, count, t, r, count, t, comm));
    int ok = 1;
    for (int q = 0; q < 2 && ok; q++)
        for (size_t i = 0; i < n && ok; i++) {
            unsigned char got = *at(r, n, strided, q, i), want = bv(q, a2a ? rank : 0, i, call);
            if (got != want) {
                CHECK(0, "%s n %zu strided %d in place %d call %d: block %d byte %zu is %u, want %u",
                      a2a ? "alltoall" : "allgather", n, strided, inplace, call, q, i, got, want);
                ok = 0;
            }
            if (strided && ok && r[(size_t)q * 2 * n + 2 * i + 1] != GAP) {
                CHECK(0, "%s n %zu: gap after block %d byte %zu written",
                      a2a ? "alltoall" : "allgather", n, q, i);
                ok = 0;
            }
        }
    free(s);
    free(r);
    if (strided)
        MPI_Type_free(&t);
    return ok;
}

int main(int argc, char **argv)
{
    int nocma = argc > 1 && strcmp(argv[1], "nocma") == 0;
    int no_reads = nocma || (argc > 1 && (strcmp(argv[1], "forced") == 0 ||
                                          strcmp(argv[1], "never") == 0));
    if (nocma)
        setenv("TERN_SHM_CMA", "off", 1);
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (mtest_size != 2)
        return mtest_finalize(); /* 2 ranks only */
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h = mpit_handle("tern_coll_pair_gets", MPI_T_PVAR_CLASS_COUNTER,
                                      MPI_T_BIND_NO_OBJECT, NULL, 1);
    unsigned long long reads = rd(h);
    static const size_t sizes[] = {4096, MIN_BLOCK - 1, MIN_BLOCK, MIN_BLOCK + 1, 300001, 1 << 20};
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int call = 0;
    mtest_begin("every combination of layouts, sizes either side of 64 KB");
    for (int a2a = 0; a2a < 2; a2a++)
        for (int layout = 0; layout < 4; layout++) /* bit q: rank q strided */
            for (int inplace = 0; inplace < 2; inplace++)
                for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                    size_t n = sizes[k];
                    call++;
                    if (!exchange(comm, a2a, n, (layout >> rank) & 1, inplace, call))
                        goto done;
                    if (n >= MIN_BLOCK && !no_reads)
                        reads++;
                    /* A line exchange (sequence shared) and a p2p-sized one. */
                    if (!exchange(comm, a2a, 5, 0, 0, call) || !exchange(comm, 1 - a2a, 2000, 0, 0, call))
                        goto done;
                }
    CHECK(rd(h) == reads, "CMA reads %llu, want %llu", rd(h), reads);
done:
    mtest_end();
    MPI_Comm_free(&comm);
    MPI_T_pvar_stop(sess, h);
    MPI_T_pvar_handle_free(sess, &h);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    return mtest_finalize();
}

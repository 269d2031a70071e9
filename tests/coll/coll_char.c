/* Reductions on MPI_CHAR, MPI_SIGNED_CHAR and MPI_UNSIGNED_CHAR, which
 * MPICH and Open MPI accept for the integer ops (the OSU benchmarks reduce
 * MPI_CHAR by default): MPI_Reduce, MPI_Allreduce, MPI_Scan and
 * MPI_Reduce_local with SUM, MAX, MIN, BAND and BOR give the bytes C's
 * char arithmetic gives (sums wrap), computed here rank by rank. */
#include "../mpi/mtest.h"

enum { N = 6 };

/* Element i of rank r: small and negative values for the signed types,
 * values past 127 for unsigned char, so sums wrap. */
static int val(int r, int i) { return (r * 37 + i * 29) % 200 - 60; }

#define FOLD(T, op, acc, x)                                                                    \
    ((op) == MPI_SUM   ? (T)((acc) + (x))                                                      \
     : (op) == MPI_MAX ? ((x) > (acc) ? (x) : (acc))                                           \
     : (op) == MPI_MIN ? ((x) < (acc) ? (x) : (acc))                                           \
     : (op) == MPI_BAND ? (T)((acc) & (x))                                                     \
                        : (T)((acc) | (x)))

/* The reduction of ranks 0..upto for element i, in type T. */
#define EXPECT(T, op, upto, i, out)                                                            \
    do {                                                                                       \
        T acc_ = (T)val(0, i);                                                                 \
        for (int r_ = 1; r_ <= (upto); r_++)                                                   \
            acc_ = FOLD(T, op, acc_, (T)val(r_, i));                                           \
        (out) = acc_;                                                                          \
    } while (0)

#define RUN_TYPE(T, dt)                                                                        \
    do {                                                                                       \
        T in[N], out[N], want;                                                                 \
        for (int k = 0; k < 5; k++) {                                                          \
            MPI_Op op = ops[k];                                                                \
            for (int i = 0; i < N; i++)                                                        \
                in[i] = (T)val(mtest_rank, i);                                                 \
            CHECK_RC(MPI_Allreduce(in, out, N, dt, op, MPI_COMM_WORLD));                       \
            for (int i = 0; i < N; i++) {                                                      \
                EXPECT(T, op, mtest_size - 1, i, want);                                        \
                CHECK_INT(out[i], want, #dt " allreduce");                                     \
            }                                                                                  \
            for (int i = 0; i < N; i++)                                                        \
                out[i] = 0;                                                                    \
            int root = mtest_size - 1;                                                         \
            CHECK_RC(MPI_Reduce(in, out, N, dt, op, root, MPI_COMM_WORLD));                    \
            if (mtest_rank == root)                                                            \
                for (int i = 0; i < N; i++) {                                                  \
                    EXPECT(T, op, mtest_size - 1, i, want);                                    \
                    CHECK_INT(out[i], want, #dt " reduce");                                    \
                }                                                                              \
            CHECK_RC(MPI_Scan(in, out, N, dt, op, MPI_COMM_WORLD));                            \
            for (int i = 0; i < N; i++) {                                                      \
                EXPECT(T, op, mtest_rank, i, want);                                            \
                CHECK_INT(out[i], want, #dt " scan");                                          \
            }                                                                                  \
            T acc[N];                                                                          \
            for (int i = 0; i < N; i++)                                                        \
                acc[i] = (T)val(1, i);                                                         \
            CHECK_RC(MPI_Reduce_local(in, acc, N, dt, op));                                    \
            for (int i = 0; i < N; i++)                                                        \
                CHECK_INT(acc[i], FOLD(T, op, (T)val(1, i), in[i]), #dt " reduce_local");      \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    static const MPI_Op ops[5] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR};
    mtest_begin("char reductions");
    RUN_TYPE(char, MPI_CHAR);
    RUN_TYPE(signed char, MPI_SIGNED_CHAR);
    RUN_TYPE(unsigned char, MPI_UNSIGNED_CHAR);
    mtest_end();
    return mtest_finalize();
}

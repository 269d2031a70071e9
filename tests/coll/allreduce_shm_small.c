/* Small allreduces through shm (forced by the environment) at 3+ ranks,
 * whose terms travel in the ranks' enter lines (up to 16 bytes), mixed on
 * one communicator with shm reduces and bcasts to every root, so a rank's
 * next step follows a step it did not read in full: 1-16 bytes (and 17,
 * past the enter line) of signed char, int, double, long double and double
 * complex sums, in place and not, one rank late in turn. Every result is
 * checked. */
#include "../mpi/mtest.h"

#include <complex.h>
#include <time.h>

static void nap_us(long us)
{
    struct timespec t = {0, us * 1000L};
    nanosleep(&t, NULL);
}

/* Term i of rank q in round k (small integers: every sum is exact). */
static int tv(int q, int k, int i)
{
    return (q * 7 + k * 3 + i * 5) % 23 - 11;
}

/* An allreduce of n elements of type t (elements of esz bytes, read and
 * written as the C type through the macros below). */
#define SUM_CHECK(ctype, mtype, n, inplace, k, p, me, what)                                        \
    do {                                                                                           \
        ctype in_[17], out_[17];                                                                   \
        for (int i_ = 0; i_ < (n); i_++) {                                                         \
            in_[i_] = (ctype)tv(me, k, i_);                                                        \
            out_[i_] = (inplace) ? in_[i_] : (ctype)-99;                                           \
        }                                                                                          \
        CHECK_RC(MPI_Allreduce((inplace) ? MPI_IN_PLACE : in_, out_, (n), mtype, MPI_SUM,          \
                               MPI_COMM_WORLD));                                                   \
        for (int i_ = 0; i_ < (n); i_++) {                                                         \
            long want_ = 0;                                                                        \
            for (int q_ = 0; q_ < (p); q_++)                                                       \
                want_ += tv(q_, k, i_);                                                            \
            CHECK(out_[i_] == (ctype)want_, "%s: %d elements%s, round %d, element %d: wrong sum",  \
                  what, (int)(n), (inplace) ? " in place" : "", k, i_);                            \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p, me;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    mtest_begin("allreduce_shm_small");
    for (int k = 0; k < 4 * p; k++) {
        int late = k % p, inplace = k & 1;
        if (me == late)
            nap_us(200);
        SUM_CHECK(signed char, MPI_SIGNED_CHAR, 1 + k % 16, inplace, k, p, me, "char");
        SUM_CHECK(signed char, MPI_SIGNED_CHAR, 17, inplace, k, p, me, "char");
        SUM_CHECK(int, MPI_INT, 1 + k % 4, inplace, k, p, me, "int");
        SUM_CHECK(double, MPI_DOUBLE, 1 + k % 2, inplace, k, p, me, "double");
        SUM_CHECK(long double, MPI_LONG_DOUBLE, 1, inplace, k, p, me, "long double");
        /* A reduce and a bcast between: steps whose slots only the root
         * reads (reduce) or that use the ring (bcast). */
        int r = 0, v = tv(me, k, 0);
        CHECK_RC(MPI_Reduce(&v, &r, 1, MPI_INT, MPI_SUM, k % p, MPI_COMM_WORLD));
        if (me == k % p) {
            int want = 0;
            for (int q = 0; q < p; q++)
                want += tv(q, k, 0);
            CHECK_INT(r, want, "reduce between the allreduces");
        }
        int b = me == (k + 1) % p ? k : -1;
        CHECK_RC(MPI_Bcast(&b, 1, MPI_INT, (k + 1) % p, MPI_COMM_WORLD));
        CHECK_INT(b, k, "bcast between the allreduces");
        double complex z = (double)tv(me, k, 1) + (double)tv(me, k, 2) * I, zs = 0;
        CHECK_RC(MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
        double re = 0, im = 0;
        for (int q = 0; q < p; q++) {
            re += tv(q, k, 1);
            im += tv(q, k, 2);
        }
        CHECK(creal(zs) == re && cimag(zs) == im, "double complex, round %d: wrong sum", k);
    }
    mtest_end();
    return mtest_finalize();
}

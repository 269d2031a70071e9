/* Shared checks for the datatype tests: a failed check ends the job
 * (REQUIRE, ../mpi/mtest.h), naming the line. */
#ifndef DTYPE_COMMON_H
#define DTYPE_COMMON_H
#include "../mpi/mtest.h"

#define OK(call) REQUIRE((call) == MPI_SUCCESS, "%s", #call)

/* lb, extent, true lb, true extent and size of t. */
static inline void expect_shape(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                                MPI_Aint text, int size, int line)
{
    MPI_Aint l, e, tl, te;
    int s;
    OK(MPI_Type_get_extent(t, &l, &e));
    OK(MPI_Type_get_true_extent(t, &tl, &te));
    OK(MPI_Type_size(t, &s));
    if (l != lb || e != ext || tl != tlb || te != text || s != size) {
        fprintf(stderr, "line %d: shape lb %ld ext %ld tlb %ld text %ld size %d, expected "
                        "%ld %ld %ld %ld %d\n", line, (long)l, (long)e, (long)tl, (long)te, s,
                (long)lb, (long)ext, (long)tlb, (long)text, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#define SHAPE(t, lb, ext, tlb, text, size) expect_shape(t, lb, ext, tlb, text, size, __LINE__)

#endif

/* Error classes of the datatype calls (MPI_ERRORS_RETURN), and messages
 * that name the function. */
#include "dtype_common.h"

#include <string.h>

static void expect_class(int rc, int want, const char *func, int line)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || cls != want) {
        fprintf(stderr, "line %d: %s returned class %d, expected %d\n", line, func,
                rc == MPI_SUCCESS ? 0 : cls, want);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    if (!strstr(msg, func)) {
        fprintf(stderr, "line %d: message \"%s\" does not name %s\n", line, msg, func);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#define EXPECT(call, cls, func) expect_class((call), cls, func, __LINE__)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype t = MPI_DATATYPE_NULL, v;
    int buf[16] = {0};

    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_contiguous");
    EXPECT(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "MPI_Type_contiguous");
    EXPECT(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_vector");
    EXPECT(MPI_Type_free(&t), MPI_ERR_TYPE, "MPI_Type_free"); /* MPI_DATATYPE_NULL */
    MPI_Datatype named = MPI_INT;
    EXPECT(MPI_Type_free(&named), MPI_ERR_TYPE, "MPI_Type_free");

    /* An uncommitted type cannot carry data. */
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    EXPECT(MPI_Send(buf, 1, v, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send");
    MPI_Request rq;
    EXPECT(MPI_Irecv(buf, 1, v, rank, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE, "MPI_Irecv");
    int pos = 0;
    char packed[64];
    EXPECT(MPI_Pack(buf, 1, v, packed, 64, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Pack");
    OK(MPI_Type_commit(&v));

    /* Too little room to pack into or to unpack from. */
#ifndef MPICH_VERSION /* MPICH 4.0 checks neither outsize nor insize */
    pos = 0;
    EXPECT(MPI_Pack(buf, 3, v, packed, 20, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Pack");
    pos = 0;
    EXPECT(MPI_Unpack(packed, 4, &pos, buf, 1, v, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
           "MPI_Unpack");
#endif

    /* A message longer than a derived receive: truncation, and the data
     * that fits arrived. */
    int src[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
    OK(MPI_Irecv(dst, 1, v, rank, 5, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(src, 3, MPI_INT, rank, 5, MPI_COMM_WORLD));
    MPI_Status st;
    EXPECT(MPI_Wait(&rq, &st), MPI_ERR_TRUNCATE, "MPI_Wait");
    REQUIRE(dst[0] == 1 && dst[1] == 0 && dst[2] == 2, "truncated receive kept %d %d %d", dst[0],
          dst[1], dst[2]);

    /* Subarray that does not fit, contents of a named type. */
    int sizes[1] = {4}, sub[1] = {3}, starts[1] = {2};
#ifndef MPICH_VERSION /* MPICH 4.0 accepts it */
    EXPECT(MPI_Type_create_subarray(1, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
           "MPI_Type_create_subarray");
#else
    (void)sizes, (void)sub, (void)starts;
#endif
    int ci[1];
    MPI_Aint ca[1];
    MPI_Datatype ct[1];
    EXPECT(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ci, ca, ct), MPI_ERR_TYPE,
           "MPI_Type_get_contents");
    MPI_Type_free(&v);
    if (rank == 0)
        printf("test errors ok\n");
    MPI_Finalize();
    return 0;
}

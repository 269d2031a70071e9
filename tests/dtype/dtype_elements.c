/* Basic elements in a status (issue 31, items 2 and 6):
 *  - MPI_Status_set_elements, _x and _c with a derived type that mixes
 *    basic types (and the pair types) set the status so that
 *    MPI_Get_elements with that type gives the count back and MPI_Get_count
 *    answers whole copies of the type or MPI_UNDEFINED; counts past 2^31
 *    too;
 *  - MPI_Get_elements of a message whose bytes end inside a basic element
 *    of the type (33 MPI_CHAR read as MPI_DOUBLE_INT: a type-signature
 *    mismatch) gives MPI_UNDEFINED, as Open MPI does. */
#include "../mpi/mtest.h"

#include <limits.h>

/* Sets count elements of t in a status with each of the three procedures
 * and checks what the queries read back. */
static void set_and_read(MPI_Datatype t, MPI_Count count, MPI_Count per_copy, const char *what)
{
    for (int form = 0; form < 3; form++) {
        MPI_Status st;
        memset(&st, 0, sizeof st);
        if (form == 0 && count > INT_MAX)
            continue;
        int rc = form == 0   ? MPI_Status_set_elements(&st, t, (int)count)
                 : form == 1 ? MPI_Status_set_elements_x(&st, t, count)
                             : MPI_Status_set_elements_c(&st, t, count);
        if (rc != MPI_SUCCESS) {
            mtest_fail(__FILE__, __LINE__, "%s: set_elements form %d of %lld: %s", what, form,
                       (long long)count, mtest_errstr(rc));
            continue;
        }
        MPI_Count ex = -1, ec = -1, cc = -1;
        int ei = -1, ci = -1;
        CHECK_RC(MPI_Get_elements_x(&st, t, &ex));
        CHECK_RC(MPI_Get_elements_c(&st, t, &ec));
        CHECK_RC(MPI_Get_elements(&st, t, &ei));
        CHECK_RC(MPI_Get_count_c(&st, t, &cc));
        CHECK_RC(MPI_Get_count(&st, t, &ci));
        MPI_Count want_count = count % per_copy ? MPI_UNDEFINED : count / per_copy;
        CHECK(ex == count && ec == count, "%s form %d: elements %lld/%lld, expected %lld", what,
              form, (long long)ex, (long long)ec, (long long)count);
        CHECK_INT(ei, count > INT_MAX ? MPI_UNDEFINED : count, what);
        CHECK_INT(cc, want_count, what);
        CHECK_INT(ci, want_count > INT_MAX ? MPI_UNDEFINED : want_count, what);
    }
}

static void test_set_elements_mixed(void)
{
    mtest_begin("set_elements_mixed");
    /* {int, double, char[3]}: 5 basic elements, 15 bytes a copy. */
    int bl[3] = {1, 1, 3};
    MPI_Aint dp[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, mixed, two;
    CHECK_RC(MPI_Type_create_struct(3, bl, dp, ty, &mixed));
    CHECK_RC(MPI_Type_commit(&mixed));
    for (MPI_Count n = 0; n <= 16; n++)
        set_and_read(mixed, n, 5, "{int, double, char[3]}");
    /* Two of them, resized, in a contiguous: the same map twice. */
    CHECK_RC(MPI_Type_contiguous(2, mixed, &two));
    CHECK_RC(MPI_Type_commit(&two));
    for (MPI_Count n = 0; n <= 21; n++)
        set_and_read(two, n, 10, "contiguous(2, {int, double, char[3]})");
    /* The pair types: two basic elements each. */
    set_and_read(MPI_DOUBLE_INT, 3, 2, "MPI_DOUBLE_INT");
    set_and_read(MPI_DOUBLE_INT, 4, 2, "MPI_DOUBLE_INT");
    set_and_read(MPI_2INT, 5, 2, "MPI_2INT");
    set_and_read(MPI_INT, 7, 1, "MPI_INT");
    /* A type with no basic element holds no count but 0. */
    MPI_Datatype empty;
    CHECK_RC(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_RC(MPI_Type_commit(&empty));
    set_and_read(empty, 0, 1, "an empty type");
    MPI_Status st;
    CHECK_CLASS(MPI_Status_set_elements(&st, empty, 3), MPI_ERR_COUNT,
                "3 elements of an empty type");
    MPI_Type_free(&empty);
    MPI_Type_free(&two);
    MPI_Type_free(&mixed);
    mtest_end();
}

static void test_set_elements_large(void)
{
    mtest_begin("set_elements_large");
    /* INT_MAX chars then 4 ints (MPICH's datatype/large_count "imx4i"):
     * INT_MAX + 4 elements, INT_MAX + 16 bytes a copy. */
    int bl[2] = {INT_MAX, 4};
    MPI_Aint dp[2] = {0, ((MPI_Aint)INT_MAX + 4) / 4 * 4};
    MPI_Datatype ty[2] = {MPI_CHAR, MPI_INT}, big;
    CHECK_RC(MPI_Type_create_struct(2, bl, dp, ty, &big));
    CHECK_RC(MPI_Type_commit(&big));
    const MPI_Count per = (MPI_Count)INT_MAX + 4;
    MPI_Count counts[] = {1, INT_MAX, per - 1, per, per + 1, 2 * per, 3 * per + INT_MAX + 2,
                          ((MPI_Count)1 << 30) * per};
    for (unsigned i = 0; i < sizeof counts / sizeof *counts; i++)
        set_and_read(big, counts[i], per, "INT_MAX chars and 4 ints");
    /* Past what the status holds (2^63 bytes). */
    MPI_Status st;
    CHECK_CLASS(MPI_Status_set_elements_x(&st, big, ((MPI_Count)1 << 62) - 1 + ((MPI_Count)1 << 62)),
                MPI_ERR_COUNT, "2^63 - 1 elements of INT_MAX + 16 bytes a copy");
    MPI_Type_free(&big);
    mtest_end();
}

/* Receives a message of n chars (from the partner) and reads its elements
 * and count with t. */
static void recv_chars(int n, MPI_Datatype t, MPI_Count want_elements, const char *what)
{
    char out[64], in[64];
    for (int i = 0; i < 64; i++)
        out[i] = (char)i;
    int partner = mtest_partner();
    MPI_Request rq;
    MPI_Status st;
    CHECK_RC(MPI_Isend(out, n, MPI_CHAR, partner, 7, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Recv(in, n, MPI_CHAR, partner, 7, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int e = -1;
    MPI_Count ex = -1;
    CHECK_RC(MPI_Get_elements(&st, t, &e));
    CHECK_RC(MPI_Get_elements_x(&st, t, &ex));
    CHECK_INT(e, want_elements, what);
    CHECK_INT(ex, want_elements, what);
}

static void test_get_elements_mismatch(void)
{
    mtest_begin("get_elements_mismatch");
    /* MPICH's errors/datatype/getcnterr: 33 chars read as 4 MPI_DOUBLE_INTs
     * end one byte into a double. */
    MPI_Datatype type_ia;
    CHECK_RC(MPI_Type_contiguous(4, MPI_DOUBLE_INT, &type_ia));
    CHECK_RC(MPI_Type_commit(&type_ia));
    recv_chars(33, type_ia, MPI_UNDEFINED, "33 chars as contiguous(4, MPI_DOUBLE_INT)");
    recv_chars(33, MPI_DOUBLE_INT, MPI_UNDEFINED, "33 chars as MPI_DOUBLE_INT");
    /* Ends between basic elements: double, int, double (MPICH's
     * datatype/get-elements-pairtype). */
    recv_chars(20, type_ia, 3, "20 chars as contiguous(4, MPI_DOUBLE_INT)");
    recv_chars(20, MPI_DOUBLE_INT, 3, "20 chars as MPI_DOUBLE_INT");
    recv_chars(32, type_ia, 5, "32 chars as contiguous(4, MPI_DOUBLE_INT)");
    recv_chars(33, MPI_CHAR, 33, "33 chars as MPI_CHAR");
    recv_chars(10, MPI_INT, MPI_UNDEFINED, "10 chars as MPI_INT");
    /* {int, double}: 6 bytes end inside the double. */
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, sdi;
    CHECK_RC(MPI_Type_create_struct(2, bl, dp, ty, &sdi));
    CHECK_RC(MPI_Type_commit(&sdi));
    recv_chars(6, sdi, MPI_UNDEFINED, "6 chars as {int, double}");
    recv_chars(12, sdi, 2, "12 chars as {int, double}");
    recv_chars(16, sdi, 3, "16 chars as {int, double}");
    MPI_Type_free(&sdi);
    MPI_Type_free(&type_ia);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    test_set_elements_mixed();
    test_set_elements_large();
    test_get_elements_mismatch();
    return mtest_finalize();
}

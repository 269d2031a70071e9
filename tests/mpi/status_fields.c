/* The status procedures of MPI-3 and MPI-5.0: MPI_Status_set_elements_x
 * and _c (what Get_elements/Get_count then read), and the get/set
 * accessors of the public fields (MPI_Status_get_error/source/tag and
 * set), including their argument errors. */
#include "mtest.h"

static void test_set_elements(void)
{
    mtest_begin("status_set_elements_x_c");
    MPI_Status st;
    memset(&st, 0, sizeof st);
    MPI_Count n = 0;
    int cnt = 0;
    CHECK_RC(MPI_Status_set_elements_x(&st, MPI_INT, 7));
    CHECK_RC(MPI_Get_elements_x(&st, MPI_INT, &n));
    CHECK_INT(n, 7, "elements after set_elements_x");
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK_INT(cnt, 7, "count after set_elements_x");
    /* A count past INT_MAX: the int query says MPI_UNDEFINED. */
    MPI_Count big = (MPI_Count)1 << 33;
    CHECK_RC(MPI_Status_set_elements_c(&st, MPI_CHAR, big));
    CHECK_RC(MPI_Get_elements_c(&st, MPI_CHAR, &n));
    CHECK_INT(n, big, "elements after set_elements_c");
    CHECK_RC(MPI_Get_count(&st, MPI_CHAR, &cnt));
    CHECK_INT(cnt, MPI_UNDEFINED, "int count of 2^33 chars");
    /* Elements of a derived type: 3 ints of a contiguous(2) -> 1.5 types. */
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    CHECK_RC(MPI_Status_set_elements_x(&st, two, 3));
    CHECK_RC(MPI_Get_elements_x(&st, two, &n));
    CHECK_INT(n, 3, "basic elements of a derived type");
    CHECK_RC(MPI_Get_count(&st, two, &cnt));
    CHECK_INT(cnt, MPI_UNDEFINED, "count of a partial derived type");
    /* The cancelled flag and the other fields are kept. */
    st.MPI_SOURCE = 3;
    MPI_Status_set_cancelled(&st, 1);
    CHECK_RC(MPI_Status_set_elements_x(&st, MPI_INT, 2));
    int flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "cancelled flag kept");
    CHECK_INT(st.MPI_SOURCE, 3, "source kept");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Status_set_elements_x(&st, MPI_INT, -1), MPI_ERR_COUNT, "negative count");
    CHECK_CLASS(MPI_Status_set_elements_c(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE, "null type");
    CHECK_CLASS(MPI_Status_set_elements_x(MPI_STATUS_IGNORE, MPI_INT, 1), MPI_ERR_ARG,
                "MPI_STATUS_IGNORE");
    MPI_Type_free(&two);
    mtest_end();
}

static void test_fields(void)
{
    mtest_begin("status_get_set_fields");
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int v = -1;
    CHECK_RC(MPI_Status_set_source(&st, 5));
    CHECK_RC(MPI_Status_set_tag(&st, 77));
    CHECK_RC(MPI_Status_set_error(&st, MPI_ERR_TRUNCATE));
    CHECK_INT(st.MPI_SOURCE, 5, "MPI_SOURCE written");
    CHECK_INT(st.MPI_TAG, 77, "MPI_TAG written");
    CHECK_INT(st.MPI_ERROR, MPI_ERR_TRUNCATE, "MPI_ERROR written");
    CHECK_RC(MPI_Status_get_source(&st, &v));
    CHECK_INT(v, 5, "get_source");
    CHECK_RC(MPI_Status_get_tag(&st, &v));
    CHECK_INT(v, 77, "get_tag");
    CHECK_RC(MPI_Status_get_error(&st, &v));
    CHECK_INT(v, MPI_ERR_TRUNCATE, "get_error");
    /* What a receive wrote. */
    int x = mtest_rank;
    MPI_Sendrecv(&x, 1, MPI_INT, mtest_rank, 9, &v, 1, MPI_INT, mtest_rank, 9, MPI_COMM_WORLD, &st);
    CHECK_RC(MPI_Status_get_source(&st, &v));
    CHECK_INT(v, mtest_rank, "source of a received message");
    CHECK_RC(MPI_Status_get_tag(&st, &v));
    CHECK_INT(v, 9, "tag of a received message");
    CHECK_CLASS(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v), MPI_ERR_ARG, "get from STATUS_IGNORE");
    CHECK_CLASS(MPI_Status_get_error(&st, NULL), MPI_ERR_ARG, "NULL output");
    CHECK_CLASS(MPI_Status_set_tag(NULL, 1), MPI_ERR_ARG, "set on NULL");
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_set_elements();
    test_fields();
    return mtest_finalize();
}

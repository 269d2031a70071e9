/* Attributes through the ABI: copy and delete callbacks see ABI handles and
 * the program's extra_state; MPI_COMM_DUP_FN and MPI_COMM_NULL_COPY_FN are
 * the ABI's constants 1 and 0; predefined keyvals; datatypes' keyvals. */
#include "abi_test.h"

static int copies, deletes, extra = 7;
static MPI_Comm copied_from, deleted_on;
static MPI_Datatype type_copied_from;

static int copy_fn(MPI_Comm old, int keyval, void *ex, void *in, void *out, int *flag)
{
    (void)keyval;
    CHECK(ex == &extra, "extra_state %p", ex);
    copied_from = old;
    copies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *ex)
{
    (void)keyval, (void)val;
    CHECK(ex == &extra, "extra_state %p", ex);
    deleted_on = comm;
    deletes++;
    return MPI_SUCCESS;
}

static int type_copy(MPI_Datatype old, int keyval, void *ex, void *in, void *out, int *flag)
{
    (void)keyval, (void)ex;
    type_copied_from = old;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int kv, kv_dup, kv_none, flag;
    CHECK_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, &extra));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dup, NULL));
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv_none,
                                    NULL));
    MPI_Comm a, b;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    static char base[8];
    CHECK_OK(MPI_Comm_set_attr(a, kv, base));
    CHECK_OK(MPI_Comm_set_attr(a, kv_dup, base + 3));
    CHECK_OK(MPI_Comm_set_attr(a, kv_none, base + 5));
    CHECK_OK(MPI_Comm_dup(a, &b));
    CHECK(copies == 1 && copied_from == a, "%d copies, from %p not %p", copies,
          (void *)copied_from, (void *)a);
    void *val = NULL;
    CHECK_OK(MPI_Comm_get_attr(b, kv, &val, &flag));
    CHECK(flag && val == base + 1, "copied value %p", val);
    CHECK_OK(MPI_Comm_get_attr(b, kv_dup, &val, &flag));
    CHECK(flag && val == base + 3, "MPI_COMM_DUP_FN value %p", val);
    CHECK_OK(MPI_Comm_get_attr(b, kv_none, &val, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");
    CHECK_OK(MPI_Comm_free(&b));
    CHECK(deletes == 1, "%d deletes", deletes);
    CHECK_OK(MPI_Comm_delete_attr(a, kv));
    CHECK(deletes == 2 && deleted_on == a, "delete on %p not %p", (void *)deleted_on, (void *)a);
    CHECK_OK(MPI_Comm_free(&a));
    CHECK_OK(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "freed keyval %d", kv);
    MPI_Comm_free_keyval(&kv_dup);
    MPI_Comm_free_keyval(&kv_none);

    /* Predefined attributes, by the ABI's keyvals. */
    int *tag_ub = NULL, *wtime_global = NULL;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB %d", tag_ub ? *tag_ub : -1);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtime_global, &flag));
    CHECK(flag && (*wtime_global == 0 || *wtime_global == 1), "MPI_WTIME_IS_GLOBAL");
    int *host = NULL;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag));
    CHECK(flag && (*host == MPI_PROC_NULL || *host >= 0), "MPI_HOST %d", host ? *host : -9);

    /* A datatype's keyval: the callback sees the type duplicated. */
    int tkv;
    MPI_Datatype t, t2;
    CHECK_OK(MPI_Type_create_keyval(type_copy, MPI_TYPE_NULL_DELETE_FN, &tkv, NULL));
    CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_OK(MPI_Type_set_attr(t, tkv, base));
    CHECK_OK(MPI_Type_dup(t, &t2));
    CHECK(type_copied_from == t, "type copy saw %p not %p", (void *)type_copied_from, (void *)t);
    CHECK_OK(MPI_Type_get_attr(t2, tkv, &val, &flag));
    CHECK(flag && val == base, "type attribute %p", val);
    MPI_Type_free(&t2);
    MPI_Type_free(&t);
    MPI_Type_free_keyval(&tkv);
    MPI_Finalize();
    if (rank == 0)
        printf("test abi_attr ok\n");
    return 0;
}

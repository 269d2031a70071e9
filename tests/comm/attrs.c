/* Attributes: predefined keys, user keyvals with copy callbacks on dup and
 * delete callbacks on replace/delete/free (counted exactly), the
 * predefined callbacks, freeing a keyval still in use, failing callbacks,
 * error handlers inherited and per communicator, and error classes. */
#include "../mpi/mtest.h"

static int rank, size;
static int copies, deletes, last_deleted;

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval;
    copies++;
    *(intptr_t *)extra += 1;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    deletes++;
    last_deleted = (int)(intptr_t)value;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

/* A copy callback that fails with a user-defined class (MPICH's userdup). */
static int user_class;
static int user_class_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                           int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return user_class;
}

static void test_predefined(void)
{
    mtest_begin("attr_predefined");
    int *v, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB");
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag);
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_HOST");
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag);
    CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < size)),
          "MPI_IO");
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag);
    CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL");
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag);
    CHECK(!flag || *v >= size, "MPI_UNIVERSE_SIZE");
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);
    CHECK(!flag || *v == 0, "MPI_APPNUM of a single-program job");
    /* On a dup too. */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    flag = 0;
    MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag);
    CHECK(flag && *v >= 32767, "MPI_TAG_UB on a dup");
    MPI_Comm_free(&d);
    mtest_end();
}

static void test_callbacks(void)
{
    mtest_begin("attr_callbacks");
    intptr_t extra = 0;
    int kv, flag;
    void *val;
    CHECK_RC(MPI_Comm_create_keyval(copy_plus_one, count_delete, &kv, &extra));
    MPI_Comm a, b, c;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    copies = deletes = 0;
    CHECK_RC(MPI_Comm_set_attr(a, kv, (void *)(intptr_t)10));
    flag = 0;
    CHECK_RC(MPI_Comm_get_attr(a, kv, &val, &flag));
    CHECK(flag && (intptr_t)val == 10, "get after set");
    /* Dup copies through the callback (value + 1). */
    CHECK_RC(MPI_Comm_dup(a, &b));
    CHECK_INT(copies, 1, "copy callback calls");
    CHECK_INT(extra, 1, "extra_state reaches the callback");
    flag = 0;
    MPI_Comm_get_attr(b, kv, &val, &flag);
    CHECK(flag && (intptr_t)val == 11, "copied value");
    /* Dup of the dup: copied again. */
    MPI_Comm_dup(b, &c);
    flag = 0;
    MPI_Comm_get_attr(c, kv, &val, &flag);
    CHECK(flag && (intptr_t)val == 12, "copy of the copy");
    /* Replacing calls delete on the old value. */
    CHECK_RC(MPI_Comm_set_attr(a, kv, (void *)(intptr_t)20));
    CHECK_INT(deletes, 1, "delete on replace");
    CHECK_INT(last_deleted, 10, "old value deleted");
    CHECK_RC(MPI_Comm_delete_attr(a, kv));
    CHECK_INT(deletes, 2, "delete_attr");
    CHECK_INT(last_deleted, 20, "deleted value");
    flag = 1;
    MPI_Comm_get_attr(a, kv, &val, &flag);
    CHECK_INT(flag, 0, "gone after delete_attr");
    /* Free calls delete for what is set; a comm without it: no call. */
    MPI_Comm_free(&a);
    CHECK_INT(deletes, 2, "free without the attribute");
    MPI_Comm_free(&b);
    CHECK_INT(deletes, 3, "free with the attribute");
    CHECK_INT(last_deleted, 11, "value deleted by free");
    /* Freeing the keyval keeps the attribute and its callback. */
    CHECK_RC(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    MPI_Comm_free(&c);
    CHECK_INT(deletes, 4, "delete after the keyval was freed");
    CHECK_INT(last_deleted, 12, "value deleted after keyval free");
    mtest_end();
}

static void test_predefined_callbacks(void)
{
    mtest_begin("attr_predefined_callbacks");
    int knull, kdup, flag;
    void *val;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL);
    static int payload = 5;
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_attr(a, knull, &payload);
    MPI_Comm_set_attr(a, kdup, &payload);
    MPI_Comm_dup(a, &b);
    flag = 1;
    MPI_Comm_get_attr(b, knull, &val, &flag);
    CHECK_INT(flag, 0, "NULL_COPY_FN does not copy");
    flag = 0;
    MPI_Comm_get_attr(b, kdup, &val, &flag);
    CHECK(flag && val == &payload, "DUP_FN copies the pointer");
    /* Attributes on WORLD work too. */
    MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, &payload);
    flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, kdup, &val, &flag);
    CHECK(flag && val == &payload, "attribute on WORLD");
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free_keyval(&knull);
    MPI_Comm_free_keyval(&kdup);
    mtest_end();
}

/* MPI-1 names: Keyval_create/Attr_put/Attr_get/Attr_delete/Keyval_free. */
static void test_mpi1_names(void)
{
    mtest_begin("attr_mpi1_names");
    int kv, flag = 0;
    void *val;
    static int payload = 9;
    CHECK_RC(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kv, NULL));
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    CHECK_RC(MPI_Attr_put(a, kv, &payload));
    MPI_Comm_dup(a, &b);
    CHECK_RC(MPI_Attr_get(b, kv, &val, &flag));
    CHECK(flag && val == &payload, "MPI_DUP_FN copied through Attr_get");
    CHECK_RC(MPI_Attr_delete(b, kv));
    flag = 1;
    MPI_Attr_get(b, kv, &val, &flag);
    CHECK_INT(flag, 0, "Attr_delete");
    int *ub;
    flag = 0;
    MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    CHECK(flag && *ub >= 32767, "MPI_TAG_UB through Attr_get");
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    CHECK_RC(MPI_Keyval_free(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "Keyval_free resets the handle");
    mtest_end();
}

/* A delete callback that frees its own keyval (a copy of the handle), as
 * MPICH's attr/keyval_double_free does. */
static int delete_frees_keyval(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)value, (void)extra;
    deletes++;
    return MPI_Comm_free_keyval(&keyval);
}

/* MPI reference-counts keyvals: a keyval freed while attributes use it
 * still deletes them (through its handle, which the user may have kept)
 * with its callback; frees after the first are no-ops while it lives; a
 * keyval with no user and no attribute is gone. */
static void test_keyval_refs(void)
{
    mtest_begin("attr_keyval_refs");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kv, saved;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv, NULL));
    saved = kv;
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, (void *)(intptr_t)7));
    CHECK_RC(MPI_Comm_free_keyval(&kv));
    deletes = 0;
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved));
    CHECK_INT(deletes, 1, "delete_attr through a freed keyval still in use");
    CHECK_INT(last_deleted, 7, "the value its callback saw");
    int stale = saved;
    CHECK_CLASS(MPI_Comm_free_keyval(&stale), MPI_ERR_KEYVAL, "free of a keyval now gone");

    /* Several frees of a keyval whose attributes keep it alive. */
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_frees_keyval, &kv, NULL));
    int copy = kv, keep = kv;
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_SELF, &d);
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL));
    CHECK_RC(MPI_Comm_set_attr(d, kv, NULL));
    deletes = 0;
    CHECK_RC(MPI_Comm_free(&d)); /* the callback frees the keyval */
    CHECK_INT(deletes, 1, "delete callback on Comm_free");
    CHECK_RC(MPI_Comm_free_keyval(&kv));
    CHECK_RC(MPI_Comm_free_keyval(&copy));
    /* SELF's attribute still holds it: its callback frees it once more. */
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_SELF, keep));
    CHECK_INT(deletes, 2, "delete callback after three frees");
    CHECK_CLASS(MPI_Comm_free_keyval(&keep), MPI_ERR_KEYVAL, "the keyval is gone");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static int eh_calls, eh_class;
static void count_eh(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    eh_calls++;
    MPI_Error_class(*code, &eh_class);
}

static void test_errors(void)
{
    mtest_begin("attr_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int flag, kv;
    void *val;
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &val, &flag), MPI_ERR_KEYVAL,
                "get with MPI_KEYVAL_INVALID");
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL,
                "set a predefined attribute");
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, NULL), MPI_ERR_COMM,
                "set on COMM_NULL");
    MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    int stale = kv;
    MPI_Comm a, b = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_attr(a, kv, NULL);
    CHECK(MPI_Comm_dup(a, &b) != MPI_SUCCESS, "dup fails when a copy callback fails");
    CHECK(b == MPI_COMM_NULL, "failed dup gives MPI_COMM_NULL");
    MPI_Comm_free(&a);
    MPI_Comm_free_keyval(&kv);
    /* The callback's own code is what MPI_Comm_dup returns. */
    CHECK_RC(MPI_Add_error_class(&user_class));
    CHECK_RC(MPI_Add_error_string(user_class, "my copy failed"));
    MPI_Comm_create_keyval(user_class_copy, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_attr(a, kv, NULL);
    int rc = MPI_Comm_dup(a, &b), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_INT(cls, user_class, "class of a dup whose copy callback returned a user class");
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    CHECK(strcmp(text, "my copy failed") == 0, "text of the callback's code: '%s'", text);
    CHECK(b == MPI_COMM_NULL, "failed dup gives MPI_COMM_NULL");
    MPI_Comm_free(&a);
    MPI_Comm_free_keyval(&kv);
#ifdef TERN_VERSION_STRING /* MPICH accepts the stale handle */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, stale, NULL), MPI_ERR_KEYVAL,
                "set with a freed keyval");
#else
    (void)stale;
#endif
    CHECK_CLASS(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL),
                MPI_ERR_ARG, "create_keyval with keyval NULL");
    /* A user handler on a dup: called there, not on WORLD. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_eh, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Errhandler got;
    MPI_Comm_get_errhandler(a, &got);
    CHECK(got == MPI_ERRORS_RETURN, "dup inherits ERRORS_RETURN");
    MPI_Comm_set_errhandler(a, eh);
    int x = 0;
    eh_calls = 0;
    MPI_Send(&x, 1, MPI_INT, size, 0, a);
    CHECK_INT(eh_calls, 1, "user handler calls");
    CHECK_INT(eh_class, MPI_ERR_RANK, "class seen by the handler");
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "WORLD returns");
    CHECK_INT(eh_calls, 1, "WORLD's error does not reach the dup's handler");
    MPI_Comm_free(&a);
    MPI_Errhandler_free(&eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    test_predefined();
    test_callbacks();
    test_predefined_callbacks();
    test_mpi1_names();
    test_keyval_refs();
    test_errors();
    return mtest_finalize();
}

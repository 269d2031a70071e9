/* Attributes cached on datatypes: set/get/replace/delete on derived and
 * predefined types, copy callbacks run by MPI_Type_dup (and their flag
 * honoured), delete callbacks run by MPI_Type_delete_attr, MPI_Type_set_attr
 * (replacing) and MPI_Type_free (counted exactly, with the right values and
 * handles), the predefined MPI_TYPE_* callbacks, a keyval freed while in
 * use, failing callbacks, and keyvals of the wrong kind (MPI_ERR_KEYVAL). */
#include "../mpi/mtest.h"

static int copies, deletes;
static intptr_t last_deleted;
static MPI_Datatype last_delete_type, last_copy_type;

static int copy_plus_one(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    copies++;
    last_copy_type = old;
    *(intptr_t *)extra += 1;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)keyval, (void)extra;
    deletes++;
    last_deleted = (intptr_t)value;
    last_delete_type = t;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int failing_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t, (void)keyval, (void)value, (void)extra;
    return MPI_ERR_OTHER;
}

static void test_derived(void)
{
    mtest_begin("type_attr_derived");
    intptr_t extra = 0;
    int kv;
    CHECK_RC(MPI_Type_create_keyval(copy_plus_one, count_delete, &kv, &extra));
    MPI_Datatype t, d;
    MPI_Type_contiguous(3, MPI_INT, &t);
    void *v = NULL;
    int flag = 1;
    CHECK_RC(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(!flag, "no attribute yet");
    CHECK_RC(MPI_Type_set_attr(t, kv, (void *)10));
    CHECK_RC(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(flag && v == (void *)10, "value %p", v);
    /* Replacing runs the delete callback of the old value. */
    deletes = 0;
    CHECK_RC(MPI_Type_set_attr(t, kv, (void *)20));
    CHECK_INT(deletes, 1, "delete on replace");
    CHECK_INT(last_deleted, 10, "old value deleted");
    CHECK(last_delete_type == t, "delete callback got the type");
    /* Dup: the copy callback, with the old type; the new value is its own. */
    copies = 0;
    CHECK_RC(MPI_Type_dup(t, &d));
    CHECK_INT(copies, 1, "copy on dup");
    CHECK_INT(extra, 1, "extra_state passed");
    CHECK(last_copy_type == t, "copy callback got the old type");
    CHECK_RC(MPI_Type_get_attr(d, kv, &v, &flag));
    CHECK(flag && v == (void *)21, "copied value %p", v);
    /* Free: the delete callback with the freed type's value. */
    deletes = 0;
    MPI_Datatype dd = d;
    CHECK_RC(MPI_Type_free(&d));
    CHECK_INT(deletes, 1, "delete on free");
    CHECK_INT(last_deleted, 21, "dup's value deleted");
    CHECK(last_delete_type == dd, "delete callback got the freed type");
    /* Delete_attr. */
    deletes = 0;
    CHECK_RC(MPI_Type_delete_attr(t, kv));
    CHECK_INT(deletes, 1, "delete on delete_attr");
    CHECK_INT(last_deleted, 20, "value deleted");
    CHECK_RC(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(!flag, "gone after delete_attr");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Type_delete_attr(t, kv), MPI_ERR_KEYVAL, "delete of an absent attribute");
    /* A keyval freed while in use keeps working for the attribute. */
    CHECK_RC(MPI_Type_set_attr(t, kv, (void *)30));
    int kv2 = kv;
    CHECK_RC(MPI_Type_free_keyval(&kv));
    CHECK_INT(kv, MPI_KEYVAL_INVALID, "keyval reset");
    CHECK_CLASS(MPI_Type_set_attr(t, kv2, NULL), MPI_ERR_KEYVAL, "set with a freed keyval");
    deletes = 0;
    CHECK_RC(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "handle reset");
    CHECK_INT(deletes, 1, "delete callback of a freed keyval still runs");
    CHECK_INT(last_deleted, 30, "its value");
    mtest_end();
}

static void test_predefined_and_fns(void)
{
    mtest_begin("type_attr_predefined_fns");
    int kdup, knull;
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL));
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_delete, &knull, NULL));
    /* On a predefined type. */
    void *v = NULL;
    int flag = 0;
    CHECK_RC(MPI_Type_set_attr(MPI_INT, kdup, (void *)7));
    CHECK_RC(MPI_Type_get_attr(MPI_INT, kdup, &v, &flag));
    CHECK(flag && v == (void *)7, "attribute on MPI_INT");
    CHECK_RC(MPI_Type_get_attr(MPI_DOUBLE, kdup, &v, &flag));
    CHECK(!flag, "not on MPI_DOUBLE");
    CHECK_RC(MPI_Type_set_attr(MPI_INT, knull, (void *)8));
    MPI_Datatype d;
    CHECK_RC(MPI_Type_dup(MPI_INT, &d));
    CHECK_RC(MPI_Type_get_attr(d, kdup, &v, &flag));
    CHECK(flag && v == (void *)7, "MPI_TYPE_DUP_FN copies the value");
    CHECK_RC(MPI_Type_get_attr(d, knull, &v, &flag));
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN copies nothing");
    deletes = 0;
    CHECK_RC(MPI_Type_free(&d));
    CHECK_INT(deletes, 0, "no knull attribute on the dup");
    CHECK_RC(MPI_Type_delete_attr(MPI_INT, knull));
    CHECK_INT(deletes, 1, "delete on MPI_INT");
    CHECK_RC(MPI_Type_delete_attr(MPI_INT, kdup));
    MPI_Type_free_keyval(&kdup);
    MPI_Type_free_keyval(&knull);
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("type_attr_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kv, ckv, flag;
    void *v;
    MPI_Datatype t, d = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(2, MPI_INT, &t);
    /* A failing copy: Type_dup fails and gives no type. */
    MPI_Type_create_keyval(failing_copy, MPI_TYPE_NULL_DELETE_FN, &kv, NULL);
    MPI_Type_set_attr(t, kv, NULL);
    CHECK_CLASS(MPI_Type_dup(t, &d), MPI_ERR_OTHER, "failing copy callback");
    CHECK(d == MPI_DATATYPE_NULL, "no new type");
    MPI_Type_delete_attr(t, kv);
    MPI_Type_free_keyval(&kv);
    /* A failing delete: Type_free fails, the type stays. */
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, failing_delete, &kv, NULL);
    MPI_Type_set_attr(t, kv, NULL);
    CHECK_CLASS(MPI_Type_free(&t), MPI_ERR_OTHER, "failing delete callback");
    CHECK(t != MPI_DATATYPE_NULL, "type kept");
    int size = 0;
    CHECK_RC(MPI_Type_size(t, &size));
    CHECK_INT(size, 2 * (int)sizeof(int), "type still usable");
    CHECK_CLASS(MPI_Type_delete_attr(t, kv), MPI_ERR_OTHER, "failing delete_attr");
    MPI_Type_free_keyval(&kv);
    /* Keyvals of the wrong kind, predefined keyvals, bad arguments. */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kv, NULL);
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, ckv, NULL), MPI_ERR_KEYVAL, "communicator keyval");
    CHECK_CLASS(MPI_Type_get_attr(MPI_INT, ckv, &v, &flag), MPI_ERR_KEYVAL,
                "get with a communicator keyval");
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, NULL), MPI_ERR_KEYVAL, "datatype keyval");
    CHECK_CLASS(MPI_Comm_free_keyval(&kv), MPI_ERR_KEYVAL, "Comm_free_keyval of a type keyval");
    CHECK_CLASS(MPI_Type_free_keyval(&ckv), MPI_ERR_KEYVAL, "Type_free_keyval of a comm keyval");
    CHECK_CLASS(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &v, &flag), MPI_ERR_KEYVAL,
                "predefined communicator keyval");
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL,
                "MPI_KEYVAL_INVALID");
    CHECK_CLASS(MPI_Type_set_attr(MPI_DATATYPE_NULL, kv, NULL), MPI_ERR_TYPE, "null type");
    CHECK_CLASS(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, NULL,
                                       NULL), MPI_ERR_ARG, "NULL keyval pointer");
    MPI_Comm_free_keyval(&ckv);
    MPI_Type_free_keyval(&kv);
    MPI_Type_free(&t);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_derived();
    test_predefined_and_fns();
    test_errors();
    return mtest_finalize();
}

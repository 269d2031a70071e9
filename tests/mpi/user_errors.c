/* Error classes, codes and strings added by the program: values above
 * MPI_ERR_LASTCODE, MPI_Error_class/MPI_Error_string answering for them,
 * MPI_LASTUSEDCODE following them, codes of predefined classes, the
 * removal procedures of MPI-4.1 (in order; out of order is MPI_ERR_ARG),
 * values reused after removal, a user handler seeing a user code, and the
 * argument errors. */
#include "mtest.h"

static int handler_code;

static void record_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_code = *code;
}

static int lastused(void)
{
    int *v = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag);
    CHECK(flag, "MPI_LASTUSEDCODE is set");
    return flag ? *v : -1;
}

static void test_add(void)
{
    mtest_begin("user_errors_add");
    CHECK_INT(lastused(), MPI_ERR_LASTCODE, "LASTUSEDCODE before any addition");
    int cls, code[3], out = -1, len = -1;
    char s[MPI_MAX_ERROR_STRING];
    CHECK_RC(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE, "class %d above MPI_ERR_LASTCODE", cls);
    CHECK(lastused() >= cls, "LASTUSEDCODE covers the class");
    CHECK_RC(MPI_Error_class(cls, &out));
    CHECK_INT(out, cls, "a class is its own class");
    CHECK_RC(MPI_Error_string(cls, s, &len));
    CHECK(len == 0 && s[0] == 0, "no string yet: \"%s\"", s);
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_Add_error_code(cls, &code[i]));
        CHECK(code[i] > MPI_ERR_LASTCODE && code[i] != cls, "code %d", code[i]);
        char t[64];
        snprintf(t, sizeof t, "code %d of my class\n", i);
        CHECK_RC(MPI_Add_error_string(code[i], t));
    }
    CHECK_INT(lastused(), code[2], "LASTUSEDCODE is the newest value");
    for (int i = 0; i < 3; i++) {
        char t[64];
        snprintf(t, sizeof t, "code %d of my class\n", i);
        CHECK_RC(MPI_Error_class(code[i], &out));
        CHECK_INT(out, cls, "class of a user code");
        CHECK_RC(MPI_Error_string(code[i], s, &len));
        CHECK(!strcmp(s, t) && len == (int)strlen(t), "string \"%s\"", s);
    }
    /* A string is replaced; a class may have one too. */
    CHECK_RC(MPI_Add_error_string(code[0], "again"));
    MPI_Error_string(code[0], s, &len);
    CHECK(!strcmp(s, "again"), "replaced string \"%s\"", s);
    CHECK_RC(MPI_Add_error_string(cls, "my class"));
    MPI_Error_string(cls, s, &len);
    CHECK(!strcmp(s, "my class"), "class string \"%s\"", s);
    /* A code of a predefined class. */
    int pcode;
    CHECK_RC(MPI_Add_error_code(MPI_ERR_ARG, &pcode));
    CHECK_RC(MPI_Error_class(pcode, &out));
    CHECK_INT(out, MPI_ERR_ARG, "class of a code added to MPI_ERR_ARG");
    /* A user handler gets the code as it is. */
    MPI_Errhandler eh;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(record_handler, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    CHECK_RC(MPI_Comm_call_errhandler(dup, code[1]));
    CHECK_INT(handler_code, code[1], "code seen by the handler");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);

    /* Removal: strings, then codes, then the class. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG, "class with codes");
    CHECK_CLASS(MPI_Remove_error_code(code[0]), MPI_ERR_ARG, "code with a string");
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_Remove_error_string(code[i]));
        CHECK_RC(MPI_Remove_error_code(code[i]));
    }
    CHECK_CLASS(MPI_Error_class(code[0], &out), MPI_ERR_ARG, "class of a removed code");
    CHECK_CLASS(MPI_Remove_error_string(code[0]), MPI_ERR_ARG, "string of a removed code");
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG, "class with a string");
    CHECK_RC(MPI_Remove_error_string(cls));
    CHECK_CLASS(MPI_Remove_error_code(cls), MPI_ERR_ARG, "a class as a code");
    CHECK_CLASS(MPI_Remove_error_class(pcode), MPI_ERR_ARG, "a code as a class");
    CHECK_RC(MPI_Remove_error_class(cls));
    CHECK_RC(MPI_Remove_error_code(pcode));
    CHECK_INT(lastused(), MPI_ERR_LASTCODE, "LASTUSEDCODE after removing everything");
    /* Many adds and removes reuse the values. */
    for (int k = 0; k < 2000; k++) {
        int c, d;
        MPI_Add_error_class(&c);
        MPI_Add_error_code(c, &d);
        MPI_Add_error_string(d, "x");
        MPI_Remove_error_string(d);
        MPI_Remove_error_code(d);
        MPI_Remove_error_class(c);
    }
    CHECK_INT(lastused(), MPI_ERR_LASTCODE, "LASTUSEDCODE after add/remove cycles");
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("user_errors_bad_args");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int v;
    CHECK_CLASS(MPI_Add_error_code(MPI_ERR_LASTCODE + 12345, &v), MPI_ERR_ARG, "unknown class");
    CHECK_CLASS(MPI_Add_error_code(-3, &v), MPI_ERR_ARG, "negative class");
    CHECK_CLASS(MPI_Add_error_class(NULL), MPI_ERR_ARG, "NULL errorclass");
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_ARG, "mine"), MPI_ERR_ARG, "predefined code");
    int cls;
    MPI_Add_error_class(&cls);
    char longs[MPI_MAX_ERROR_STRING + 10];
    memset(longs, 'a', sizeof longs - 1);
    longs[sizeof longs - 1] = 0;
    CHECK_CLASS(MPI_Add_error_string(cls, longs), MPI_ERR_ARG, "string too long");
    CHECK_CLASS(MPI_Add_error_string(cls, NULL), MPI_ERR_ARG, "NULL string");
    /* Predefined texts are untouched. */
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(MPI_ERR_ARG, s, &len);
    CHECK(!strcmp(s, "invalid argument"), "MPI_ERR_ARG text \"%s\"", s);
    MPI_Remove_error_class(cls);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_add();
    test_errors();
    return mtest_finalize();
}

/* The Fortran-related procedures of MPI-4.1/5.0 from C:
 * MPI_Type_create_f90_integer/real/complex (the kind SELECTED_*_KIND picks,
 * its size and envelope, the same handle for the same (p, r), never freed,
 * MPI_ERR_ARG for no kind; the types move data and reduce),
 * MPI_Type_get_value_index (the MINLOC/MAXLOC pairs, MPI_DATATYPE_NULL for
 * none), and MPI_Abi_get_info, MPI_Abi_get/set_fortran_info and
 * MPI_Abi_get/set_fortran_booleans (MPI-5.0 21.4.1: a set that agrees
 * counts once, later ones are MPI_ERR_ABI). */
#include "mtest.h"

#include <string.h>

/* The F90 type's size, combiner and envelope integers. */
static void check_f90(MPI_Datatype t, int size, int combiner, int ni, int p, int r,
                      const char *what)
{
    int s = 0, nint = -1, naddr = -1, ndt = -1, comb = -1;
    CHECK_RC(MPI_Type_size(t, &s));
    CHECK_INT(s, size, what);
    CHECK_RC(MPI_Type_get_envelope(t, &nint, &naddr, &ndt, &comb));
    CHECK_INT(comb, combiner, what);
    CHECK_INT(nint, ni, what);
    CHECK_INT(naddr, 0, what);
    CHECK_INT(ndt, 0, what);
    int ints[2] = {-7, -7};
    MPI_Aint a;
    MPI_Datatype d;
    CHECK_RC(MPI_Type_get_contents(t, 2, 0, 0, ints, &a, &d));
    if (ni == 1) {
        CHECK_INT(ints[0], r, what);
    } else {
        CHECK_INT(ints[0], p, what);
        CHECK_INT(ints[1], r, what);
    }
}

static void test_f90(void)
{
    mtest_begin("type_create_f90");
    MPI_Datatype t, t2;
    /* SELECTED_INT_KIND: 2 digits fit a byte, 4 two bytes, 9 four, 18 eight. */
    const struct {
        int r, size;
    } ints[] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        CHECK_RC(MPI_Type_create_f90_integer(ints[i].r, &t));
        check_f90(t, ints[i].size, MPI_COMBINER_F90_INTEGER, 1, 0, ints[i].r, "f90 integer");
    }
    /* SELECTED_REAL_KIND: precision and range of REAL(4), (8), (10), (16). */
    const struct {
        int p, r, size;
    } reals[] = {{6, MPI_UNDEFINED, 4}, {MPI_UNDEFINED, 37, 4}, {6, 37, 4},  {7, 30, 8},
                 {15, 307, 8},          {3, 300, 8},            {16, 0, 16}, {18, 4931, 16},
                 {30, 100, 16},         {33, 4931, 16}};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        CHECK_RC(MPI_Type_create_f90_real(reals[i].p, reals[i].r, &t));
        check_f90(t, reals[i].size, MPI_COMBINER_F90_REAL, 2, reals[i].p, reals[i].r,
                  "f90 real");
        CHECK_RC(MPI_Type_create_f90_complex(reals[i].p, reals[i].r, &t));
        check_f90(t, 2 * reals[i].size, MPI_COMBINER_F90_COMPLEX, 2, reals[i].p, reals[i].r,
                  "f90 complex");
    }
    /* The same (p, r): the same handle; another pair of the same kind: another. */
    CHECK_RC(MPI_Type_create_f90_real(15, 307, &t));
    CHECK_RC(MPI_Type_create_f90_real(15, 307, &t2));
    CHECK(t == t2, "the same (p, r) gives the same handle");
    CHECK_RC(MPI_Type_create_f90_real(14, 307, &t2));
    CHECK(t != t2, "another (p, r) gives another handle");
    /* Predefined: freeing is an error and the handle stays usable. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype f = t;
    CHECK_CLASS(MPI_Type_free(&f), MPI_ERR_TYPE, "MPI_Type_free of an f90 type");
    CHECK(f == t, "a refused free leaves the handle");
    /* No such kind. */
    CHECK_CLASS(MPI_Type_create_f90_integer(19, &t2), MPI_ERR_ARG, "integer r 19");
    CHECK_CLASS(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t2), MPI_ERR_ARG, "integer r undef");
    CHECK_CLASS(MPI_Type_create_f90_real(34, 10, &t2), MPI_ERR_ARG, "real p 34");
    CHECK_CLASS(MPI_Type_create_f90_real(6, 5000, &t2), MPI_ERR_ARG, "real r 5000");
    CHECK_CLASS(MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &t2), MPI_ERR_ARG,
                "complex p and r undef");
    CHECK_CLASS(MPI_Type_create_f90_real(6, 37, NULL), MPI_ERR_ARG, "newtype NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* The types move data and reduce as their kind: REAL(8) sums. */
    double mine = mtest_rank + 1.5, sum = 0;
    CHECK_RC(MPI_Allreduce(&mine, &sum, 1, t, MPI_SUM, MPI_COMM_WORLD));
    double want = 0;
    for (int i = 0; i < mtest_size; i++)
        want += i + 1.5;
    CHECK(sum == want, "allreduce of an f90 REAL(8): %g, expected %g", sum, want);
    MPI_Datatype ti;
    CHECK_RC(MPI_Type_create_f90_integer(9, &ti));
    int v = mtest_rank == 0 ? 42 : 0;
    CHECK_RC(MPI_Bcast(&v, 1, ti, 0, MPI_COMM_WORLD));
    CHECK_INT(v, 42, "bcast of an f90 INTEGER(4)");
    /* They may build derived types. */
    MPI_Datatype vec;
    int s = 0;
    CHECK_RC(MPI_Type_contiguous(3, ti, &vec));
    CHECK_RC(MPI_Type_size(vec, &s));
    CHECK_INT(s, 12, "contiguous of 3 INTEGER(4)");
    CHECK_RC(MPI_Type_free(&vec));
    mtest_end();
}

static void test_value_index(void)
{
    mtest_begin("type_get_value_index");
    const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INT, MPI_LONG, MPI_DATATYPE_NULL},
        {MPI_FLOAT, MPI_FLOAT, MPI_DATATYPE_NULL},
        {MPI_CHAR, MPI_INT, MPI_DATATYPE_NULL},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        MPI_Datatype p = (MPI_Datatype)-1;
        CHECK_RC(MPI_Type_get_value_index(pairs[i].value, pairs[i].index, &p));
        CHECK(p == pairs[i].pair, "pair %zu: got 0x%x", i, (unsigned)p);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype p;
    CHECK_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &p), MPI_ERR_TYPE,
                "value_type MPI_DATATYPE_NULL");
    CHECK_CLASS(MPI_Type_get_value_index(MPI_INT, (MPI_Datatype)0x12345, &p), MPI_ERR_TYPE,
                "index_type not a type");
    CHECK_CLASS(MPI_Type_get_value_index(MPI_INT, MPI_INT, NULL), MPI_ERR_ARG, "pair_type NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static void check_key(MPI_Info info, const char *key, const char *want)
{
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    CHECK_RC(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, want) == 0, "%s is \"%s\" (flag %d), expected \"%s\"", key,
          value, flag, want);
}

static void test_abi_info(void)
{
    mtest_begin("abi_info");
    MPI_Info info = MPI_INFO_NULL;
    CHECK_RC(MPI_Abi_get_info(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Abi_get_info gives an info");
    char n[8];
    snprintf(n, sizeof n, "%zu", sizeof(MPI_Aint));
    check_key(info, "mpi_aint_size", n);
    snprintf(n, sizeof n, "%zu", sizeof(MPI_Count));
    check_key(info, "mpi_count_size", n);
    snprintf(n, sizeof n, "%zu", sizeof(MPI_Offset));
    check_key(info, "mpi_offset_size", n);
    CHECK_RC(MPI_Info_free(&info));

    /* The Fortran sizes are the Fortran types' own. */
    CHECK_RC(MPI_Abi_get_fortran_info(&info));
    CHECK(info != MPI_INFO_NULL, "Tern knows its Fortran ABI");
    const struct {
        const char *key;
        MPI_Datatype type;
    } sizes[] = {{"mpi_logical_size", MPI_LOGICAL},
                 {"mpi_integer_size", MPI_INTEGER},
                 {"mpi_real_size", MPI_REAL},
                 {"mpi_double_precision_size", MPI_DOUBLE_PRECISION}};
    for (size_t i = 0; i < 4; i++) {
        int s = 0;
        MPI_Type_size(sizes[i].type, &s);
        snprintf(n, sizeof n, "%d", s);
        check_key(info, sizes[i].key, n);
    }
    check_key(info, "mpi_integer8_supported", "true");
    check_key(info, "mpi_real16_supported", "true");
    check_key(info, "mpi_integer16_supported", "false");
    CHECK_RC(MPI_Info_free(&info));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* A set that disagrees fails and does not count; one that agrees
     * counts once. */
    MPI_Info mine;
    CHECK_RC(MPI_Info_create(&mine));
    CHECK_RC(MPI_Info_set(mine, "mpi_integer_size", "8"));
    CHECK_CLASS(MPI_Abi_set_fortran_info(mine), MPI_ERR_ABI, "INTEGER of 8 bytes");
    CHECK_RC(MPI_Info_set(mine, "mpi_integer_size", "4"));
    CHECK_RC(MPI_Info_set(mine, "mpi_logical_size", "4"));
    CHECK_RC(MPI_Abi_set_fortran_info(mine));
    CHECK_CLASS(MPI_Abi_set_fortran_info(mine), MPI_ERR_ABI, "second set_fortran_info");
    CHECK_CLASS(MPI_Abi_set_fortran_info(MPI_INFO_NULL), MPI_ERR_INFO, "info MPI_INFO_NULL");
    CHECK_RC(MPI_Info_free(&mine));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static void test_abi_booleans(void)
{
    mtest_begin("abi_fortran_booleans");
    for (int size = 1; size <= 16; size *= 2) {
        unsigned char t[16], f[16], want_t[16] = {0}, want_f[16] = {0};
        memset(t, 0x55, sizeof t);
        memset(f, 0x55, sizeof f);
        int is_set = -1;
        CHECK_RC(MPI_Abi_get_fortran_booleans(size, t, f, &is_set));
        CHECK_INT(is_set, 1, "is_set");
        want_t[0] = 1; /* gfortran: .TRUE. is the integer 1 (little-endian here) */
        CHECK(memcmp(t, want_t, (size_t)size) == 0, "LOGICAL(%d) .TRUE.", size);
        CHECK(memcmp(f, want_f, (size_t)size) == 0, "LOGICAL(%d) .FALSE.", size);
        CHECK(size == 16 || t[size] == 0x55, "LOGICAL(%d): no byte past it written", size);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int t4 = 0, f4 = 0, is_set;
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(3, &t4, &f4, &is_set), MPI_ERR_ARG, "size 3");
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(0, &t4, &f4, &is_set), MPI_ERR_ARG, "size 0");
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(32, &t4, &f4, &is_set), MPI_ERR_ARG, "size 32");
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(4, NULL, &f4, &is_set), MPI_ERR_ARG, "true NULL");
    /* -1 for .TRUE. (as some compilers have) is not Tern's: refused, and
     * does not count; the agreeing set counts once. */
    t4 = -1;
    f4 = 0;
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &t4, &f4), MPI_ERR_ABI, ".TRUE. = -1");
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(6, &t4, &f4), MPI_ERR_ARG, "size 6");
    t4 = 1;
    CHECK_RC(MPI_Abi_set_fortran_booleans(4, &t4, &f4));
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &t4, &f4), MPI_ERR_ABI, "second set");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = 0;
    MPI_Error_class(MPI_ERR_ABI, &cls);
    CHECK_INT(cls, MPI_ERR_ABI, "MPI_ERR_ABI is a class");
    CHECK_RC(MPI_Error_string(MPI_ERR_ABI, text, &len));
    CHECK(len > 0, "MPI_ERR_ABI has a text");
    mtest_end();
}

int main(int argc, char **argv)
{
    /* MPI-5.0: the ABI queries work before MPI_Init. */
    MPI_Info early = MPI_INFO_NULL;
    if (MPI_Abi_get_info(&early) != MPI_SUCCESS || early == MPI_INFO_NULL) {
        fprintf(stderr, "MPI_Abi_get_info before MPI_Init failed\n");
        return 1;
    }
    MPI_Info_free(&early);
    mtest_init(&argc, &argv);
    test_f90();
    test_value_index();
    test_abi_info();
    test_abi_booleans();
    return mtest_finalize();
}

/* Environment functions: Initialized/Finalized around Init_thread and
 * Finalize, thread levels, ranks and sizes, Wtime/Wtick, processor name,
 * versions, error strings and classes, MPI_TAG_UB and the sizes of the
 * predefined datatypes. */
#include "../mpi/mtest.h"

#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

static void test_thread(int required, int provided)
{
    mtest_begin("thread");
    int q = -1, main_flag = 0;
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
          "provided %d out of range (required %d)", provided, required);
    CHECK_RC(MPI_Query_thread(&q));
    CHECK_INT(q, provided, "Query_thread vs provided from Init_thread");
    CHECK_RC(MPI_Is_thread_main(&main_flag));
    CHECK_INT(main_flag, 1, "Is_thread_main on the thread that called Init_thread");
    int flag = -1;
    CHECK_RC(MPI_Initialized(&flag));
    CHECK_INT(flag, 1, "Initialized after Init_thread");
    flag = -1;
    CHECK_RC(MPI_Finalized(&flag));
    CHECK_INT(flag, 0, "Finalized after Init_thread");
    mtest_end();
}

static void test_rank_size(void)
{
    mtest_begin("rank_size");
    int rank = -1, size = -1;
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 1, "WORLD size %d", size);
    CHECK(rank >= 0 && rank < size, "WORLD rank %d size %d", rank, size);
    rank = -1;
    size = -1;
    CHECK_RC(MPI_Comm_rank(MPI_COMM_SELF, &rank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_SELF, &size));
    CHECK_INT(rank, 0, "SELF rank");
    CHECK_INT(size, 1, "SELF size");
    /* Ranks are distinct: everyone reports its rank to rank 0. */
    if (mtest_rank == 0) {
        char *seen = calloc((size_t)mtest_size, 1);
        for (int i = 1; i < mtest_size; i++) {
            int r = -1;
            MPI_Status st;
            CHECK_RC(MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st));
            CHECK_INT(st.MPI_SOURCE, r, "status source vs rank sent by that process");
            if (r > 0 && r < mtest_size) {
                CHECK(!seen[r], "rank %d reported twice", r);
                seen[r] = 1;
            } else {
                CHECK(0, "bad rank %d reported", r);
            }
        }
        free(seen);
    } else {
        CHECK_RC(MPI_Send(&mtest_rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
    }
    mtest_end();
}

static void test_wtime(void)
{
    mtest_begin("wtime");
    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "Wtick %g", tick);
    double prev = MPI_Wtime();
    int backwards = 0;
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        if (t < prev)
            backwards++;
        prev = t;
    }
    CHECK_INT(backwards, 0, "times Wtime went backwards in 100000 calls");
    double t0 = MPI_Wtime();
    mtest_sleep(0.1);
    double dt = MPI_Wtime() - t0;
    CHECK(dt >= 0.095 && dt < 5.0, "Wtime difference over a 0.1 s sleep: %g", dt);
    mtest_end();
}

static void test_names(void)
{
    mtest_begin("names");
    char name[MPI_MAX_PROCESSOR_NAME + 8];
    int len = -1;
    memset(name, 'x', sizeof name);
    CHECK_RC(MPI_Get_processor_name(name, &len));
    name[MPI_MAX_PROCESSOR_NAME] = 0;
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d", len);
    CHECK_INT(len, strlen(name), "processor name resultlen vs strlen");

    int v = -1, sv = -1;
    CHECK_RC(MPI_Get_version(&v, &sv));
    CHECK(v > 3 || (v == 3 && sv >= 1), "version %d.%d", v, sv);
    CHECK_INT(v, MPI_VERSION, "Get_version vs MPI_VERSION");
    CHECK_INT(sv, MPI_SUBVERSION, "Get_version vs MPI_SUBVERSION");

    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 8];
    memset(lib, 'x', sizeof lib);
    len = -1;
    CHECK_RC(MPI_Get_library_version(lib, &len));
    lib[MPI_MAX_LIBRARY_VERSION_STRING] = 0;
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version length %d", len);
    CHECK_INT(len, strlen(lib), "library version resultlen vs strlen");
    /* The level (5.0, every chapter of it). */
    CHECK(v == 5 && sv == 0, "MPI %d.%d, expected 5.0", v, sv);
    CHECK(strstr(lib, "(MPI 5.0; transports ") != NULL,
          "library version \"%s\" says the level, whole", lib);

    int flag = 0;
    int *ub = NULL;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK_INT(flag, 1, "Comm_get_attr(MPI_TAG_UB) flag");
    if (flag && ub)
        CHECK(*ub >= 32767, "MPI_TAG_UB %d", *ub);
    int *wg = NULL;
    flag = 0;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wg, &flag));
    if (flag && wg)
        CHECK(*wg == 0 || *wg == 1, "MPI_WTIME_IS_GLOBAL %d", *wg);
    int *host = NULL;
    flag = 0;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag));
    CHECK_INT(flag, 1, "Comm_get_attr(MPI_HOST) flag");
    if (flag && host)
        CHECK(*host == MPI_PROC_NULL || (*host >= 0 && *host < mtest_size), "MPI_HOST %d", *host);
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("error_strings");
    char s[MPI_MAX_ERROR_STRING + 8];
    int len = -1;
    CHECK_RC(MPI_Error_string(MPI_SUCCESS, s, &len));
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "Error_string(MPI_SUCCESS) length %d", len);
    CHECK_INT(len, strlen(s), "Error_string(MPI_SUCCESS) resultlen vs strlen");

    static const int classes[] = {MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG,
                                  MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_TRUNCATE, MPI_ERR_REQUEST,
                                  MPI_ERR_IN_STATUS, MPI_ERR_OTHER, MPI_ERR_ARG, MPI_ERR_INTERN};
    char strs[sizeof classes / sizeof classes[0]][MPI_MAX_ERROR_STRING + 8];
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        len = -1;
        strs[i][0] = 0;
        CHECK_RC(MPI_Error_string(classes[i], strs[i], &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "Error_string(%d) length %d", classes[i], len);
        CHECK_INT(len, strlen(strs[i]), "Error_string resultlen vs strlen");
        CHECK(strcmp(strs[i], s) != 0, "Error_string(%d) equals the MPI_SUCCESS string '%s'",
              classes[i], s);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(strs[i], strs[j]) != 0, "classes %d and %d have the same string '%s'",
                  classes[i], classes[j], strs[i]);
    }
    for (int c = MPI_SUCCESS; c <= MPI_ERR_RMA_FLAVOR; c++) {
        if (c == MPI_ERR_ASSERT + 1)
            continue; /* 54: no class in MPICH's numbering (docs/design.md) */
        int cls = -1;
        CHECK_RC(MPI_Error_class(c, &cls));
        CHECK_INT(cls, c, "Error_class of an error class");
        len = -1;
        CHECK_RC(MPI_Error_string(c, s, &len));
        CHECK(len > 0, "Error_string(%d) empty", c);
    }
    mtest_end();
}

struct type_case {
    const char *name;
    MPI_Datatype type;
    int size;   /* MPI_Type_size: bytes of data */
    int extent; /* MPI_Type_get_extent: sizeof the C type */
};

struct float_int { float a; int b; };
struct double_int { double a; int b; };
struct long_int { long a; int b; };
struct short_int { short a; int b; };
struct long_double_int { long double a; int b; };

#define T(ty, cty) {#ty, ty, (int)sizeof(cty), (int)sizeof(cty)}
#define TP(ty, s, cty) {#ty, ty, s, (int)sizeof(cty)}

static void test_type_sizes(void)
{
    mtest_begin("type_size");
    const struct type_case cases[] = {
        T(MPI_CHAR, char),
        T(MPI_SIGNED_CHAR, signed char),
        T(MPI_UNSIGNED_CHAR, unsigned char),
        T(MPI_BYTE, unsigned char),
        T(MPI_WCHAR, wchar_t),
        T(MPI_SHORT, short),
        T(MPI_UNSIGNED_SHORT, unsigned short),
        T(MPI_INT, int),
        T(MPI_UNSIGNED, unsigned),
        T(MPI_LONG, long),
        T(MPI_UNSIGNED_LONG, unsigned long),
        T(MPI_LONG_LONG_INT, long long),
        T(MPI_LONG_LONG, long long),
        T(MPI_UNSIGNED_LONG_LONG, unsigned long long),
        T(MPI_FLOAT, float),
        T(MPI_DOUBLE, double),
        T(MPI_LONG_DOUBLE, long double),
        T(MPI_PACKED, char),
        T(MPI_C_BOOL, _Bool),
        T(MPI_INT8_T, int8_t),
        T(MPI_INT16_T, int16_t),
        T(MPI_INT32_T, int32_t),
        T(MPI_INT64_T, int64_t),
        T(MPI_UINT8_T, uint8_t),
        T(MPI_UINT16_T, uint16_t),
        T(MPI_UINT32_T, uint32_t),
        T(MPI_UINT64_T, uint64_t),
        T(MPI_AINT, MPI_Aint),
        T(MPI_OFFSET, MPI_Offset),
        T(MPI_COUNT, MPI_Count),
        T(MPI_C_FLOAT_COMPLEX, float _Complex),
        T(MPI_C_COMPLEX, float _Complex),
        T(MPI_C_DOUBLE_COMPLEX, double _Complex),
        T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
        T(MPI_CXX_BOOL, _Bool), /* sizeof(bool) in C++ is 1 on this ABI */
        T(MPI_CXX_FLOAT_COMPLEX, float _Complex),
        T(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
        T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
        /* Pair types: the size is the data (sum of the members), the extent
         * is the C struct's. */
        TP(MPI_FLOAT_INT, (int)(sizeof(float) + sizeof(int)), struct float_int),
        TP(MPI_DOUBLE_INT, (int)(sizeof(double) + sizeof(int)), struct double_int),
        TP(MPI_LONG_INT, (int)(sizeof(long) + sizeof(int)), struct long_int),
        TP(MPI_2INT, (int)(2 * sizeof(int)), int[2]),
        TP(MPI_SHORT_INT, (int)(sizeof(short) + sizeof(int)), struct short_int),
        TP(MPI_LONG_DOUBLE_INT, (int)(sizeof(long double) + sizeof(int)), struct long_double_int),
        /* Fortran types with the usual gfortran sizes. */
        TP(MPI_INTEGER, 4, int32_t),
        TP(MPI_REAL, 4, float),
        TP(MPI_DOUBLE_PRECISION, 8, double),
        TP(MPI_LOGICAL, 4, int32_t),
        TP(MPI_CHARACTER, 1, char),
        TP(MPI_COMPLEX, 8, float _Complex),
        TP(MPI_DOUBLE_COMPLEX, 16, double _Complex),
        TP(MPI_2INTEGER, 8, int32_t[2]),
        TP(MPI_2REAL, 8, float[2]),
        TP(MPI_2DOUBLE_PRECISION, 16, double[2]),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct type_case *c = &cases[i];
        int size = -1;
        MPI_Count sizex = -1;
        MPI_Aint lb = -1, extent = -1;
        int rc = MPI_Type_size(c->type, &size);
        CHECK(rc == MPI_SUCCESS, "Type_size(%s) returned %d", c->name, rc);
        if (size != c->size)
            CHECK(0, "Type_size(%s): expected %d, got %d", c->name, c->size, size);
        rc = MPI_Type_size_x(c->type, &sizex);
        CHECK(rc == MPI_SUCCESS, "Type_size_x(%s) returned %d", c->name, rc);
        if (sizex != c->size)
            CHECK(0, "Type_size_x(%s): expected %d, got %lld", c->name, c->size, (long long)sizex);
        rc = MPI_Type_get_extent(c->type, &lb, &extent);
        CHECK(rc == MPI_SUCCESS, "Type_get_extent(%s) returned %d", c->name, rc);
        if (lb != 0 || extent != c->extent)
            CHECK(0, "Type_get_extent(%s): expected lb 0 extent %d, got lb %ld extent %ld", c->name,
                  c->extent, (long)lb, (long)extent);
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    int flag = -1, errs_before = 0;
    int v = -1, sv = -1;

    /* Before MPI_Init_thread: only a few functions may be called. */
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "Initialized before Init: expected flag 0, got %d\n", flag);
        errs_before++;
    }
    flag = -1;
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "Finalized before Init: expected flag 0, got %d\n", flag);
        errs_before++;
    }
    if (MPI_Get_version(&v, &sv) != MPI_SUCCESS || v != MPI_VERSION || sv != MPI_SUBVERSION) {
        fprintf(stderr, "Get_version before Init: got %d.%d\n", v, sv);
        errs_before++;
    }

    int provided = -1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init_thread failed\n");
        return 1;
    }
    mtest_init_common();
    mtest_errors += errs_before;

    test_thread(MPI_THREAD_MULTIPLE, provided);
    test_rank_size();
    test_wtime();
    test_names();
    test_errors();
    test_type_sizes();

    int rc = mtest_finalize();
    flag = -1;
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != 1) {
        fprintf(stderr, "rank %d: Finalized after Finalize: expected 1, got %d\n", mtest_rank, flag);
        rc = 1;
    }
    flag = -1;
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != 1) {
        fprintf(stderr, "rank %d: Initialized after Finalize: expected 1, got %d\n", mtest_rank, flag);
        rc = 1;
    }
    v = sv = -1;
    if (MPI_Get_version(&v, &sv) != MPI_SUCCESS || v != MPI_VERSION) {
        fprintf(stderr, "rank %d: Get_version after Finalize: got %d.%d\n", mtest_rank, v, sv);
        rc = 1;
    }
    return rc;
}

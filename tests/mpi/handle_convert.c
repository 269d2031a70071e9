/* MPI-5.0 chapters 19 and 20 from C: every handle kind through c2f/f2c and
 * toint/fromint (null, predefined and dynamic handles come back as they
 * went and keep working), status conversions between the C, Fortran and
 * mpi_f08 forms (and MPI_STATUS_IGNORE refused), MPI_Type_match_size and
 * MPI_Abi_get_version. */
#include "mtest.h"

/* c2f then f2c, toint then fromint: the same handle; the Fortran integer is
 * the C value (predefined handles are PARAMETERs in mpif.h). */
#define ROUND_TRIP(H, h)                                                                           \
    do {                                                                                           \
        MPI_Fint f_ = MPI_##H##_c2f(h);                                                            \
        CHECK_INT(f_, (MPI_Fint)(h), #H "_c2f(" #h ")");                                           \
        CHECK(MPI_##H##_f2c(f_) == (h), #H "_f2c(c2f(" #h "))");                                   \
        CHECK(MPI_##H##_fromint(MPI_##H##_toint(h)) == (h), #H "_fromint(toint(" #h "))");         \
        CHECK(PMPI_##H##_f2c(PMPI_##H##_c2f(h)) == (h), "P" #H "_f2c(c2f(" #h "))");               \
    } while (0)

static void test_handles(void)
{
    mtest_begin("handle_round_trips");
    ROUND_TRIP(Comm, MPI_COMM_NULL);
    ROUND_TRIP(Comm, MPI_COMM_WORLD);
    ROUND_TRIP(Comm, MPI_COMM_SELF);
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    ROUND_TRIP(Comm, dup);
    /* The converted handle is the communicator itself. */
    int size = 0, wsize = 0;
    CHECK_RC(MPI_Comm_size(MPI_Comm_f2c(MPI_Comm_c2f(dup)), &size));
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK_INT(size, wsize, "size through a converted handle");

    ROUND_TRIP(Type, MPI_DATATYPE_NULL);
    ROUND_TRIP(Type, MPI_INT);
    ROUND_TRIP(Type, MPI_DOUBLE_PRECISION);
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    ROUND_TRIP(Type, vec);
    MPI_Datatype back = MPI_Type_fromint(MPI_Type_toint(vec));
    CHECK_RC(MPI_Type_size(back, &size));
    CHECK_INT(size, 2 * (int)sizeof(int), "size through a converted type");

    ROUND_TRIP(Group, MPI_GROUP_NULL);
    ROUND_TRIP(Group, MPI_GROUP_EMPTY);
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &g));
    ROUND_TRIP(Group, g);

    ROUND_TRIP(Request, MPI_REQUEST_NULL);
    MPI_Request req;
    int x = 7, y = 0;
    CHECK_RC(MPI_Irecv(&y, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &req));
    ROUND_TRIP(Request, req);
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
    MPI_Request r2 = MPI_Request_f2c(MPI_Request_c2f(req));
    CHECK_RC(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    CHECK_INT(y, 7, "message through a converted request");

    ROUND_TRIP(Op, MPI_OP_NULL);
    ROUND_TRIP(Op, MPI_SUM);
    ROUND_TRIP(Op, MPI_NO_OP);

    ROUND_TRIP(Errhandler, MPI_ERRHANDLER_NULL);
    ROUND_TRIP(Errhandler, MPI_ERRORS_RETURN);
    ROUND_TRIP(Errhandler, MPI_ERRORS_ARE_FATAL);
    ROUND_TRIP(Errhandler, MPI_ERRORS_ABORT);

    ROUND_TRIP(Info, MPI_INFO_NULL);
    ROUND_TRIP(Info, MPI_INFO_ENV);
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    ROUND_TRIP(Info, info);
    CHECK_RC(MPI_Info_set(MPI_Info_f2c(MPI_Info_c2f(info)), "k", "v"));
    int nkeys = 0;
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys));
    CHECK_INT(nkeys, 1, "key set through a converted info");

    ROUND_TRIP(Message, MPI_MESSAGE_NULL);
    ROUND_TRIP(Message, MPI_MESSAGE_NO_PROC);
    MPI_Message msg;
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, 0, 6, MPI_COMM_SELF));
    CHECK_RC(MPI_Mprobe(0, 6, MPI_COMM_SELF, &msg, MPI_STATUS_IGNORE));
    ROUND_TRIP(Message, msg);
    MPI_Message m2 = MPI_Message_f2c(MPI_Message_c2f(msg));
    y = 0;
    CHECK_RC(MPI_Mrecv(&y, 1, MPI_INT, &m2, MPI_STATUS_IGNORE));
    CHECK_INT(y, 7, "message received through a converted handle");

    MPI_Info_free(&info);
    MPI_Group_free(&g);
    MPI_Type_free(&vec);
    MPI_Comm_free(&dup);
    mtest_end();
}

static void test_status(void)
{
    mtest_begin("status_conversions");
    MPI_Status c = {0}, c2;
    c.MPI_SOURCE = 3;
    c.MPI_TAG = 44;
    c.MPI_ERROR = MPI_ERR_TAG;
    CHECK_RC(MPI_Status_set_elements(&c, MPI_INT, 5));
    MPI_Fint f[MPI_F_STATUS_SIZE];
    CHECK_RC(MPI_Status_c2f(&c, f));
    CHECK_INT(f[MPI_F_SOURCE], 3, "Fortran MPI_SOURCE");
    CHECK_INT(f[MPI_F_TAG], 44, "Fortran MPI_TAG");
    CHECK_INT(f[MPI_F_ERROR], MPI_ERR_TAG, "Fortran MPI_ERROR");
    MPI_F08_status f08;
    CHECK_RC(MPI_Status_f2f08(f, &f08));
    CHECK_INT(f08.MPI_SOURCE, 3, "f08 MPI_SOURCE");
    CHECK_INT(f08.MPI_TAG, 44, "f08 MPI_TAG");
    MPI_Fint f2[MPI_F_STATUS_SIZE];
    CHECK_RC(MPI_Status_f082f(&f08, f2));
    memset(&c2, 0, sizeof c2);
    CHECK_RC(MPI_Status_f2c(f2, &c2));
    int count = 0;
    CHECK_RC(MPI_Get_count(&c2, MPI_INT, &count));
    CHECK_INT(count, 5, "count after C -> F -> f08 -> F -> C");
    CHECK_INT(c2.MPI_ERROR, MPI_ERR_TAG, "error after the round trip");
    memset(&f08, 0, sizeof f08);
    CHECK_RC(MPI_Status_c2f08(&c, &f08));
    memset(&c2, 0, sizeof c2);
    CHECK_RC(MPI_Status_f082c(&f08, &c2));
    CHECK_RC(MPI_Get_count(&c2, MPI_INT, &count));
    CHECK_INT(count, 5, "count after C -> f08 -> C");
    CHECK_INT(c2.MPI_TAG, 44, "tag after C -> f08 -> C");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERROR_TEXT(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG,
                     "MPI_Status_c2f: status is MPI_STATUS_IGNORE", "c2f of MPI_STATUS_IGNORE");
    CHECK_CLASS(MPI_Status_f2c(NULL, &c2), MPI_ERR_ARG, "f2c of NULL");
    CHECK_CLASS(MPI_Status_f2c(f, MPI_STATUS_IGNORE), MPI_ERR_ARG, "f2c into MPI_STATUS_IGNORE");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static void test_match_size(void)
{
    mtest_begin("type_match_size");
    static const struct {
        int typeclass, size;
        MPI_Datatype want;
    } cases[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},       {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},     {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int size = 0;
        CHECK_RC(MPI_Type_match_size(cases[i].typeclass, cases[i].size, &t));
        CHECK(t == cases[i].want, "match_size(%d, %d)", cases[i].typeclass, cases[i].size);
        CHECK_RC(MPI_Type_size(t, &size));
        CHECK_INT(size, cases[i].size, "size of the matched type");
    }
    /* The sized types reduce as their C twins. */
    long long in8 = 1LL << 40, out8 = 0;
    CHECK_RC(MPI_Allreduce(&in8, &out8, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out8 == (long long)mtest_size << 40, "INTEGER8 sum");
    double complex_in[2] = {1.0, 2.0}, complex_out[2] = {0, 0};
    CHECK_RC(MPI_Allreduce(complex_in, complex_out, 1, MPI_COMPLEX16, MPI_SUM, MPI_COMM_WORLD));
    CHECK(complex_out[1] == 2.0 * mtest_size, "COMPLEX16 sum");
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    CHECK_RC(MPI_Type_get_name(MPI_REAL8, name, &len));
    CHECK(strcmp(name, "MPI_REAL8") == 0, "name of MPI_REAL8: %s", name);
    MPI_Datatype t;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERROR_TEXT(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG,
                     "MPI_Type_match_size: no Fortran INTEGER type has 3 bytes", "integer of 3 bytes");
    CHECK_CLASS(MPI_Type_match_size(99, 4, &t), MPI_ERR_ARG, "bad typeclass");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static void test_abi(void)
{
    mtest_begin("abi_get_version");
    int major = 0, minor = 0;
    CHECK_RC(MPI_Abi_get_version(&major, &minor));
    CHECK_INT(major, -1, "ABI major (not the standard ABI)");
    CHECK_INT(minor, -1, "ABI minor");
    mtest_end();
}

int main(int argc, char **argv)
{
    /* Before MPI_Init: the conversions need no library state. */
    if (MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) != MPI_COMM_WORLD ||
        MPI_Type_toint(MPI_INT) != (int)MPI_INT) {
        fprintf(stderr, "conversion before MPI_Init failed\n");
        return 1;
    }
    mtest_init(&argc, &argv);
    test_handles();
    test_status();
    test_match_size();
    test_abi();
    return mtest_finalize();
}

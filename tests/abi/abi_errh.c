/* Error handlers through the ABI: a communicator's and a window's handler
 * see the object's ABI handle and an ABI error code; MPI_Comm_call_errhandler
 * passes the program's own code. */
#include "abi_test.h"

#include <string.h>

static MPI_Comm seen_comm;
static int seen_class = -1, seen_code = -1, comm_calls;
static MPI_Win seen_win;

static void on_comm(MPI_Comm *comm, int *code, ...)
{
    seen_comm = *comm;
    seen_code = *code;
    MPI_Error_class(*code, &seen_class);
    comm_calls++;
}

static void on_win(MPI_Win *win, int *code, ...)
{
    seen_win = *win;
    MPI_Error_class(*code, &seen_class);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Errhandler eh, weh, got;
    CHECK_OK(MPI_Comm_create_errhandler(on_comm, &eh));
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Comm_set_errhandler(dup, eh));
    CHECK_OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh, "get_errhandler %p, set %p", (void *)got, (void *)eh);
    CHECK_OK(MPI_Errhandler_free(&got));

    int x = 0;
    int err = MPI_Bcast(&x, 1, MPI_INT, size + 1, dup); /* bad root */
    CHECK(comm_calls == 1, "handler called %d times", comm_calls);
    CHECK(seen_comm == dup, "handler saw %p, not %p", (void *)seen_comm, (void *)dup);
    CHECK(seen_class == MPI_ERR_ROOT, "class %d", seen_class);
    CHECK(err == seen_code, "returned %d, handler saw %d", err, seen_code);

    /* MPI_Comm_call_errhandler with a code the program made. */
    int cls, code;
    CHECK_OK(MPI_Add_error_class(&cls));
    CHECK_OK(MPI_Add_error_code(cls, &code));
    CHECK_OK(MPI_Comm_call_errhandler(dup, code));
    CHECK(seen_code == code && seen_class == cls, "code %d/%d class %d/%d", seen_code, code,
          seen_class, cls);
    CHECK_OK(MPI_Comm_call_errhandler(dup, MPI_ERR_TRUNCATE));
    CHECK(seen_code == MPI_ERR_TRUNCATE && seen_class == MPI_ERR_TRUNCATE, "truncate: %d %d",
          seen_code, seen_class);

    /* MPI_COMM_WORLD's predefined handler comes back as the ABI constant. */
    CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "world's handler %p", (void *)got);

    /* A window's handler. */
    int buf[4];
    MPI_Win win;
    CHECK_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_OK(MPI_Win_create_errhandler(on_win, &weh));
    CHECK_OK(MPI_Win_set_errhandler(win, weh));
    seen_class = -1;
    CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_SYNC));
    CHECK(seen_win == win && seen_class == MPI_ERR_RMA_SYNC, "win %p class %d",
          (void *)seen_win, seen_class);
    int flavor_flag = 0, *flavor = NULL;
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flavor_flag));
    CHECK(flavor_flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor %d", flavor ? *flavor : -1);
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "freed window");
    CHECK_OK(MPI_Errhandler_free(&weh));
    CHECK_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "freed handler");
    CHECK_OK(MPI_Comm_free(&dup));

    /* Every class the ABI names is its own class and has a text, also
     * those libtern lacks (MPI_ERR_ERRHANDLER, MPI_ERR_VALUE_TOO_LARGE,
     * MPI_ERR_PROC_ABORTED) and the tools interface's (1001..1018). */
    for (int c = 0; c <= 1018; c = c == MPI_ERR_ABI ? MPI_T_ERR_CANNOT_INIT : c + 1) {
        int cls = -1, len = 0;
        char text[MPI_MAX_ERROR_STRING];
        CHECK_OK(MPI_Error_class(c, &cls));
        CHECK(cls == c, "MPI_Error_class(%d) is %d", c, cls);
        CHECK_OK(MPI_Error_string(c, text, &len));
        CHECK(len > 0 && (int)strlen(text) == len, "MPI_Error_string(%d): %d", c, len);
    }
    MPI_Finalize();
    if (rank == 0)
        printf("test abi_errh ok\n");
    return 0;
}

/* MPI_Comm_connect to a port nobody accepts on gives up: with the info key
 * "timeout" (seconds) or TERN_PORT_CONNECT_TIMEOUT (the test sets it to
 * 2 s) it fails with MPI_ERR_PORT on every member of the connecting group,
 * in about that time, and its request is withdrawn, so the port still
 * serves a later accept/connect pair. One accept for two connects: one
 * connects, the other times out. The even ranks are the server group, the
 * odd ones the clients (np >= 2). */
#include "../mpi/mtest.h"

#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Both sides use the new intercommunicator: the client leaders swap a
 * value, so a pair that formed wrongly fails here. */
static void use(MPI_Comm ic, int server, const char *what)
{
    int lrank, rsize, mine = server ? 1111 : 2222, got = -1;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(rsize == (server ? mtest_size / 2 : (mtest_size + 1) / 2), "%s: remote size %d", what,
          rsize);
    if (lrank == 0) {
        CHECK_RC(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, ic,
                              MPI_STATUS_IGNORE));
        CHECK_INT(got, server ? 2222 : 1111, what);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int server = mtest_rank % 2 == 0;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, !server, mtest_rank, &half);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";
    if (mtest_rank == 0)
        CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);

    mtest_begin("no_accept");
    if (!server) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "timeout", "1");
        MPI_Comm ic = MPI_COMM_NULL;
        double t0 = now();
        CHECK_CLASS(MPI_Comm_connect(port, info, 0, half, &ic), MPI_ERR_PORT, "info timeout 1");
        double t = now() - t0;
        CHECK(t >= 0.9 && t < 30, "connect gave up after %.2f s (info timeout 1 s)", t);
        CHECK(ic == MPI_COMM_NULL, "no communicator after a failed connect");
        MPI_Info_free(&info);
        t0 = now();
        CHECK_CLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic), MPI_ERR_PORT,
                    "TERN_PORT_CONNECT_TIMEOUT=2");
        t = now() - t0;
        CHECK(t >= 1.9 && t < 40, "connect gave up after %.2f s (knob 2 s)", t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mtest_end();

    /* The withdrawn requests left nothing behind: a pair still forms. */
    mtest_begin("after_timeout");
    {
        MPI_Comm ic = MPI_COMM_NULL;
        if (server)
            CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
        else
            CHECK_RC(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic));
        if (ic != MPI_COMM_NULL) {
            use(ic, server, "pair after timeouts");
            MPI_Comm_free(&ic);
        }
    }
    mtest_end();

    mtest_begin("mismatch");
    {
        MPI_Comm ic = MPI_COMM_NULL;
        if (server) {
            CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
            if (ic != MPI_COMM_NULL) {
                use(ic, server, "the one accept");
                MPI_Comm_free(&ic);
            }
        } else {
            CHECK_RC(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic));
            if (ic != MPI_COMM_NULL) {
                use(ic, server, "the first connect");
                MPI_Comm_free(&ic);
            }
            CHECK_CLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic), MPI_ERR_PORT,
                        "the second connect (no accept left)");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    mtest_end();

    if (mtest_rank == 0)
        MPI_Close_port(port);
    MPI_Comm_free(&half);
    return mtest_finalize();
}

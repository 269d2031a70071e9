/* MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect between two jobs
 * started by separate mpiexec runs (connect_test.sh): the accepting job's
 * rank 0 writes its port name to a file the connecting job's rank 0 reads.
 * Both sides exchange messages between every pair, merge (the acceptors
 * low) and check an allreduce, then disconnect. The connecting side also
 * checks that a malformed port name fails on every rank with
 * MPI_ERR_PORT. With "publish" the port travels through MPI_Publish_name /
 * MPI_Lookup_name in one job instead (accept and connect from halves of
 * MPI_COMM_WORLD split in two). */
#include "../mpi/mtest.h"

static void exchange(MPI_Comm ic, int accept_side)
{
    int rsize, rank, size;
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &rank);
    MPI_Comm_size(ic, &size);
    for (int p = 0; p < rsize; p++) {
        int out = 100 * rank + p, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, p, 5, &in, 1, MPI_INT, p, 5, ic, MPI_STATUS_IGNORE);
        CHECK_INT(in, 100 * p + rank, "value from the other group");
    }
    MPI_Comm merged;
    MPI_Intercomm_merge(ic, accept_side ? 0 : 1, &merged);
    int mrank, msize, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK_INT(msize, size + rsize, "merged size");
    CHECK_INT(mrank, accept_side ? rank : rsize + rank, "merged rank");
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(sum, msize * (msize - 1) / 2, "allreduce over both jobs");
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&ic);
}

static void two_jobs(const char *mode, const char *file)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic;
    if (strcmp(mode, "accept") == 0) {
        if (mtest_rank == 0) {
            CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            if (!f || fprintf(f, "%s\n", port) < 0 || fclose(f) != 0 || rename(tmp, file) != 0)
                FATAL("cannot write %s", file);
        }
        CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
        exchange(ic, 1);
        if (mtest_rank == 0)
            CHECK_RC(MPI_Close_port(port));
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
        CHECK_CLASS(rc, MPI_ERR_PORT, "connect to a malformed port name");
        CHECK(ic == MPI_COMM_NULL);
        if (mtest_rank == 0) {
            FILE *f = NULL;
            for (int i = 0; i < 3000 && !(f = fopen(file, "r")); i++)
                usleep(10000);
            if (!f || !fgets(port, sizeof port, f))
                FATAL("no port name in %s", file);
            fclose(f);
            port[strcspn(port, "\n")] = '\0';
        }
        CHECK_RC(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic));
        exchange(ic, 0);
    }
}

/* Halves of one job meet through the name service. */
static void publish(void)
{
    const char *svc = "tern-test-service";
    int lower = mtest_rank < mtest_size / 2;
    MPI_Comm half, ic;
    MPI_Comm_split(MPI_COMM_WORLD, lower, mtest_rank, &half);
    char port[MPI_MAX_PORT_NAME] = "", got[MPI_MAX_PORT_NAME] = "";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Lookup_name("tern-test-unknown", MPI_INFO_NULL, got), MPI_ERR_NAME,
                "lookup of a name never published");
    if (mtest_rank == 0) {
        CHECK_RC(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK_RC(MPI_Publish_name(svc, MPI_INFO_NULL, port));
        CHECK_CLASS(MPI_Publish_name(svc, MPI_INFO_NULL, port), MPI_ERR_SERVICE,
                    "second publish of one name");
        /* Any string may be published, not only an open port (MPICH's
         * namepub); a regression: it was refused as no port name. */
        CHECK_RC(MPI_Publish_name("tern-test-other", MPI_INFO_NULL, "otherhost:122"));
        CHECK_RC(MPI_Lookup_name("tern-test-other", MPI_INFO_NULL, got));
        CHECK(strcmp(got, "otherhost:122") == 0, "looked up '%s'", got);
        CHECK_RC(MPI_Unpublish_name("tern-test-other", MPI_INFO_NULL, "otherhost:122"));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (lower) {
        CHECK_RC(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
    } else {
        int me;
        MPI_Comm_rank(half, &me);
        if (me == 0) {
            CHECK_RC(MPI_Lookup_name(svc, MPI_INFO_NULL, got));
            CHECK(strncmp(got, "tern-port:", 10) == 0);
        }
        CHECK_RC(MPI_Comm_connect(got, MPI_INFO_NULL, 0, half, &ic));
    }
    exchange(ic, lower);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0) {
        CHECK_RC(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
        CHECK_CLASS(MPI_Unpublish_name(svc, MPI_INFO_NULL, port), MPI_ERR_SERVICE,
                    "unpublish of a name not published");
        CHECK_RC(MPI_Close_port(port));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_CLASS(MPI_Lookup_name(svc, MPI_INFO_NULL, got), MPI_ERR_NAME,
                "lookup after unpublish");
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_init_common();
    if (argc < 2 || (strcmp(argv[1], "publish") != 0 && argc < 3))
        FATAL("usage: connect accept|connect FILE | connect publish");
    mtest_begin(argv[1]);
    if (strcmp(argv[1], "publish") == 0)
        publish();
    else
        two_jobs(argv[1], argv[2]);
    mtest_end();
    return mtest_finalize();
}

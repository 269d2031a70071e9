/* Single-completion calls leave a status's MPI_ERROR field alone (MPI 3.2.5:
 * only the calls returning several statuses may write it): Recv, Probe,
 * Iprobe, Mprobe, Mrecv (also from MPI_PROC_NULL), Imrecv + Wait, Test,
 * Request_get_status. And
 * MPI_C_COMPLEX (the same handle as MPI_C_FLOAT_COMPLEX) is named
 * "MPI_C_COMPLEX", as MPICH's datatype/typename expects. Run at 2 ranks. */
#include "mtest.h"

static void fresh(MPI_Status *s)
{
    memset(s, 0xab, sizeof *s);
    s->MPI_ERROR = MPI_ERR_DIMS;
}

int main(int argc, char **argv)
{
    int rank, size, buf[2] = {7, 8}, flag = 0, count = -1;
    MPI_Status s;
    MPI_Message msg;
    MPI_Request req;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Type_get_name(MPI_C_COMPLEX, name, &len);
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "Type_get_name(MPI_C_COMPLEX)");

    fresh(&s);
    MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &s);
    CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NO_PROC,
          "Mprobe(MPI_PROC_NULL)");
    fresh(&s);
    MPI_Mrecv(buf, 0, MPI_INT, &msg, &s);
    CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_SOURCE == MPI_PROC_NULL, "Mrecv(MPI_MESSAGE_NO_PROC)");
    fresh(&s);
    MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &s);
    CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == MPI_ANY_TAG, "Probe(MPI_PROC_NULL)");

    if (size >= 2 && rank == 0) {
        for (int i = 0; i < 6; i++)
            MPI_Send(buf, 2, MPI_INT, 1, i, MPI_COMM_WORLD);
    } else if (size >= 2 && rank == 1) {
        fresh(&s);
        MPI_Recv(buf, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 0, "Recv");

        fresh(&s);
        MPI_Probe(0, 1, MPI_COMM_WORLD, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 1, "Probe");
        fresh(&s);
        while (!flag)
            MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_SOURCE == 0, "Iprobe");
        MPI_Recv(buf, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

        fresh(&s);
        MPI_Mprobe(0, 2, MPI_COMM_WORLD, &msg, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 2, "Mprobe");
        MPI_Get_count(&s, MPI_INT, &count);
        CHECK(count == 2, "Mprobe count");
        fresh(&s);
        MPI_Mrecv(buf, 2, MPI_INT, &msg, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 2, "Mrecv");

        MPI_Mprobe(0, 3, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
        MPI_Imrecv(buf, 2, MPI_INT, &msg, &req);
        fresh(&s);
        MPI_Wait(&req, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 3, "Imrecv + Wait");

        MPI_Irecv(buf, 2, MPI_INT, 0, 4, MPI_COMM_WORLD, &req);
        flag = 0;
        while (!flag) {
            fresh(&s);
            MPI_Request_get_status(req, &flag, &s);
        }
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 4, "Request_get_status");
        fresh(&s);
        MPI_Wait(&req, &s);
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS, "Wait");

        MPI_Irecv(buf, 2, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
        flag = 0;
        while (!flag) {
            fresh(&s);
            MPI_Test(&req, &flag, &s);
        }
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_TAG == 5 && buf[1] == 8, "Test");
    }
    int rc = mtest_finalize();
    if (rc == 0 && rank == 0)
        printf("status_error_field: ok\n");
    return rc;
}

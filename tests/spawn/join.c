/* MPI_Comm_join between two ranks of one job over a TCP connection they
 * make themselves (rank 0 listens on loopback, rank 1 connects): the
 * intercommunicator carries traffic both ways, a merge puts the sides in a
 * consistent order, and a bad descriptor is MPI_ERR_ARG. Other ranks only
 * watch. */
#include "../mpi/mtest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_begin("join");
    int port = 0, fd = -1;
    if (mtest_rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof sa;
        if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) || listen(l, 1) ||
            getsockname(l, (struct sockaddr *)&sa, &len))
            FATAL("listen");
        port = ntohs(sa.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        /* The send may need our progress to leave (ofi): poll MPI while
         * waiting for the connection. */
        struct pollfd p = {.fd = l, .events = POLLIN};
        while (poll(&p, 1, 1) == 0) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        fd = accept(l, NULL, NULL);
        close(l);
    } else if (mtest_rank == 1) {
        MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa))
            FATAL("connect");
    }
    if (mtest_rank <= 1) {
        MPI_Comm ic;
        CHECK_RC(MPI_Comm_join(fd, &ic));
        int rsize = 0, out = 10 + mtest_rank, in = -1;
        MPI_Comm_remote_size(ic, &rsize);
        CHECK_INT(rsize, 1, "remote size");
        MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
        CHECK_INT(in, 11 - mtest_rank, "value over the joined intercommunicator");
        MPI_Comm merged;
        MPI_Intercomm_merge(ic, mtest_rank, &merged);
        int mrank = -1;
        MPI_Comm_rank(merged, &mrank);
        CHECK_INT(mrank, mtest_rank, "merged rank (high = world rank)");
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&ic);
        close(fd);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_CLASS(MPI_Comm_join(-1, &ic), MPI_ERR_ARG, "join on fd -1");
        CHECK(ic == MPI_COMM_NULL);
    }
    mtest_end();
    return mtest_finalize();
}

/* MPI-4.1 buffered-send buffers: per communicator (MPI_Comm_attach_buffer,
 * _detach_buffer, _flush_buffer, _iflush_buffer, the _c forms), the
 * process's flushes (MPI_Buffer_flush, MPI_Buffer_iflush), and
 * MPI_BUFFER_AUTOMATIC. Ranks pair up; a rank alone sends to itself. */
#include "../mpi/mtest.h"

#define BIG (1 << 20) /* a rendezvous message: pending until the receiver takes it */

static int partner;

/* A bsend on a communicator with its own buffer uses it, not the
 * process's (there is none); a duplicate without a buffer fails. */
static void comm_buffer(void)
{
    MPI_Comm dup, other;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    int size = BIG + MPI_BSEND_OVERHEAD;
    char *buf = malloc((size_t)size), *data = malloc(BIG), *in = malloc(BIG);
    for (int i = 0; i < BIG; i++)
        data[i] = (char)(i * 7 + mtest_rank);
    CHECK_RC(MPI_Comm_attach_buffer(dup, buf, size));
    MPI_Comm_set_errhandler(other, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Bsend(data, 1, MPI_CHAR, partner, 1, other), MPI_ERR_BUFFER,
                "bsend on a communicator with no buffer, none attached to the process");
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 1, dup));
    /* The message was copied: the data may change now. */
    memset(data, 0, BIG);
    MPI_Request r;
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Ibsend(data, 64, MPI_CHAR, partner, 2, dup, &r), MPI_ERR_BUFFER,
                "a second message does not fit the communicator's buffer");
    CHECK_CLASS(MPI_Comm_attach_buffer(dup, buf, size), MPI_ERR_BUFFER, "attach twice");
    /* The receiver waits a little: detach must wait for the pending send. */
    if (partner != mtest_rank)
        mtest_sleep(0.05);
    CHECK_RC(MPI_Recv(in, BIG, MPI_CHAR, partner, 1, dup, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++)
        if (in[i] != (char)(i * 7 + partner)) {
            CHECK(0, "byte %d: %d", i, in[i]);
            break;
        }
    void *back = NULL;
    int back_size = -1;
    CHECK_RC(MPI_Comm_detach_buffer(dup, &back, &back_size));
    CHECK(back == buf, "detach gives the buffer back");
    CHECK_INT(back_size, size, "detached size");
    CHECK_CLASS(MPI_Comm_detach_buffer(dup, &back, &back_size), MPI_ERR_BUFFER,
                "detach with none attached");
    CHECK_CLASS(MPI_Comm_attach_buffer(dup, buf, -1), MPI_ERR_COUNT, "negative size");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Comm_attach_buffer(MPI_COMM_NULL, buf, size), MPI_ERR_COMM, "MPI_COMM_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* The _c forms, and detach after messages that are still pending: it
     * returns once they are out, and the receiver gets the first data. */
    MPI_Count csize = -1;
    CHECK_RC(MPI_Comm_attach_buffer_c(dup, buf, (MPI_Count)size));
    for (int i = 0; i < BIG; i++)
        data[i] = (char)(i + 3 * mtest_rank);
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 3, dup));
    MPI_Request rr;
    CHECK_RC(MPI_Irecv(in, BIG, MPI_CHAR, partner, 3, dup, &rr));
    CHECK_RC(MPI_Comm_detach_buffer_c(dup, &back, &csize));
    CHECK(back == buf, "detach_c gives the buffer back");
    CHECK_INT(csize, size, "detach_c size");
    memset(buf, 0x55, (size_t)size); /* the user owns it again */
    CHECK_RC(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++)
        if (in[i] != (char)(i + 3 * partner)) {
            CHECK(0, "byte %d after detach: %d", i, in[i]);
            break;
        }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&other);
    free(buf);
    free(data);
    free(in);
}

/* The process's buffer serves communicators without one; flushes wait
 * for pending messages and keep the buffer attached. */
static void process_buffer_flush(void)
{
    int size = 2 * (BIG + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)size), *data = malloc(BIG), *in = malloc(BIG);
    memset(data, 9, BIG);
    CHECK_RC(MPI_Buffer_attach(buf, size));
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 4, MPI_COMM_WORLD));
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 5, MPI_COMM_WORLD));
    MPI_Request rr[2], fl;
    CHECK_RC(MPI_Irecv(in, BIG, MPI_CHAR, partner, 4, MPI_COMM_WORLD, &rr[0]));
    CHECK_RC(MPI_Buffer_iflush(&fl));
    CHECK_RC(MPI_Irecv(in, BIG, MPI_CHAR, partner, 5, MPI_COMM_WORLD, &rr[1]));
    CHECK_RC(MPI_Wait(&fl, MPI_STATUS_IGNORE));
    CHECK(fl == MPI_REQUEST_NULL, "iflush request freed");
    CHECK_RC(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
    /* Still attached: the space is free again for two more. */
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 6, MPI_COMM_WORLD));
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 7, MPI_COMM_WORLD));
    CHECK_RC(MPI_Irecv(in, BIG, MPI_CHAR, partner, 6, MPI_COMM_WORLD, &rr[0]));
    CHECK_RC(MPI_Irecv(in, BIG, MPI_CHAR, partner, 7, MPI_COMM_WORLD, &rr[1]));
    CHECK_RC(MPI_Buffer_flush());
    CHECK_RC(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
    CHECK_INT(in[BIG - 1], 9, "data through the process buffer");

    /* A communicator's flush with its own buffer, and with none. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK_RC(MPI_Comm_flush_buffer(dup));
    CHECK_RC(MPI_Comm_iflush_buffer(dup, &fl));
    CHECK_RC(MPI_Wait(&fl, MPI_STATUS_IGNORE));
    char *cbuf = malloc(BIG + MPI_BSEND_OVERHEAD);
    CHECK_RC(MPI_Comm_attach_buffer(dup, cbuf, BIG + MPI_BSEND_OVERHEAD));
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 8, dup));
    CHECK_RC(MPI_Irecv(in, BIG, MPI_CHAR, partner, 8, dup, &rr[0]));
    CHECK_RC(MPI_Comm_iflush_buffer(dup, &fl));
    CHECK_RC(MPI_Waitall(1, &fl, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Comm_flush_buffer(dup));
    CHECK_RC(MPI_Wait(&rr[0], MPI_STATUS_IGNORE));
    void *back;
    int back_size;
    CHECK_RC(MPI_Comm_detach_buffer(dup, &back, &back_size));
    MPI_Comm_free(&dup);
    free(cbuf);

    CHECK_RC(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == buf, "process buffer back");
    /* The _c forms of the process's attach and detach. */
    MPI_Count csize = -1;
    CHECK_RC(MPI_Buffer_attach_c(buf, (MPI_Count)size));
    CHECK_RC(MPI_Bsend(data, 16, MPI_CHAR, partner, 9, MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(in, 16, MPI_CHAR, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Buffer_detach_c(&back, &csize));
    CHECK(back == buf, "process buffer back (_c)");
    CHECK_INT(csize, size, "detach_c size of the process buffer");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Buffer_attach_c(buf, (MPI_Count)-1), MPI_ERR_ARG, "Buffer_attach_c size -1");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(buf);
    free(data);
    free(in);
}

/* MPI_BUFFER_AUTOMATIC: any number of bsends, on the process and on a
 * communicator; detach gives MPI_BUFFER_AUTOMATIC and 0 back. */
static void automatic(void)
{
    enum { N = 40 };
    static int data[N][1000], in[N][1000];
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK_RC(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    CHECK_RC(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    for (int m = 0; m < N; m++) {
        for (int i = 0; i < 1000; i++)
            data[m][i] = m * 1000 + i + mtest_rank;
        CHECK_RC(MPI_Bsend(data[m], 1000, MPI_INT, partner, m, m % 2 ? dup : MPI_COMM_WORLD));
    }
    memset(data, 0, sizeof data);
    for (int m = 0; m < N; m++)
        CHECK_RC(MPI_Recv(in[m], 1000, MPI_INT, partner, m, m % 2 ? dup : MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    for (int m = 0; m < N; m++)
        if (in[m][999] != m * 1000 + 999 + partner)
            CHECK(0, "automatic message %d: %d", m, in[m][999]);
    void *back = NULL;
    int size = -1;
    CHECK_RC(MPI_Comm_detach_buffer(dup, &back, &size));
    CHECK(back == MPI_BUFFER_AUTOMATIC, "comm detach gives MPI_BUFFER_AUTOMATIC");
    CHECK_INT(size, 0, "automatic size");
    CHECK_RC(MPI_Buffer_detach(&back, &size));
    CHECK(back == MPI_BUFFER_AUTOMATIC, "process detach gives MPI_BUFFER_AUTOMATIC");
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    mtest_begin("commbuf_per_communicator");
    comm_buffer();
    mtest_end();
    mtest_begin("commbuf_flush");
    process_buffer_flush();
    mtest_end();
    mtest_begin("commbuf_automatic");
    automatic();
    mtest_end();
    return mtest_finalize();
}

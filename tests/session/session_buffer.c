/* MPI-4.1 sessions' buffered-send buffers (MPI_Session_attach_buffer,
 * _detach_buffer, _flush_buffer, _iflush_buffer, the _c forms): a session's
 * buffer serves the communicators made from its groups and those derived
 * from them, after a communicator's own buffer and before the process's;
 * another session's communicators do not see it. A program with no
 * MPI_Init; ranks pair up (a rank alone sends to itself). */
#include "stest.h"

#include <time.h>

#define BIG (1 << 20) /* a rendezvous message: pending until the receiver takes it */

static int rank, partner;
static char *data, *in;

static void fill(int tag)
{
    for (int i = 0; i < BIG; i++)
        data[i] = (char)(i * 7 + rank + tag);
}

/* Receives partner's BIG message of tag (sent with fill(tag)) on comm,
 * after a pause so that the sender's message is still pending meanwhile. */
static void recv_check(MPI_Comm comm, int tag)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    if (partner != rank)
        nanosleep(&ts, NULL);
    CHECK_RC(MPI_Recv(in, BIG, MPI_CHAR, partner, tag, comm, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++)
        if (in[i] != (char)(i * 7 + partner + tag)) {
            CHECK(0, "tag %d byte %d: %d", tag, i, in[i]);
            break;
        }
}

static void session_buffer(MPI_Session s, MPI_Comm wc)
{
    stest_where = "session buffer";
    int size = BIG + MPI_BSEND_OVERHEAD;
    char *buf = malloc((size_t)size);
    CHECK_CLASS(MPI_Bsend(data, 1, MPI_CHAR, partner, 1, wc), MPI_ERR_BUFFER,
                "no buffer attached");
    CHECK_RC(MPI_Session_attach_buffer(s, buf, size));
    CHECK_CLASS(MPI_Session_attach_buffer(s, buf, size), MPI_ERR_BUFFER, "already attached");

    /* The session's buffer takes the message; it is then full. */
    fill(1);
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 1, wc));
    memset(data, 0, BIG);
    MPI_Request r;
    CHECK_CLASS(MPI_Ibsend(data, 64, MPI_CHAR, partner, 2, wc, &r), MPI_ERR_BUFFER,
                "has no room");
    recv_check(wc, 1);
    /* Flush returns once the message is out: the room is free again, and
     * a communicator derived from wc uses the same buffer. */
    CHECK_RC(MPI_Session_flush_buffer(s));
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(wc, &dup));
    fill(3);
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 3, dup));
    CHECK_CLASS(MPI_Ibsend(data, 64, MPI_CHAR, partner, 2, dup, &r), MPI_ERR_BUFFER,
                "has no room");
    MPI_Request fr = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Session_iflush_buffer(s, &fr));
    recv_check(dup, 3);
    CHECK_RC(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK(fr == MPI_REQUEST_NULL, "the iflush request is freed by MPI_Wait");

    /* A communicator's own buffer comes first: a small one refuses BIG. */
    int small = 64 + MPI_BSEND_OVERHEAD;
    char *sbuf = malloc((size_t)small);
    CHECK_RC(MPI_Comm_attach_buffer(dup, sbuf, small));
    CHECK_CLASS(MPI_Bsend(data, BIG, MPI_CHAR, partner, 4, dup), MPI_ERR_BUFFER,
                "has no room");
    void *back = NULL;
    int back_size = -1;
    CHECK_RC(MPI_Comm_detach_buffer(dup, &back, &back_size));
    MPI_Comm_free(&dup);
    free(sbuf);

    /* Detach waits for the pending message (the even rank's, while its
     * partner pauses before receiving) and gives the buffer back. */
    fill(5);
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 5, wc));
    int detach_first = rank % 2 == 0 && partner != rank;
    if (!detach_first)
        recv_check(wc, 5);
    CHECK_RC(MPI_Session_detach_buffer(s, &back, &back_size));
    CHECK(back == buf, "detach gives the buffer back");
    CHECK_INT(back_size, size, "detached size");
    if (detach_first)
        recv_check(wc, 5);
    CHECK_CLASS(MPI_Session_detach_buffer(s, &back, &back_size), MPI_ERR_BUFFER,
                "no buffer is attached to the session");
    CHECK_CLASS(MPI_Bsend(data, 1, MPI_CHAR, partner, 1, wc), MPI_ERR_BUFFER,
                "no buffer attached");

    /* The _c forms. */
    MPI_Count csize = -1;
    CHECK_RC(MPI_Session_attach_buffer_c(s, buf, (MPI_Count)size));
    CHECK_RC(MPI_Session_detach_buffer_c(s, &back, &csize));
    CHECK(back == buf && csize == size, "_c detach gives %p, %lld", back, (long long)csize);

    /* Automatic buffering: any number of messages. */
    CHECK_RC(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    fill(6);
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 6, wc));
    CHECK_RC(MPI_Bsend(data, BIG, MPI_CHAR, partner, 7, wc));
    recv_check(wc, 6);
    CHECK_RC(MPI_Recv(in, BIG, MPI_CHAR, partner, 7, wc, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Session_detach_buffer(s, &back, &back_size));
    CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0, "automatic detach gives %p, %d", back,
          back_size);

    /* Bad arguments. */
    CHECK_CLASS(MPI_Session_attach_buffer(s, buf, -1), MPI_ERR_COUNT, "size");
    CHECK_CLASS(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION, "MPI_SESSION_NULL");
    free(buf);
}

/* Another session's communicators do not use this session's buffer. */
static void other_session(MPI_Session s)
{
    stest_where = "other session";
    MPI_Session s2 = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Group g2;
    CHECK_RC(MPI_Group_from_session_pset(s2, "mpi://WORLD", &g2));
    MPI_Comm c2 = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_create_from_group(g2, "tern.test.buffer2", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &c2));
    MPI_Group_free(&g2);
    int size = 64 + MPI_BSEND_OVERHEAD;
    char *buf = malloc((size_t)size);
    CHECK_RC(MPI_Session_attach_buffer(s, buf, size));
    CHECK_CLASS(MPI_Bsend(data, 1, MPI_CHAR, partner, 1, c2), MPI_ERR_BUFFER,
                "no buffer attached");
    void *back;
    int back_size;
    CHECK_RC(MPI_Session_detach_buffer(s, &back, &back_size));
    /* Finalizing a session with a buffer attached (and a message out). */
    CHECK_RC(MPI_Session_attach_buffer(s2, buf, size));
    CHECK_RC(MPI_Bsend(data, 8, MPI_CHAR, partner, 9, c2));
    CHECK_RC(MPI_Recv(in, 8, MPI_CHAR, partner, 9, c2, MPI_STATUS_IGNORE));
    MPI_Comm_free(&c2);
    CHECK_RC(MPI_Session_finalize(&s2));
    free(buf);
}

int main(void)
{
    stest_watchdog();
    MPI_Session s = MPI_SESSION_NULL;
    CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group wg;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    MPI_Comm wc = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_create_from_group(wg, "tern.test.buffer", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &wc));
    if (wc == MPI_COMM_NULL)
        return 1;
    int size;
    MPI_Comm_rank(wc, &rank);
    MPI_Comm_size(wc, &size);
    partner = rank ^ 1;
    if (partner >= size)
        partner = rank;
    data = malloc(BIG);
    in = malloc(BIG);
    session_buffer(s, wc);
    other_session(s);
    int status = stest_report(wc, "session_buffer");
    free(data);
    free(in);
    MPI_Comm_free(&wc);
    MPI_Group_free(&wg);
    if (MPI_Session_finalize(&s) != MPI_SUCCESS)
        status = 1;
    return status;
}

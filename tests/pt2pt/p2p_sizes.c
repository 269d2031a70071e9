/* Send/Recv of many sizes (0 B .. 8 MB, around the usual eager and pipeline
 * boundaries) between partner ranks (0<->1, 2<->3, ...; the last rank of an
 * odd size talks to itself), in three ways: blocking send then receive,
 * receive posted before the send (expected), and send before the receive is
 * posted (unexpected). Checks data, status source/tag, Get_count, and that
 * bytes past the message in the receive buffer are untouched. */
#include "../mpi/mtest.h"

static const size_t sizes[] = {0, 1, 8, 100, 1024, 4095, 4096, 4097, 8000, 8192, 8193,
                               16384, 65535, 65536, 65537, 262144, 1 << 20, (1 << 20) + 3,
                               8 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define GUARD 64

enum mode { BLOCKING, PREPOSTED, UNEXPECTED };
static const char *mode_name[] = {"blocking", "preposted", "unexpected"};

static void one_way(int sender, int receiver, size_t n, enum mode mode, int tag)
{
    int me = mtest_rank;
    int is_s = me == sender, is_r = me == receiver;
    uint32_t seed = (uint32_t)(n * 31 + (size_t)sender * 7 + (size_t)mode);
    char *sbuf = NULL, *rbuf = NULL;
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    MPI_Status st;
    char what[160];

    if (is_s) {
        sbuf = malloc(n + 1);
        mtest_fill(sbuf, n, seed);
    }
    if (is_r) {
        rbuf = malloc(n + GUARD);
        memset(rbuf, 0xA5, n + GUARD);
    }
    switch (mode) {
    case BLOCKING:
        if (is_s && is_r) {
            CHECK_RC(MPI_Irecv(rbuf, (int)(n + GUARD), MPI_BYTE, sender, tag, MPI_COMM_WORLD, &rreq));
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, receiver, tag, MPI_COMM_WORLD));
            CHECK_RC(MPI_Wait(&rreq, &st));
        } else if (is_s) {
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, receiver, tag, MPI_COMM_WORLD));
        } else if (is_r) {
            CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, sender, tag, MPI_COMM_WORLD, &st));
        }
        break;
    case PREPOSTED:
        if (is_r)
            CHECK_RC(MPI_Irecv(rbuf, (int)(n + GUARD), MPI_BYTE, sender, tag, MPI_COMM_WORLD, &rreq));
        MPI_Barrier(MPI_COMM_WORLD);
        if (is_s)
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, receiver, tag, MPI_COMM_WORLD));
        if (is_r)
            CHECK_RC(MPI_Wait(&rreq, &st));
        break;
    case UNEXPECTED:
        if (is_s)
            CHECK_RC(MPI_Isend(sbuf, (int)n, MPI_BYTE, receiver, tag, MPI_COMM_WORLD, &sreq));
        MPI_Barrier(MPI_COMM_WORLD);
        if (is_r)
            CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, sender, tag, MPI_COMM_WORLD, &st));
        if (is_s)
            CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        break;
    }
    if (is_r) {
        snprintf(what, sizeof what, "%s %zu bytes from %d", mode_name[mode], n, sender);
        CHECK_STATUS(&st, sender, tag, (int)n, what);
        CHECK_PATTERN(rbuf, n, seed, what);
        for (size_t i = n; i < n + GUARD; i++)
            if ((unsigned char)rbuf[i] != 0xA5) {
                CHECK(0, "%s: byte %zu past the message was overwritten (0x%02x)", what, i,
                      (unsigned char)rbuf[i]);
                break;
            }
    }
    free(sbuf);
    free(rbuf);
}

static void test_mode(enum mode mode)
{
    char name[64];
    snprintf(name, sizeof name, "sizes_%s", mode_name[mode]);
    mtest_begin(name);
    int partner = mtest_partner();
    int lo = mtest_rank < partner ? mtest_rank : partner;
    int hi = mtest_rank < partner ? partner : mtest_rank;
    for (size_t i = 0; i < NSIZES; i++) {
        one_way(lo, hi, sizes[i], mode, (int)i);
        one_way(hi, lo, sizes[i], mode, (int)i + 100);
    }
    mtest_end();
}

/* Typed messages: counts are in elements of the datatype. */
static void test_typed(void)
{
    mtest_begin("sizes_typed");
    int partner = mtest_partner();
    static const int counts[] = {0, 1, 3, 1000, 2049, 100000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int n = counts[k];
        int *si = malloc(sizeof(int) * (size_t)n + 1), *ri = malloc(sizeof(int) * (size_t)n + 64);
        double *sd = malloc(sizeof(double) * (size_t)n + 1), *rd = malloc(sizeof(double) * (size_t)n + 64);
        for (int i = 0; i < n; i++) {
            si[i] = mtest_rank * 1000003 + i;
            sd[i] = mtest_rank + i * 0.5;
        }
        MPI_Status st[2];
        MPI_Request rq[4];
        CHECK_RC(MPI_Irecv(ri, n + 16, MPI_INT, partner, 1, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Irecv(rd, n + 8, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Isend(si, n, MPI_INT, partner, 1, MPI_COMM_WORLD, &rq[2]));
        CHECK_RC(MPI_Isend(sd, n, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD, &rq[3]));
        CHECK_RC(MPI_Waitall(2, rq, st));
        CHECK_RC(MPI_Waitall(2, rq + 2, MPI_STATUSES_IGNORE));
        int c = -1;
        MPI_Get_count(&st[0], MPI_INT, &c);
        CHECK_INT(c, n, "Get_count(MPI_INT) of an int message");
        MPI_Get_count(&st[1], MPI_DOUBLE, &c);
        CHECK_INT(c, n, "Get_count(MPI_DOUBLE) of a double message");
        MPI_Get_count(&st[1], MPI_BYTE, &c);
        CHECK_INT(c, n * (int)sizeof(double), "Get_count(MPI_BYTE) of a double message");
        for (int i = 0; i < n; i++) {
            if (ri[i] != partner * 1000003 + i || rd[i] != partner + i * 0.5) {
                CHECK(0, "count %d element %d: expected %d/%g, got %d/%g", n, i, partner * 1000003 + i,
                      partner + i * 0.5, ri[i], rd[i]);
                break;
            }
        }
        free(si);
        free(ri);
        free(sd);
        free(rd);
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_mode(BLOCKING);
    test_mode(PREPOSTED);
    test_mode(UNEXPECTED);
    test_typed();
    return mtest_finalize();
}

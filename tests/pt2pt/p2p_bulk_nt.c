/* Which contiguous messages the sender copies into the shm bulk channel
 * through the choice of streaming stores (core/pt2pt/p2p_queue.c,
 * tern_p2p_bulk_copy): those from the transport's attribute bulk_nt_min,
 * which shm publishes from its knobs TERN_SHM_BULK_NT_MIN and
 * TERN_SHM_BULK_NT (off, the default: none; auto and on: from the
 * threshold, the knob's 0 being every size). The counter
 * tern_p2p_bulk_nt_bytes on the sender must grow by exactly the message's
 * bytes when the test's environment says it takes the choice, else not at
 * all: queue-sized eager messages, eager ones through bulk cells in parts,
 * and streamed rendezvous, each either side of the threshold the
 * environment sets; every byte arrives. Pairs of ranks (0-1). */
#include "../mpit/mpit_util.h"

#include <stdint.h>
#include <string.h>

static size_t env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? (size_t)strtoull(s, NULL, 10) : dflt;
}

/* Whether a message of n bytes should take the choice under the
 * environment (the messages here all reach the bulk channel but the
 * smallest). */
static int takes_choice(size_t n, int through_bulk)
{
    const char *mode = getenv("TERN_SHM_BULK_NT");
    if (!through_bulk || !mode || (strcmp(mode, "auto") != 0 && strcmp(mode, "on") != 0))
        return 0;
    return n >= env_size("TERN_SHM_BULK_NT_MIN", 131072);
}

int main(int argc, char **argv)
{
    int provided;
    mtest_init(&argc, &argv);
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h = mpit_handle("tern_p2p_bulk_nt_bytes", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    /* 4 KB: the queue; 20,000-100,000: eager in parts through bulk cells
     * (TERN_P2P_EAGER_BIG_PART 16 KB, limit 128 KB); 256 KB-1 MB: streamed
     * rendezvous (TERN_SHM_LARGE_PATH=pipeline). */
    static const struct {
        size_t n;
        int through_bulk;
    } msgs[] = {{4096, 0},     {20000, 1},  {65535, 1},   {65536, 1},   {100000, 1},
                {131071, 1},   {131072, 1}, {262144, 1},  {1048576, 1}};
    size_t max = 1048576;
    unsigned char *buf = malloc(max);
    if (!buf)
        FATAL("no memory for the buffer");
    mtest_begin("bulk copies");
    if (mtest_rank < 2) {
        int peer = 1 - mtest_rank;
        for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
            size_t n = msgs[i].n;
            if (mtest_rank == 0) {
                for (size_t k = 0; k < n; k++)
                    buf[k] = (unsigned char)(k * 7 + i);
                unsigned long long before = rd(h);
                CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD));
                unsigned long long got = rd(h) - before;
                unsigned long long want = takes_choice(n, msgs[i].through_bulk) ? n : 0;
                CHECK(got == want, "%zu bytes: tern_p2p_bulk_nt_bytes grew by %llu, not %llu", n,
                      got, want);
            } else {
                memset(buf, 0, n);
                CHECK_RC(MPI_Recv(buf, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
                size_t bad = 0;
                for (size_t k = 0; k < n; k++)
                    bad += buf[k] != (unsigned char)(k * 7 + i);
                CHECK(bad == 0, "%zu bytes: %zu wrong on arrival", n, bad);
            }
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    mtest_end();
    free(buf);
    RC(MPI_T_pvar_handle_free(sess, &h), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    RC(MPI_T_finalize(), MPI_SUCCESS);
    return mtest_finalize();
}

/* The oversubscribed shm alltoall area is lazy: a communicator gets it
 * from its first blocking alltoall whose block exceeds a data slot's
 * piece, never from small alltoalls or other collectives, once however
 * many such alltoalls follow (counted by the MPI_T counter
 * tern_coll_shm_a2a_areas). So is the area of two ranks one per core
 * (its far places), from blocks of 32 KB to the 128 KB slot. Half the ranks describe the block by a
 * derived type, the others by MPI_INT: the decision sees the same bytes.
 * With the argument "decline", world rank 1 sets
 * TERN_COLL_SHM_A2A_AREA=off: no rank maps an area, and every alltoall
 * still delivers its bytes through the data slots. Every received
 * integer is checked, and no area keeps a name in /dev/shm once created
 * (nothing is left there if a rank is killed). */
#include "../mpi/mtest.h"
#include "../mpit/mpit_util.h"

#include <dirent.h>
#include <unistd.h>

/* Integer i of the block rank `from` sends to rank `to`. */
static int iv(int from, int to, size_t i)
{
    return from * 1000003 + to * 7919 + (int)i;
}

/* Names in /dev/shm of this job's alltoall areas (tern_shm_comm_name). */
static int area_names(void)
{
    const char *job = getenv("TERN_JOBID");
    char prefix[160];
    int n = 0;
    snprintf(prefix, sizeof prefix, "tern-%s-a2a-", job ? job : "");
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && job && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* One alltoall on c of blocks of n ints (n a multiple of 4). */
static void a2a(MPI_Comm c, size_t n, const char *what)
{
    int p, me;
    MPI_Comm_size(c, &p);
    MPI_Comm_rank(c, &me);
    int *s = malloc((size_t)p * n * sizeof *s), *g = malloc((size_t)p * n * sizeof *g);
    for (int d = 0; d < p; d++)
        for (size_t i = 0; i < n; i++) {
            s[(size_t)d * n + i] = iv(me, d, i);
            g[(size_t)d * n + i] = -1;
        }
    MPI_Datatype t = MPI_INT, quad = MPI_DATATYPE_NULL;
    int count = (int)n;
    if (me % 2) { /* four ints a element: the same type signature */
        MPI_Type_contiguous(4, MPI_INT, &quad);
        MPI_Type_commit(&quad);
        t = quad;
        count = (int)(n / 4);
    }
    CHECK_RC(MPI_Alltoall(s, count, t, g, count, t, c));
    int bad = 0;
    for (int q = 0; q < p && !bad; q++)
        for (size_t i = 0; i < n; i++)
            if (g[(size_t)q * n + i] != iv(q, me, i)) {
                CHECK(0, "%s: block %d int %zu = %d, want %d", what, q, i, g[(size_t)q * n + i],
                      iv(q, me, i));
                bad = 1;
                break;
            }
    if (quad != MPI_DATATYPE_NULL)
        MPI_Type_free(&quad);
    free(s);
    free(g);
}

int main(int argc, char **argv)
{
    int decline = argc > 1 && strcmp(argv[1], "decline") == 0;
    const char *wr = getenv("PMI_RANK");
    if (decline && wr && atoi(wr) == 1)
        setenv("TERN_COLL_SHM_A2A_AREA", "off", 1);
    mtest_init(&argc, &argv);
    int p = mtest_size;
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h =
        mpit_handle("tern_coll_shm_a2a_areas", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, NULL, 1);
    /* Every rank on this host (the test's launch): an area where there are
     * more ranks than CPUs, 3 to 8 of them, or 2 ranks not more than the
     * CPUs, unless a rank declines. The 32,000-byte blocks below take
     * the data slots either way (2 ranks: under 32 KB). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long long area = !decline && ((p >= 3 && p <= 8 && p > cpus) || (p == 2 && p <= cpus));
    unsigned long long base = rd(h); /* counted from the handle's start */

    mtest_begin("no area before a large alltoall");
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    a2a(c1, 4, "c1 16-byte blocks");
    a2a(c1, 1024, "c1 4 KB blocks");
    int one = 1, sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c1));
    CHECK_INT(sum, p, "allreduce on c1");
    CHECK(rd(h) == base, "areas %llu after small alltoalls, want %llu", rd(h), base);
    mtest_end();

    mtest_begin("the first 64 KB alltoall creates it, once");
    a2a(c1, 16384, "c1 64 KB blocks");
    CHECK(rd(h) == base + area, "areas %llu after a 64 KB alltoall, want %llu", rd(h), base + area);
    CHECK_INT(area_names(), 0, "area names left in /dev/shm");
    a2a(c1, 16384, "c1 64 KB blocks again");
    a2a(c1, 8000, "c1 32,000-byte blocks");
    a2a(c1, 4, "c1 16-byte blocks after the area");
    CHECK(rd(h) == base + area, "areas %llu after more alltoalls, want %llu", rd(h), base + area);
    mtest_end();

    mtest_begin("a second communicator without a large alltoall has none");
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    a2a(c2, 1024, "c2 4 KB blocks");
    CHECK_RC(MPI_Barrier(c2));
    CHECK(rd(h) == base + area, "areas %llu after c2's small alltoall, want %llu", rd(h),
          base + area);
    a2a(c2, 16384, "c2 64 KB blocks");
    CHECK(rd(h) == base + 2 * area, "areas %llu after c2's 64 KB alltoall, want %llu", rd(h),
          base + 2 * area);
    mtest_end();

    MPI_Comm_free(&c1);
    MPI_Comm_free(&c2);
    MPI_T_pvar_stop(sess, h);
    MPI_T_pvar_handle_free(sess, &h);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    return mtest_finalize();
}

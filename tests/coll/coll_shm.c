/* The shared-memory collectives (barrier, bcast, reduce, allreduce,
 * gather, scatter, allgather, alltoall: algorithm shm), forced unless the environment says otherwise, on
 * MPI_COMM_WORLD, a dup, a reordered split and a shared-memory split:
 * counts from 0 to several slot sizes (TERN_COLL_SHM_SLOT), every kind of
 * root, MPI_IN_PLACE, a strided derived type, a non-commutative user op
 * (affine maps composed in rank order), the nonblocking and persistent
 * forms on the same communicators, and hundreds of collectives back to
 * back across the communicators (a reused slot or flag would show as a
 * wrong value). Every result is checked against one computed locally.
 *
 * Also checks where the regions live: a process maps one memfd
 * "tern-coll" (never a file in /dev/shm) per communicator of 2 or more
 * ranks on its host, or with the argument "named", where world rank 1
 * declines memfds (TERN_COLL_SHM_ANON=off), a /dev/shm/tern-*-coll-* file
 * (already unlinked) for each communicator that rank is in (with "pidns",
 * each rank in a pid namespace of its own, for every communicator); none for
 * communicators spanning hosts (tests/netns runs it on 2 hosts x 2
 * ranks), none at all under TERN_TRANSPORTS=ofi (tests/ofi reruns it so):
 * shm is never chosen where the peers are not reached through shared
 * memory; and the regions go with their communicators. */
#include "../mpi/mtest.h"
#include "affine_op.h"

#include <time.h>

static int wrank, one_host;
static int slot_bytes = 16384;

/* Counts (of 4-byte ints) around and past the slot size. */
static int counts[8];
static int n_counts;

static void make_counts(void)
{
    int s = slot_bytes / 4;
    int c[] = {0, 1, 3, s - 1, s, s + 1, 3 * s + 5};
    n_counts = (int)(sizeof c / sizeof c[0]);
    memcpy(counts, c, sizeof c);
}

/* CLOCK_MONOTONIC is one clock for every process of a host. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Nobody leaves a barrier before the last rank entered it: the late rank
 * notes when it entered, every rank when it left, compared afterwards. */
static void test_barrier(MPI_Comm c)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    for (int late = 0; late < p; late += p - 1 > 0 ? p - 1 : 1) {
        double entered = 0;
        MPI_Barrier(c);
        if (r == late) {
            usleep(20000);
            entered = now();
        }
        MPI_Barrier(c);
        double left = now();
        MPI_Bcast(&entered, 1, MPI_DOUBLE, late, c);
        CHECK(left >= entered, "barrier left %.6f s before rank %d entered", entered - left, late);
    }
}

static void test_bcast(MPI_Comm c)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    int roots[3] = {0, p - 1, p / 2};
    for (int k = 0; k < n_counts; k++) {
        int n = counts[k];
        int *buf = malloc(((size_t)n + 1) * sizeof *buf);
        for (int ri = 0; ri < 3; ri++) {
            int root = roots[ri];
            for (int i = 0; i < n; i++)
                buf[i] = r == root ? root * 100000 + i : -1;
            MPI_Bcast(buf, n, MPI_INT, root, c);
            for (int i = 0; i < n; i++)
                if (buf[i] != root * 100000 + i) {
                    CHECK(0, "bcast count %d root %d: [%d] = %d", n, root, i, buf[i]);
                    break;
                }
        }
        free(buf);
        /* A strided type: every other int, the gaps untouched. */
        if (n > 0) {
            MPI_Datatype vec;
            MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
            MPI_Type_commit(&vec);
            int *v = malloc(2 * (size_t)n * sizeof *v);
            int root = p - 1;
            for (int i = 0; i < 2 * n; i++)
                v[i] = r == root || i % 2 ? 7 * i : -1;
            MPI_Bcast(v, 1, vec, root, c);
            for (int i = 0; i < 2 * n; i++)
                if (v[i] != 7 * i) {
                    CHECK(0, "bcast of a vector type, count %d: [%d] = %d", n, i, v[i]);
                    break;
                }
            free(v);
            MPI_Type_free(&vec);
        }
    }
}


static void test_reductions(MPI_Comm c, MPI_Op affine_op, MPI_Datatype affine_type)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    for (int k = 0; k < n_counts; k++) {
        int n = counts[k];
        int *in = malloc(((size_t)n + 1) * sizeof *in);
        int *out = malloc(((size_t)n + 1) * sizeof *out);
        /* Sum of rank * 1000 + i over the ranks. */
        for (int root = 0; root < p; root += p > 2 ? p / 2 : 1) {
            for (int inplace = 0; inplace < 2; inplace++) {
                for (int i = 0; i < n; i++) {
                    in[i] = r * 1000 + i;
                    out[i] = inplace && r == root ? in[i] : -5;
                }
                MPI_Reduce(inplace && r == root ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, root, c);
                if (r == root)
                    for (int i = 0; i < n; i++)
                        if (out[i] != 1000 * p * (p - 1) / 2 + p * i) {
                            CHECK(0, "reduce count %d root %d in place %d: [%d] = %d", n, root,
                                  inplace, i, out[i]);
                            break;
                        }
            }
        }
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < n; i++) {
                in[i] = r * 1000 + i;
                out[i] = inplace ? in[i] : -5;
            }
            MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, c);
            for (int i = 0; i < n; i++)
                if (out[i] != 1000 * p * (p - 1) / 2 + p * i) {
                    CHECK(0, "allreduce count %d in place %d: [%d] = %d", n, inplace, i, out[i]);
                    break;
                }
        }
        /* Max on doubles, and a strided type. */
        double *d = malloc(((size_t)n + 1) * sizeof *d), *dm = malloc(((size_t)n + 1) * sizeof *dm);
        for (int i = 0; i < n; i++)
            d[i] = (double)((r * 37 + i) % p) + 0.5;
        MPI_Allreduce(d, dm, n, MPI_DOUBLE, MPI_MAX, c);
        for (int i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < p; q++)
                if ((double)((q * 37 + i) % p) + 0.5 > want)
                    want = (double)((q * 37 + i) % p) + 0.5;
            if (dm[i] != want) {
                CHECK(0, "allreduce max count %d: [%d] = %g, want %g", n, i, dm[i], want);
                break;
            }
        }
        free(d);
        free(dm);
        if (n > 0) {
            MPI_Datatype vec;
            MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
            MPI_Type_commit(&vec);
            int *v = malloc(2 * (size_t)n * sizeof *v);
            for (int i = 0; i < 2 * n; i++)
                v[i] = i % 2 ? -3 : r + i;
            MPI_Allreduce(MPI_IN_PLACE, v, 1, vec, MPI_SUM, c);
            for (int i = 0; i < 2 * n; i++)
                if (v[i] != (i % 2 ? -3 : p * (p - 1) / 2 + p * i)) {
                    CHECK(0, "allreduce of a vector type in place, count %d: [%d] = %d", n, i, v[i]);
                    break;
                }
            free(v);
            MPI_Type_free(&vec);
        }
        /* The non-commutative op: 8-byte elements. */
        affine_t *a = malloc(((size_t)n + 1) * sizeof *a), *ar = malloc(((size_t)n + 1) * sizeof *ar);
        for (int i = 0; i < n; i++)
            a[i] = affine_of(r, i);
        int root = p - 1;
        MPI_Reduce(a, ar, n, affine_type, affine_op, root, c);
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1)
                MPI_Allreduce(a, ar, n, affine_type, affine_op, c);
            if (pass == 0 && r != root)
                continue;
            for (int i = 0; i < n; i++) {
                affine_t want = affine_of(0, i);
                for (int q = 1; q < p; q++) {
                    affine_t x = affine_of(q, i);
                    want = (affine_t){want.a * x.a, want.b * x.a + x.b};
                }
                if (ar[i].a != want.a || ar[i].b != want.b) {
                    CHECK(0, "%s of a non-commutative op, count %d: [%d] = (%u, %u), want (%u, %u)",
                          pass ? "allreduce" : "reduce", n, i, ar[i].a, ar[i].b, want.a, want.b);
                    break;
                }
            }
        }
        free(a);
        free(ar);
        free(in);
        free(out);
    }
}

/* Block value: from rank `from` to rank `to`, element i. */
static int bv(int from, int to, int i) { return from * 1000003 + to * 1009 + i; }

/* Gather, scatter, allgather, alltoall: blocks of n ints (alltoall: counts
 * up to a slot, as its pieces are a slot / p), in place too, and gather of
 * a strided type. */
static void test_blocks(MPI_Comm c)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    for (int k = 0; k < n_counts; k++) {
        int n = counts[k];
        size_t all = (size_t)p * (size_t)n + 1;
        int *s = malloc(all * sizeof *s), *g = malloc(all * sizeof *g);
        for (int root = 0; root < p; root += p > 2 ? p - 1 : 1) {
            for (int inplace = 0; inplace < 2; inplace++) {
                /* Gather to root. */
                for (size_t i = 0; i < all; i++)
                    g[i] = -1;
                for (int i = 0; i < n; i++)
                    s[i] = bv(r, root, i);
                if (inplace && r == root) {
                    memcpy(g + (size_t)r * n, s, (size_t)n * sizeof *s);
                    MPI_Gather(MPI_IN_PLACE, n, MPI_INT, g, n, MPI_INT, root, c);
                } else {
                    MPI_Gather(s, n, MPI_INT, g, n, MPI_INT, root, c);
                }
                if (r == root)
                    for (size_t i = 0; i < (size_t)p * n; i++)
                        if (g[i] != bv((int)(i / (size_t)n), root, (int)(i % (size_t)n))) {
                            CHECK(0, "gather count %d root %d in place %d: [%zu] = %d", n, root,
                                  inplace, i, g[i]);
                            break;
                        }
                /* Scatter from root. */
                for (size_t i = 0; i < all; i++)
                    s[i] = r == root ? bv(root, (int)(i / (size_t)(n ? n : 1)), (int)(i % (size_t)(n ? n : 1))) : -2;
                for (int i = 0; i < n; i++)
                    g[i] = -1;
                if (inplace && r == root) {
                    MPI_Scatter(s, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, c);
                    memcpy(g, s + (size_t)r * n, (size_t)n * sizeof *s);
                } else {
                    MPI_Scatter(s, n, MPI_INT, g, n, MPI_INT, root, c);
                }
                for (int i = 0; i < n; i++)
                    if (g[i] != bv(root, r, i)) {
                        CHECK(0, "scatter count %d root %d in place %d: [%d] = %d", n, root, inplace,
                              i, g[i]);
                        break;
                    }
            }
        }
        for (int inplace = 0; inplace < 2; inplace++) {
            for (size_t i = 0; i < all; i++)
                g[i] = -1;
            for (int i = 0; i < n; i++)
                s[i] = bv(r, 0, i);
            if (inplace) {
                memcpy(g + (size_t)r * n, s, (size_t)n * sizeof *s);
                MPI_Allgather(MPI_IN_PLACE, n, MPI_INT, g, n, MPI_INT, c);
            } else {
                MPI_Allgather(s, n, MPI_INT, g, n, MPI_INT, c);
            }
            for (size_t i = 0; i < (size_t)p * n; i++)
                if (g[i] != bv((int)(i / (size_t)n), 0, (int)(i % (size_t)n))) {
                    CHECK(0, "allgather count %d in place %d: [%zu] = %d", n, inplace, i, g[i]);
                    break;
                }
            /* Alltoall: block d of rank r goes to rank d. */
            for (size_t i = 0; i < (size_t)p * n; i++)
                s[i] = bv(r, (int)(i / (size_t)n), (int)(i % (size_t)n));
            if (inplace) {
                memcpy(g, s, (size_t)p * n * sizeof *s);
                MPI_Alltoall(MPI_IN_PLACE, n, MPI_INT, g, n, MPI_INT, c);
            } else {
                MPI_Alltoall(s, n, MPI_INT, g, n, MPI_INT, c);
            }
            for (size_t i = 0; i < (size_t)p * n; i++)
                if (g[i] != bv((int)(i / (size_t)n), r, (int)(i % (size_t)n))) {
                    CHECK(0, "alltoall count %d in place %d: [%zu] = %d", n, inplace, i, g[i]);
                    break;
                }
        }
        if (n > 0) { /* a strided send type, gathered to the last rank */
            MPI_Datatype vec;
            MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
            MPI_Type_commit(&vec);
            int *v = malloc(2 * (size_t)n * sizeof *v);
            for (int i = 0; i < 2 * n; i++)
                v[i] = i % 2 ? -9 : bv(r, p - 1, i / 2);
            MPI_Allgather(v, 1, vec, g, n, MPI_INT, c);
            for (size_t i = 0; i < (size_t)p * n; i++)
                if (g[i] != bv((int)(i / (size_t)n), p - 1, (int)(i % (size_t)n))) {
                    CHECK(0, "allgather of a vector type, count %d: [%zu] = %d", n, i, g[i]);
                    break;
                }
            free(v);
            MPI_Type_free(&vec);
        }
        free(s);
        free(g);
    }
}

/* Nonblocking and persistent forms on a communicator that has used the
 * blocking ones (their algorithms interleave with the shm steps). */
static void test_nonblocking(MPI_Comm c)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    int n = 3 * slot_bytes / 4 + 5;
    int *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    int *b = malloc((size_t)n * sizeof *b);
    for (int iter = 0; iter < 4; iter++) {
        MPI_Request req[4];
        for (int i = 0; i < n; i++) {
            x[i] = r + i + iter;
            b[i] = r == iter % p ? i - iter : 0;
        }
        MPI_Ibarrier(c, &req[0]);
        MPI_Iallreduce(x, y, n, MPI_INT, MPI_SUM, c, &req[1]);
        MPI_Ibcast(b, n, MPI_INT, iter % p, c, &req[2]);
        int s = r + iter, t = -1;
        MPI_Ireduce(&s, &t, 1, MPI_INT, MPI_SUM, 0, c, &req[3]);
        int z = 0;
        MPI_Allreduce(&r, &z, 1, MPI_INT, MPI_SUM, c); /* a blocking one while they run */
        CHECK(z == p * (p - 1) / 2, "allreduce between nonblocking ones: %d", z);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            if (y[i] != p * (p - 1) / 2 + p * (i + iter) || b[i] != i - iter) {
                CHECK(0, "nonblocking iteration %d: [%d] = %d, %d", iter, i, y[i], b[i]);
                break;
            }
        if (r == 0)
            CHECK(t == p * (p - 1) / 2 + p * iter, "ireduce: %d", t);
    }
    MPI_Request pr;
    int in = r, out = -1;
    MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &pr);
    for (int iter = 0; iter < 3; iter++) {
        in = r + iter;
        MPI_Start(&pr);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        CHECK(out == p * (p - 1) / 2 + p * iter, "persistent allreduce %d: %d", iter, out);
        MPI_Barrier(c);
    }
    MPI_Request_free(&pr);
    free(x);
    free(y);
    free(b);
}

static void back_to_back(MPI_Comm *comms, int n_comms)
{
    for (int iter = 0; iter < 300; iter++) {
        for (int k = 0; k < n_comms; k++) {
            MPI_Comm c = comms[k];
            int r, p;
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &p);
            int v[2] = {r + iter, 2 * r}, s[2] = {0, 0};
            switch ((iter + k) % 5) {
            case 0:
                MPI_Allreduce(v, s, 2, MPI_INT, MPI_SUM, c);
                CHECK(s[0] == p * (p - 1) / 2 + p * iter && s[1] == p * (p - 1),
                      "back to back %d on comm %d: allreduce %d %d", iter, k, s[0], s[1]);
                break;
            case 1: {
                int root = iter % p;
                int b = r == root ? iter * 3 + k : -1;
                MPI_Bcast(&b, 1, MPI_INT, root, c);
                CHECK(b == iter * 3 + k, "back to back %d on comm %d: bcast %d", iter, k, b);
                break;
            }
            case 2: {
                int root = (iter + 1) % p;
                MPI_Reduce(v, s, 2, MPI_INT, MPI_SUM, root, c);
                if (r == root)
                    CHECK(s[0] == p * (p - 1) / 2 + p * iter && s[1] == p * (p - 1),
                          "back to back %d on comm %d: reduce %d %d", iter, k, s[0], s[1]);
                break;
            }
            case 3: {
                int all[64];
                MPI_Allgather(&v[0], 1, MPI_INT, all, 1, MPI_INT, c);
                for (int q = 0; q < p && q < 64; q++)
                    CHECK(all[q] == q + iter, "back to back %d on comm %d: allgather [%d] = %d",
                          iter, k, q, all[q]);
                break;
            }
            default:
                MPI_Barrier(c);
            }
        }
    }
}

/* 1 if c has 2 or more ranks, all on this host. */
static int node_local(MPI_Comm c, const char *name)
{
    int p;
    MPI_Comm_size(c, &p);
    char *all = malloc((size_t)p * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, c);
    int same = 1;
    for (int q = 0; q < p; q++)
        same &= strcmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME, name) == 0;
    free(all);
    return p > 1 && same;
}

/* Mappings of a collective region: anon, memfds "tern-coll"; otherwise
 * named ones, /dev/shm/tern-<job>-coll-* (where some rank declines memfds,
 * TERN_COLL_SHM_ANON=off). */
static int coll_regions_mapped(int anon)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += anon ? strstr(line, "/memfd:tern-coll ") != NULL
                  : strstr(line, "/dev/shm/tern-") && strstr(line, "-coll-");
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    /* Forced unless the environment forces something else. */
    setenv("TERN_BARRIER_ALGORITHM", "shm", 0);
    setenv("TERN_BCAST_ALGORITHM", "shm", 0);
    setenv("TERN_REDUCE_ALGORITHM", "shm", 0);
    setenv("TERN_ALLREDUCE_ALGORITHM", "shm", 0);
    setenv("TERN_GATHER_ALGORITHM", "shm", 0);
    setenv("TERN_SCATTER_ALGORITHM", "shm", 0);
    setenv("TERN_ALLGATHER_ALGORITHM", "shm", 0);
    setenv("TERN_ALLTOALL_ALGORITHM", "shm", 0);
    const char *slot = getenv("TERN_COLL_SHM_SLOT");
    if (slot && atoi(slot) > 0)
        slot_bytes = atoi(slot);
    make_counts();
    /* named: world rank 1 declines memfd regions, so that every
     * communicator it is in falls back to a named segment; pidns: each
     * rank in a pid namespace of its own (tests/mpi/pidns_run.sh), where no
     * rank can open another's memfd, so every region is named. */
    int named = argc > 1 && strcmp(argv[1], "named") == 0;
    int pidns = argc > 1 && strcmp(argv[1], "pidns") == 0;
    const char *wr = getenv("PMI_RANK");
    if (named && wr && atoi(wr) == 1)
        setenv("TERN_COLL_SHM_ANON", "off", 1);
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    mtest_rank = wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Op affine_op;
    MPI_Op_create(compose, 0, &affine_op);
    MPI_Datatype affine_type;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type);
    MPI_Type_commit(&affine_type);

    /* Several hosts (tests/netns): clocks differ and shm is partial. */
    char name[MPI_MAX_PROCESSOR_NAME] = {0}, first[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(name, &len);
    memcpy(first, name, sizeof first);
    MPI_Bcast(first, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = strcmp(first, name) == 0;
    MPI_Allreduce(&same, &one_host, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    MPI_Comm comms[4];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comms[2]);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comms[3]);
    for (int k = 0; k < 4; k++) {
        if (one_host)
            test_barrier(comms[k]);
        test_bcast(comms[k]);
        test_reductions(comms[k], affine_op, affine_type);
        test_blocks(comms[k]);
        test_nonblocking(comms[k]);
    }
    back_to_back(comms, 4);

    /* A region for every communicator of 2 or more ranks on one host (the
     * shm algorithms were forced on each), none for those spanning hosts
     * (tests/netns), none at all without the shm transport. */
    const char *tl = getenv("TERN_TRANSPORTS");
    int no_shm = tl && !strstr(tl, "shm");
    int expected = 0;
    for (int k = 0; k < 4; k++)
        expected += node_local(comms[k], name);
    /* Named: the communicators with world rank 1 (all but the split's
     * other half). */
    int expected_named = 0;
    for (int k = 0; (named || pidns) && k < 4; k++) {
        int has1 = wrank == 1 || pidns;
        MPI_Allreduce(MPI_IN_PLACE, &has1, 1, MPI_INT, MPI_MAX, comms[k]);
        expected_named += has1 && node_local(comms[k], name);
    }
    int mapped = coll_regions_mapped(1), mapped_named = coll_regions_mapped(0);
    if (no_shm)
        CHECK(mapped + mapped_named == 0, "TERN_TRANSPORTS=%s: %d collective regions mapped, "
              "want none", tl, mapped + mapped_named);
    else if (strcmp(getenv("TERN_BARRIER_ALGORITHM"), "shm") == 0)
        CHECK(mapped == expected - expected_named && mapped_named == expected_named,
              "%d memfd and %d named collective regions mapped, want %d and %d (one per "
              "communicator of 2 or more ranks on one host; named where world rank 1 is in it "
              "and declines memfds, or in pid namespaces of their own)", mapped, mapped_named,
              expected - expected_named, expected_named);

    for (int k = 1; k < 4; k++)
        MPI_Comm_free(&comms[k]);
    /* Freed with their communicators: only MPI_COMM_WORLD's is left. */
    int left = coll_regions_mapped(1) + coll_regions_mapped(0);
    int want_left = no_shm ? 0 : node_local(MPI_COMM_WORLD, name);
    CHECK(left == want_left, "%d collective regions mapped after the frees, want %d", left,
          want_left);
    MPI_Op_free(&affine_op);
    MPI_Type_free(&affine_type);
    int total = 0;
    MPI_Allreduce(&mtest_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("coll_shm: %s (%d ranks, slot %d bytes)\n", total ? "FAILED" : "ok", p, slot_bytes);
    MPI_Finalize();
    return total ? 1 : 0;
}

/* Collective buffering (two-phase I/O): interleaved views written and read
 * with the _all calls under each setting of the hints (enable, disable,
 * automatic; one and several aggregators; buffers small enough for many
 * rounds), ranks with nothing to write taking part, a 3-D array written
 * through subarray views and checked element by element, and a darray
 * read back; views of vector, indexed and darray filetypes checked in the
 * file's bytes; automatic buffering left to pieces that are small (seen in
 * the tern_io_written_bytes counter); collective reads through views
 * without holes, alone and among views with holes, and of a read-only
 * file through views of large pieces (no exchange: tern_coll_calls);
 * collective writes through views without holes (ranges apart,
 * overlapping, a rank without data) that start no collective step outside
 * atomic mode. */
#include "../mpi/mtest.h"

#include <sys/stat.h>

static int rank, size;
static char path[256];

static MPI_Info hints(const char *cb, const char *buffer, const char *nodes)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", cb);
    MPI_Info_set(info, "romio_cb_read", cb);
    MPI_Info_set(info, "cb_buffer_size", buffer);
    if (nodes)
        MPI_Info_set(info, "cb_nodes", nodes);
    return info;
}

/* Rank r owns runs of RUN ints, every size-th, from byte base of the file;
 * the last rank writes nothing when told (count 0 with the others' view).
 * A base that is not a multiple of the stripe puts the end of the data
 * past the aggregators' domains unless they start at the stripe below
 * base (HDF5's chunked datasets found that). */
#define RUN 3
#define NRUNS 2000

static void interleaved(const char *cb, const char *buffer, const char *nodes, int idle_last,
                        int base)
{
    char name[128];
    snprintf(name, sizeof name, "interleaved cb=%s buffer=%s nodes=%s idle=%d base=%d", cb,
             buffer, nodes ? nodes : "-", idle_last, base);
    mtest_begin(name);
    MPI_Info info = hints(cb, buffer, nodes);
    if (base)
        MPI_Info_set(info, "striping_unit", "4096");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    MPI_Datatype run, ft;
    MPI_Type_contiguous(RUN, MPI_INT, &run);
    MPI_Type_create_resized(run, 0, (MPI_Aint)size * RUN * 4, &ft);
    MPI_Type_commit(&ft);
    CHECK_RC(MPI_File_set_view(fh, base + (MPI_Offset)rank * RUN * 4, MPI_INT, ft, "native",
                               info));
    int n = RUN * NRUNS, idle = idle_last && rank == size - 1;
    int *buf = malloc(n * sizeof *buf), *in = malloc(n * sizeof *in);
    for (int i = 0; i < n; i++)
        buf[i] = rank * 1000000 + i;
    MPI_Status st;
    CHECK_RC(MPI_File_write_all(fh, buf, idle ? 0 : n, MPI_INT, &st));
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, idle ? 0 : n, "ints written");
    /* Read back through the same view, collectively. */
    memset(in, 0xff, n * sizeof *in);
    CHECK_RC(MPI_File_read_at_all(fh, 0, in, idle ? 0 : n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, idle ? 0 : n, "ints read");
    int bad = -1;
    for (int i = 0; i < (idle ? 0 : n) && bad < 0; i++)
        if (in[i] != buf[i])
            bad = i;
    CHECK(bad < 0, "int %d read back as %d", bad, bad >= 0 ? in[bad] : 0);
    CHECK_RC(MPI_File_close(&fh));
    /* The file as bytes: rank 0 checks every int. */
    if (rank == 0) {
        int writers = idle_last ? size - 1 : size;
        long total = (long)n * size;
        int *all = malloc(total * sizeof *all);
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPI_Offset fsize;
        MPI_File_get_size(fh, &fsize);
        CHECK_INT((long)fsize, writers ? base + total * 4 - (idle_last ? RUN * 4 : 0) : 0,
                  "file size");
        CHECK_RC(MPI_File_read_at(fh, base, all, (int)((fsize - base) / 4), MPI_INT, &st));
        bad = -1;
        for (long i = 0; i < (fsize - base) / 4 && bad < 0; i++) {
            int r = (int)((i / RUN) % size), j = (int)((i / ((long)RUN * size)) * RUN + i % RUN);
            if (r < writers && all[i] != r * 1000000 + j)
                bad = (int)i;
        }
        CHECK(bad < 0, "file int %d is %d", bad, bad >= 0 ? all[bad] : 0);
        CHECK_RC(MPI_File_close(&fh));
        free(all);
    }
    MPI_Type_free(&run);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(buf);
    free(in);
    mtest_end();
}

/* A global NX x NY x NZ array of doubles, block-decomposed over a 3-D grid
 * of the ranks; each rank's block through a subarray filetype. */
#define NX 24
#define NY 20
#define NZ 18

static double value(int x, int y, int z)
{
    return x * 10000.0 + y * 100.0 + z;
}

static void subarray3d(const char *cb)
{
    char name[64];
    snprintf(name, sizeof name, "3-D subarray cb=%s", cb);
    mtest_begin(name);
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    int crank;
    MPI_Comm_rank(cart, &crank);
    MPI_Cart_coords(cart, crank, 3, coords);
    int gsizes[3] = {NX, NY, NZ}, lsizes[3], starts[3];
    for (int d = 0; d < 3; d++) {
        int base = gsizes[d] / dims[d], extra = gsizes[d] % dims[d];
        lsizes[d] = base + (coords[d] < extra);
        starts[d] = coords[d] * base + (coords[d] < extra ? coords[d] : extra);
    }
    MPI_Datatype sub;
    MPI_Type_create_subarray(3, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
    MPI_Type_commit(&sub);
    int n = lsizes[0] * lsizes[1] * lsizes[2];
    double *local = malloc(n * sizeof *local), *back = malloc(n * sizeof *back);
    for (int x = 0, i = 0; x < lsizes[0]; x++)
        for (int y = 0; y < lsizes[1]; y++)
            for (int z = 0; z < lsizes[2]; z++, i++)
                local[i] = value(starts[0] + x, starts[1] + y, starts[2] + z);
    MPI_Info info = hints(cb, "65536", NULL);
    MPI_File fh;
    CHECK_RC(MPI_File_open(cart, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_DOUBLE, sub, "native", info));
    CHECK_RC(MPI_File_write_all(fh, local, n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_all(fh, back, n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    CHECK(!memcmp(local, back, n * sizeof *local), "the block read back");
    CHECK_RC(MPI_File_close(&fh));
    if (crank == 0) {
        double *all = malloc(sizeof(double) * NX * NY * NZ);
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_read(fh, all, NX * NY * NZ, MPI_DOUBLE, MPI_STATUS_IGNORE));
        int bad = -1;
        for (int i = 0; i < NX * NY * NZ && bad < 0; i++)
            if (all[i] != value(i / (NY * NZ), (i / NZ) % NY, i % NZ))
                bad = i;
        CHECK(bad < 0, "global element %d is %g", bad, bad >= 0 ? all[bad] : 0);
        CHECK_RC(MPI_File_close(&fh));
        free(all);
    }
    /* A darray (block, cyclic) reads the same file. */
    int psizes[2] = {0, 0};
    MPI_Dims_create(size, 2, psizes);
    int g2[2] = {NX, NY * NZ}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 5};
    MPI_Datatype da;
    MPI_Type_create_darray(size, rank, 2, g2, distribs, dargs, psizes, MPI_ORDER_C, MPI_DOUBLE, &da);
    MPI_Type_commit(&da);
    int dsz;
    MPI_Type_size(da, &dsz);
    int dn = dsz / 8;
    double *dbuf = malloc((dn ? dn : 1) * sizeof *dbuf);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_DOUBLE, da, "native", info));
    CHECK_RC(MPI_File_read_all(fh, dbuf, dn, MPI_DOUBLE, MPI_STATUS_IGNORE));
    /* Where each element came from: walk the darray's flattened map. */
    long total = 0;
    double sum = 0;
    for (int i = 0; i < dn; i++)
        sum += dbuf[i];
    double gsum = 0;
    MPI_Allreduce(&sum, &gsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double expect = 0;
    for (int i = 0; i < NX * NY * NZ; i++, total++)
        expect += value(i / (NY * NZ), (i / NZ) % NY, i % NZ);
    CHECK(gsum == expect, "darray reads cover the array once: sum %g, expected %g", gsum, expect);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&da);
    free(dbuf);
    MPI_Info_free(&info);
    MPI_Type_free(&sub);
    MPI_Comm_free(&cart);
    free(local);
    free(back);
    mtest_end();
}

/* PnetCDF's fill of a scalar variable: rank 0's filetype is one block of
 * 4 bytes at displacement 512 (lb 512), the other ranks' filetypes have no
 * data at all (an hindexed of no blocks); a collective write puts rank 0's
 * int at byte 512. Through a view without data only accesses of no data
 * are possible (MPI_ERR_ARG otherwise). */
static void empty_filetype(void)
{
    mtest_begin("filetype without data");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    MPI_Datatype ft;
    int len = 4;
    MPI_Aint at = 512;
    MPI_Type_create_hindexed(rank == 0 ? 1 : 0, &len, &at, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    int v = 5678;
    MPI_Status st;
    CHECK_RC(MPI_File_write_at_all(fh, 0, &v, rank == 0 ? 4 : 0, MPI_BYTE, &st));
    if (rank != 0) {
        int rc = MPI_File_write_at(fh, 0, &v, 4, MPI_BYTE, &st);
        CHECK_CLASS(rc, MPI_ERR_ARG, "4 bytes through a view without data");
        MPI_Offset off = -1;
        CHECK_RC(MPI_File_get_byte_offset(fh, 0, &off));
        CHECK_INT(off, 0, "byte offset of etype 0 in a view without data");
    }
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset size = 0;
    CHECK_RC(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 516, "file size");
    int got[2] = {-1, -1};
    CHECK_RC(MPI_File_read_at_all(fh, 0, got, 1, MPI_INT, &st));
    CHECK_INT(got[0], 0, "the int at byte 0 (a hole)");
    CHECK_RC(MPI_File_read_at_all(fh, 512, got + 1, 1, MPI_INT, &st));
    CHECK_INT(got[1], 5678, "the int at byte 512");
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    mtest_end();
}

/* Collective reads of a read-only file through views without holes go
 * without any exchange (each rank reads its own range at once): every
 * rank reading the same
 * ints through the default view; a contiguous filetype at a displacement
 * per rank; then one rank's view without holes among views with holes
 * (every rank takes the exchange: none goes alone), automatic and
 * enabled. */
#define DN 4096
static void dense_reads(const char *cb)
{
    mtest_begin("collective reads through views without holes");
    MPI_File fh;
    MPI_Info info = hints(cb, "4096", NULL);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    static int v[DN], got[DN];
    for (int i = 0; i < DN; i++)
        v[i] = i * 7 + 1;
    MPI_Status st;
    if (rank == 0)
        CHECK_RC(MPI_File_write_at(fh, 0, v, DN, MPI_INT, &st));
    CHECK_RC(MPI_File_close(&fh));
    /* Read-only: the reads that go without an exchange. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    int bad = 0, count = -1;
    memset(got, 0, sizeof got);
    CHECK_RC(MPI_File_read_at_all(fh, 0, got, DN, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, DN, "ints read through the default view");
    for (int i = 0; i < DN; i++)
        bad += got[i] != v[i];
    CHECK_INT(bad, 0, "wrong ints through the default view");
    MPI_Datatype c, holes;
    MPI_Type_contiguous(16, MPI_INT, &c);
    MPI_Type_commit(&c);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * 64, MPI_INT, c, "native", info));
    memset(got, 0, sizeof got);
    CHECK_RC(MPI_File_read_all(fh, got, 100, MPI_INT, &st));
    bad = 0;
    for (int i = 0; i < 100; i++)
        bad += got[i] != v[rank * 16 + i];
    CHECK_INT(bad, 0, "wrong ints through a contiguous filetype");
    /* Every other int: a filetype with holes, on every rank but 0. */
    MPI_Type_create_resized(MPI_INT, 0, 8, &holes);
    MPI_Type_commit(&holes);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, rank == 0 ? MPI_INT : holes, "native", info));
    memset(got, 0, sizeof got);
    CHECK_RC(MPI_File_read_at_all(fh, 10, got, 1000, MPI_INT, &st));
    bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += got[i] != v[rank == 0 ? 10 + i : 2 * (10 + i)];
    CHECK_INT(bad, 0, "wrong ints, one view without holes among views with holes");
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&c);
    MPI_Type_free(&holes);
    MPI_Info_free(&info);
    mtest_end();
}

/* Views of vector, indexed and darray filetypes (with holes: each rank's
 * pieces between the others'), written independently and collectively
 * (buffered, automatic) and checked in the file's bytes. Where rank r's
 * stream int i lands is found apart from the view code: packing an array
 * of global indices through the filetype lists them in stream order. */
#define VB 5   /* vector: blocks of VB ints */
#define VNB 300
static MPI_Datatype holes_type(int kind, int *nints, int *global)
{
    MPI_Datatype t, tmp;
    switch (kind) {
    case 0: { /* every size-th block of VB ints, from block rank */
        MPI_Datatype vec;
        MPI_Type_vector(VNB, VB, size * VB, MPI_INT, &vec);
        int one = 1;
        MPI_Aint at = (MPI_Aint)rank * VB * 4;
        MPI_Type_create_hindexed(1, &one, &at, vec, &tmp);
        MPI_Type_free(&vec);
        *global = VNB * VB * size;
        break;
    }
    case 1: { /* chunks of 1, 2, 3, 1, 2, 3... ints dealt round-robin */
        int nb = 0, blens[600], displs[600], at = 0;
        for (int c = 0; c < 600 * size; c++) {
            int len = c % 3 + 1;
            if (c % size == rank && nb < 600) {
                blens[nb] = len;
                displs[nb++] = at;
            }
            at += len;
        }
        MPI_Type_indexed(nb, blens, displs, MPI_INT, &tmp);
        *global = at;
        break;
    }
    default: { /* darray: rows in blocks, columns cyclic by 3 */
        int ps[2] = {0, 0};
        MPI_Dims_create(size, 2, ps);
        int g[2] = {30, 44}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 3};
        MPI_Type_create_darray(size, rank, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &tmp);
        *global = g[0] * g[1];
        break;
    }
    }
    /* Every rank's filetype spans the whole array: the holes are the others'. */
    MPI_Type_create_resized(tmp, 0, (MPI_Aint)*global * 4, &t);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&t);
    int sz;
    MPI_Type_size(t, &sz);
    *nints = sz / 4;
    return t;
}

static void holes_view(int kind, const char *how)
{
    static const char *const kinds[] = {"vector", "indexed", "darray"};
    char name[96];
    snprintf(name, sizeof name, "%s view written %s", kinds[kind], how);
    mtest_begin(name);
    int n = 0, global = 0, coll = strcmp(how, "independently") != 0;
    MPI_Datatype ft = holes_type(kind, &n, &global);
    /* Stream int i of this rank is global int where[i]. */
    int *index = malloc((size_t)global * sizeof *index), *where = malloc((size_t)(n ? n : 1) * 4);
    for (int g = 0; g < global; g++)
        index[g] = g;
    int packed = 0;
    MPI_Pack(index, 1, ft, where, n * 4, &packed, MPI_COMM_SELF);
    int *buf = malloc((size_t)(n ? n : 1) * sizeof *buf), *in = malloc((size_t)(n ? n : 1) * 4);
    for (int i = 0; i < n; i++)
        buf[i] = where[i] * 7 + 3;
    MPI_Info info = hints(coll ? how : "automatic", "4096", NULL);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", info));
    if (coll)
        CHECK_RC(MPI_File_write_all(fh, buf, n, MPI_INT, MPI_STATUS_IGNORE));
    else
        CHECK_RC(MPI_File_write_at(fh, 0, buf, n, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh));
    memset(in, 0xff, (size_t)(n ? n : 1) * 4);
    if (coll)
        CHECK_RC(MPI_File_read_at_all(fh, 0, in, n, MPI_INT, MPI_STATUS_IGNORE));
    else
        CHECK_RC(MPI_File_read_at(fh, 0, in, n, MPI_INT, MPI_STATUS_IGNORE));
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (in[i] != buf[i])
            bad = i;
    CHECK(bad < 0, "stream int %d read back as %d, not %d", bad, bad >= 0 ? in[bad] : 0,
          bad >= 0 ? buf[bad] : 0);
    CHECK_RC(MPI_File_close(&fh));
    /* The file as bytes: the ranks' pieces tile the array, each int in
     * its place. */
    if (rank == 0) {
        int *all = calloc((size_t)global, sizeof *all);
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPI_Offset fsize;
        MPI_File_get_size(fh, &fsize);
        CHECK_INT((long)fsize, (long)global * 4, "file size");
        CHECK_RC(MPI_File_read_at(fh, 0, all, global, MPI_INT, MPI_STATUS_IGNORE));
        bad = -1;
        for (int g = 0; g < global && bad < 0; g++)
            if (all[g] != g * 7 + 3)
                bad = g;
        CHECK(bad < 0, "file int %d is %d, not %d", bad, bad >= 0 ? all[bad] : 0, bad * 7 + 3);
        CHECK_RC(MPI_File_close(&fh));
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(index);
    free(where);
    free(buf);
    free(in);
    mtest_end();
}

/* romio_cb_write=automatic with interleaved views: pieces of 128 KB are
 * each rank's own to write (no aggregator; the tern_io_written_bytes
 * counter grows by exactly its bytes on every rank), pieces of 1 KB go
 * through the aggregator (one node: rank 0 only, so rank 1 writes
 * nothing). The file's bytes are checked either way. */
static unsigned long long pvar_value(MPI_T_pvar_session sess, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(sess, h, &v));
    return v;
}

/* A session with one handle on the counter called name, started. */
static void pvar_open(const char *name, MPI_T_pvar_session *sess, MPI_T_pvar_handle *h)
{
    int provided, idx = -1, count = 0;
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_RC(MPI_T_pvar_session_create(sess));
    CHECK_RC(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_RC(MPI_T_pvar_handle_alloc(*sess, idx, NULL, h, &count));
    MPI_T_pvar_start(*sess, *h); /* continuous counters refuse: fine */
}

static void pvar_close(MPI_T_pvar_session *sess, MPI_T_pvar_handle *h)
{
    MPI_T_pvar_handle_free(*sess, h);
    MPI_T_pvar_session_free(sess);
    MPI_T_finalize();
}

static void automatic_pieces(int piece)
{
    char name[64];
    snprintf(name, sizeof name, "automatic pieces of %d bytes", piece);
    mtest_begin(name);
    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h;
    pvar_open("tern_io_written_bytes", &sess, &h);
    MPI_Info info = hints("automatic", "16777216", NULL);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    MPI_Datatype ft;
    MPI_Type_vector(1, piece, piece * size, MPI_BYTE, &ft);
    MPI_Datatype rs;
    MPI_Type_create_resized(ft, 0, (MPI_Aint)piece * size, &rs);
    MPI_Type_commit(&rs);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * piece, MPI_BYTE, rs, "native", info));
    int reps = 8, n = piece * reps;
    unsigned char *buf = malloc(n);
    for (int i = 0; i < n; i++)
        buf[i] = (unsigned char)(rank * 31 + i * 7);
    unsigned long long before = pvar_value(sess, h);
    CHECK_RC(MPI_File_write_all(fh, buf, n, MPI_BYTE, MPI_STATUS_IGNORE));
    unsigned long long wrote = pvar_value(sess, h) - before;
    if (size > 1 && piece >= 65536)
        CHECK(wrote == (unsigned long long)n, "large pieces: rank wrote %llu bytes, not its own "
              "%d", wrote, n);
    if (size > 1 && piece < 65536 && rank == 1)
        CHECK(wrote == 0, "small pieces: rank 1 wrote %llu bytes, not none (rank 0 "
              "aggregates)", wrote);
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        long total = (long)n * size;
        unsigned char *all = malloc(total);
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, MPI_STATUS_IGNORE));
        long bad = -1;
        for (long i = 0; i < total && bad < 0; i++) {
            int r = (int)((i / piece) % size);
            long j = (i / ((long)piece * size)) * piece + i % piece;
            if (all[i] != (unsigned char)(r * 31 + j * 7))
                bad = i;
        }
        CHECK(bad < 0, "file byte %ld is %d", bad, bad >= 0 ? all[bad] : 0);
        CHECK_RC(MPI_File_close(&fh));
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&rs);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    pvar_close(&sess, &h);
    free(buf);
    mtest_end();
}

/* Collective writes through views without holes (each rank's access one
 * range), the hint automatic: ranges apart, a rank with nothing to write,
 * and ranges that overlap (half of each rank's bytes are the next rank's
 * too), in nonatomic mode without any collective step (tern_coll_calls
 * unchanged; each byte of an overlap is then one of its writers', MPI
 * 14.6.1) and in atomic mode with the exchange of extents. The file's
 * bytes checked by rank 0 after the close. */
#define WN 6000
static unsigned char wbyte(int r, long i)
{
    return (unsigned char)(r * 64 + i % 61 + 1);
}

static void dense_writes(int how)
{
    static const char *const hows[] = {"ranges apart", "the last rank without data",
                                       "overlapping ranges", "overlapping ranges, atomic"};
    char name[96];
    snprintf(name, sizeof name, "collective writes through views without holes: %s",
             hows[how]);
    mtest_begin(name);
    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h;
    pvar_open("tern_coll_calls", &sess, &h);
    MPI_Info info = hints("automatic", "4096", NULL);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_set_atomicity(fh, how == 3));
    /* Rank r's bytes start at r * stride; overlapping: half a range. */
    long stride = how >= 2 ? WN / 2 : WN;
    int n = how == 1 && rank == size - 1 && size > 1 ? 0 : WN;
    unsigned char *buf = malloc(WN);
    for (long i = 0; i < WN; i++)
        buf[i] = wbyte(rank, i);
    unsigned long long before = pvar_value(sess, h);
    MPI_Status st;
    CHECK_RC(MPI_File_write_at_all(fh, rank * stride, buf, n, MPI_BYTE, &st));
    unsigned long long colls = pvar_value(sess, h) - before;
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK_INT(got, n, "bytes written (status count)");
    if (how < 3)
        CHECK(colls == 0, "the write started %llu collectives, not none", colls);
    else if (size > 1)
        CHECK(colls > 0, "atomic mode: the write exchanged nothing");
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        int writers = how == 1 && size > 1 ? size - 1 : size;
        long total = (writers - 1) * stride + WN;
        unsigned char *all = malloc((size_t)total + 1);
        MPI_Offset fsize = -1;
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_get_size(fh, &fsize));
        CHECK_INT(fsize, total, "the file's size");
        CHECK_RC(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, MPI_STATUS_IGNORE));
        long bad = -1;
        for (long p = 0; p < total && bad < 0; p++) {
            /* The writers of byte p: every r with r * stride <= p < r * stride + WN. */
            int ok = 0;
            for (int r = 0; r < writers && !ok; r++)
                ok = p >= r * stride && p < r * stride + WN && all[p] == wbyte(r, p - r * stride);
            if (!ok)
                bad = p;
        }
        CHECK(bad < 0, "file byte %ld is %d, no writer's", bad, bad >= 0 ? all[bad] : 0);
        CHECK_RC(MPI_File_close(&fh));
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_free(&info);
    pvar_close(&sess, &h);
    free(buf);
    mtest_end();
}

/* Collective reads of a read-only file through views with holes whose
 * pieces are large (at least the 64 KB that automatic buffering leaves to
 * each rank: block3d's subarrays) go without any exchange, as through
 * views without holes: the tern_coll_calls counter does not grow in the
 * read_all; with small pieces they exchange. The bytes are checked
 * either way, from the view's start and from the middle of a piece. */
static void large_piece_reads(int piece)
{
    char name[64];
    snprintf(name, sizeof name, "read-only collective reads, pieces of %d bytes", piece);
    mtest_begin(name);
    int count = 0, reps = 4;
    long total = (long)piece * reps * size;
    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h;
    pvar_open("tern_coll_calls", &sess, &h);
    MPI_Info info = hints("automatic", "16777216", NULL);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    unsigned char *all = malloc(total), *got = malloc((size_t)piece * reps);
    for (long i = 0; i < total; i++)
        all[i] = (unsigned char)(i * 13 + i / 251);
    if (rank == 0)
        CHECK_RC(MPI_File_write_at(fh, 0, all, (int)total, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    MPI_Datatype ft, rs;
    MPI_Type_vector(1, piece, piece * size, MPI_BYTE, &ft);
    MPI_Type_create_resized(ft, 0, (MPI_Aint)piece * size, &rs);
    MPI_Type_commit(&rs);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * piece, MPI_BYTE, rs, "native", info));
    /* Stream byte i of rank r: file byte (i / piece * size + r) * piece + i % piece. */
    for (int from = 0; from <= piece / 2; from += piece / 2) {
        int n = piece * reps - from, bad = -1;
        memset(got, 0, (size_t)piece * reps);
        unsigned long long before = pvar_value(sess, h);
        MPI_Status st;
        CHECK_RC(MPI_File_read_at_all(fh, from, got, n, MPI_BYTE, &st));
        unsigned long long calls = pvar_value(sess, h) - before;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK_INT(count, n, "bytes read");
        for (int i = 0; i < n && bad < 0; i++) {
            long at = ((long)(from + i) / piece * size + rank) * piece + (from + i) % piece;
            if (got[i] != all[at])
                bad = i;
        }
        CHECK(bad < 0, "from %d: stream byte %d read as %d", from, bad, bad >= 0 ? got[bad] : 0);
        if (size > 1 && piece >= 65536)
            CHECK(calls == 0, "large pieces: %llu collectives in the read, not none", calls);
        if (size > 1 && piece < 65536)
            CHECK(calls > 0, "small pieces: no collective in the read (no exchange)");
    }
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&rs);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    pvar_close(&sess, &h);
    free(all);
    free(got);
    mtest_end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_watchdog(120);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "io_coll_%d.dat", pid);
    interleaved("enable", "4096", NULL, 0, 0);
    interleaved("enable", "65536", "1", 1, 0);
    interleaved("enable", "8192", "2", 0, 0);
    interleaved("automatic", "16777216", NULL, 1, 0);
    interleaved("disable", "4096", NULL, 0, 0);
    interleaved("enable", "16777216", "1", 0, 4000);
    interleaved("automatic", "65536", "2", 0, 4000);
    empty_filetype();
    dense_reads("automatic");
    dense_reads("enable");
    subarray3d("enable");
    subarray3d("automatic");
    subarray3d("disable");
    for (int kind = 0; kind < 3; kind++) {
        holes_view(kind, "independently");
        holes_view(kind, "enable");
        holes_view(kind, "automatic");
    }
    automatic_pieces(1024);
    automatic_pieces(128 << 10);
    large_piece_reads(1024);
    large_piece_reads(128 << 10);
    for (int how = 0; how < 4; how++)
        dense_writes(how);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    return mtest_finalize();
}

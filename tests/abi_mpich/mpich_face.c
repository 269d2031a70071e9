/* A program built with Debian's MPICH (mpicc.mpich, MPICH's mpi.h, no
 * Tern header or wrapper) run on Tern's libmpich.so.12: every check
 * compares a value with what is known to be right and exits 1 on the
 * first difference. Run with 2-4 ranks; argv[1] is the directory of the
 * libmpich.so.12 that must be the one loaded (Tern's), argv[2] a scratch
 * directory for the MPI-IO part. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__,     \
                    #cond);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* The libmpich.so.12 this process loaded is the one in dir. */
static void check_loaded(const char *dir)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], want[4096];
    snprintf(want, sizeof want, "%s/libmpich.so.12", dir);
    char *real = realpath(want, NULL);
    CHECK(f && real);
    int tern = 0, other = 0;
    while (fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, "libmpich.so"))
            continue;
        path[strcspn(path, "\n")] = '\0';
        if (!strcmp(path, real))
            tern = 1;
        else
            other = 1;
    }
    fclose(f);
    free(real);
    CHECK(tern && !other);
}

static void pt2pt(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double out[5], in[8];
    for (int i = 0; i < 5; i++)
        out[i] = rank * 10 + i;
    MPI_Status st;
    MPI_Request rq;
    MPI_Irecv(in, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
    MPI_Send(out, 5, MPI_DOUBLE, next, 40 + rank, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 40 + prev && count == 5);
    CHECK(in[4] == prev * 10 + 4);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 5 * (int)sizeof(double));
    int cancelled = 1;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(!cancelled);
    /* MPI_STATUS_IGNORE, MPI_PROC_NULL, a probe's status. */
    MPI_Sendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 0, in, 1, MPI_INT, MPI_PROC_NULL, 0,
                 MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    if (rank == 0 && size > 1)
        MPI_Send(out, 3, MPI_LONG_LONG, 1, 7, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Message msg;
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &msg, &st);
        CHECK(msg != MPI_MESSAGE_NULL);
        MPI_Get_count(&st, MPI_LONG_LONG, &count);
        CHECK(count == 3);
        MPI_Mrecv(in, 3, MPI_LONG_LONG, &msg, MPI_STATUS_IGNORE);
        CHECK(msg == MPI_MESSAGE_NULL && in[0] == 0 && in[1] == 1 && in[2] == 2); /* rank 0's */
    }
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    MPI_Waitall(2, reqs, sts);
    CHECK(sts[1].MPI_SOURCE == MPI_ANY_SOURCE && sts[1].MPI_TAG == MPI_ANY_TAG);
}

/* A user reduction on a derived type: complex products. */
typedef struct {
    double re, im;
} cplx;

static void cprod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cplx *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        cplx c = {a[i].re * b[i].re - a[i].im * b[i].im, a[i].re * b[i].im + a[i].im * b[i].re};
        b[i] = c;
    }
}

static void collectives(void)
{
    int v = rank + 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size + 1) / 2);
    long lv = rank;
    MPI_Allreduce(MPI_IN_PLACE, &lv, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lv == size - 1);
    /* MINLOC on MPI_DOUBLE_INT: MPICH's 0x8c000001 pair type. */
    struct {
        double v;
        int i;
    } p = {100.0 - rank, rank}, r;
    MPI_Allreduce(&p, &r, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(r.v == 100.0 - (size - 1) && r.i == size - 1);
    struct {
        float v;
        int i;
    } fp = {(float)(rank % 2), rank}, fr;
    MPI_Allreduce(&fp, &fr, 1, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(fr.v == (size > 1 ? 1.0f : 0.0f) && fr.i == (size > 1 ? 1 : 0));
    MPI_Datatype ctype;
    MPI_Type_contiguous(2, MPI_DOUBLE, &ctype);
    MPI_Type_commit(&ctype);
    MPI_Op op;
    MPI_Op_create(cprod, 1, &op);
    cplx c = {0.0, 1.0}, prod; /* i^size */
    MPI_Allreduce(&c, &prod, 1, ctype, op, MPI_COMM_WORLD);
    static const cplx pow_i[4] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    CHECK(prod.re == pow_i[size % 4].re && prod.im == pow_i[size % 4].im);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL);
    MPI_Type_free(&ctype);
    CHECK(ctype == MPI_DATATYPE_NULL);
    int *all = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i);
    free(all);
    char word[8] = "";
    if (rank == 0)
        strcpy(word, "mpich");
    MPI_Bcast(word, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(!strcmp(word, "mpich"));
}

static void datatypes(void)
{
    struct {
        MPI_Datatype t;
        int size;
    } pre[] = {{MPI_CHAR, 1},        {MPI_SIGNED_CHAR, 1},   {MPI_BYTE, 1},
               {MPI_SHORT, 2},       {MPI_INT, 4},           {MPI_LONG, 8},
               {MPI_LONG_LONG, 8},   {MPI_FLOAT, 4},         {MPI_DOUBLE, 8},
               {MPI_LONG_DOUBLE, 16}, {MPI_C_BOOL, 1},       {MPI_INT64_T, 8},
               {MPI_UINT16_T, 2},    {MPI_AINT, 8},          {MPI_OFFSET, 8},
               {MPI_COUNT, 8},       {MPI_C_DOUBLE_COMPLEX, 16}, {MPI_2INT, 8},
               {MPI_DOUBLE_INT, 12}, {MPI_SHORT_INT, 6},     {MPI_INTEGER, 4},
               {MPI_DOUBLE_PRECISION, 8}, {MPI_WCHAR, 4},    {MPI_PACKED, 1}};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        int s = -1;
        MPI_Type_size(pre[i].t, &s);
        CHECK(s == pre[i].size);
    }
    MPI_Aint lb, extent;
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent);
    CHECK(lb == 0 && extent == 16);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(MPI_UNSIGNED_LONG_LONG, name, &len);
    CHECK(!strcmp(name, "MPI_UNSIGNED_LONG_LONG"));
    /* A struct type: {int, double[2]} with a gap, sent as a vector of them. */
    struct rec {
        int a;
        double d[2];
    } recs[3], got[3];
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {offsetof(struct rec, a), offsetof(struct rec, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st, st2;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct rec), &st2);
    MPI_Type_commit(&st2);
    int combiner, ni, na, nd;
    MPI_Type_get_envelope(st2, &ni, &na, &nd, &combiner);
    CHECK(combiner == MPI_COMBINER_RESIZED);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &combiner);
    CHECK(combiner == MPI_COMBINER_NAMED);
    for (int i = 0; i < 3; i++)
        recs[i] = (struct rec){i + rank, {i * 0.5, -i * 1.0}};
    memset(got, 0, sizeof got);
    MPI_Sendrecv(recs, 3, st2, rank, 1, got, 3, st2, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 3; i++)
        CHECK(got[i].a == i + rank && got[i].d[0] == i * 0.5 && got[i].d[1] == -i * 1.0);
    int psize;
    MPI_Pack_size(3, st2, MPI_COMM_WORLD, &psize);
    CHECK(psize >= 3 * (4 + 16));
    MPI_Type_free(&st);
    MPI_Type_free(&st2);
    /* MPI-1's MPI_Type_hvector/hindexed, which MPICH still has. */
    MPI_Datatype hv, hi;
    MPI_Type_hvector(2, 1, 16, MPI_INT, &hv);
    MPI_Type_size(hv, &psize);
    MPI_Type_get_extent(hv, &lb, &extent);
    MPI_Type_get_envelope(hv, &ni, &na, &nd, &combiner);
    CHECK(psize == 8 && extent == 20 && combiner == MPI_COMBINER_HVECTOR);
    int hbl[2] = {1, 2};
    MPI_Aint hdisp[2] = {0, 8};
    MPI_Type_hindexed(2, hbl, hdisp, MPI_INT, &hi);
    MPI_Type_size(hi, &psize);
    MPI_Type_get_extent(hi, &lb, &extent);
    CHECK(psize == 12 && extent == 16);
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
}

static int handler_calls, handler_code;
static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, cls = -1;
    int err = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && cls == MPI_ERR_RANK);
    err = MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, text, &len);
    CHECK(len > 0 && strstr(text, "MPI_Send"));
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, eh);
    err = MPI_Recv(&x, 1, MPI_INT, 0, -5, dup, MPI_STATUS_IGNORE);
    MPI_Error_class(handler_code, &cls);
    CHECK(handler_calls == 1 && cls == MPI_ERR_TAG && err == handler_code);
    MPI_Errhandler got;
    MPI_Comm_get_errhandler(dup, &got);
    CHECK(got == eh);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL);
    /* Attributes: MPICH's MPI_COMM_DUP_FN (MPIR_Dup_fn) and its NULL
     * copy/delete functions. */
    int kdup, knull, flag;
    void *val;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
    MPI_Comm_set_attr(dup, kdup, (void *)(long)42);
    MPI_Comm_set_attr(dup, knull, (void *)(long)43);
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    MPI_Comm_get_attr(dup2, kdup, &val, &flag);
    CHECK(flag && (long)val == 42);
    MPI_Comm_get_attr(dup2, knull, &val, &flag);
    CHECK(!flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag);
    CHECK(flag && *(int *)val >= 32767);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL);
    MPI_Comm_free_keyval(&kdup);
    MPI_Comm_free_keyval(&knull);
    int result;
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_IDENT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void one_sided(void)
{
    int *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int) * (MPI_Aint)size, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    for (int i = 0; i < size; i++)
        base[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD); /* a fence opening an epoch need not synchronize */
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++)
        MPI_Put(&rank, 1, MPI_INT, t, rank, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < size; i++)
        CHECK(base[i] == i);
    int one = 1;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0)
        CHECK(base[0] == size);
    int got = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, win);
    /* base[1] is 1 on every rank; on one rank base[0], accumulated to 1. */
    MPI_Get(&got, 1, MPI_INT, (rank + 1) % size, size > 1 ? 1 : 0, 1, MPI_INT, win);
    MPI_Win_unlock((rank + 1) % size, win);
    CHECK(got == 1);
    int *flavor, flag;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL);
}

static int file_errors;
static void on_file_error(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
    file_errors++;
}

static void io(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/mpich_face.dat", dir);
    MPI_File fh = (MPI_File)(~(unsigned long)0); /* every byte set */
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(fh != MPI_FILE_NULL);
    int buf[4];
    for (int i = 0; i < 4; i++)
        buf[i] = rank * 100 + i;
    MPI_Status st;
    MPI_File_write_at_all(fh, (MPI_Offset)rank * sizeof buf, buf, 4, MPI_INT, &st);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 4);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset fsize;
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == (MPI_Offset)(size * sizeof buf));
    int other[4], peer = (rank + 1) % size;
    MPI_File_read_at(fh, (MPI_Offset)peer * sizeof buf, other, 4, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        CHECK(other[i] == peer * 100 + i);
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(f) == fh);
    MPI_File_close(&fh);
    CHECK(fh == MPI_FILE_NULL);
    /* The default file error handler is MPI_FILE_NULL's (0 in MPICH). */
    MPI_Errhandler eh, got;
    MPI_File_create_errhandler(on_file_error, &eh);
    MPI_File_set_errhandler(MPI_FILE_NULL, eh);
    MPI_File_get_errhandler(MPI_FILE_NULL, &got);
    CHECK(got == eh);
    snprintf(path, sizeof path, "%s/no/such/dir/file", dir);
    int err = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    int cls;
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && file_errors == 1 && cls == MPI_ERR_NO_SUCH_FILE);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/mpich_face.dat", dir);
        CHECK(MPI_File_delete(path, MPI_INFO_NULL) == MPI_SUCCESS);
    }
}

static void topology(void)
{
    /* MPI_UNWEIGHTED is a data symbol in MPICH: Tern's face gives its value. */
    int src = (rank + size - 1) % size, dst = (rank + 1) % size;
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    int indeg, outdeg, weighted;
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && !weighted);
    int got = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, g);
    CHECK(got == src);
    MPI_Comm_free(&g);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 3 && provided >= MPI_THREAD_FUNNELED);
    check_loaded(argv[1]);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME);
    /* The level MPICH 4.0.2's mpi.h says (4.0), not libtern's 5.0. */
    int v = -1, sv = -1;
    CHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS && v == MPI_VERSION && sv == MPI_SUBVERSION);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(version, &len);
#ifndef ON_MPICH /* -DON_MPICH: checks the test itself on MPICH */
    CHECK(strstr(version, "Tern") != NULL);
#endif
    pt2pt();
    collectives();
    datatypes();
    errors();
    one_sided();
    io(argv[2]);
    topology();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpich_face: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

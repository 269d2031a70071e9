/* Derived datatypes through the ABI: struct (an array of ABI handles),
 * vector, subarray (MPI_ORDER_C is 12 in the ABI), their decoding
 * (combiners, the order, the predefined types returned), a derived type
 * sent and received, pack/unpack; a generalized request's status. */
#include "abi_test.h"

#include <string.h>

struct rec {
    int i;
    double d;
    char c[3];
};

static int query(void *ex, MPI_Status *st)
{
    (void)ex;
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = 77;
    MPI_Status_set_elements(st, MPI_BYTE, 12);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}
static int freed;
static int gfree(void *ex)
{
    (void)ex;
    freed++;
    return MPI_SUCCESS;
}
static int gcancel(void *ex, int complete)
{
    (void)ex, (void)complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int bl[3] = {1, 1, 3};
    MPI_Aint disp[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st, st_r;
    CHECK_OK(MPI_Type_create_struct(3, bl, disp, types, &st));
    CHECK_OK(MPI_Type_create_resized(st, 0, sizeof(struct rec), &st_r));
    CHECK_OK(MPI_Type_commit(&st_r));
    int ni, na, nd, comb;
    CHECK_OK(MPI_Type_get_envelope(st, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3, "envelope %d %d %d %d",
          comb, ni, na, nd);
    int ints[4];
    MPI_Aint addrs[3];
    MPI_Datatype dts[3];
    CHECK_OK(MPI_Type_get_contents(st, 4, 3, 3, ints, addrs, dts));
    CHECK(dts[0] == MPI_INT && dts[1] == MPI_DOUBLE && dts[2] == MPI_CHAR,
          "contents types %p %p %p", (void *)dts[0], (void *)dts[1], (void *)dts[2]);
    CHECK(ints[0] == 3 && ints[3] == 3 && addrs[1] == disp[1], "contents ints");
    CHECK_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "MPI_INT's combiner %d", comb);

    /* Subarray: the ABI's order constant both ways. */
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 1};
    MPI_Datatype sa;
    CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &sa));
    CHECK_OK(MPI_Type_commit(&sa));
    CHECK_OK(MPI_Type_get_envelope(sa, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8, "subarray envelope %d %d", comb, ni);
    int sints[8];
    MPI_Datatype sdt;
    CHECK_OK(MPI_Type_get_contents(sa, 8, 0, 1, sints, addrs, &sdt));
    CHECK(sints[7] == MPI_ORDER_C && sdt == MPI_INT, "order %d type %p", sints[7], (void *)sdt);
    int sz;
    CHECK_OK(MPI_Type_size(sa, &sz));
    CHECK(sz == 6 * (int)sizeof(int), "subarray size %d", sz);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "name %s", name);

    /* A ring of records and of a subarray. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    struct rec out[2] = {{rank, rank + 0.5, "ab"}, {rank * 2, 1.25, "cd"}}, in[2];
    memset(in, 0, sizeof in);
    MPI_Status s;
    CHECK_OK(MPI_Sendrecv(out, 2, st_r, next, 1, in, 2, st_r, prev, 1, MPI_COMM_WORLD, &s));
    CHECK(in[0].i == prev && in[0].d == prev + 0.5 && in[1].c[1] == 'd', "record %d %g %c",
          in[0].i, in[0].d, in[1].c[1]);
    int cnt;
    CHECK_OK(MPI_Get_count(&s, st_r, &cnt));
    CHECK(cnt == 2, "count %d", cnt);
    int grid[20], got[20];
    for (int i = 0; i < 20; i++)
        grid[i] = rank * 100 + i, got[i] = -1;
    CHECK_OK(MPI_Sendrecv(grid, 1, sa, next, 2, got, 1, sa, prev, 2, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    CHECK(got[6] == prev * 100 + 6 && got[13] == prev * 100 + 13 && got[0] == -1,
          "subarray %d %d %d", got[6], got[13], got[0]);

    /* Pack and unpack. */
    char pbuf[256];
    int pos = 0, psz;
    CHECK_OK(MPI_Pack_size(2, st_r, MPI_COMM_WORLD, &psz));
    CHECK_OK(MPI_Pack(out, 2, st_r, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD));
    CHECK(pos <= psz, "packed %d of %d", pos, psz);
    pos = 0;
    memset(in, 0, sizeof in);
    CHECK_OK(MPI_Unpack(pbuf, sizeof pbuf, &pos, in, 2, st_r, MPI_COMM_WORLD));
    CHECK(in[1].i == rank * 2 && in[1].d == 1.25, "unpacked %d", in[1].i);

    /* A generalized request: its status in the ABI layout. */
    MPI_Request g;
    CHECK_OK(MPI_Grequest_start(query, gfree, gcancel, NULL, &g));
    CHECK_OK(MPI_Grequest_complete(g));
    CHECK_OK(MPI_Wait(&g, &s));
    CHECK(g == MPI_REQUEST_NULL && freed == 1, "grequest freed %d", freed);
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_TAG == 77, "grequest status %d %d",
          s.MPI_SOURCE, s.MPI_TAG);
    CHECK_OK(MPI_Get_count(&s, MPI_BYTE, &cnt));
    CHECK(cnt == 12, "grequest count %d", cnt);

    MPI_Type_free(&sa);
    MPI_Type_free(&st_r);
    MPI_Type_free(&st);

    /* The pair types come back as the ABI's constants (libtern's have
     * MPICH's values, which look like user handles). */
    MPI_Datatype vals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG, MPI_SHORT, MPI_LONG_DOUBLE, MPI_INT};
    MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
                            MPI_LONG_DOUBLE_INT, MPI_2INT};
    for (int i = 0; i < 6; i++) {
        MPI_Datatype got = MPI_DATATYPE_NULL;
        CHECK_OK(MPI_Type_get_value_index(vals[i], MPI_INT, &got));
        CHECK(got == pairs[i], "value-index type %d: %p, not %p", i, (void *)got,
              (void *)pairs[i]);
    }
    MPI_Finalize();
    if (rank == 0)
        printf("test abi_dtype ok\n");
    return 0;
}

/* The window object and its errors: every error class one-sided
 * communication raises (on the window's handler, set to MPI_ERRORS_RETURN),
 * the message naming the function, a user error handler called with the
 * window's handle, the predefined and user attributes, names, info hints,
 * the group, and Win_test. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call), c_ = -1;                                                                  \
        MPI_Error_class(e_, &c_);                                                                  \
        if (c_ != (cls)) {                                                                         \
            char s_[MPI_MAX_ERROR_STRING];                                                         \
            int l_;                                                                                \
            s_[0] = 0;                                                                             \
            if (e_ != MPI_SUCCESS)                                                                 \
                MPI_Error_string(e_, s_, &l_);                                                     \
            fprintf(stderr, "rank %d line %d: %s gave class %d, want %s (%s)\n", rank, __LINE__,   \
                    #call, c_, #cls, s_);                                                          \
            mtest_errors++;                                                                            \
        }                                                                                          \
    } while (0)

static MPI_Win handler_win = MPI_WIN_NULL;
static int handler_code, handler_calls;
static void on_error(MPI_Win *win, int *code, ...)
{
    handler_win = *win;
    handler_code = *code;
    handler_calls++;
}

static int deletes;
static int count_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win, (void)keyval, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[8] = {0}, v = 1, r;
    MPI_Win win, dyn;

    /* Creation errors go to the communicator's handler. */
    EXPECT(MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    EXPECT(MPI_Win_create(buf, 32, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);

    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Errhandler eh;
    MPI_Win_get_errhandler(win, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a window's default handler is not MPI_ERRORS_ARE_FATAL");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* Synchronisation errors. */
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock(99, 0, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 12345, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_fence(12345, win), MPI_ERR_ASSERT);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_unlock(0, win);

    /* The message names the function. */
    int e = MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), len;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Error_string(e, text, &len);
    CHECK(strstr(text, "MPI_Put") != NULL, "message \"%s\" does not name MPI_Put", text);

    /* Operation errors in a fence epoch. */
    MPI_Win_fence(0, win);
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(&v, 2, MPI_INT, 0, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(&v, 1, MPI_INT, 0, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    EXPECT(MPI_Put(&v, -1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);
    MPI_Op op;
    MPI_Op_create(user_op, 1, &op);
    EXPECT(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, op, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_FLOAT, MPI_SUM, win), MPI_ERR_TYPE);
    EXPECT(MPI_Accumulate(&v, 1, MPI_FLOAT, 0, 0, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP);
    /* Compare_and_swap: integer, logical, byte and multi-language types
     * only (MPICH's cas_type_check). */
    {
        float fv = 1, fc = 0, fr;
        double dv = 1, dc = 0, dr;
        EXPECT(MPI_Compare_and_swap(&fv, &fc, &fr, MPI_FLOAT, 0, 0, win), MPI_ERR_TYPE);
        EXPECT(MPI_Compare_and_swap(&dv, &dc, &dr, MPI_DOUBLE, 0, 0, win), MPI_ERR_TYPE);
        int iv = 0, ic = 0, ir;
        EXPECT(MPI_Compare_and_swap(&iv, &ic, &ir, MPI_INT, 0, 0, win), MPI_SUCCESS);
        char cv = 0, cc = 0, cr;
        EXPECT(MPI_Compare_and_swap(&cv, &cc, &cr, MPI_BYTE, 0, 0, win), MPI_SUCCESS);
        EXPECT(MPI_Compare_and_swap(&cv, &cc, &cr, MPI_C_BOOL, 0, 0, win), MPI_SUCCESS);
        EXPECT(MPI_Compare_and_swap(&cv, &cc, &cr, MPI_CHAR, 0, 0, win), MPI_SUCCESS);
        MPI_Aint av = 0, ac = 0, ar;
        EXPECT(MPI_Compare_and_swap(&av, &ac, &ar, MPI_AINT, 0, 0, win), MPI_SUCCESS);
    }
    MPI_Op_free(&op);
    /* Nothing moves: any types will do (MPICH's badrma). */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    EXPECT(MPI_Accumulate(&v, 0, MPI_INT, 0, 0, 0, MPI_DOUBLE, MPI_SUM, win), MPI_SUCCESS);
    EXPECT(MPI_Accumulate(NULL, 2, empty, 0, 0, 0, MPI_DOUBLE, MPI_SUM, win), MPI_SUCCESS);
    EXPECT(MPI_Get_accumulate(NULL, 1, empty, NULL, 0, MPI_INT, 0, 0, 2, empty, MPI_SUM, win),
           MPI_SUCCESS);
    MPI_Type_free(&empty);
    MPI_Request req;
    EXPECT(MPI_Rput(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win), MPI_SUCCESS);
    MPI_Win_fence(0, win);

    /* The same rule on a Win_allocate window, whose ranks on one node take
     * the direct path (inline in the entry point): the types alternate, so
     * an answer kept for the last type asked must not serve the next. */
    {
        long *wbase;
        MPI_Win aw;
        MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &wbase,
                         &aw);
        MPI_Win_set_errhandler(aw, MPI_ERRORS_RETURN);
        wbase[0] = wbase[1] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, aw);
        double dv = 1, dc = 0, dr;
        long lv = rank + 1, lc = 0, lr = -1;
        float fv = 1, fc = 0, fr;
        int target = (rank + 1) % size;
        EXPECT(MPI_Compare_and_swap(&dv, &dc, &dr, MPI_DOUBLE, target, 1, aw), MPI_ERR_TYPE);
        EXPECT(MPI_Compare_and_swap(&lv, &lc, &lr, MPI_LONG, target, 0, aw), MPI_SUCCESS);
        EXPECT(MPI_Compare_and_swap(&fv, &fc, &fr, MPI_FLOAT, target, 1, aw), MPI_ERR_TYPE);
        EXPECT(MPI_Compare_and_swap(&dv, &dc, &dr, MPI_DOUBLE, target, 1, aw), MPI_ERR_TYPE);
        EXPECT(MPI_Win_flush(target, aw), MPI_SUCCESS);
        CHECK(lr == 0, "Compare_and_swap on a Win_allocate window fetched %ld, want 0", lr);
        MPI_Win_unlock_all(aw);
        MPI_Barrier(MPI_COMM_WORLD);
        int from = (rank + size - 1) % size;
        CHECK(wbase[0] == from + 1 && wbase[1] == 0,
              "Win_allocate window after Compare_and_swap: %ld %ld, want %d 0", wbase[0],
              wbase[1], from + 1);
        MPI_Win_free(&aw);
    }

    /* Flavor and attach errors. */
    MPI_Aint qsize;
    int qunit;
    void *qbase;
    /* MPI-4.1: a Win_create window's memory is not shared: size 0, NULL. */
    qsize = -1, qbase = &qsize;
    EXPECT(MPI_Win_shared_query(win, 0, &qsize, &qunit, &qbase), MPI_SUCCESS);
    CHECK(qsize == 0 && qbase == NULL, "Win_shared_query of a Win_create window: size %ld base %p",
          (long)qsize, qbase);
    EXPECT(MPI_Win_attach(win, buf, 4), MPI_ERR_RMA_FLAVOR);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    EXPECT(MPI_Win_shared_query(dyn, 0, &qsize, &qunit, &qbase), MPI_ERR_RMA_FLAVOR);
    EXPECT(MPI_Win_detach(dyn, buf), MPI_ERR_RMA_ATTACH);
    EXPECT(MPI_Win_attach(dyn, buf, sizeof buf), MPI_SUCCESS);
    EXPECT(MPI_Win_attach(dyn, buf + 2, 4), MPI_ERR_RMA_ATTACH);
    EXPECT(MPI_Win_attach(dyn, buf, -1), MPI_ERR_SIZE);
    /* Outside the attached memory: the target refuses, the epoch's end says so. */
    MPI_Aint addr;
    MPI_Get_address(buf, &addr);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, dyn);
    EXPECT(MPI_Put(&v, 1, MPI_INT, rank, addr + (MPI_Aint)sizeof buf, 1, MPI_INT, dyn),
           MPI_SUCCESS);
    EXPECT(MPI_Win_unlock(rank, dyn), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Win_detach(dyn, buf), MPI_SUCCESS);
    MPI_Win_free(&dyn);

    /* A user handler gets the window. */
    MPI_Errhandler user;
    MPI_Win_create_errhandler(on_error, &user);
    MPI_Win_set_errhandler(win, user);
    MPI_Win_get_errhandler(win, &eh);
    CHECK(eh == user, "Win_get_errhandler does not give the handler set");
    MPI_Errhandler_free(&eh);
    e = MPI_Win_unlock(0, win);
    CHECK(handler_calls == 1 && handler_win == win && handler_code == e,
          "handler calls %d, window 0x%x (want 0x%x), code %d (want %d)", handler_calls,
          (unsigned)handler_win, (unsigned)win, handler_code, e);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "Win_call_errhandler");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&user);

    /* Predefined attributes. */
    void *base;
    MPI_Aint *wsize;
    int *unit, *model, *flavor, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf, "MPI_WIN_BASE");
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
    CHECK(flag && *wsize == (MPI_Aint)sizeof buf, "MPI_WIN_SIZE");
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    CHECK(flag && *unit == sizeof(int), "MPI_WIN_DISP_UNIT");
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    EXPECT(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL);

    /* User attributes: the delete callback runs on delete, on replace and
     * at Win_free. */
    int key, ckey;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL);
    EXPECT(MPI_Win_set_attr(win, ckey, NULL), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&ckey);
    void *got;
    MPI_Win_set_attr(win, key, &r);
    MPI_Win_get_attr(win, key, &got, &flag);
    CHECK(flag && got == &r, "Win_get_attr of a user key");
    MPI_Win_set_attr(win, key, &v);
    CHECK(deletes == 1, "replacing an attribute ran %d deletes", deletes);
    MPI_Win_delete_attr(win, key);
    MPI_Win_get_attr(win, key, &got, &flag);
    CHECK(!flag && deletes == 2, "deleted attribute: flag %d, deletes %d", flag, deletes);
    MPI_Win_set_attr(win, key, &v);
    MPI_Win_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "Win_free_keyval");

    /* Name, info, group. */
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 0, "a new window has the name \"%s\"", name);
    MPI_Win_set_name(win, "halo");
    MPI_Win_get_name(win, name, &len);
    CHECK(!strcmp(name, "halo") && len == 4, "Win_get_name: \"%s\"", name);
    MPI_Info info, hints;
    char value[MPI_MAX_INFO_VAL];
    MPI_Win_get_info(win, &info);
    MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && !strcmp(value, "rar,raw,war,waw"), "accumulate_ordering \"%s\"", value);
    MPI_Info_free(&info);
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "no_locks", "true");
    MPI_Win_set_info(win, hints);
    MPI_Info_free(&hints);
    MPI_Win_get_info(win, &info);
    MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && !strcmp(value, "true"), "no_locks \"%s\"", value);
    MPI_Info_free(&info);
    MPI_Group g, wg;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &r);
    CHECK(r == MPI_IDENT, "Win_get_group compares %d with MPI_COMM_WORLD's", r);
    MPI_Group_free(&wg);

    /* Win_test: every rank exposes to every rank and accesses every rank. */
    MPI_Win_post(g, 0, win);
    MPI_Win_start(g, 0, win);
    MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, rank, 1, MPI_INT, win);
    MPI_Win_complete(win);
    flag = 0;
    while (!flag)
        MPI_Win_test(win, &flag);
    EXPECT(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC);
    MPI_Group_free(&g);
    CHECK(buf[(rank + size - 1) % size] == 1, "PSCW put with Win_test");

    /* Arguments MPI leaves free: a NULL buffer with count 0, Get_accumulate
     * with MPI_NO_OP and no origin type. */
    int res = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    EXPECT(MPI_Get(NULL, 0, MPI_INT, 0, 0, 0, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &res, 1, MPI_INT, 0, 0, 1, MPI_INT,
                              MPI_NO_OP, win), MPI_SUCCESS);
    EXPECT(MPI_Get_accumulate(&v, 1, MPI_DATATYPE_NULL, &res, 1, MPI_INT, 0, 0, 1, MPI_INT,
                              MPI_SUM, win), MPI_ERR_TYPE);
    MPI_Win_unlock(0, win);
    CHECK(res == buf[0] || rank != 0, "Get_accumulate with MPI_NO_OP read %d", res);

    /* A dynamic window access across two adjacent attached regions. */
    int regions[8] = {0};
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    MPI_Win_attach(dyn, regions, 4 * sizeof(int));
    MPI_Win_attach(dyn, regions + 4, 4 * sizeof(int));
    MPI_Get_address(regions, &addr);
    int eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, dyn);
    EXPECT(MPI_Put(eight, 8, MPI_INT, rank, addr, 8, MPI_INT, dyn), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock(rank, dyn), MPI_SUCCESS);
    CHECK(regions[3] == 4 && regions[7] == 8, "put across regions: %d %d", regions[3],
          regions[7]);
    MPI_Win_detach(dyn, regions);
    MPI_Win_detach(dyn, regions + 4);
    MPI_Win_free(&dyn);

    /* Win_shared_query of a rank with no memory: size 0, NULL base. */
    MPI_Win sw;
    int *sbase;
    MPI_Win_allocate_shared(rank % 2 ? 0 : 16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &sbase, &sw);
    for (int q = 0; q < size; q++) {
        MPI_Win_shared_query(sw, q, &qsize, &qunit, &qbase);
        CHECK(q % 2 ? qsize == 0 && qbase == NULL : qsize == 16 && qbase != NULL,
              "shared_query(%d): size %ld base %p", q, (long)qsize, qbase);
    }
    MPI_Win_free(&sw);

    deletes = 0;
    MPI_Win_free(&win);
    CHECK(deletes == 1, "Win_free ran %d delete callbacks", deletes);

    int all;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}

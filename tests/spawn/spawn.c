/* MPI_Comm_spawn, MPI_Comm_spawn_multiple and MPI_Comm_get_parent, with
 * the program as its own child (argv[1] says which part it plays).
 *
 * Parents (any number): spawn 1, 2 and 3 children; every parent exchanges
 * a message with every child over the intercommunicator, both sides merge
 * (parents low) and check an allreduce and the merged ranks; spawn_multiple
 * with two commands and their own argv (each child reports its argument
 * and its rank in the new world); info "wdir" (the child reports its
 * working directory); a command that does not exist (MPI_ERR_SPAWN, every
 * errcode MPI_ERR_SPAWN, no intercommunicator, no hang); the parents'
 * MPI_Comm_get_parent is MPI_COMM_NULL. */
#include "../mpi/mtest.h"

#include <limits.h>

static void child(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        FATAL("child without a parent");
    int rank, size, psize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &psize);
    const char *role = argv[1];
    if (strcmp(role, "child") == 0) {
        /* Every parent sends to every child; each child answers each. */
        for (int p = 0; p < psize; p++) {
            int v[2];
            MPI_Recv(v, 2, MPI_INT, p, 7, parent, MPI_STATUS_IGNORE);
            int back[3] = {v[0] + 1, rank, size};
            MPI_Send(back, 3, MPI_INT, p, 8, parent);
        }
        MPI_Comm merged;
        MPI_Intercomm_merge(parent, 1, &merged);
        int mrank, msize, sum = 0;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
        int report[3] = {mrank, msize, sum};
        MPI_Send(report, 3, MPI_INT, 0, 9, parent);
        MPI_Comm_free(&merged);
    } else if (strcmp(role, "multi") == 0) {
        int report[3] = {argc > 2 ? argv[2][0] : '?', rank, size};
        MPI_Send(report, 3, MPI_INT, 0, 10, parent);
    } else if (strcmp(role, "abort") == 0) {
        MPI_Abort(MPI_COMM_WORLD, 7);
    } else if (strcmp(role, "wdir") == 0) {
        char cwd[PATH_MAX] = "";
        if (!getcwd(cwd, sizeof cwd))
            strcpy(cwd, "?");
        MPI_Send(cwd, (int)strlen(cwd) + 1, MPI_CHAR, 0, 11, parent);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        FATAL("MPI_Comm_get_parent after disconnect is not MPI_COMM_NULL");
    MPI_Finalize();
    exit(0);
}

static void spawn_children(const char *prog, int n)
{
    char *args[] = {"child", NULL};
    int codes[3] = {-1, -1, -1};
    MPI_Comm ic;
    CHECK(MPI_Comm_spawn(prog, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes) ==
          MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        CHECK_INT(codes[i], MPI_SUCCESS, "codes[i]");
    int inter = 0, rsize = -1;
    MPI_Comm_test_inter(ic, &inter);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(inter);
    CHECK_INT(rsize, n, "rsize");
    for (int c = 0; c < n; c++) {
        int v[2] = {1000 * mtest_rank + c, 0}, back[3];
        MPI_Send(v, 2, MPI_INT, c, 7, ic);
        MPI_Recv(back, 3, MPI_INT, c, 8, ic, MPI_STATUS_IGNORE);
        CHECK_INT(back[0], v[0] + 1, "back[0]");
        CHECK_INT(back[1], c, "back[1]");
        CHECK_INT(back[2], n, "back[2]");
    }
    MPI_Comm merged;
    MPI_Intercomm_merge(ic, 0, &merged);
    int mrank, msize, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    /* Parents (low) first. */
    CHECK_INT(mrank, mtest_rank, "mrank");
    CHECK_INT(msize, mtest_size + n, "msize");
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(sum, msize * (msize - 1) / 2, "sum");
    if (mtest_rank == 0)
        for (int c = 0; c < n; c++) {
            int report[3];
            MPI_Recv(report, 3, MPI_INT, c, 9, ic, MPI_STATUS_IGNORE);
            CHECK_INT(report[0], mtest_size + c, "report[0]");
            CHECK_INT(report[1], msize, "report[1]");
            CHECK_INT(report[2], sum, "report[2]");
        }
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&ic);
    CHECK(ic == MPI_COMM_NULL);
}

static void spawn_multiple(const char *prog)
{
    char *cmds[2] = {(char *)prog, (char *)prog};
    char *a0[] = {"multi", "A", NULL}, *a1[] = {"multi", "B", NULL};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2}, codes[3] = {-1, -1, -1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm ic;
    CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, codes) ==
          MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK_INT(codes[i], MPI_SUCCESS, "codes[i]");
    if (mtest_rank == 0)
        for (int c = 0; c < 3; c++) {
            int report[3];
            MPI_Recv(report, 3, MPI_INT, c, 10, ic, MPI_STATUS_IGNORE);
            CHECK_INT(report[0], c == 0 ? 'A' : 'B', "report[0]");
            CHECK_INT(report[1], c, "report[1]"); /* one world, ranks in command order */
            CHECK_INT(report[2], 3, "report[2]");
        }
    MPI_Comm_disconnect(&ic);
}

static void spawn_wdir(const char *prog)
{
    char dir[] = "/tmp/tern-spawn-wdir-XXXXXX";
    if (mtest_rank == 0 && !mkdtemp(dir))
        FATAL("mkdtemp");
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", dir);
    char *args[] = {"wdir", NULL};
    MPI_Comm ic;
    CHECK(MPI_Comm_spawn(prog, args, 1, info, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE) ==
          MPI_SUCCESS);
    MPI_Info_free(&info);
    if (mtest_rank == 0) {
        char cwd[PATH_MAX];
        MPI_Recv(cwd, sizeof cwd, MPI_CHAR, 0, 11, ic, MPI_STATUS_IGNORE);
        CHECK(strcmp(cwd, dir) == 0);
    }
    MPI_Comm_disconnect(&ic);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0)
        rmdir(dir);
}

static void spawn_missing(void)
{
    char *args[] = {"child", NULL};
    int codes[2] = {-1, -1};
    MPI_Comm ic = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn("/nonexistent/tern-no-such-program", args, 2, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &ic, codes);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_INT(cls, MPI_ERR_SPAWN, "cls");
    CHECK_INT(codes[0], MPI_ERR_SPAWN, "codes[0]");
    CHECK_INT(codes[1], MPI_ERR_SPAWN, "codes[1]");
    CHECK(ic == MPI_COMM_NULL);
    /* A hostfile per spawn naming another host: refused by the single-host
     * mpiexec with the reason. */
    char path[64] = "/tmp/tern-spawn-hostfile-XXXXXX";
    if (mtest_rank == 0) {
        int fd = mkstemp(path);
        CHECK(fd >= 0, "mkstemp");
        dprintf(fd, "localhost\nno-such-host-of-tern:2\n");
        close(fd);
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "hostfile", path);
    rc = MPI_Comm_spawn(args[0], args, 1, info, 0, MPI_COMM_WORLD, &ic, codes);
    MPI_Info_free(&info);
    if (mtest_rank == 0)
        unlink(path);
    CHECK_CLASS(rc, MPI_ERR_SPAWN, "a hostfile naming another host");
    CHECK(strstr(mtest_errstr(rc), "names a host other than this one") != NULL, "%s",
          mtest_errstr(rc));
    /* Bad arguments at the root fail on every process. */
    rc = MPI_Comm_spawn("x", args, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes);
    CHECK(rc != MPI_SUCCESS);
    rc = MPI_Comm_spawn("x", args, 1, MPI_INFO_NULL, mtest_size, MPI_COMM_WORLD, &ic, codes);
    MPI_Error_class(rc, &cls);
    CHECK_INT(cls, MPI_ERR_RANK, "class of a spawn with root out of range");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Run without mpiexec: no process manager to spawn with. MPI_ERR_SPAWN
 * whose text says why (a regression: the text was lost). */
static void singleton(void)
{
    mtest_init_common();
    mtest_begin("spawn_singleton");
    MPI_Comm ic;
    int code = -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, &code);
    CHECK_CLASS(rc, MPI_ERR_SPAWN, "spawn in a singleton");
    CHECK_INT(code, MPI_ERR_SPAWN, "errcode");
    CHECK(strstr(mtest_errstr(rc), "cannot spawn processes") != NULL, "%s", mtest_errstr(rc));
    mtest_end();
    exit(mtest_finalize());
}

/* A child that calls MPI_Abort ends the whole run (parents included,
 * which wait for a message that never comes) with its code. */
static void parent_of_abort(const char *prog)
{
    char *args[] = {"abort", NULL};
    MPI_Comm ic;
    MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    int x;
    MPI_Recv(&x, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
    printf("ERRFATAL-NOT-FATAL: the parent received\n");
    MPI_Finalize();
    exit(0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "singleton") == 0)
        singleton();
    if (argc > 1 && strcmp(argv[1], "parent-abort") == 0)
        parent_of_abort(argv[0]);
    /* "hydra": under MPICH's Hydra, which reports a spawn whose program
     * cannot be executed as a success (the parents would wait for it). */
    int hydra = argc > 1 && strcmp(argv[1], "hydra") == 0;
    if (argc > 1 && !hydra)
        child(argc, argv);
    mtest_init_common();
    /* Hydra runs a spawned program from its wdir: name it absolutely. */
    static char prog[PATH_MAX];
    if (!realpath(argv[0], prog))
        snprintf(prog, sizeof prog, "%s", argv[0]);
    argv[0] = prog;
    mtest_begin("get_parent_none");
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL);
    mtest_end();
    for (int n = 1; n <= 3; n++) {
        char name[32];
        snprintf(name, sizeof name, "spawn_%d", n);
        mtest_begin(name);
        spawn_children(argv[0], n);
        mtest_end();
    }
    mtest_begin("spawn_multiple");
    spawn_multiple(argv[0]);
    mtest_end();
    mtest_begin("spawn_wdir");
    spawn_wdir(argv[0]);
    mtest_end();
    if (!hydra) {
        mtest_begin("spawn_missing");
        spawn_missing();
        mtest_end();
    }
    return mtest_finalize();
}

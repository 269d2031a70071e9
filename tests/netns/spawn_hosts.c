/* MPI_Comm_spawn in a job over two hosts (tests/netns: two network
 * namespaces; multihost_local_test.sh: a stand-in remote start that sets
 * FAKE_HOST). The program is its own child.
 *
 *   spawn_hosts parent HOST_A HOST_B   2 ranks, rank 0 on host A, 1 on B:
 *     spawn_spread: 2 children, no host key: one per host, in host order;
 *     spawn_host: 1 child with info host=B, spawned by rank 0 (on A);
 *     spawn_multiple_hosts: two commands, host=B then host=A;
 *     each: the intercommunicator's sizes, a message from every parent to
 *     every child and back, the children's allreduce over their own world
 *     (which spans the hosts), and each child's MPI_Get_processor_name (and
 *     FAKE_HOST) equal to the parent's on the host it was asked for;
 *     spawn_hostfile: info hostfile naming host B with 2 slots: both there;
 *     spawn_remote_missing: a command that cannot be executed on host B
 *     beside one that starts on A: MPI_ERR_SPAWN naming the reason, every
 *     errcode MPI_ERR_SPAWN, and the child started on A is gone.
 *   spawn_hosts lazy HOST_A HOST_B     1 rank, on host A (B runs none):
 *     spawn_host_without_ranks: a child with info host=B runs elsewhere
 *     than its parent; spawn_spread_without_ranks: 2 children, no host
 *     key: one on A, one on B.
 *   spawn_hosts unreachable HOST_A HOST_B  1 rank on A; B cannot be reached:
 *     MPI_ERR_SPAWN saying so, and the job goes on.
 *   spawn_hosts universe N             MPI_UNIVERSE_SIZE is N. */
#include "../mpi/mtest.h"

#include <dirent.h>
#include <limits.h>

/* Room for %255s (the host names sscanf reads) whatever MPI_MAX_PROCESSOR_NAME
 * is (128 since the MPICH ABI). */
enum { IDENT_MAX = 256 + 80 };

/* Where this process runs: its processor name and the stand-in host. */
static void ident(char *out)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    const char *fake = getenv("FAKE_HOST");
    snprintf(out, IDENT_MAX, "%s/%s", name, fake ? fake : "-");
}

static void child(void)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        FATAL("child without a parent");
    int rank, size, psize, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &psize);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char me[IDENT_MAX];
    ident(me);
    for (int p = 0; p < psize; p++) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, p, 7, parent, MPI_STATUS_IGNORE);
        char back[IDENT_MAX + 64];
        snprintf(back, sizeof back, "%d %d %d %d %s", v + 1, rank, size, sum, me);
        MPI_Send(back, (int)strlen(back) + 1, MPI_CHAR, p, 8, parent);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    exit(0);
}

/* Every parent and child exchange a message; child c must run where
 * parent at_parent[c] runs. */
static void check_children(MPI_Comm ic, int n, const int *at_parent,
                           char idents[][IDENT_MAX])
{
    int lsize, rsize;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK_INT(lsize, mtest_size, "local size");
    CHECK_INT(rsize, n, "remote size");
    for (int c = 0; c < rsize && c < n; c++) {
        int v = 100 * mtest_rank + c;
        MPI_Send(&v, 1, MPI_INT, c, 7, ic);
        char back[IDENT_MAX + 64] = "", where[IDENT_MAX] = "";
        MPI_Recv(back, (int)sizeof back, MPI_CHAR, c, 8, ic, MPI_STATUS_IGNORE);
        int v1 = -1, crank = -1, csize = -1, sum = -1;
        CHECK(sscanf(back, "%d %d %d %d %255s", &v1, &crank, &csize, &sum, where) == 5,
              "reply '%s'", back);
        CHECK_INT(v1, v + 1, "child's answer");
        CHECK_INT(crank, c, "child's rank");
        CHECK_INT(csize, n, "child's world size");
        CHECK_INT(sum, n * (n - 1) / 2, "children's allreduce");
        CHECK(strcmp(where, idents[at_parent[c]]) == 0, "child %d runs on %s, expected %s", c,
              where, idents[at_parent[c]]);
    }
    MPI_Comm_disconnect(&ic);
}

static MPI_Info host_info(const char *host)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", host);
    return info;
}

/* How many processes run with argv[1] == role (both "hosts" share /proc). */
static int count_role(const char *role)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        size_t a0 = strlen(buf);
        if (a0 + 1 < len && strcmp(buf + a0 + 1, role) == 0)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void parent(const char *prog, const char *host_a, const char *host_b)
{
    static char idents[2][IDENT_MAX];
    char me[IDENT_MAX];
    ident(me);
    CHECK_INT(mtest_size, 2, "parents (one per host)");
    MPI_Allgather(me, IDENT_MAX, MPI_CHAR, idents, IDENT_MAX, MPI_CHAR, MPI_COMM_WORLD);
    CHECK(strcmp(idents[0], idents[1]) != 0, "both parents run on %s", idents[0]);
    char *args[] = {"child", NULL};
    MPI_Comm ic;
    int codes[2] = {-1, -1};

    mtest_begin("spawn_spread");
    MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes);
    CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS, "codes %d %d", codes[0], codes[1]);
    check_children(ic, 2, (int[]){0, 1}, idents);
    mtest_end();

    mtest_begin("spawn_host");
    MPI_Info info = host_info(host_b);
    MPI_Comm_spawn(prog, args, 1, info, 0, MPI_COMM_WORLD, &ic, codes);
    MPI_Info_free(&info);
    check_children(ic, 1, (int[]){1}, idents);
    mtest_end();

    mtest_begin("spawn_multiple_hosts");
    char *cmds[2] = {(char *)prog, (char *)prog};
    char **argvs[2] = {args, args};
    int maxprocs[2] = {1, 1};
    MPI_Info infos[2] = {host_info(host_b), host_info(host_a)};
    MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 1, MPI_COMM_WORLD, &ic, codes);
    check_children(ic, 2, (int[]){1, 0}, idents);
    mtest_end();

    /* A hostfile per spawn (MPICH's "hostfile" key; "file" is MPI's). */
    mtest_begin("spawn_hostfile");
    char path[64] = "/tmp/tern-spawn-hosts-XXXXXX";
    if (mtest_rank == 0) {
        int fd = mkstemp(path);
        CHECK(fd >= 0, "mkstemp");
        dprintf(fd, "# both on B\n%s:2\n", host_b);
        close(fd);
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "hostfile", path);
    MPI_Comm_spawn(prog, args, 2, info, 0, MPI_COMM_WORLD, &ic, codes);
    MPI_Info_free(&info);
    if (mtest_rank == 0)
        unlink(path);
    check_children(ic, 2, (int[]){1, 1}, idents);
    mtest_end();

    mtest_begin("spawn_remote_missing");
    char *orphan[] = {"orphan", NULL};
    char **argvs2[2] = {orphan, args};
    char *cmds2[2] = {(char *)prog, "/nonexistent/tern-no-such-program"};
    MPI_Info infos2[2] = {host_info(host_a), host_info(host_b)};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ic = MPI_COMM_WORLD;
    codes[0] = codes[1] = -1;
    int rc = MPI_Comm_spawn_multiple(2, cmds2, argvs2, maxprocs, infos2, 0, MPI_COMM_WORLD, &ic,
                                     codes);
    CHECK_CLASS(rc, MPI_ERR_SPAWN, "a program missing on host B");
    CHECK(strstr(mtest_errstr(rc), "cannot execute") != NULL, "error text: %s", mtest_errstr(rc));
    CHECK_INT(codes[0], MPI_ERR_SPAWN, "codes[0]");
    CHECK_INT(codes[1], MPI_ERR_SPAWN, "codes[1]");
    CHECK(ic == MPI_COMM_NULL, "an intercommunicator after a failed spawn");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* The child started on host A was killed with the spawn. */
    int left = 0;
    for (int i = 0; i < 100 && (left = count_role("orphan")) > 0; i++)
        usleep(100 * 1000);
    CHECK_INT(left, 0, "children of the failed spawn still running");
    for (int i = 0; i < 2; i++) {
        MPI_Info_free(&infos[i]);
        MPI_Info_free(&infos2[i]);
    }
    mtest_end();
}

/* One parent on host A, host B without ranks of its own: B's proxy starts
 * for the first spawn that places processes there. */
static void lazy(const char *prog, const char *host_b)
{
    static char idents[2][IDENT_MAX];
    ident(idents[0]);
    char *args[] = {"child", NULL};
    MPI_Comm ic;
    mtest_begin("spawn_host_without_ranks");
    MPI_Info info = host_info(host_b);
    MPI_Comm_spawn(prog, args, 1, info, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    MPI_Info_free(&info);
    int v = 5, rank = -1, size = -1, sum = -1, v1 = -1;
    char back[IDENT_MAX + 64] = "";
    MPI_Send(&v, 1, MPI_INT, 0, 7, ic);
    MPI_Recv(back, (int)sizeof back, MPI_CHAR, 0, 8, ic, MPI_STATUS_IGNORE);
    CHECK(sscanf(back, "%d %d %d %d %255s", &v1, &rank, &size, &sum, idents[1]) == 5, "reply '%s'",
          back);
    CHECK_INT(v1, 6, "child's answer");
    CHECK(strcmp(idents[0], idents[1]) != 0, "the child runs on the parent's host %s", idents[0]);
    MPI_Comm_disconnect(&ic);
    mtest_end();
    /* No host key: the job's hosts in turn, B included. */
    mtest_begin("spawn_spread_without_ranks");
    MPI_Comm_spawn(prog, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    check_children(ic, 2, (int[]){0, 1}, idents);
    mtest_end();
}

/* Host B cannot be reached: the spawn fails, the job goes on. */
static void unreachable(const char *prog, const char *host_b)
{
    char *args[] = {"child", NULL};
    MPI_Comm ic = MPI_COMM_WORLD;
    int code = -1;
    mtest_begin("spawn_unreachable_host");
    MPI_Info info = host_info(host_b);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(prog, args, 1, info, 0, MPI_COMM_WORLD, &ic, &code);
    MPI_Info_free(&info);
    CHECK_CLASS(rc, MPI_ERR_SPAWN, "a spawn on a host that cannot be reached");
    CHECK(strstr(mtest_errstr(rc), "cannot start mpiexec on host") != NULL, "error text: %s",
          mtest_errstr(rc));
    CHECK_INT(code, MPI_ERR_SPAWN, "errcode");
    CHECK(ic == MPI_COMM_NULL, "an intercommunicator after a failed spawn");
    mtest_end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        child();
    if (argc > 1 && strcmp(argv[1], "orphan") == 0)
        child(); /* never gets its parents: killed with the failed spawn */
    mtest_init_common();
    static char prog[PATH_MAX];
    if (!realpath(argv[0], prog))
        snprintf(prog, sizeof prog, "%s", argv[0]);
    if (argc > 2 && strcmp(argv[1], "universe") == 0) {
        mtest_begin("universe_size");
        int *u = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
        CHECK(flag && u, "no MPI_UNIVERSE_SIZE");
        if (flag && u)
            CHECK_INT(*u, atoi(argv[2]), "MPI_UNIVERSE_SIZE");
        mtest_end();
    } else if (argc > 3 && strcmp(argv[1], "unreachable") == 0) {
        unreachable(prog, argv[3]);
    } else if (argc > 3 && strcmp(argv[1], "lazy") == 0) {
        lazy(prog, argv[3]);
    } else if (argc > 3 && strcmp(argv[1], "parent") == 0) {
        parent(prog, argv[2], argv[3]);
    } else {
        FATAL("usage: spawn_hosts parent|lazy|unreachable HOST_A HOST_B | universe N");
    }
    return mtest_finalize();
}

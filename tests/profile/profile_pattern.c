/* A job with a known traffic pattern, for the profile of the job
 * (TERN_PROFILE; check_profile.py asserts profile.json cell by cell).
 * 4 ranks:
 *   - a ring: rank r sends 1000 ints (4000 bytes) to r+1 with MPI_Sendrecv;
 *   - rank 0 sends rank 2 100 bytes (MPI_Isend) and 200000 bytes
 *     (MPI_Ssend, a rendezvous);
 *   - rank 3 sends rank 1 64 doubles with a persistent send started 3 times;
 *   - rank 1 sends rank 0 a partitioned message of 4 x 256 bytes, twice;
 *   - a send to MPI_PROC_NULL (not a message);
 *   - one MPI_Allreduce of 10 doubles;
 *   - between MPI_Pcontrol(0) and MPI_Pcontrol(1), traffic that must not
 *     be counted: rank 0 sends rank 3 999 bytes, an MPI_Bcast, an
 *     MPI_Alltoall.
 * Rank 0 writes the allreduce algorithm Tern chose, read through the MPI
 * tools interface (the tern_coll_allreduce_<algorithm> counters), to
 * $TERN_PROFILE/chosen.txt for the checker. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_ALGOS 16
static const char prefix[] = "tern_coll_allreduce_";

typedef struct {
    MPI_T_pvar_session session;
    int n;
    char names[MAX_ALGOS][64];
    MPI_T_pvar_handle handles[MAX_ALGOS];
} algos_t;

/* Starts a handle on every tern_coll_allreduce_<algorithm> counter. */
static void algos_start(algos_t *a)
{
    int provided, num;
    REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "");
    REQUIRE(MPI_T_pvar_session_create(&a->session) == MPI_SUCCESS, "");
    REQUIRE(MPI_T_pvar_get_num(&num) == MPI_SUCCESS, "");
    a->n = 0;
    for (int i = 0; i < num && a->n < MAX_ALGOS; i++) {
        char name[128], desc[8];
        int name_len = sizeof name, desc_len = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum et;
        REQUIRE(MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &et, desc, &desc_len,
                                  &bind, &ro, &cont, &atomic) == MPI_SUCCESS, "");
        if (strncmp(name, prefix, sizeof prefix - 1) != 0)
            continue;
        int count;
        snprintf(a->names[a->n], sizeof a->names[a->n], "%.*s", (int)sizeof a->names[a->n] - 1,
                 name + sizeof prefix - 1);
        REQUIRE(MPI_T_pvar_handle_alloc(a->session, i, NULL, &a->handles[a->n], &count) ==
              MPI_SUCCESS, "");
        REQUIRE(MPI_T_pvar_start(a->session, a->handles[a->n]) == MPI_SUCCESS, "");
        a->n++;
    }
    REQUIRE(a->n > 0, "");
}

/* The one algorithm counted once since algos_start. */
static const char *algos_chosen(algos_t *a)
{
    const char *chosen = NULL;
    for (int i = 0; i < a->n; i++) {
        unsigned long long v;
        REQUIRE(MPI_T_pvar_read(a->session, a->handles[i], &v) == MPI_SUCCESS, "");
        if (v) {
            REQUIRE(v == 1 && !chosen, "");
            chosen = a->names[i];
        }
    }
    REQUIRE(chosen, "");
    return chosen;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size == 4, "");

    /* The ring. */
    int ring_out[1000], ring_in[1000];
    for (int i = 0; i < 1000; i++)
        ring_out[i] = rank * 1000 + i;
    MPI_Sendrecv(ring_out, 1000, MPI_INT, (rank + 1) % 4, 1, ring_in, 1000, MPI_INT,
                 (rank + 3) % 4, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    REQUIRE(ring_in[999] == ((rank + 3) % 4) * 1000 + 999, "");

    /* 0 -> 2: a nonblocking eager send and a synchronous large one. */
    char *big = calloc(200000, 1);
    char small[100] = {0};
    REQUIRE(big, "");
    if (rank == 0) {
        MPI_Request r;
        big[199999] = 7;
        MPI_Isend(small, 100, MPI_CHAR, 2, 2, MPI_COMM_WORLD, &r);
        MPI_Ssend(big, 200000, MPI_CHAR, 2, 3, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == 2) {
        MPI_Recv(small, 100, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(big, 200000, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        REQUIRE(big[199999] == 7, "");
    }

    /* 3 -> 1: persistent, 3 starts. */
    double d[64];
    MPI_Request pr;
    if (rank == 3)
        MPI_Send_init(d, 64, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, &pr);
    if (rank == 1)
        MPI_Recv_init(d, 64, MPI_DOUBLE, 3, 4, MPI_COMM_WORLD, &pr);
    if (rank == 1 || rank == 3) {
        for (int i = 0; i < 3; i++) {
            MPI_Start(&pr);
            MPI_Wait(&pr, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&pr);
    }

    /* 1 -> 0: partitioned, 4 x 256 bytes, 2 rounds. */
    char part[1024];
    MPI_Request qr;
    if (rank == 1)
        MPI_Psend_init(part, 4, 256, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &qr);
    if (rank == 0)
        MPI_Precv_init(part, 4, 256, MPI_CHAR, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &qr);
    if (rank == 0 || rank == 1) {
        for (int round = 0; round < 2; round++) {
            MPI_Start(&qr);
            if (rank == 1)
                MPI_Pready_range(0, 3, qr);
            MPI_Wait(&qr, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&qr);
    }

    /* No message. */
    MPI_Send(small, 10, MPI_CHAR, MPI_PROC_NULL, 6, MPI_COMM_WORLD);

    /* One allreduce, its algorithm read through MPI_T. */
    algos_t algos;
    algos_start(&algos);
    double in[10], out[10];
    for (int i = 0; i < 10; i++)
        in[i] = rank + i;
    MPI_Allreduce(in, out, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    REQUIRE(out[9] == 6 + 4 * 9, "");
    const char *chosen = algos_chosen(&algos);

    /* Paused: none of this is counted. */
    MPI_Pcontrol(0);
    if (rank == 0)
        MPI_Send(big, 999, MPI_CHAR, 3, 7, MPI_COMM_WORLD);
    if (rank == 3)
        MPI_Recv(big, 999, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int v = rank == 0 ? 42 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    REQUIRE(v == 42, "");
    int a2a_out[4] = {rank, rank, rank, rank}, a2a_in[4];
    MPI_Alltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD);
    REQUIRE(a2a_in[3] == 3, "");
    MPI_Pcontrol(1);

    if (rank == 0) {
        const char *dir = getenv("TERN_PROFILE");
        REQUIRE(dir && dir[0], "");
        char path[4096];
        snprintf(path, sizeof path, "%s/chosen.txt", dir ? dir : ".");
        mkdir(dir, 0777); /* MPI_Finalize makes it too */
        FILE *f = fopen(path, "w");
        REQUIRE(f, "");
        fprintf(f, "%s\n", chosen);
        REQUIRE(fclose(f) == 0, "");
    }
    free(big);
    MPI_Finalize();
    MPI_T_finalize();
    return 0;
}

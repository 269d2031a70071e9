/* A solver that survives the loss of a rank (User-Level Failure
 * Mitigation). Each rank owns blocks of x and relaxes them toward b
 * (x += 0.05 (b - x)) until every element is within 1e-10 of b. Every
 * CKPT iterations each rank copies its blocks into its right neighbour's
 * memory (a "buddy" checkpoint). Each iteration ends with MPIX_Comm_agree,
 * which completes on every survivor even when a rank dies during it and
 * gives all of them the same answer: bit 0 "all went well", bit 1 "all
 * converged". When a rank died the survivors shrink the communicator, go
 * back to the last checkpoint, the dead rank's right neighbour adopts its
 * blocks from the copy it holds, and the run goes on. At the end rank 0
 * checks that every block is owned once and that sum(x) = sum(b).
 *
 *   mpiexec --ft -n 4 ./resilient_solver            (kill -9 a rank meanwhile)
 *   mpiexec --ft -n 4 ./resilient_solver 2 200      (rank 2 dies at iteration 200)
 *
 * Two neighbouring ranks lost between two checkpoints cannot be recovered
 * (each block has one copy); the program then says so and aborts. */
#include <mpi.h>
#include <mpi-ext.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 4096     /* elements per block */
#define CKPT 25    /* iterations between checkpoints */
#define TOL 1e-10

typedef struct {
    int id;
    double x[M];
} block_t;

typedef struct {
    block_t *b;
    int n;
} blocks_t;

static double b_of(int id, int j) { return 2.0 + sin((double)id * M + j); }

static void blocks_copy(blocks_t *dst, const blocks_t *src)
{
    dst->b = realloc(dst->b, sizeof(block_t) * (size_t)(src->n ? src->n : 1));
    memcpy(dst->b, src->b, sizeof(block_t) * (size_t)src->n);
    dst->n = src->n;
}

static void blocks_add(blocks_t *dst, const block_t *blk)
{
    dst->b = realloc(dst->b, sizeof(block_t) * (size_t)(dst->n + 1));
    dst->b[dst->n++] = *blk;
}

/* Sends my checkpoint to the right neighbour, receives the left one's. */
static int exchange(MPI_Comm comm, const blocks_t *mine, blocks_t *buddy)
{
    int rank, size, n_in = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int err = MPI_Sendrecv(&mine->n, 1, MPI_INT, right, 1, &n_in, 1, MPI_INT, left, 1, comm,
                           MPI_STATUS_IGNORE);
    if (err != MPI_SUCCESS)
        return err;
    buddy->b = realloc(buddy->b, sizeof(block_t) * (size_t)(n_in ? n_in : 1));
    buddy->n = n_in;
    return MPI_Sendrecv(mine->b, (int)sizeof(block_t) * mine->n, MPI_BYTE, right, 2, buddy->b,
                        (int)sizeof(block_t) * n_in, MPI_BYTE, left, 2, comm, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rank, size, world_rank, nblocks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    world_rank = rank;
    nblocks = 2 * size;
    int kill_rank = argc > 2 ? atoi(argv[1]) : -1, kill_iter = argc > 2 ? atoi(argv[2]) : -1;

    blocks_t own = {0}, ckpt = {0}, ckpt_new = {0}, buddy = {0}, buddy_new = {0};
    for (int k = 0; k < 2; k++) {
        block_t blk = {.id = 2 * rank + k};
        for (int j = 0; j < M; j++)
            blk.x[j] = 0.0;
        blocks_add(&own, &blk);
    }
    int iter = 0, ckpt_iter = -1, need_ckpt = 1, recoveries = 0;
    for (;;) {
        if (world_rank == kill_rank && iter == kill_iter) {
            printf("rank %d: dying at iteration %d\n", world_rank, iter);
            fflush(stdout);
            raise(SIGKILL);
        }
        int ok = 1, converged = 1;
        /* Checkpoint at the start of every CKPT-th iteration. */
        int ckpt_now = need_ckpt || (iter % CKPT == 0 && iter != ckpt_iter);
        if (ckpt_now) {
            blocks_copy(&ckpt_new, &own);
            if (exchange(comm, &own, &buddy_new) != MPI_SUCCESS) {
                /* Revoked, the others' transfers with us end too (one
                 * may wait for a message we will never take). */
                MPIX_Comm_revoke(comm);
                ok = 0;
            }
        }
        for (int i = 0; i < own.n; i++)
            for (int j = 0; j < M; j++) {
                double t = b_of(own.b[i].id, j);
                own.b[i].x[j] += 0.05 * (t - own.b[i].x[j]);
                if (fabs(t - own.b[i].x[j]) > TOL)
                    converged = 0;
            }
        int flag = ok | converged << 1;
        int err = MPIX_Comm_agree(comm, &flag);
        if (err == MPI_SUCCESS && (flag & 1)) {
            if (ckpt_now) { /* everyone has it: the checkpoint counts */
                blocks_copy(&buddy, &buddy_new);
                blocks_copy(&ckpt, &ckpt_new);
                ckpt_iter = iter;
                need_ckpt = 0;
            }
            if (flag & 2)
                break;
            iter++;
            continue;
        }
        /* A rank died: shrink, roll back, adopt the dead ranks' blocks. */
        MPI_Comm nc;
        MPIX_Comm_shrink(comm, &nc);
        MPI_Group og, ng;
        MPI_Comm_group(comm, &og);
        MPI_Comm_group(nc, &ng);
        int n_old = size, *old = malloc(sizeof(int) * (size_t)n_old),
            *in_new = malloc(sizeof(int) * (size_t)n_old);
        for (int i = 0; i < n_old; i++)
            old[i] = i;
        MPI_Group_translate_ranks(og, n_old, old, ng, in_new);
        blocks_copy(&own, &ckpt);
        for (int d = 0; d < n_old; d++) {
            if (in_new[d] != MPI_UNDEFINED)
                continue;
            int heir = (d + 1) % n_old;
            if (in_new[heir] == MPI_UNDEFINED) {
                if (rank == 0)
                    fprintf(stderr, "ranks %d and %d died together: block copies lost\n", d, heir);
                MPI_Abort(nc, 2);
            }
            if (heir == rank)
                for (int i = 0; i < buddy.n; i++)
                    blocks_add(&own, &buddy.b[i]);
        }
        if (ckpt_iter < 0) {
            if (rank == 0)
                fprintf(stderr, "a rank died before the first checkpoint\n");
            MPI_Abort(nc, 2);
        }
        iter = ckpt_iter;
        blocks_copy(&ckpt, &own);
        need_ckpt = 1; /* checkpoint again at once, with the new neighbours */
        recoveries++;
        int n_dead = 0;
        for (int d = 0; d < n_old; d++)
            n_dead += in_new[d] == MPI_UNDEFINED;
        if (rank == 0)
            printf("recovered from %d failed rank(s): %d ranks go on from iteration %d\n",
                   n_dead, n_old - n_dead, iter);
        free(old);
        free(in_new);
        MPI_Group_free(&og);
        MPI_Group_free(&ng);
        MPI_Comm_free(&comm);
        comm = nc;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
    }

    /* The answer: every block once, sum(x) = sum(b). */
    double mine = 0.0, sum = 0.0, want = 0.0;
    int count = own.n, total = 0;
    long ids = 0, all_ids = 0;
    for (int i = 0; i < own.n; i++) {
        ids += own.b[i].id;
        for (int j = 0; j < M; j++)
            mine += own.b[i].x[j];
    }
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(&count, &total, 1, MPI_INT, MPI_SUM, 0, comm);
    MPI_Reduce(&ids, &all_ids, 1, MPI_LONG, MPI_SUM, 0, comm);
    int wrong = 0;
    if (rank == 0) {
        for (int id = 0; id < nblocks; id++)
            for (int j = 0; j < M; j++)
                want += b_of(id, j);
        long want_ids = (long)nblocks * (nblocks - 1) / 2;
        wrong = total != nblocks || all_ids != want_ids || fabs(sum - want) > 1e-6 * fabs(want);
        printf("%s: %d iterations, %d recoveries, %d ranks left, %d blocks, sum(x) = %.9f, "
               "sum(b) = %.9f\n",
               wrong ? "WRONG" : "OK", iter, recoveries, size, total, sum, want);
    }
    free(own.b);
    free(ckpt.b);
    free(buddy.b);
    free(buddy_new.b);
    free(ckpt_new.b);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return wrong;
}

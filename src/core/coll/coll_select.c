/* Algorithm selection. The default table is data: rows (collective, largest
 * communicator size, largest message in bytes, algorithm, load), tried in
 * order;
 * the first row that matches and whose algorithm can serve the call wins.
 * "Message" is the whole vector for bcast and the reductions, and one
 * rank's block for the gather/scatter/alltoall families.
 *
 * TERN_COLL_TUNING_FILE names a file of rows in the same form, one per
 * line: `<collective> <max procs|*> <max bytes|*> <algorithm> [any|fit|over]`
 * (# starts a comment; the load is any when left out); the rows of each collective it mentions replace the default
 * rows of that collective. TERN_<COLL>_ALGORITHM=<name> forces one
 * algorithm (when it cannot serve a call, e.g. ring for a non-commutative
 * op, the table decides). */
#include "core/coll/coll.h"
#include "base/config.h"
#include "base/log.h"
#include "core/coll/shm_region.h"
#include "core/runtime/runtime.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tern_coll_kind_t kind;
    int max_procs;       /* 0: any */
    size_t max_bytes;    /* SIZE_MAX: any */
    const char *algo;
    tern_coll_load_t load;
} row_t;

#define ANY_BYTES SIZE_MAX
/* Loads: most rows hold at any load. With more ranks than CPUs on the
 * node, the rooted collectives' shm rows do not apply (FIT): there a root
 * or reader waits for a slot held by a descheduled rank, where the message
 * algorithms let the senders run ahead (4 ranks on 2 cores, 8 B: bcast
 * 0.94 against 2.5 us, reduce 1.5 against 3.4, gather 1.3 against 2.9,
 * scatter 1.0 against 3.4; docs/performance.md). The collectives every
 * rank waits for anyway (barrier, allreduce, allgather, alltoall) keep shm
 * at any load, which was as fast or faster there. OVER rows say what
 * serves where a measurement found a better algorithm oversubscribed (a
 * tuning file from `tern-bench tune` can say more). */
#define ANY TERN_COLL_LOAD_ANY
#define FIT TERN_COLL_LOAD_FIT
#define OVER TERN_COLL_LOAD_OVER
static const row_t default_rows[] = {
    {TERN_COLL_BARRIER, 0, ANY_BYTES, "node_aware", ANY},
    {TERN_COLL_BARRIER, 16, ANY_BYTES, "shm", ANY},
    {TERN_COLL_BARRIER, 0, ANY_BYTES, "dissemination", ANY},
    {TERN_COLL_BCAST, 0, 12288, "node_aware", ANY},
    /* Two ranks, small messages: one message each way (or one) beat the
     * shm flag handshake in A/Bs on the 2-core machine (2 bound ranks,
     * medians of 3-5 rounds, 8 B: bcast 0.22 vs 0.41 us, reduce 0.31 vs
     * 0.39, allreduce 0.54 vs 0.67, allgather 0.54 vs 0.76, alltoall 0.48
     * vs 0.88; the byte limits are where shm caught up; docs/performance.md).
     * The barrier keeps shm (0.30 vs 0.37). The bcast's limit is 4 KB since
     * the direct pair path (coll_pair.c): binomial 0.06-0.15 against shm's
     * 0.11-0.17 us at 512 B-4 KB, shm ahead from 8 KB (loaded A/B). */
    {TERN_COLL_BCAST, 2, 4096, "binomial", ANY},
    /* shm up to the size where binomial gave way to scatter_allgather
     * already: ranks passing different counts (erroneous) on the same
     * side of 12288 bytes (4096 at 2 ranks) get MPI_ERR_TRUNCATE from
     * either; counts on both sides pick different algorithms and would
     * not meet. At 2 ranks shm serves every size above 4096 (a bcast's
     * steps follow the root's count, so mismatched counts there always
     * end in MPI_ERR_TRUNCATE): through the bcast ring's 32 KB cells it
     * beat binomial's one message at every size (loaded A/B, medians of
     * 11 alternated rounds, 256 KB 8.2 against 18.0 us, 1 MB 34.6 against
     * 683; docs/performance.md). */
    {TERN_COLL_BCAST, 2, ANY_BYTES, "shm", FIT},
    {TERN_COLL_BCAST, 16, 12288, "shm", FIT},
    /* Oversubscribed, above 2 KB: shm, where scatter_allgather's p - 1
     * steps each wait for a descheduled partner (64 KB, loaded machine,
     * medians of 5 alternated rounds: 4 ranks 103 against 1153 us, 8
     * ranks 607 against 3126; tern-bench tune agreed), and binomial's
     * inner ranks for their parent's rendezvous from 4 KB (quiet A/B,
     * unbound, 4 / 8 KB: 3 ranks 1.8 / 2.2 against 3.0 / 6.5 us, 4 ranks
     * 1.8 / 2.0 against 3.0 / 6.9, 8 ranks 3.5 / 4.1 against 5.5 / 12.9);
     * binomial up to 2 KB (4 ranks 1.28 against shm's 1.51 us). */
    {TERN_COLL_BCAST, 16, 2048, "binomial", OVER},
    {TERN_COLL_BCAST, 16, ANY_BYTES, "shm", OVER},
    {TERN_COLL_BCAST, 0, 12288, "binomial", ANY},
    {TERN_COLL_BCAST, 3, ANY_BYTES, "binomial", ANY},
    {TERN_COLL_BCAST, 0, ANY_BYTES, "scatter_allgather", ANY},
    /* Blocks of the gather/scatter/allgather/alltoall families, predicted
     * from the A/B in docs/performance.md (to be confirmed): at 2 ranks a
     * binomial (one eager message) beats the flag round trip for tiny
     * blocks; shm up to 16 KB blocks at up to 8 ranks. */
    {TERN_COLL_GATHER, 2, 1024, "binomial", ANY},
    /* Oversubscribed: every sender straight to the root, none waiting
     * for a descheduled child as binomial's inner ranks do (8 B, loaded
     * machine, medians of 5 alternated rounds: 4 ranks 1.73 against 2.43
     * us, 8 ranks 13.7 against 32.7; tern-bench tune agreed); above 2 KB
     * up to the 64 KB slots such a region gets, shm in one step, where
     * the root of linear waits for each descheduled sender's rendezvous
     * (quiet A/B, unbound, 4 / 16 / 64 KB: 4 ranks 2.9 / 4.1 / 8.7
     * against 4.9 / 22.9 / 15.5 us, 8 ranks 6.3 / 8.8 / 20.5 against
     * 9.0 / 48.1 / 110; 1-2 KB level or behind; docs/performance.md). */
    {TERN_COLL_GATHER, 8, 2048, "linear", OVER},
    {TERN_COLL_GATHER, 8, 65536, "shm", OVER},
    {TERN_COLL_GATHER, 8, ANY_BYTES, "linear", OVER},
    /* Two ranks, one per core: shm up to 64 KB (reduce: 128 KB), one step
     * through a 2-rank region's slot (one copy in, one out, no rendezvous
     * round trip; docs/performance.md). Gather, scatter and reduce must
     * fit one step (gather and scatter were faster at 128 KB too, in two
     * steps of the 64 KB slots then): their steps follow each rank's own
     * count, so mismatched counts (erroneous) must fit one step to stay
     * in step. */
    {TERN_COLL_GATHER, 2, 65536, "shm", FIT},
    {TERN_COLL_GATHER, 8, 16384, "shm", FIT},
    {TERN_COLL_GATHER, 16, 4096, "shm", FIT},
    {TERN_COLL_GATHER, 0, 2048, "binomial", ANY},
    {TERN_COLL_GATHER, 0, ANY_BYTES, "linear", ANY},
    {TERN_COLL_GATHERV, 0, ANY_BYTES, "linear", ANY},
    {TERN_COLL_SCATTER, 2, 1024, "binomial", ANY},
    {TERN_COLL_SCATTER, 2, 65536, "shm", FIT},
    {TERN_COLL_SCATTER, 8, 16384, "shm", FIT},
    {TERN_COLL_SCATTER, 16, 4096, "shm", FIT},
    /* Oversubscribed at up to 8 ranks, small blocks too: linear, the
     * root's p - 1 messages posted straight to point-to-point
     * (coll_tree.c), where binomial's inner ranks forward to their
     * children (loaded A/B, 4 ranks 8 B, medians of 7 alternated rounds:
     * 0.27 against binomial's 0.41 us; docs/performance.md). */
    {TERN_COLL_SCATTER, 8, 4096, "linear", OVER},
    {TERN_COLL_SCATTER, 0, 2048, "binomial", ANY},
    /* Oversubscribed at up to 8 ranks, blocks above 4 KB up to 64 KB:
     * shm, one step through the 64 KB slots, where linear's root waits
     * for each descheduled receiver's rendezvous (loaded A/B, medians of
     * 5 alternated rounds, linear against shm: 4 ranks 32/64 KB 140/144
     * against 13/24 us, 8 ranks 510/232 against 31/59; 16 KB 16.5/23.5
     * against 10.6/22.7; quiet A/B, 8 KB: 4 ranks 7.9 against 3.5, 8
     * ranks 12.9 against 7.0). Up to 4 KB linear was as fast or faster at
     * 8 ranks (4 KB 9.4 against 18.4 loaded, 5.9 against 6.0 quiet;
     * docs/performance.md): the linear row above. */
    {TERN_COLL_SCATTER, 8, 65536, "shm", OVER},
    {TERN_COLL_SCATTER, 0, ANY_BYTES, "linear", ANY},
    {TERN_COLL_SCATTERV, 0, ANY_BYTES, "linear", ANY},
    {TERN_COLL_ALLGATHER, 2, 1024, "recursive_doubling", ANY},
    /* 2 ranks one per core, and oversubscribed at up to 8 (64 KB slots
     * there): 64 KB blocks in one shm step, each rank's own block copied
     * once outside the slots, where ring waits p - 1 times for its
     * neighbour (loaded A/B, 64 KB: 2 ranks 5.0 against 7.3 us; 8 ranks
     * 1.6-1.9 thousand involuntary context switches against 49-70
     * thousand; docs/performance.md). At 2 ranks up to 128 KB, one step
     * of the 2-rank slot: 9.1 against ring's 10.2 us (loaded A/B). */
    {TERN_COLL_ALLGATHER, 2, 131072, "shm", FIT},
    {TERN_COLL_ALLGATHER, 8, 16384, "shm", ANY},
    {TERN_COLL_ALLGATHER, 8, 65536, "shm", OVER},
    {TERN_COLL_ALLGATHER, 16, 4096, "shm", ANY},
    {TERN_COLL_ALLGATHER, 0, 1024, "recursive_doubling", ANY},
    {TERN_COLL_ALLGATHER, 0, 1024, "bruck", ANY},
    {TERN_COLL_ALLGATHER, 0, ANY_BYTES, "ring", ANY},
    {TERN_COLL_ALLGATHERV, 0, ANY_BYTES, "ring", ANY},
    {TERN_COLL_ALLTOALL, 2, 1024, "pairwise", ANY},
    /* 2 ranks one per core: a block up to the 128 KB slot is one step (a
     * slot holds p - 1 pieces; the own piece never crosses it): 64 KB 4.9
     * against 7.1 us, 128 KB 8.6 against pairwise's 9.8, in loaded A/Bs
     * (docs/performance.md). */
    {TERN_COLL_ALLTOALL, 2, 131072, "shm", FIT},
    {TERN_COLL_ALLTOALL, 8, 16384, "shm", ANY},
    /* Oversubscribed, blocks above 16 KB up to 64 KB at up to 8 ranks:
     * shm, though a 64 KB block takes p steps of the 64 KB slots, where
     * direct and pairwise wait for a rendezvous with a descheduled
     * partner per block (loaded A/B, medians of alternated rounds,
     * direct/pairwise against shm at 32/64 KB: 4 ranks 190/207 against
     * 54/58 us in 5 rounds, 8 ranks 2713/4993 against 958/1920 in 15;
     * docs/performance.md). */
    {TERN_COLL_ALLTOALL, 8, 65536, "shm", OVER},
    {TERN_COLL_ALLTOALL, 16, 1024, "shm", ANY},
    {TERN_COLL_ALLTOALL, 0, 256, "bruck", ANY},
    {TERN_COLL_ALLTOALL, 0, 32768, "direct", ANY},
    {TERN_COLL_ALLTOALL, 0, ANY_BYTES, "pairwise", ANY},
    {TERN_COLL_ALLTOALLV, 0, ANY_BYTES, "pairwise", ANY},
    {TERN_COLL_ALLTOALLW, 0, ANY_BYTES, "pairwise", ANY},
    {TERN_COLL_REDUCE, 0, 65536, "node_aware", ANY},
    {TERN_COLL_REDUCE, 2, 4096, "binomial", ANY},
    /* 128 KB: one step of the 128 KB slot, 0.72x binomial's time (loaded
     * A/B, docs/performance.md). */
    {TERN_COLL_REDUCE, 2, 131072, "shm", FIT},
    {TERN_COLL_REDUCE, 16, 16384, "shm", FIT},
    /* Oversubscribed, 16-64 KB at up to 8 ranks: shm, one step through
     * the 64 KB slots such a region gets, where binomial's inner ranks wait
     * for descheduled children with the whole vector (loaded machine,
     * SCHED_RR, 8 ranks: 32 KB 53-60 against 98-114 us, 64 KB 96-113
     * against 171-179; 4 ranks 26-51 against 31-55; quiet, 16 KB: 4 ranks
     * 9.7 against 20.6, 8 ranks 14.3 against 31.2, where a loaded run had
     * 21 against 12 at 4 ranks); binomial up to 8 KB (quiet, 4 KB: 4.4
     * against 6.3 at 4 ranks, 5.7 against 17.2 at 8; docs/performance.md). */
    {TERN_COLL_REDUCE, 8, 8192, "binomial", OVER},
    {TERN_COLL_REDUCE, 8, 65536, "shm", OVER},
    {TERN_COLL_REDUCE, 0, ANY_BYTES, "binomial", ANY},
    {TERN_COLL_ALLREDUCE, 0, 65536, "node_aware", ANY},
    {TERN_COLL_ALLREDUCE, 2, 8192, "recursive_doubling", ANY},
    /* Two ranks, one per core: shm at every size, in steps of its 128 KB
     * slot (each rank folds half), 0.6x rabenseifner's time at 64 KB and
     * 0.7-0.94x at 128 KB-2 MB in A/Bs (docs/performance.md); the ranks
     * agree on the shortest count in the first step, so mismatched counts
     * (erroneous) never leave one waiting. */
    {TERN_COLL_ALLREDUCE, 2, ANY_BYTES, "shm", FIT},
    /* Oversubscribed, up to 64 KB at up to 8 ranks: shm in one step (64 KB
     * slots), where rabenseifner's 2 lg p steps each wait for a
     * descheduled partner (loaded machine, SCHED_RR, 64 KB: 4 ranks 58-71
     * against 133-139 us, 8 ranks 105-142 against 301-381;
     * docs/performance.md). */
    {TERN_COLL_ALLREDUCE, 8, 65536, "shm", OVER},
    {TERN_COLL_ALLREDUCE, 16, 16384, "shm", ANY},
    {TERN_COLL_ALLREDUCE, 0, 2048, "recursive_doubling", ANY},
    {TERN_COLL_ALLREDUCE, 0, 4194304, "rabenseifner", ANY},
    {TERN_COLL_ALLREDUCE, 0, ANY_BYTES, "ring", ANY},
    {TERN_COLL_ALLREDUCE, 0, ANY_BYTES, "recursive_doubling", ANY},
    /* Shared memory (each rank folds its own block out of every rank's
     * slot, one step per slot's worth): tern-bench A/B against the rows
     * below, loaded machine, medians of 3-5 alternated rounds
     * (docs/performance.md): 2 bound ranks 8 B-1 MB 0.26-0.80x their time
     * (64 KB 16.2 against 40.8 us, 128 KB 31.6 against 120.6), 4 B 1.7x;
     * oversubscribed, 32 B up: 4 ranks 0.52-0.98x up to 1 MB (against
     * ring from 128 KB), 8 ranks 0.48-0.95x; 4-16 B stay direct (2.2-3.4x
     * at 4-8 B). Two ranks, up to 2 KB: direct, one message each way
     * (coll_pair.c), against shm's wait on both ranks' flag lines (loaded
     * A/B, 8-128 B 0.34-0.42 against 0.52 us, 4 B 0.16 against
     * reduce_scatterv's 0.21; quiet, fast VM mode, 20 rounds, 256 B / 1 KB
     * / 2 KB 0.120 / 0.131 / 0.180 against 0.204 / 0.226 / 0.250, 4 KB a
     * tie; docs/performance.md row `rs2k`). */
    {TERN_COLL_REDUCE_SCATTER, 2, 2048, "direct", ANY},
    {TERN_COLL_REDUCE_SCATTER, 2, ANY_BYTES, "shm", FIT},
    /* Oversubscribed, 8 ranks, 4-16 B: recursive halving, where direct
     * makes each owner wait for p - 1 messages a call (empty parts are
     * not sent, so the owners wait for lg p and the others send once;
     * alternated A/B, loaded machine, SCHED_RR, 8 B, medians of 5-15
     * rounds in 4 runs: 1.78-1.98 against direct's 2.02-2.59 us, Open MPI
     * 1.77-1.93; 16 B 5.90 against 7.73, then a tie; 4 B a tie). Below 8
     * ranks direct: 6 ranks 1.54 against 2.61 (the pairs step waits too),
     * 4 ranks 16 B 3.58-3.61 against 5.64-5.87, 8 B a tie. On 4 ranks, 8 B
     * (two owners): halving as direct messages (coll_tree.c), whose owners
     * take 2 messages and the others send 1 (direct: 3 and 2): ~20% fewer
     * instructions an owner, 0.86 against 0.92 us (fast mode) and 1.03
     * against 1.09 (slow), medians of 9 rounds under SCHED_RR; at 4 B
     * (one owner: halving's chain 3 -> 1 -> 0), from 16 B (every rank an
     * owner) and at 3 ranks (1.85 against 1.09 us) direct stayed faster
     * (docs/performance.md). */
    {TERN_COLL_REDUCE_SCATTER, 3, 16, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER, 4, 4, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER, 4, 8, "recursive_halving", OVER},
    {TERN_COLL_REDUCE_SCATTER, 7, 16, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER, 8, 16, "recursive_halving", OVER},
    {TERN_COLL_REDUCE_SCATTER, 8, ANY_BYTES, "shm", OVER},
    /* Oversubscribed, small vectors: every rank sends each owner its
     * segment and leaves, where reduce_scatterv's binomial reduce makes
     * inner ranks and the root wait for descheduled children in turn
     * (docs/performance.md). */
    {TERN_COLL_REDUCE_SCATTER, 16, 4096, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER, 0, 65536, "reduce_scatterv", ANY},
    {TERN_COLL_REDUCE_SCATTER, 0, ANY_BYTES, "ring", ANY},
    {TERN_COLL_REDUCE_SCATTER, 0, ANY_BYTES, "reduce_scatterv", ANY},
    /* The same code and the same rows as reduce_scatter. */
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 2, 2048, "direct", ANY},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 2, ANY_BYTES, "shm", FIT},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 3, 16, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 4, 4, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 4, 8, "recursive_halving", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 7, 16, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 8, 16, "recursive_halving", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 8, ANY_BYTES, "shm", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 16, 4096, "direct", OVER},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 0, 65536, "reduce_scatterv", ANY},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 0, ANY_BYTES, "ring", ANY},
    {TERN_COLL_REDUCE_SCATTER_BLOCK, 0, ANY_BYTES, "reduce_scatterv", ANY},
    {TERN_COLL_SCAN, 0, ANY_BYTES, "recursive_doubling", ANY},
    {TERN_COLL_EXSCAN, 0, ANY_BYTES, "recursive_doubling", ANY},
};

typedef tern_coll_row_t entry_t;

static entry_t *table;
static size_t n_table;
/* The table is grouped by collective: rows of kind k are
 * table[kind_first[k] .. kind_first[k + 1]) (a call scans only its own). */
static size_t kind_first[TERN_COLL_N + 1];
static int loaded;
static const char *table_source = "built-in";
static const tern_coll_algo_t *forced[TERN_COLL_N];
static long ranks_per_node; /* TERN_COLL_RANKS_PER_NODE, read once */

/* The knob forcing each collective's algorithm (string knobs, read by id). */
static const tern_knob_id_t algorithm_knobs[TERN_COLL_N] = {
    TERN_KNOB_BARRIER_ALGORITHM,   TERN_KNOB_BCAST_ALGORITHM,          TERN_KNOB_GATHER_ALGORITHM,
    TERN_KNOB_GATHERV_ALGORITHM,   TERN_KNOB_SCATTER_ALGORITHM,        TERN_KNOB_SCATTERV_ALGORITHM,
    TERN_KNOB_ALLGATHER_ALGORITHM, TERN_KNOB_ALLGATHERV_ALGORITHM,     TERN_KNOB_ALLTOALL_ALGORITHM,
    TERN_KNOB_ALLTOALLV_ALGORITHM, TERN_KNOB_ALLTOALLW_ALGORITHM,      TERN_KNOB_REDUCE_ALGORITHM,
    TERN_KNOB_ALLREDUCE_ALGORITHM, TERN_KNOB_REDUCE_SCATTER_ALGORITHM, TERN_KNOB_REDUCE_SCATTER_BLOCK_ALGORITHM,
    TERN_KNOB_SCAN_ALGORITHM,      TERN_KNOB_EXSCAN_ALGORITHM};

static int kind_of(const char *name)
{
    for (int k = 0; k < TERN_COLL_N; k++)
        if (!strcmp(name, tern_coll_kind_name((tern_coll_kind_t)k)))
            return k;
    return -1;
}

static const char *const load_names[] = {"any", "fit", "over"};

const char *tern_coll_load_name(tern_coll_load_t load)
{
    return (unsigned)load < 3 ? load_names[load] : "?";
}

static int load_of(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, load_names[i]))
            return i;
    return -1;
}

static int push(entry_t **t, size_t *n, size_t *cap, entry_t e)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        entry_t *x = realloc(*t, c * sizeof *x);
        if (!x)
            return -1;
        *t = x;
        *cap = c;
    }
    (*t)[(*n)++] = e;
    return 0;
}

/* Reads the tuning file's rows; 0 on success (rows in *t), -1 on a bad
 * file (reported; the built-in table stays). */
static int read_tuning_file(const char *path, entry_t **t, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        tern_error("TERN_COLL_TUNING_FILE: cannot open %s: %s; using the built-in table", path,
                   strerror(errno));
        return -1;
    }
    char line[512];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char coll[64], procs[32], bytes[32], algo[64], load[8] = "any", extra[2];
        int got = sscanf(line, "%63s %31s %31s %63s %7s %1s", coll, procs, bytes, algo, load,
                         extra);
        if (got <= 0)
            continue;
        int ld = load_of(load);
        int kind = (got == 4 || got == 5) && ld >= 0 ? kind_of(coll) : -1;
        const tern_coll_algo_t *al = kind >= 0 ? tern_coll_find((tern_coll_kind_t)kind, algo) : NULL;
        char *end1 = NULL, *end2 = NULL;
        long mp = strcmp(procs, "*") ? strtol(procs, &end1, 10) : 0;
        unsigned long long mb = strcmp(bytes, "*") ? strtoull(bytes, &end2, 10) : ~0ULL;
        if (!al || (end1 && (*end1 || mp < 1)) || (end2 && *end2)) {
            tern_error("TERN_COLL_TUNING_FILE %s:%d: expected `<collective> <max procs|*> <max "
                       "bytes|*> <algorithm> [any|fit|over]` with a known collective and "
                       "algorithm; using the built-in table",
                       path, lineno);
            rc = -1;
            break;
        }
        entry_t e = {(tern_coll_kind_t)kind, (int)mp,
                     mb > SIZE_MAX ? SIZE_MAX : (size_t)mb, al, (tern_coll_load_t)ld};
        if (push(t, n, cap, e)) {
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* Fills the table, grouped by collective: the file's rows for the
 * collectives it names, the built-in rows for the others. -1 when out of
 * memory. */
static int build_table(const entry_t *file_rows, size_t n_file, const int *in_file)
{
    size_t cap = 0;
    for (int k = 0; k < TERN_COLL_N; k++) {
        kind_first[k] = n_table;
        if (in_file[k]) {
            for (size_t i = 0; i < n_file; i++)
                if ((int)file_rows[i].kind == k && push(&table, &n_table, &cap, file_rows[i]))
                    return -1;
            continue;
        }
        for (size_t i = 0; i < sizeof default_rows / sizeof default_rows[0]; i++) {
            const row_t *r = &default_rows[i];
            if ((int)r->kind != k)
                continue;
            const tern_coll_algo_t *al = tern_coll_find(r->kind, r->algo);
            if (!al) { /* a bug in the built-in rows: the others and the fallback still serve */
                tern_error("internal error (a bug in Tern): the built-in selection table names "
                           "unknown algorithm %s for %s; row ignored",
                           r->algo, tern_coll_kind_name(r->kind));
                continue;
            }
            entry_t e = {r->kind, r->max_procs, r->max_bytes, al, r->load};
            if (push(&table, &n_table, &cap, e))
                return -1;
        }
    }
    return 0;
}

static void load(void)
{
    if (loaded)
        return;
    loaded = 1;
    entry_t *file_rows = NULL;
    size_t n_file = 0, cap_file = 0;
    const char *path = tern_knob_str(TERN_KNOB_COLL_TUNING_FILE);
    int use_file = path && *path && strcmp(path, "none") &&
                   read_tuning_file(path, &file_rows, &n_file, &cap_file) == 0;
    int in_file[TERN_COLL_N] = {0};
    if (use_file) {
        table_source = path;
        for (size_t i = 0; i < n_file; i++)
            in_file[file_rows[i].kind] = 1;
    }
    if (build_table(file_rows, n_file, in_file) != 0) {
        /* No rows: every call takes its collective's general algorithm. */
        tern_error("out of memory building the collective selection table; every collective "
                   "uses its general algorithm");
        n_table = 0;
        memset(kind_first, 0, sizeof kind_first);
    }
    kind_first[TERN_COLL_N] = n_table;
    free(file_rows);
    ranks_per_node = tern_knob_count(TERN_KNOB_COLL_RANKS_PER_NODE);
    for (int k = 0; k < TERN_COLL_N; k++) {
        const char *v = tern_knob_value(algorithm_knobs[k])->text;
        if (!strcmp(v, "auto"))
            continue;
        forced[k] = tern_coll_find((tern_coll_kind_t)k, v);
        if (!forced[k])
            tern_error("%s=%s: no such %s algorithm; using the selection table",
                       tern_knob_table()[algorithm_knobs[k]].name, v,
                       tern_coll_kind_name((tern_coll_kind_t)k));
    }
}

/* Several nodes, and more than one rank on some node (the node map as the
 * node-aware algorithms see it). */
static int compute_spans_nodes(const tern_comm_t *c)
{
    long per = ranks_per_node;
    int first = -1, several_nodes = 0, shared = 0;
    for (int q = 0; q < c->size && !(several_nodes && shared); q++) {
        int w = tern_comm_local_world_rank(c, q);
        /* Processes of several jobs (dynamic processes) do not agree on one
         * node map: no node-aware algorithm for them. */
        if (w >= tern_rt.size)
            return 0;
        int node = per > 0 ? (int)(w / per) : tern_rt.node_of_rank[w];
        if (first < 0)
            first = node;
        else if (node != first)
            several_nodes = 1;
        if (q > 0) {
            int pw = tern_comm_local_world_rank(c, q - 1);
            int pnode = per > 0 ? (int)(pw / per) : tern_rt.node_of_rank[pw];
            shared |= pnode == node;
        }
    }
    return several_nodes && shared;
}

/* Cached in the communicator: the walk is O(size) and every small
 * barrier, bcast and (all)reduce asks. */
static int spans_nodes(tern_comm_t *c)
{
    if (!c->coll_spans_nodes)
        c->coll_spans_nodes = compute_spans_nodes(c) ? 1 : -1;
    return c->coll_spans_nodes > 0;
}

/* Whether a row's load column admits this process's node. */
static int load_fits(tern_coll_load_t load)
{
    return load == TERN_COLL_LOAD_ANY ||
           (load == TERN_COLL_LOAD_OVER) == (tern_rt.node_oversubscribed != 0);
}

static int usable(const tern_coll_algo_t *al, const tern_coll_args_t *a)
{
    int p = a->comm->size;
    if (!(al->flags & TERN_COLL_INTER) != !a->comm->is_inter)
        return 0;
    if ((al->flags & TERN_COLL_NEEDS_COMMUTATIVE) && !a->commutative)
        return 0;
    if ((al->flags & TERN_COLL_NEEDS_POW2) && (p & (p - 1)))
        return 0;
    if ((al->flags & TERN_COLL_NODE_AWARE) && !spans_nodes(a->comm))
        return 0;
    if ((al->flags & TERN_COLL_SHM) && !tern_shm_coll_usable(a))
        return 0;
    return 1;
}

/* The last choice per collective on intracommunicators, reused while
 * every input of the choice is the same (programs repeat their calls): a
 * hit costs a few compares instead of a walk of the rows. */
typedef struct {
    const tern_coll_algo_t *algo; /* NULL: nothing remembered yet */
    size_t msg_bytes;
    int size, commutative, spans, shm;
} memo_t;
static memo_t memo[TERN_COLL_N];

/* The walk of the rows, on a miss of the memo (out of line: the hit path
 * then saves no registers). */
static __attribute__((noinline)) const tern_coll_algo_t *
select_walk(const tern_coll_args_t *a, tern_coll_kind_t kind, size_t msg_bytes, int spans, int shm)
{
    const tern_coll_algo_t *al = NULL;
    if (forced[kind] && usable(forced[kind], a))
        al = forced[kind];
    for (size_t i = kind_first[kind]; !al && i < kind_first[kind + 1]; i++) {
        const entry_t *e = &table[i];
        if ((e->max_procs && a->comm->size > e->max_procs) ||
            msg_bytes > e->max_bytes || !load_fits(e->load) || !usable(e->algo, a))
            continue;
        al = e->algo;
    }
    if (!al)
        al = tern_coll_find(kind, NULL); /* the general fallback */
    tern_debug("%s on %d ranks, %zu bytes: %s", tern_coll_kind_name(kind), a->comm->size,
               msg_bytes, al->name);
    memo[kind] = (memo_t){al, msg_bytes, a->comm->size, a->commutative, spans, shm};
    return al;
}

static __attribute__((noinline)) const tern_coll_algo_t *select_inter(tern_coll_kind_t kind)
{
    size_t n;
    const tern_coll_algo_t *all = tern_coll_algorithms(&n);
    for (size_t i = 0; i < n; i++)
        if (all[i].kind == kind && (all[i].flags & TERN_COLL_INTER))
            return &all[i];
    return NULL;
}

const tern_coll_algo_t *tern_coll_select(const tern_coll_args_t *a, tern_coll_kind_t kind,
                                         size_t msg_bytes)
{
    load();
    if (a->comm->is_inter) /* one algorithm each, for now */
        return select_inter(kind);
    const memo_t *m = &memo[kind];
    int spans = spans_nodes(a->comm);
    int shm = tern_shm_coll_usable(a);
    if (m->algo && m->msg_bytes == msg_bytes && m->size == a->comm->size &&
        m->commutative == a->commutative && m->spans == spans && m->shm == shm)
        return m->algo;
    return select_walk(a, kind, msg_bytes, spans, shm);
}

const char *tern_coll_condition(const tern_coll_algo_t *al)
{
    return al->flags & TERN_COLL_NODE_AWARE          ? "communicators spanning nodes"
           : al->flags & TERN_COLL_SHM              ? "ranks on one node"
           : al->flags & TERN_COLL_NEEDS_COMMUTATIVE ? "commutative ops"
           : al->flags & TERN_COLL_NEEDS_POW2       ? "power-of-two sizes"
           : al->flags & TERN_COLL_INTER            ? "intercommunicators"
                                                    : "";
}

const tern_coll_row_t *tern_coll_table(size_t *n_p, const char **source_p)
{
    load();
    *n_p = n_table;
    *source_p = table_source;
    return table;
}

const tern_coll_algo_t *tern_coll_forced(tern_coll_kind_t kind)
{
    load();
    return (unsigned)kind < TERN_COLL_N ? forced[kind] : NULL;
}

tern_status_t tern_coll_set_forced(tern_coll_kind_t kind, const char *name)
{
    load();
    const tern_coll_algo_t *al = NULL;
    if (strcmp(name, "auto") != 0 && !(al = tern_coll_find(kind, name)))
        return tern_status_detail(TERN_ERR_ARG, "no %s algorithm is named \"%s\"",
                                  tern_coll_kind_name(kind), name);
    if (tern_knob_set(algorithm_knobs[kind], name) != 0)
        return TERN_ERR_NOMEM;
    forced[kind] = al;
    memo[kind].algo = NULL; /* the next call chooses again */
    return TERN_OK;
}

int tern_coll_kind_of_knob(int knob_id)
{
    for (int k = 0; k < TERN_COLL_N; k++)
        if ((int)algorithm_knobs[k] == knob_id)
            return k;
    return -1;
}

const char *tern_coll_algorithm_knob(tern_coll_kind_t kind)
{
    return (unsigned)kind < TERN_COLL_N ? tern_knob_table()[algorithm_knobs[kind]].name : "?";
}

void tern_coll_print_table(FILE *f)
{
    load();
    fprintf(f, "Collective algorithm selection (table: %s; first matching row wins; load: any,"
               " fit = no more ranks than CPUs on the node, over = more):\n",
            table_source);
    fprintf(f, "  %-22s %10s %12s %5s  %s\n", "collective", "procs <=", "bytes <=", "load",
            "algorithm");
    for (size_t i = 0; i < n_table; i++) {
        const entry_t *e = &table[i];
        char procs[16], bytes[24];
        if (e->max_procs)
            snprintf(procs, sizeof procs, "%d", e->max_procs);
        else
            snprintf(procs, sizeof procs, "*");
        if (e->max_bytes == SIZE_MAX)
            snprintf(bytes, sizeof bytes, "*");
        else
            snprintf(bytes, sizeof bytes, "%zu", e->max_bytes);
        const char *cond = tern_coll_condition(e->algo);
        fprintf(f, "  %-22s %10s %12s %5s  %s%s%s%s\n", tern_coll_kind_name(e->kind), procs,
                bytes, tern_coll_load_name(e->load), e->algo->name, *cond ? " (" : "", cond,
                *cond ? ")" : "");
    }
    for (int k = 0; k < TERN_COLL_N; k++)
        if (forced[k])
            fprintf(f, "  forced: %s=%s\n", tern_coll_algorithm_knob((tern_coll_kind_t)k),
                    forced[k]->name);
    fprintf(f, "  algorithms:");
    size_t n;
    const tern_coll_algo_t *all = tern_coll_algorithms(&n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s %s/%s", i ? "," : "", tern_coll_kind_name(all[i].kind), all[i].name);
    fprintf(f, "\n");
}

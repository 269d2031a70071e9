/* tern-bench init: start-up cost. Every rank times MPI_Init and
 * MPI_Init + MPI_Finalize on its own monotonic clock; the maximum over ranks
 * is reported (as osu_init does for MPI_Init).
 *
 * After MPI_Finalize the ranks cannot talk through MPI any more, so each
 * writes its times into a small shared file that rank 0 created and named
 * to the others (same node only, which start-up tests are); rank 0 collects
 * them after its own MPI_Finalize. Validation: every rank must report, with
 * the same world size and a distinct rank.
 *
 * --memory adds each rank's memory (proc_memory.h) at two points: after
 * MPI_Init, and after the first exchange with every peer (connections made,
 * one message through each pair's rings). Each sample sits between two
 * barriers, so that every rank has mapped what it maps before anyone reads
 * its PSS, and nobody touches more before everyone has read it. */
#include "harness.h"
#include "proc_memory.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NAME_LEN 256
#define COLLECT_TIMEOUT_S 60

/* One rank's report in the shared file; `done` is written last. */
typedef struct slot {
    int64_t init_ns, total_ns;
    int32_t rank, size;
    int32_t done;
    int32_t pad;
} slot;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* First exchange with every peer: in step k each rank sends one int to
 * rank + k and receives one from rank - k (MPI_Sendrecv). The first pass
 * meets every peer for the first time (under TERN_CONNECT=lazy that includes
 * connecting to it), the second pass repeats it warm. Each rank's maximum
 * and sum over its peers go to rank 0 by point-to-point messages; out[] gets
 * {first max, first mean, warm max, warm mean} in microseconds over all
 * ordered pairs. A wrong payload fails the run. */
static void first_messages(int rank, int size, double out[4])
{
    double mine[4] = {0, 0, 0, 0};
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 1; k < size; k++) {
            int dst = (rank + k) % size, src = (rank - k + size) % size;
            int sent = rank * 4 + pass, got = -1;
            double t = MPI_Wtime();
            MPI_Sendrecv(&sent, 1, MPI_INT, dst, 11, &got, 1, MPI_INT, src, 11, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            double us = (MPI_Wtime() - t) * 1e6;
            if (got != src * 4 + pass) {
                fprintf(stderr, "tern-bench init: validation failed: rank %d got %d from rank %d\n",
                        rank, got, src);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (us > mine[2 * pass]) mine[2 * pass] = us;
            mine[2 * pass + 1] += us;
        }
    }
    if (rank != 0) {
        MPI_Send(mine, 4, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD);
        return;
    }
    memcpy(out, mine, sizeof mine);
    for (int r = 1; r < size; r++) {
        double theirs[4];
        MPI_Recv(theirs, 4, MPI_DOUBLE, r, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i += 2) {
            if (theirs[i] > out[i]) out[i] = theirs[i];
            out[i + 1] += theirs[i + 1];
        }
    }
    int pairs = size * (size - 1);
    out[1] = pairs ? out[1] / pairs : 0;
    out[3] = pairs ? out[3] / pairs : 0;
}

static void fail(const char *what)
{
    fprintf(stderr, "tern-bench init: %s\n", what);
    exit(2);
}

/* Memory at the two points, mean and max over ranks: stat[point][field][0 mean, 1 max]. */
typedef struct {
    int local_ranks;
    double stat[2][MEM_FIELDS][2];
} memory_report;

static void memory_sample(double m[MEM_FIELDS])
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (mem_sample_read(m) != 0) {
        fprintf(stderr, "tern-bench init: cannot read /proc/self/smaps\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 gets every rank's two samples and reduces them into *rep. */
static void memory_gather(const double mine[2][MEM_FIELDS], int rank, int size, memory_report *rep)
{
    MPI_Comm node;
    int local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    double *all = rank == 0 ? malloc(sizeof(double) * 2 * MEM_FIELDS * (size_t)size) : NULL;
    if (rank == 0 && !all)
        fail("out of memory");
    MPI_Gather(mine, 2 * MEM_FIELDS, MPI_DOUBLE, all, 2 * MEM_FIELDS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    rep->local_ranks = local;
    for (int pt = 0; pt < 2; pt++)
        for (int f = 0; f < MEM_FIELDS; f++) {
            double sum = 0, max = 0;
            for (int r = 0; r < size; r++) {
                double v = all[(size_t)r * 2 * MEM_FIELDS + (size_t)pt * MEM_FIELDS + (size_t)f];
                sum += v;
                if (v > max)
                    max = v;
            }
            rep->stat[pt][f][0] = sum / size;
            rep->stat[pt][f][1] = max;
        }
    free(all);
}

static void memory_print(const memory_report *rep, int size, int json)
{
    static const char *const point[2] = {"after_init", "after_exchange"};
    if (json) {
        printf(",\"memory\":{\"local_ranks\":%d", rep->local_ranks);
        for (int pt = 0; pt < 2; pt++) {
            printf(",\"%s\":{", point[pt]);
            for (int f = 0; f < MEM_FIELDS; f++)
                printf("%s\"%s\":{\"mean\":%.1f,\"max\":%.1f}", f ? "," : "", mem_field_name[f],
                       rep->stat[pt][f][0], rep->stat[pt][f][1]);
            printf("}");
        }
        printf("}");
        return;
    }
    printf("# memory per rank (KiB; %d ranks, %d on this node), mean and max over ranks:\n", size,
           rep->local_ranks);
    printf("%-18s%14s%14s%16s%16s\n", "# field", "init mean", "init max", "exchange mean", "exchange max");
    for (int f = 0; f < MEM_FIELDS; f++)
        printf("%-18s%14.0f%14.0f%16.0f%16.0f\n", mem_field_name[f], rep->stat[0][f][0], rep->stat[0][f][1],
               rep->stat[1][f][0], rep->stat[1][f][1]);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: tern-bench-init [--json]   (run under any MPI's mpiexec)\n"
               "  reports the time of MPI_Init and of MPI_Init + MPI_Finalize, max over ranks,\n"
               "  and the first message exchanged with every peer against a warm one\n"
               "  (run once with TERN_CONNECT=all and once with TERN_CONNECT=lazy to compare)\n"
               "  --json        print one JSON object instead of the table\n"
               "  --memory      also each rank's memory (RSS, PSS; Tern's shm segment, other shared\n"
               "                mappings, files, anonymous, malloc) after MPI_Init and after the\n"
               "                first exchange with every peer, mean and max over ranks\n"
               "  -h, --help    this help\n");
}

int main(int argc, char **argv)
{
    int json = 0, memory = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--memory")) memory = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(stdout), 0;
        else return fprintf(stderr, "tern-bench-init: unknown option '%s'\n", argv[i]), usage(stderr), 1;
    }

    int64_t t0 = now_ns();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) fail("MPI_Init failed");
    int64_t t_init = now_ns() - t0;

    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    bench_library_version(lib, sizeof lib);
    double first[4] = {0, 0, 0, 0};
    double mem[2][MEM_FIELDS];
    memory_report mrep;
    if (memory)
        memory_sample(mem[0]);
    first_messages(rank, size, first);
    if (memory) {
        memory_sample(mem[1]);
        memory_gather((const double(*)[MEM_FIELDS])mem, rank, size, &mrep);
    }
    const char *connect = getenv("TERN_CONNECT") ? getenv("TERN_CONNECT") : "auto";

    /* Rank 0 names the shared file; the others open it. */
    char name[NAME_LEN] = "";
    int fd = -1;
    if (rank == 0) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        snprintf(name, sizeof name, "%s/tern-bench-init-XXXXXX", dir);
        fd = mkstemp(name);
        if (fd < 0 || ftruncate(fd, (off_t)(sizeof(slot) * size)) != 0) {
            perror("tern-bench init: shared file");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int r = 1; r < size; r++) MPI_Send(name, NAME_LEN, MPI_CHAR, r, 7, MPI_COMM_WORLD);
    } else {
        MPI_Recv(name, NAME_LEN, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        name[NAME_LEN - 1] = '\0';
        fd = open(name, O_RDWR);
        if (fd < 0) {
            perror("tern-bench init: cannot open rank 0's shared file (ranks on different nodes?)");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    slot *slots = mmap(NULL, sizeof(slot) * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (slots == MAP_FAILED) {
        perror("tern-bench init: mmap");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    if (MPI_Finalize() != MPI_SUCCESS) fail("MPI_Finalize failed");
    int64_t t_total = now_ns() - t0;

    slot *me = &slots[rank];
    me->init_ns = t_init, me->total_ns = t_total, me->rank = rank, me->size = size;
    __atomic_store_n(&me->done, 1, __ATOMIC_RELEASE);
    if (rank != 0) return 0;

    /* Rank 0: wait for every report, then check and print. */
    int64_t deadline = now_ns() + (int64_t)COLLECT_TIMEOUT_S * 1000000000;
    int64_t init_max = 0, total_max = 0;
    for (int r = 0; r < size; r++) {
        while (!__atomic_load_n(&slots[r].done, __ATOMIC_ACQUIRE)) {
            if (now_ns() > deadline) {
                unlink(name);
                fprintf(stderr, "tern-bench init: validation failed: rank %d never reported\n", r);
                return 2;
            }
            usleep(1000);
        }
        if (slots[r].rank != r || slots[r].size != size) {
            unlink(name);
            fprintf(stderr, "tern-bench init: validation failed: slot %d holds rank %d of %d (world size %d)\n", r,
                    slots[r].rank, slots[r].size, size);
            return 2;
        }
        if (slots[r].init_ns > init_max) init_max = slots[r].init_ns;
        if (slots[r].total_ns > total_max) total_max = slots[r].total_ns;
    }
    unlink(name);
    munmap(slots, sizeof(slot) * size);
    if (json) {
        printf("{\"benchmark\":\"init\",\"library\":\"%s\",\"ranks\":%d,\"results\":[{\"size\":0,"
               "\"init_ms\":%.6g,\"init_finalize_ms\":%.6g,\"iterations\":1}],\"validated_sizes\":1,"
               "\"validated_buffers\":%d,\"connect\":\"%s\",\"first_message_us_max\":%.6g,"
               "\"first_message_us_mean\":%.6g,\"warm_message_us_max\":%.6g,"
               "\"warm_message_us_mean\":%.6g",
               lib, size, init_max / 1e6, total_max / 1e6, size, connect, first[0], first[1],
               first[2], first[3]);
        if (memory)
            memory_print(&mrep, size, 1);
        printf("}\n");
    } else {
        printf("# tern-bench Init Test (%s, %d ranks)\n", lib, size);
        printf("%-12s%20s%28s\n", "# Ranks", "MPI_Init (ms)", "MPI_Init+Finalize (ms)");
        printf("%-12d%20.2f%28.2f\n", size, init_max / 1e6, total_max / 1e6);
        printf("# first exchange with each peer (us): max %.1f, mean %.1f; warm: max %.1f, "
               "mean %.1f (TERN_CONNECT=%s)\n",
               first[0], first[1], first[2], first[3], connect);
        if (memory)
            memory_print(&mrep, size, 0);
        printf("# validation: %d ranks reported, all consistent\n", size);
    }
    return 0;
}

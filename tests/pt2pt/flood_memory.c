/* Bounded memory under a flood of unexpected messages.
 *
 * Every rank but 0 posts N nonblocking 4 KB sends with tag 1 (all from one
 * buffer), then one message with tag 2. Rank 0 first receives the tag-2
 * messages, so while it progresses every tag-1 message is unexpected. Without
 * flow control it would hold them all (N * 4 KB per sender, 200 MB here);
 * with Tern's eager credits a sender switches to rendezvous after a few MB
 * and rank 0 holds only small headers. Rank 0 checks that its peak resident
 * memory grew by less than a bound, then receives everything in order and
 * checks the data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG 4096
#define N 50000

static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = size > 2 ? N / (size - 1) : N;
    int errors = 0;

    if (rank != 0) {
        unsigned char *buf = malloc(MSG);
        for (int i = 0; i < MSG; i++)
            buf[i] = (unsigned char)(i * 31 + rank);
        MPI_Request *reqs = malloc(sizeof *reqs * (size_t)n);
        for (int i = 0; i < n; i++)
            MPI_Isend(buf, MSG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[i]);
        MPI_Send(&n, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        free(reqs);
        free(buf);
    } else {
        long before = peak_rss_kb();
        for (int s = 1; s < size; s++) {
            int got;
            MPI_Recv(&got, 1, MPI_INT, s, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (got != n) {
                fprintf(stderr, "rank 0: rank %d announced %d messages, expected %d\n", s, got, n);
                errors++;
            }
        }
        long grown_mb = (peak_rss_kb() - before) / 1024;
        long total_mb = (long)n * (size - 1) * MSG >> 20;
        /* Credits are 4 MB per sender; headers of the rest are ~100 B each. */
        long bound_mb = 8L * (size - 1) + 32;
        if (grown_mb > bound_mb) {
            fprintf(stderr, "rank 0: memory grew by %ld MB holding %ld MB of unexpected messages "
                            "(bound %ld MB): no flow control\n", grown_mb, total_mb, bound_mb);
            errors++;
        }
        unsigned char *buf = malloc(MSG);
        for (int s = 1; s < size; s++)
            for (int i = 0; i < n; i++) {
                MPI_Status st;
                MPI_Recv(buf, MSG, MPI_BYTE, s, 1, MPI_COMM_WORLD, &st);
                int count;
                MPI_Get_count(&st, MPI_BYTE, &count);
                if (count != MSG || st.MPI_SOURCE != s || st.MPI_TAG != 1) {
                    fprintf(stderr, "rank 0: message %d from %d: count %d source %d tag %d\n", i, s,
                            count, st.MPI_SOURCE, st.MPI_TAG);
                    errors++;
                    break;
                }
                for (int k = 0; k < MSG; k++)
                    if (buf[k] != (unsigned char)(k * 31 + s)) {
                        fprintf(stderr, "rank 0: message %d from %d: byte %d is %d\n", i, s, k, buf[k]);
                        errors++;
                        break;
                    }
                if (errors)
                    break;
            }
        free(buf);
        if (!errors)
            printf("flood_memory: %ld MB of unexpected messages held in %ld MB\n", total_mb, grown_mb);
    }
    MPI_Finalize();
    return errors ? 1 : 0;
}

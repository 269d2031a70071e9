/* Allgather and alltoall of 4 KB-200 KB blocks, many calls in a row (at
 * two ranks one per core the shm rows, up to the 128 KB slot, then two
 * steps): every slot is rewritten again and again, with the bytes of each
 * call different from the last, so stale bytes of an earlier call in the
 * same slot do not match; sizes one byte either side of 4, 16 and 64 KB
 * and of the slot, and 8-32 KB (a 2-rank step of 4 KB or more moves over
 * its slot's places, as many as it fits: 32 down to 2), mixed call by
 * call; contiguous, strided (derived types) and MPI_IN_PLACE in turn;
 * nonblocking calls (the region's other lane) between blocking ones. Every received byte is checked. */
#include "block_exchange.h"

static const size_t sizes[] = {65535, 65536, 65537, 98304, 131071, 131072, 131073,
                               200000, 32768, 16383, 16384, 16385, 24576, 32767,
                               4095, 4096, 4097, 8192, 12288};
enum { N_SIZES = sizeof sizes / sizeof sizes[0] };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    size_t most = (size_t)p * 200000 * 2;
    unsigned char *s = malloc(most), *g = malloc(most);
    int call = 0, ok = 1;
    /* Each size alone, 40 calls in a row. */
    for (int k = 0; k < N_SIZES && ok; k++)
        for (int c = 0; c < 40 && ok; c++, call++)
            ok = block_exchange(c & 1, sizes[k], c % N_KINDS, call, 0, p, me, s, g);
    /* Sizes mixed call by call, a nonblocking call every fifth. */
    for (int c = 0; c < 200 && ok; c++, call++)
        ok = block_exchange((c / 2) & 1, sizes[(size_t)(c * 7) % N_SIZES], (c / 3) % N_KINDS,
                            call, c % 5 == 4, p, me, s, g);
    free(s);
    free(g);
    return mtest_finalize();
}

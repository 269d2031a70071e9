/* Alltoall, Bruck et al. (1997): rotate the blocks so index j is bound for
 * r + j; in round k send every block whose index has bit k set to r + 2^k
 * (packed into one message); rotate back. Cost: ceil(lg p) * alpha +
 * (p / 2) * lg p * n * beta plus local copies; for small blocks on large p. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_alltoall_bruck(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    char *tmp = tern_sched_tmp(s, (size_t)p * b);
    char *sb = tern_sched_tmp(s, (size_t)p * b);
    char *rb = tern_sched_tmp(s, (size_t)p * b);
    if (!tmp || !sb || !rb)
        return tern_sched_error(s);
    for (int j = 0; j < p; j++)
        tern_sched_copy(s, coll_at(a->sbuf, (size_t)((r + j) % p) * b), tmp + (size_t)j * b, b);
    for (int k = 1; k < p; k <<= 1) {
        size_t n = 0;
        for (int j = 0; j < p; j++)
            if (j & k)
                tern_sched_copy(s, tmp + (size_t)j * b, sb + (n++) * b, b);
        tern_sched_recv(s, rb, n * b, coll_mod(r - k, p));
        tern_sched_send(s, sb, n * b, (r + k) % p);
        tern_sched_fence(s);
        n = 0;
        for (int j = 0; j < p; j++)
            if (j & k)
                tern_sched_copy(s, rb + (n++) * b, tmp + (size_t)j * b, b);
    }
    /* tmp[j] came from rank r - j. */
    for (int j = 0; j < p; j++)
        tern_sched_copy(s, tmp + (size_t)j * b, coll_at(a->rbuf, (size_t)coll_mod(r - j, p) * b), b);
    return tern_sched_error(s);
}

/* Seconds on the monotonic clock, for timeouts and measurements in any
 * room (MPI_Wtime's base is core/init's). */
#ifndef TERN_BASE_CLOCK_H
#define TERN_BASE_CLOCK_H

#include <time.h>

static inline double tern_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif

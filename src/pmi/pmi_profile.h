/* Start-up profile (TERN_INIT_PROFILE=1): what each step of MPI_Init cost.
 *
 * The PMI client counts its operations as the process manager sees them
 * (a long value split into chunks counts one put or get per chunk; bytes
 * are keys and values). Start-up code marks the end of each step; a mark
 * records the time since the previous mark and the operations made in
 * between. tern_init_profile_report prints one line per step on stderr,
 * from world rank 0 only, so the counts are rank 0's and the times are its
 * wall clock (docs/scale.md models the job from them). With the knob off a
 * mark is one load and a branch. */
#ifndef TERN_PMI_PMI_PROFILE_H
#define TERN_PMI_PMI_PROFILE_H

#include <stdint.h>

typedef struct {
    uint64_t puts, gets, fences, other; /* other: node map, job attributes */
    uint64_t put_bytes, get_bytes;
} tern_pmi_counts_t;

/* This process's PMI operations since it started (always counted). */
void tern_pmi_counts(tern_pmi_counts_t *counts_p);

/* Starts the profile when TERN_INIT_PROFILE is on (call before PMI init). */
void tern_init_profile_start(void);
/* The step named `step` ended now (no-op when the profile is off). */
void tern_init_profile_mark(const char *step);
/* Prints the steps (world rank 0) and ends the profile; the world size and
 * node size go on the heading. */
void tern_init_profile_report(int rank, int size, int local_size);

#endif

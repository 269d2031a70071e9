/* The traffic picture of a job (TERN_PROFILE=<dir>; docs/design.md,
 * "Profile of a job"): what each process records while it runs, read at
 * MPI_Finalize by core/init/profile.c, which gathers every process's
 * record and has world rank 0 write <dir>/profile.json.
 *
 * A process records, while tern_profile_rec is set (TERN_PROFILE given and
 * not paused by MPI_Pcontrol(0)):
 *   - per world rank it sent to: the program's own point-to-point messages
 *     and their bytes (tern_profile_p2p_send, from the sends of the MPI
 *     layer, each send counted once when it starts), and every message the
 *     process sent, collectives' and one-sided ones included
 *     (tern_profile_all_send, where the point-to-point engine hands a
 *     message to a transport and where a one-sided operation starts);
 *   - per collective algorithm, its calls and their bytes;
 *   - per MPI procedure, its calls and the time spent in them (the
 *     outermost call of each thread: core/runtime/api_lock.h's entry
 *     guard calls tern_profile_call_enter and _leave).
 * Recording is off by default and then costs each site one load and a
 * branch predicted not taken; the entry points pay nothing more than their
 * lock's test (the guard's flag word holds both). Records change under
 * the entry points' lock, one thread at a time, like the performance
 * variables (base/pvars.h). */
#ifndef TERN_BASE_PROFILE_H
#define TERN_BASE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/* Non-zero while recording. */
extern int tern_profile_rec;
/* The world's size the rows have room for (0: not recording at all). */
extern int tern_profile_n;
/* Rows of this process's sends, indexed by the receiver's world rank:
 * p2p_bytes[r], p2p_msgs[r], all_bytes[r], all_msgs[r]. */
extern uint64_t *tern_profile_rows[4];
enum { TERN_PROFILE_P2P_BYTES, TERN_PROFILE_P2P_MSGS, TERN_PROFILE_ALL_BYTES,
       TERN_PROFILE_ALL_MSGS };

/* Starts recording for a world of n processes; TERN_ERR_NOMEM-free: a
 * failed allocation leaves recording off (returns 0). */
int tern_profile_start(int n);
/* MPI_Pcontrol: 0 pauses, anything else resumes (when started). */
void tern_profile_pause(int paused);

static inline void tern_profile_row_add(int p2p, int dest_world, uint64_t bytes)
{
    if ((unsigned)dest_world < (unsigned)tern_profile_n) {
        tern_profile_rows[p2p ? TERN_PROFILE_P2P_BYTES : TERN_PROFILE_ALL_BYTES][dest_world] += bytes;
        tern_profile_rows[p2p ? TERN_PROFILE_P2P_MSGS : TERN_PROFILE_ALL_MSGS][dest_world]++;
    }
}

/* A send of the program's own (dest_world < 0: none, MPI_PROC_NULL). */
static inline void tern_profile_p2p_send(int dest_world, uint64_t bytes)
{
    if (__builtin_expect(tern_profile_rec, 0))
        tern_profile_row_add(1, dest_world, bytes);
}

/* Any message this process sends. */
static inline void tern_profile_all_send(int dest_world, uint64_t bytes)
{
    if (__builtin_expect(tern_profile_rec, 0))
        tern_profile_row_add(0, dest_world, bytes);
}

/* Collective algorithm algo (its index among the algorithms) called with
 * a message of bytes. */
extern uint64_t *tern_profile_coll; /* [2 * TERN_PVAR_COLL_MAX]: calls, then bytes */
void tern_profile_coll_count(unsigned algo, uint64_t bytes);
static inline void tern_profile_coll_call(unsigned algo, uint64_t bytes)
{
    if (__builtin_expect(tern_profile_rec, 0))
        tern_profile_coll_count(algo, bytes);
}

/* The entry guard's halves: enter returns 1 when it began timing the
 * calling thread's outermost call (then leave ends it). */
int tern_profile_call_enter(const char *func);
void tern_profile_call_leave(void);

/* The per-procedure records: slots 0 .. tern_profile_call_slots() - 1,
 * each the name of a procedure with its calls and nanoseconds, or NULL
 * for an empty slot. */
size_t tern_profile_call_slots(void);
const char *tern_profile_call_at(size_t i, uint64_t *count_p, uint64_t *ns_p);

#endif

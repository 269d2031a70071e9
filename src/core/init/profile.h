/* The profile of a job (TERN_PROFILE=<dir>; docs/design.md, "Profile of a
 * job"): MPI_Init starts the recording base/profile.h describes,
 * MPI_Pcontrol pauses and resumes it, and MPI_Finalize gathers every
 * process's record on world rank 0, which writes <dir>/profile.json. The
 * gathering runs on MPI_COMM_WORLD with the recording stopped, before the
 * world ends; a profile of a program that uses only sessions is not
 * written. */
#ifndef TERN_CORE_INIT_PROFILE_H
#define TERN_CORE_INIT_PROFILE_H

#include "base/status.h"

/* At the end of MPI_Init: starts recording when TERN_PROFILE is set. */
void tern_profile_begin(void);
/* MPI_Pcontrol(level): 0 pauses the recording, any other level resumes
 * it; no effect without TERN_PROFILE. */
tern_status_t tern_profile_pcontrol(int level);
/* At the start of MPI_Finalize (collective over MPI_COMM_WORLD): gathers
 * and writes the profile; a failure to write is a warning, never the
 * call's error. */
void tern_profile_end(void);

#endif

/* Whether a process on this host still exists. Several transports watch a
 * peer's pid to end waits on a rank that died without a word. */
#ifndef TERN_BASE_PROC_H
#define TERN_BASE_PROC_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* True only when the kernel says no such process: EPERM (a process of
 * another user took the pid) and other errors count as alive, so a
 * failure is never reported on a guess. */
static inline bool tern_pid_gone(pid_t pid)
{
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

#endif

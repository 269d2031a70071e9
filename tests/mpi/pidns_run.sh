#!/bin/sh
# pidns_run.sh <mpiexec> <np> <program> [args...]: the ranks each in a pid
# namespace of their own (as containers that share /dev/shm but not pids):
# no rank can open another's memfd through /proc (no such pid, or another
# process's file there) nor reach it by CMA. Needs root and unshare; exits
# 77 (skip) without them.
set -u
MPIEXEC=$1
NP=$2
shift 2
if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
    echo "pidns_run: no unshare --pid here: skipped"
    exit 77
fi
exec "$MPIEXEC" -n "$NP" unshare --pid --fork --mount-proc "$@"

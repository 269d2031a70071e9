#!/bin/sh
# coll_shm_pidns.sh <mpiexec> <coll_shm>: two ranks, each in a pid
# namespace of its own (as containers that share /dev/shm but not pids):
# no rank can open rank 0's memfd through /proc (another pid, or another
# process's file there), so every collective region falls back to a named
# segment and the collectives still compute right (coll_shm pidns). Needs
# root and unshare; exits 77 (skip) without them.
set -u
unshare --pid --fork --mount-proc true 2>/dev/null || { echo "coll_shm_pidns: no unshare --pid here: skipped"; exit 77; }
exec "$1" -n 2 unshare --pid --fork --mount-proc "$2" pidns

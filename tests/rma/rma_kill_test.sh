#!/bin/sh
# A rank killed (SIGKILL) while shared windows live (Win_allocate and
# Win_allocate_shared on one node): the job must end with an error within
# 10 s, and nothing may be left in /dev/shm (window memory is a memfd: it has
# no name to leave; the shm transport unlinks its segment at start-up).
# Usage: rma_kill_test.sh <mpiexec> <rma_passive_busy>
set -u
MPIEXEC=$1 PROG=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-rma-kill-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ls /dev/shm 2>/dev/null | sort >"$WORK/before"
start=$(date +%s)
"$MPIEXEC" -n 3 "$PROG" kill >"$WORK/out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
fail() { echo "FAIL: $*"; cat "$WORK/out"; exit 1; }
[ "$rc" -ne 0 ] || fail "the job exited 0 after a rank was killed"
[ "$elapsed" -le 10 ] || fail "the job took $elapsed s to end"
grep -q "windows live" "$WORK/out" || fail "the windows were not made"
# Names new since the start that are still there a second later are
# leftovers (other jobs unlink theirs within milliseconds of starting).
ls /dev/shm 2>/dev/null | sort | comm -13 "$WORK/before" - >"$WORK/new"
if [ -s "$WORK/new" ]; then
    sleep 1
    while read -r f; do
        [ -e "/dev/shm/$f" ] && fail "/dev/shm/$f left behind"
    done <"$WORK/new"
fi
echo "ok (exit status $rc, ${elapsed} s)"

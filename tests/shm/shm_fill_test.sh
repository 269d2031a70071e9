#!/bin/sh
# /dev/shm filled by others after MPI_Init, with TERN_SHM_RESERVE=pair (a
# pair's pages reserved at its first message, transport/shm/shm_reserve.c):
#   shm_fill_test.sh <mpiexec> <shm_reserve>
# In a private mount namespace whose /dev/shm is a 16 MB tmpfs (room for
# the 2-rank segment at MPI_Init), rank 0 of `shm_reserve fill` fills it,
# then sends to rank 1: the send must fail with an MPI error and one
# message that names the peer and the free space, never a SIGBUS; the
# program then aborts with 3. Needs root and unshare; exits 77 otherwise.
set -u
MPIEXEC=$1
PROG=$2

. "$(dirname "$0")/private_shm.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-shmfill-XXXXXX")
OUT=$WORK/out
ERR=$WORK/err
trap 'rm -rf "$WORK"' EXIT
fail() {
    echo "FAIL: $*"
    echo "--- /dev/shm:"; ls -la /dev/shm
    echo "--- stdout:"; head -20 "$OUT"
    echo "--- stderr:"; head -20 "$ERR"
    exit 1
}

mount -t tmpfs -o size=16m tmpfs /dev/shm || fail "cannot mount a tmpfs"
TERN_SHM_RESERVE=pair MTEST_TIMEOUT=60 timeout -s KILL 90 "$MPIEXEC" -n 2 "$PROG" fill /dev/shm/filler \
    >"$OUT" 2>"$ERR" </dev/null
RC=$?
grep -qiE 'bus error|signal 7|SIGBUS' "$ERR" && fail "a rank died of SIGBUS"
[ "$RC" = 3 ] || fail "exit status $RC, wanted 3 (rank 0's MPI_Abort after the failed send)"
grep -q '^send failed: class [0-9]*: ' "$OUT" || fail "the send did not return an error"
n=$(grep -c "shared memory: cannot reserve the [0-9]* bytes of the queue to rank 1 (local rank 1) in /dev/shm: No space left on device ([0-9]* bytes free of [0-9]*" "$ERR")
[ "$n" = 1 ] || fail "$n messages that name the peer and the free space, wanted 1"
left=$(ls /dev/shm | grep -v '^filler$')
[ -z "$left" ] || fail "left in /dev/shm: $left"
echo "ok: $(grep '^send failed' "$OUT")"
exit 0

#!/bin/sh
# MPI-IO in settings a single test program cannot make (issue 25, section 6):
#   io_jobs_test.sh <case> <mpiexec> <io_stress>
# Cases:
#   concurrent  two jobs at once, each 4 ranks hammering the shared file
#               pointer of its own file (io_stress shared): both pass.
#   nospace     4 ranks write collectively to a file on a 1 MB tmpfs (in a
#               private mount namespace; needs root and unshare, exits 77
#               otherwise): every rank gets MPI_ERR_NO_SPACE naming the
#               file and the call, goes on, and the job exits 0.
#   readonly    a tmpfs remounted read-only (root, as nospace): opening for
#               writing, creating and deleting give MPI_ERR_READ_ONLY.
#   kill        rank 1 of 4 kills itself (SIGKILL) in the middle of a
#               collective write in atomic mode: the job ends within 10 s
#               with a message naming rank 1, no rank process is left, the
#               directory holds only the data file (no lock or temporary
#               file) and, as root in a private /dev/shm, nothing is left
#               in /dev/shm.
# Exits 0 on pass, 1 on failure, 77 when skipped.
set -u
CASE=$1
MPIEXEC=$2
PROG=$3

if [ "$CASE" != concurrent ]; then
    if [ "${IO_JOBS_INNER:-}" != 1 ] && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        IO_JOBS_INNER=1 exec unshare -m sh "$0" "$@"
    fi
    if [ "${IO_JOBS_INNER:-}" = 1 ]; then
        mount --make-rprivate / 2>/dev/null
        mount -t tmpfs -o size=64m tmpfs /dev/shm || { echo "FAIL: cannot mount /dev/shm"; exit 1; }
    elif [ "$CASE" != kill ]; then
        echo "SKIP: needs root and unshare to mount a small tmpfs in a mount namespace"
        exit 77
    fi
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-iojobs-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL [$CASE]: $*"
    for f in "$WORK"/out*; do
        [ -f "$f" ] && { echo "--- $f:"; head -40 "$f"; }
    done
    exit 1
}
now_ms() { date +%s%3N; }

case $CASE in
concurrent)
    timeout -s KILL 120 "$MPIEXEC" -n 4 "$PROG" shared "$WORK/a.dat" >"$WORK/out.a" 2>&1 &
    A=$!
    timeout -s KILL 120 "$MPIEXEC" -n 4 "$PROG" shared "$WORK/b.dat" >"$WORK/out.b" 2>&1 &
    B=$!
    wait $A
    RA=$?
    wait $B
    RB=$?
    [ "$RA" = 0 ] || fail "job a exited $RA"
    [ "$RB" = 0 ] || fail "job b exited $RB"
    grep -q 'shared pointer hammered.* ok' "$WORK/out.a" || fail "job a did not report its test"
    grep -q 'shared pointer hammered.* ok' "$WORK/out.b" || fail "job b did not report its test"
    left=$(ls "$WORK" | grep -v '^out')
    [ -z "$left" ] || fail "left behind: $left"
    ;;
nospace)
    mkdir "$WORK/small"
    mount -t tmpfs -o size=1m tmpfs "$WORK/small" || fail "cannot mount a 1 MB tmpfs"
    timeout -s KILL 60 "$MPIEXEC" -n 4 "$PROG" nospace "$WORK/small/full.dat" >"$WORK/out" 2>&1
    RC=$?
    [ "$RC" = 0 ] || fail "exit status $RC, wanted 0"
    n=$(grep -c "rank [0-3]: .*MPI_File_write_at_all.*full.dat" "$WORK/out")
    [ "$n" = 4 ] || fail "$n of 4 ranks printed the error naming the call and the file"
    grep -m1 "^rank 0: " "$WORK/out"
    left=$(ls "$WORK/small")
    umount "$WORK/small"
    [ -z "$left" ] || fail "left on the small file system: $left"
    ;;
readonly)
    mkdir "$WORK/ro"
    mount -t tmpfs -o size=1m tmpfs "$WORK/ro" || fail "cannot mount a tmpfs"
    printf 0123456789abcdef >"$WORK/ro/ro.dat"
    mount -o remount,ro "$WORK/ro" || fail "cannot remount read-only"
    timeout -s KILL 60 "$MPIEXEC" -n 2 "$PROG" readonly "$WORK/ro" >"$WORK/out" 2>&1
    RC=$?
    umount "$WORK/ro"
    [ "$RC" = 0 ] || fail "exit status $RC, wanted 0"
    ;;
kill)
    mkdir "$WORK/d"
    t0=$(now_ms)
    timeout -s KILL 60 "$MPIEXEC" -n 4 "$PROG" kill "$WORK/d/k.dat" >"$WORK/out" 2>&1
    RC=$?
    elapsed=$(($(now_ms) - t0))
    [ "$RC" != 0 ] || fail "the job exited 0 with a rank killed"
    # (137 is also mpiexec's status for a rank killed by signal 9.)
    tk=$(sed -n 's/^rank 1: killing itself at \([0-9]*\) ms$/\1/p' "$WORK/out")
    [ -n "$tk" ] || fail "rank 1 did not reach the kill"
    after=$((t0 + elapsed - tk))
    [ "$after" -lt 10000 ] || fail "the job took $after ms to end after the kill, wanted < 10 s"
    grep -q "rank 1 .*killed by signal 9" "$WORK/out" || fail "no message naming rank 1 and its signal"
    sleep 1
    for pid in $(sed -n 's/^rank [0-9]*: pid \([0-9]*\)$/\1/p' "$WORK/out"); do
        if kill -0 "$pid" 2>/dev/null && ! grep -q zombie "/proc/$pid/status" 2>/dev/null; then
            fail "rank process $pid is still alive"
        fi
    done
    n=$(grep -c '^rank [0-9]*: pid' "$WORK/out")
    [ "$n" = 4 ] || fail "$n of 4 ranks started"
    left=$(ls -A "$WORK/d" | grep -v '^k\.dat$')
    [ -z "$left" ] || fail "left beside the data file: $left"
    if [ "${IO_JOBS_INNER:-}" = 1 ]; then
        left=$(ls -A /dev/shm)
        [ -z "$left" ] || fail "left in /dev/shm: $left"
    fi
    grep "^mpiexec: " "$WORK/out"
    echo "ended $after ms after the kill ($elapsed ms in all), exit $RC"
    ;;
*) fail "unknown case" ;;
esac
echo "ok [$CASE]"
exit 0

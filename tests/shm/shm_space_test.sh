#!/bin/sh
# A /dev/shm too small for the shm transport's segment (issue 16, item 3):
#   shm_space_test.sh <case> <mpiexec> <program>
# <program> is p2p_sizes (exits 0 only when every byte arrived). Each case
# runs 4 ranks in a private mount namespace whose /dev/shm is a tmpfs of
# our making, then checks the outcome, the messages, and that nothing is
# left in /dev/shm. Cases: <space>_<fallback>, space one of
#   tiny   a 64 KB tmpfs (a container's /dev/shm)
#   full   a 16 MB tmpfs filled to 48 KB free by another file
#   empty  a 16 MB tmpfs with nothing free
# and fallback one of fail, shrink, ofi (TERN_SHM_FALLBACK); and normal
# (a 1 GB tmpfs: full-size rings, no warning).
# Needs root and unshare (CI runs as root); exits 77 (skipped) otherwise.
# Exits 0 on pass, 1 on failure.
set -u
CASE=$1
MPIEXEC=$2
PROG=$3

. "$(dirname "$0")/private_shm.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-shmspace-XXXXXX")
OUT=$WORK/out
ERR=$WORK/err
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL [$CASE]: $*"
    echo "--- /dev/shm:"; ls -la /dev/shm
    echo "--- stdout:"; head -40 "$OUT" 2>/dev/null
    echo "--- stderr (no debug lines):"; grep -v ' debug: ' "$ERR" 2>/dev/null | head -40
    exit 1
}

space=${CASE%%_*}
fallback=${CASE#*_}
case $space in
tiny) mount -t tmpfs -o size=64k tmpfs /dev/shm || fail "cannot mount a tmpfs" ;;
full | empty)
    mount -t tmpfs -o size=16m tmpfs /dev/shm || fail "cannot mount a tmpfs"
    keep=$((48 * 1024))
    [ "$space" = empty ] && keep=0
    fallocate -l $((16 * 1024 * 1024 - keep)) /dev/shm/filler 2>/dev/null ||
        head -c $((16 * 1024 * 1024 - keep)) /dev/zero >/dev/shm/filler 2>/dev/null
    free=$(df -B1 --output=avail /dev/shm | tail -1 | tr -d ' ')
    [ "$free" -le "$keep" ] || fail "filler left $free bytes free, wanted at most $keep"
    ;;
normal)
    mount -t tmpfs -o size=1g tmpfs /dev/shm || fail "cannot mount a tmpfs"
    fallback=fail # no fallback may be needed
    ;;
*) fail "unknown case" ;;
esac

# Errors only (the default), but info to see ofi start and debug to see the
# geometry of the rings.
level=0
case $CASE in
*_ofi) level=2 ;;
normal) level=3 ;;
esac
now_ms() { date +%s%3N; }
t0=$(now_ms)
# CMA off: large messages go through the rings too, shrunk or not. Shrunk
# to 2 cells of 1 KB, the 8 MB messages take 8,000 hand-overs each between
# 4 ranks on 2 cores: 6-20 s on a quiet machine, over the watchdog's
# default 50 s under a load of 20, so the watchdog gets 150 s here.
TERN_SHM_FALLBACK=$fallback TERN_SHM_CMA=off TERN_LOG_LEVEL=$level MTEST_TIMEOUT=150 \
    timeout -s KILL 170 "$MPIEXEC" -n 4 "$PROG" >"$OUT" 2>"$ERR" </dev/null
RC=$?
ELAPSED=$(($(now_ms) - t0))

grep -qiE 'bus error|signal 7|SIGBUS' "$ERR" && fail "a rank died of SIGBUS"
left=$(ls /dev/shm | grep -v '^filler$')
[ -z "$left" ] || fail "left in /dev/shm: $left"

# The one message that names /dev/shm, its free space and what is needed.
says() { grep -c "shared memory: /dev/shm has [0-9]* bytes free (of [0-9]*), less than the [0-9]* bytes the segment of 4 ranks needs.*$1" "$ERR"; }
once() {
    n=$(says "$1")
    [ "$n" = 1 ] || fail "expected one message matching '$1' from the node, got $n"
}
ran_ok() {
    [ "$RC" = 0 ] || fail "exit status $RC, wanted 0"
    n=$(grep -c '^test sizes_.* ok' "$OUT")
    [ "$n" = 4 ] || fail "$n of 4 tests of checked bytes passed"
}

case $CASE in
*_fail | empty_shrink)
    [ "$RC" != 0 ] || fail "the job succeeded, wanted a failed MPI_Init"
    [ "$RC" -lt 128 ] && [ "$RC" != 124 ] || fail "exit status $RC: killed, not a clean failure"
    [ "$ELAPSED" -lt 2000 ] || fail "took $ELAPSED ms to fail, wanted < 2000"
    if [ "$CASE" = empty_shrink ]; then
        once "even the smallest rings (2 cells of 128 bytes, no bulk channel) need [0-9]*\. Make /dev/shm larger"
    else
        once "\(posix_fallocate\|free space, TERN_SHM_RESERVE=pair\): No space left on device). Make /dev/shm larger.*TERN_SHM_CELL_SIZE, or set TERN_SHM_FALLBACK (now fail) to shrink or ofi"
    fi
    grep -q 'shm_open' "$ERR" && fail "an shm_open error, the others must stay quiet"
    ;;
*_shrink)
    ran_ok
    once "shrunk to [0-9]* cells of [0-9]* bytes per ring, no bulk channel, [0-9]* bytes (TERN_SHM_FALLBACK=shrink"
    n=$(grep -c 'warning' "$ERR")
    [ "$n" = 1 ] || fail "$n warnings, wanted 1"
    ;;
*_ofi)
    ran_ok
    once "the ranks of this node talk through the network transport (ofi) instead"
    n=$(grep -c 'ofi: rail 0 of 1: provider' "$ERR")
    [ "$n" = 4 ] || fail "$n ranks opened the ofi transport, wanted 4"
    ;;
normal)
    ran_ok
    # (Only shared memory's: at debug level a peer that exits after its
    # MPI_Finalize may be reported gone by one still finalizing.)
    bad=$(grep -E '^tern\[rank [0-9]+\] (warning|error): (shared memory|shm transport)' "$ERR")
    [ -z "$bad" ] || fail "a warning or error with room to spare: $bad"
    # Full-size rings: the debug line of each rank says so (auto cells: 128
    # and auto bulk chunks: 8 when the 4 ranks outnumber the CPUs, counted
    # as the runtime does: the affinity mask, or every online CPU when it
    # holds one).
    cpus=$(nproc)
    [ "$cpus" -le 1 ] && cpus=$(getconf _NPROCESSORS_ONLN)
    cells=32 chunks=32
    [ "$cpus" -lt 4 ] && cells=128 chunks=8
    n=$(grep -c "shm transport: 4 local ranks, segment .* of [0-9]* bytes, $cells cells per ring, am_max 16496, bulk_max 65584 in $chunks chunks per pair" "$ERR")
    [ "$n" = 4 ] || fail "$n ranks report full-size rings, wanted 4"
    ;;
esac
echo "ok [$CASE] exit $RC in $ELAPSED ms"
exit 0

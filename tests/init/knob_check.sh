#!/bin/sh
# Usage: knob_check.sh <mpiexec> <init program> <p2p_sizes program>
# A bad knob value ends MPI_Init on every rank, under mpiexec and as a
# singleton, with a non-zero exit and one message from rank 0 naming the
# knob, the value and what is allowed; no other rank prints (in particular no
# shm_open noise). Good values, the smallest shm cell among them, are honoured.
mpiexec=$1 init=$2 sizes=$3
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect_bad <np or singleton> <VAR=value> <message>
expect_bad() {
    np=$1 setting=$2 message=$3
    if [ "$np" = singleton ]; then
        env "$setting" timeout 45 "$init" >"$out" 2>&1
    else
        env "$setting" timeout 45 "$mpiexec" -n "$np" "$init" >"$out" 2>&1
    fi
    rc=$?
    what="$setting ($np)"
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
        echo "FAIL: $what: exit status $rc, expected a failed MPI_Init"; fail=1
    elif [ "$(grep -cxF "tern[rank 0] error: $message" "$out")" -ne 1 ]; then
        echo "FAIL: $what: expected one line 'tern[rank 0] error: $message'"; fail=1
    elif grep -qE 'shm_open|tern\[rank [1-9][0-9]*\]|test init ok' "$out"; then
        echo "FAIL: $what: other output than rank 0's report"; fail=1
    else
        echo "ok: $what: exit status $rc"
    fi
    sed 's/^/    /' "$out"
}

# expect_good <np> <program> <output regex> <VAR=value>...
expect_good() {
    np=$1 prog=$2 regex=$3
    shift 3
    env "$@" timeout 100 "$mpiexec" -n "$np" "$prog" >"$out" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: $* ($np ranks): exit status $rc"; fail=1
        sed 's/^/    /' "$out"
    elif ! grep -qE "$regex" "$out"; then
        echo "FAIL: $* ($np ranks): output does not match '$regex'"; fail=1
        sed 's/^/    /' "$out"
    else
        echo "ok: $* ($np ranks)"
    fi
}

expect_bad 4 TERN_SHM_CELL_SIZE=64 "TERN_SHM_CELL_SIZE=64: must be a size from 128 to 1048576 bytes, or auto"
expect_bad singleton TERN_SHM_CELL_SIZE=64 "TERN_SHM_CELL_SIZE=64: must be a size from 128 to 1048576 bytes, or auto"
expect_bad 2 TERN_SHM_CELL_SIZE=8x "TERN_SHM_CELL_SIZE=8x: must be a size from 128 to 1048576 bytes, or auto"
expect_bad 3 TERN_SHM_RING_CELLS=3 "TERN_SHM_RING_CELLS=3: must be a power of two from 2 to 1048576"
expect_bad 2 TERN_SHM_RING_CELLS=0 "TERN_SHM_RING_CELLS=0: must be a power of two from 2 to 1048576"
expect_bad 2 TERN_P2P_EAGER_MAX=abc "TERN_P2P_EAGER_MAX=abc: must be a size from 0 to 1073741824 bytes, or auto"
expect_bad 2 TERN_P2P_EAGER_MAX=-1 "TERN_P2P_EAGER_MAX=-1: must be a size from 0 to 1073741824 bytes, or auto"
expect_bad 2 TERN_LOG_LEVEL=-1 "TERN_LOG_LEVEL=-1: must be a number from 0 to 3"
expect_bad 2 TERN_CONNECT=xyz "TERN_CONNECT=xyz: must be one of auto, all, lazy"
expect_bad 2 TERN_PMI=pmi3 "TERN_PMI=pmi3: must be one of auto, pmi1, pmi2, pmix, singleton"
expect_bad 1 TERN_SHM_CMA=maybe "TERN_SHM_CMA=maybe: must be one of on, off, 1, 0, yes, no, true, false, or auto"

# The smallest cell carries every protocol header: all sizes pass through
# 128-byte cells (112 bytes of payload), with and without the bulk channel;
# the shm transport reports the geometry it was given.
expect_good 2 "$sizes" "4 cells per ring, am_max 112," \
    TERN_SHM_CELL_SIZE=128 TERN_SHM_RING_CELLS=4 TERN_LOG_LEVEL=3
expect_good 3 "$sizes" "test sizes_typed ok" TERN_SHM_CELL_SIZE=128 TERN_SHM_BULK_CHUNK=0
expect_good 2 "$sizes" "test sizes_typed ok" TERN_SHM_CELL_SIZE=1m TERN_SHM_RING_CELLS=2 TERN_P2P_EAGER_MAX=0
exit $fail
